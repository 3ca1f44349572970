//! Same inputs and seed give byte-identical outputs (SEMANTICS §10).

use std::collections::BTreeMap;

use fleetsim::report::{self, ReportContext};
use fleetsim::scenario::load_file;
use fleetsim::simulation::{SimOptions, simulate};

use crate::support::{folder_files, root};

fn render(seed: Option<u64>) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let scenario = load_file(&root().join("scenarios/quickstart.json"), seed).unwrap();
    let result = simulate(&scenario, SimOptions::default());
    report::render(&ReportContext::new(&scenario, &result)).unwrap()
}

#[test]
fn the_same_scenario_twice_gives_byte_identical_report_files() {
    let a = render(None);
    let b = render(None);
    assert_eq!(a.len(), b.len());
    for ((pa, ba), (pb, bb)) in a.iter().zip(&b) {
        assert_eq!(pa, pb);
        assert!(ba == bb, "{} differs between two runs", pa.display());
    }
}

#[test]
fn a_different_seed_gives_a_different_timeline() {
    let a = render(Some(1));
    let b = render(Some(2));
    let timeline = |files: &[(std::path::PathBuf, Vec<u8>)]| {
        files.iter().find(|(p, _)| p.ends_with("timeline.csv")).unwrap().1.clone()
    };
    assert_ne!(timeline(&a), timeline(&b));
}

#[test]
fn recording_the_timeline_does_not_change_the_outcome() {
    let scenario = load_file(&root().join("scenarios/quickstart.json"), None).unwrap();
    let full = simulate(&scenario, SimOptions::default());
    let lean = simulate(&scenario, SimOptions { record_timeline: false, replication: 0 });
    assert!(lean.timeline.is_empty());
    assert_eq!(full.end, lean.end);
    for (a, b) in full.runs.iter().zip(&lean.runs) {
        assert_eq!(a.state, b.state);
        assert_eq!(a.completed_time, b.completed_time);
        assert_eq!(a.failure_count, b.failure_count);
    }
}

#[test]
fn adding_a_member_does_not_change_other_members_draws() {
    // Streams are keyed by member name: members present in both fleets get the same durations.
    let base = r#"{"name": "d", "seed": 3, "start": "2026-03-02T00:00:00Z", "models": {"failure": {"probability": 0}},
        "members": [MEMBERS],
        "updateRuns": [{"name": "r", "strategy": {"stages": [{"name": "s", "groups": [{"name": "g", "maxConcurrency": "50"}]}]},
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}}]}"#;
    let member =
        |n: &str| format!(r#"{{"name": "{n}", "region": "eastus", "group": "g", "kubernetesVersion": "1.32.4"}}"#);
    let small = base.replace("MEMBERS", &[member("b"), member("d")].join(","));
    let large = base.replace("MEMBERS", &[member("a"), member("b"), member("c"), member("d")].join(","));
    let durations = |text: &str| {
        let s = fleetsim::scenario::parse_str(text, None).unwrap();
        let r = simulate(&s, SimOptions::default());
        r.runs[0].stages[0].groups[0]
            .members
            .iter()
            .map(|m| (s.fleet[m.id.index()].name.clone(), (m.end_time.unwrap() - m.start_time.unwrap()).as_seconds()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let (small, large) = (durations(&small), durations(&large));
    assert_eq!(small["b"], large["b"]);
    assert_eq!(small["d"], large["d"]);
    assert_ne!(large["a"], large["c"]);
}

/// Every example scenario, run by two separate `fleetsim run` processes, writes byte-identical
/// report folders (hash-map order or anything else that varies between processes would show here).
#[test]
fn every_example_scenario_gives_the_same_bytes_in_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios: Vec<std::path::PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && fleetsim::sweep::is_scenario_text(&std::fs::read_to_string(p).unwrap())
        })
        .collect();
    assert!(scenarios.len() >= 7, "{scenarios:?}");
    std::thread::scope(|scope| {
        for scenario in &scenarios {
            let dir = dir.path();
            scope.spawn(move || {
                let name = scenario.file_stem().unwrap().to_string_lossy().to_string();
                let outputs: Vec<std::path::PathBuf> = ["a", "b"]
                    .iter()
                    .map(|copy| {
                        let out = dir.join(format!("{name}-{copy}"));
                        let status = std::process::Command::new(crate::support::binary())
                            .args(["run", "--quiet", "--out"])
                            .arg(&out)
                            .arg(scenario)
                            .status()
                            .unwrap();
                        assert!(status.success(), "{name}");
                        out
                    })
                    .collect();
                let (a, b) = (folder_files(&outputs[0]), folder_files(&outputs[1]));
                assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{name}");
                for (file, bytes) in &a {
                    assert!(bytes == &b[file], "{name}: {file} differs between two processes");
                }
            });
        }
    });
}

#[test]
fn a_report_written_as_it_is_made_has_the_bytes_of_the_one_made_in_memory() {
    // Profiles (the auto-upgrade files) and several runs (a status file each), streamed while the
    // charts render: the folder holds exactly the files `render` makes, byte for byte.
    for name in ["quickstart", "autoupgrade-year", "bad-release-canary"] {
        let scenario = load_file(&root().join(format!("scenarios/{name}.json")), None).unwrap();
        let result = simulate(&scenario, SimOptions::default());
        let ctx = ReportContext::new(&scenario, &result);
        let expected: BTreeMap<String, Vec<u8>> = report::render(&ctx)
            .unwrap()
            .into_iter()
            .map(|(path, bytes)| (path.to_string_lossy().replace('\\', "/"), bytes))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        report::write_report(&ctx, &out, report::Replace::Reports).unwrap();
        let mut written = folder_files(&out);
        assert!(written.remove(report::MARKER).is_some(), "the report folder has its marker");
        assert_eq!(written.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "{name}");
        for (path, bytes) in &written {
            assert!(*bytes == expected[path], "{name}: {path} differs");
        }
    }
}
