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
            .map(|m| {
                (s.fleet[m.id.index()].name.clone(), (m.end_time().unwrap() - m.start_time().unwrap()).as_seconds())
            })
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

/// Generated members are drawn and converted in parallel, in chunks: the fleet, its update plan and
/// the first problem of a generator are the same with one thread or three.
#[test]
fn generated_fleets_and_their_problems_do_not_depend_on_the_thread_count() {
    let scenario = r#"{"name": "t", "seed": 5, "start": "2026-03-02T00:00:00Z",
        "memberGenerators": [{"count": 12000, "namePattern": "{group}-{index}",
            "regions": {"eastus": 3, "westeurope": 2, "japaneast": 1},
            "groups": {"canary": 1, "wave-1": 4, "wave-2": 5}, "labels": {"ring": {"a": 1, "b": 2}, "geo": "{geography}", "wave": "{group}"},
            "kubernetesVersions": {"1.32.4": 1, "1.33.1": 3},
            "nodePools": {"count": {"min": 1, "max": 3}, "osSku": {"Ubuntu": 3, "Windows2022": 1}},
            "aksManagedAutoUpgradeSchedule": [{"template": "weekend", "weight": 1}, {"template": "none", "weight": 1}]}],
        "updateRuns": [{"name": "r", "strategy": {"stages": [
            {"name": "first", "groups": [{"name": "canary"}]},
            {"name": "rest", "groups": [{"name": "wave-1"}, {"name": "wave-2", "memberSelector": {"byLabel": "wave=wave-2,ring=b"}}]}]},
            "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.1"}}}]}"#;
    let load = |threads: usize, text: &str| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| match fleetsim::scenario::parse_str_with_fleet(text, None) {
            Ok((scenario, fleet)) => {
                let plan = serde_json::to_string(
                    &scenario.runs[0]
                        .plan
                        .stages
                        .iter()
                        .map(|s| {
                            s.groups
                                .iter()
                                .map(|g| g.members.iter().map(|m| m.index()).collect::<Vec<_>>())
                                .collect::<Vec<_>>()
                        })
                        .collect::<Vec<_>>(),
                )
                .unwrap();
                Ok((serde_json::to_string(&fleet).unwrap(), plan))
            }
            Err(problems) => Err(problems.iter().map(|p| p.to_string()).collect::<Vec<_>>()),
        })
    };
    let one = load(1, scenario).expect("the scenario is valid");
    assert_eq!(one, load(3, scenario).unwrap());
    assert!(one.0.matches("\"name\":\"wave-2-").count() > 5000, "12,000 members, half of them in wave-2");
    // A group name too long for a member name, drawn by about one member in a thousand: the first
    // member that gets it is the one reported (a generator stops there), whichever thread drew it.
    let long = scenario
        .replace(r#""canary": 1,"#, r#""canary": 1, "a-group-name-long-enough-to-overflow-a-member-name": 0.001,"#);
    let problems = load(1, &long).expect_err("some member gets the long group");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("/memberGenerators/0/namePattern: generated member "), "{problems:?}");
    assert_eq!(load(3, &long).unwrap_err(), problems);
    // Drawn by one member in a hundred: the generator stops in the first chunk (8,192 members),
    // and the second, drawn while the first is taken, has more such members, drawn for nothing and
    // not told.
    let dense = long.replace(r#"member-name": 0.001"#, r#"member-name": 0.01"#);
    let problems = load(1, &dense).expect_err("some member gets the long group");
    assert_eq!(problems.len(), 1, "{problems:?}");
    let number: usize = problems[0]
        .strip_prefix("/memberGenerators/0/namePattern: generated member ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{problems:?}"));
    assert!(number < 8192, "{problems:?}");
    assert_eq!(load(3, &dense).unwrap_err(), problems);
    // Members selected twice are found while matching in parallel, and told in member order.
    let twice = scenario.replace("wave=wave-2,ring=b", "ring=b");
    let problems = load(1, &twice).expect_err("canary members with ring=b are selected twice");
    assert!(problems[0].contains("member \"canary-"), "{problems:?}");
    assert_eq!(load(3, &twice).unwrap_err(), problems);
}

/// Members of all generators are drawn as one sequence, chunks spanning generators: the fleet is
/// what each generator draws alone (a member's draws do not depend on the generator's place), each
/// member keeps its own generator's durations, the result is the same with one thread or three, and
/// each generator stops at its own first member with a problem (the others go on), problems told
/// generator by generator with the members' own numbers.
#[test]
fn many_small_generators_draw_the_same_fleet_and_tell_problems_in_generator_order() {
    // Sixty generators of 150 members but generator 54, of 8,000 from member 8,101 of the fleet:
    // across the first chunk's end (8,192).
    let generator = |i: usize| {
        let count = if i == 54 { 8000 } else { 150 };
        format!(
            r#"{{"count": {count}, "namePattern": "g{i}-{{region}}-{{index}}", "regions": {{"eastus": 3, "westeurope": 1}},
                "labels": {{"ring": {{"a": 1, "b": 2}}}}, "kubernetesVersions": {{"1.32.4": 1, "1.33.1": 1}},
                "durations": {{"controlPlane": "{}m"}}}}"#,
            i + 1
        )
    };
    let fleet = |generators: &[String]| {
        format!(
            r#"{{"name": "t", "seed": 9, "start": "2026-03-02T00:00:00Z", "memberGenerators": [{}]}}"#,
            generators.join(",")
        )
    };
    let load = |threads: usize, text: &str| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| fleetsim::scenario::parse_str_with_fleet(text, None))
    };
    let members = |text: &str| match load(2, text) {
        Ok((_, fleet)) => fleet.iter().map(|m| serde_json::to_string(m).unwrap()).collect::<Vec<_>>(),
        Err(problems) => panic!("{problems:?}"),
    };
    let problems = |threads: usize, text: &str| match load(threads, text) {
        Ok(_) => panic!("the scenario has problems"),
        Err(problems) => problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
    };
    let generators: Vec<String> = (0..60).map(generator).collect();
    let good = fleet(&generators);
    let (scenario, _) = load(1, &good).expect("the scenario is valid");
    let all = members(&good);
    assert_eq!(all, members(&good), "the same with three threads");
    assert_eq!(all.len(), 59 * 150 + 8000, "every member of every generator");
    // What each generator draws alone, sorted by name as a fleet is.
    let mut alone: Vec<String> = generators.iter().flat_map(|g| members(&fleet(std::slice::from_ref(g)))).collect();
    alone.sort_by_key(|m| serde_json::from_str::<serde_json::Value>(m).unwrap()["name"].as_str().unwrap().to_string());
    assert_eq!(all, alone);
    // Each member with its own generator's control-plane duration (generator i: i + 1 minutes).
    for (i, member) in scenario.fleet.iter().enumerate() {
        let generator: usize = member.name[1..member.name.find('-').unwrap()].parse().unwrap();
        let durations = scenario.models.member_durations[i].as_ref().expect("a generator's durations");
        let expected = format!("{:?}", fleetsim::engine::Duration::minutes(generator as i64 + 1));
        assert!(format!("{:?}", durations.control_plane).contains(&expected), "{} {durations:?}", member.name);
    }
    // Generator 7 fails on its plan; 3 on its first member; 41 and 54 only on the members that draw
    // a region whose name makes the member's name too long (54 rarely: in the second chunk); 12
    // and 13 draw the same names.
    let mut bad = generators.clone();
    bad[3] = bad[3].replace("g3-{region}", "G3_{region}");
    bad[7] = bad[7].replace(r#""count": 150"#, r#""count": 150, "stopped": 2"#);
    bad[41] = bad[41].replace("westeurope", &"w".repeat(45));
    bad[54] = bad[54].replace(r#""westeurope": 1"#, &format!(r#""westeurope": 1, "{}": 0.002"#, "w".repeat(45)));
    bad[13] = bad[13].replace("g13-", "g12-");
    let told = problems(1, &fleet(&bad));
    assert_eq!(told.len(), 6, "{told:#?}");
    assert!(told[0].starts_with("/memberGenerators/3/namePattern: generated member 1 "), "{told:#?}");
    assert!(told[1].starts_with("/memberGenerators/7/stopped: "), "{told:#?}");
    let mut numbers = Vec::new();
    for (line, g) in told[2..4].iter().zip([41, 54]) {
        let number: u64 = line
            .strip_prefix(&format!("/memberGenerators/{g}/namePattern: generated member "))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{told:#?}"));
        // The member's own number, in its name too.
        assert!(line.contains(&format!("-{number:0>3}\"")) || line.contains(&format!("-{number:0>4}\"")), "{line}");
        numbers.push(number);
    }
    assert!(numbers[0] > 1 && numbers[1] > 8192 - 8100, "{told:#?}");
    assert_eq!(
        told[4],
        "/memberGenerators/13: member \"g12-eastus-001\" (generated member 1) is defined twice (also as generated member 1 of /memberGenerators/12)"
    );
    assert_eq!(told[5], "/memberGenerators/13: … and 149 more like this");
    assert_eq!(problems(3, &fleet(&bad)), told);
}

#[test]
fn a_simulator_reset_between_replications_gives_what_a_fresh_simulation_gives() {
    // Every kind of per-replication state: windows and a Consistent selection (regions-2000), a
    // release rolling out per replication (late-regions), profiles generating runs (the one-year
    // example), gates, policies and a bad release. Replications in an order that leaves a different
    // predecessor's state each time, with and without a timeline (the one-year example, the
    // slowest, runs two).
    let steps = [(2, true), (0, false), (1, true), (2, false)];
    for (name, steps) in [
        ("quickstart", &steps[..]),
        ("regions-2000", &steps[..]),
        ("late-regions", &steps[..]),
        ("bad-release-canary", &steps[..]),
        ("autoupgrade-year", &steps[..2]),
    ] {
        let scenario = load_file(&root().join(format!("scenarios/{name}.json")), None).unwrap();
        let mut simulator = fleetsim::simulation::Simulator::new(&scenario);
        for &(replication, record_timeline) in steps {
            let options = SimOptions { record_timeline, replication };
            let fresh = simulate(&scenario, options);
            let reused = simulator.run(options);
            if record_timeline {
                let files = |r| report::render(&ReportContext::new(&scenario, r)).unwrap();
                let (expected, got) = (files(&fresh), files(reused));
                assert_eq!(expected.len(), got.len(), "{name} {options:?}");
                for ((path, a), (_, b)) in expected.iter().zip(&got) {
                    assert!(a == b, "{name} {options:?}: {} differs after a reset", path.display());
                }
            }
            let metrics = fleetsim::sweep::Metric::ALL;
            let collect = |r| fleetsim::sweep::metrics::collect(r, &metrics);
            assert_eq!(format!("{:?}", collect(&fresh)), format!("{:?}", collect(reused)), "{name} {options:?}");
        }
    }
}

/// `status/<run>.json` is the run's resource serialized with its member lists left empty, with each
/// list written into its place by `status::write_run_resource`: the same bytes as serializing the
/// resource whole. Examples with one run and with many (member ids written once per report),
/// failures, errors, messages with quotes, Pending members held by their region, members with
/// their own `clusterResourceId`, and a group no member is in.
#[test]
fn status_files_with_members_written_apart_have_the_serialized_resource_s_bytes() {
    use fleetsim::report::status;
    let runs: Vec<serde_json::Value> = [1, 2]
        .map(|n| {
            serde_json::json!({"name": format!("run{n}"),
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "all", "groups": [
                {"name": "a", "memberSelector": {"byLabel": "ring=a"}},
                {"name": "none", "memberSelector": {"byLabel": "ring=c"}},
                {"name": "b", "memberSelector": {"byLabel": "ring=b"}}]}]}})
        })
        .into();
    let inline = serde_json::json!({
        "name": "ids", "seed": 3, "start": "2026-03-02T08:00:00Z",
        "members": [
            {"name": "m-east", "region": "eastus", "kubernetesVersion": "1.33.1", "labels": {"ring": "a"},
             "clusterResourceId": "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-prod/providers/Microsoft.ContainerService/managedClusters/aks-east"},
            {"name": "m-west", "region": "westus2", "kubernetesVersion": "1.33.1", "labels": {"ring": "b"}}
        ],
        "models": {"failure": {"probability": 0.5}},
        "updateRuns": runs
    });
    let dir = tempfile::tempdir().unwrap();
    let inline_path = dir.path().join("ids.json");
    std::fs::write(&inline_path, inline.to_string()).unwrap();
    let mut paths: Vec<std::path::PathBuf> = ["quickstart", "autoupgrade-year", "bad-release-canary", "late-regions"]
        .iter()
        .map(|name| root().join(format!("scenarios/{name}.json")))
        .collect();
    paths.push(inline_path);
    let mut seen = [false; 4];
    for path in &paths {
        let scenario = load_file(path, None).unwrap();
        let result = simulate(&scenario, SimOptions::default());
        let ctx = ReportContext::new(&scenario, &result);
        for i in 0..result.runs.len() {
            let whole = report::to_json(&status::run_resource(&ctx, i)).unwrap();
            let mut apart = Vec::new();
            status::write_run_resource(&ctx, i, &mut apart).unwrap();
            let name = format!("{}: {}", path.display(), result.runs[i].name);
            assert!(apart == whole, "{name}: the status files differ");
            // What the member lists held, looked at in the members themselves.
            let resource: serde_json::Value = serde_json::from_slice(&whole).unwrap();
            for group in resource["properties"]["status"]["stages"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|stage| stage["groups"].as_array().unwrap())
            {
                let members = group["members"].as_array().unwrap();
                seen[2] |= members.is_empty();
                for member in members {
                    seen[0] |= member["message"].as_str().is_some_and(|m| m.contains('"'));
                    seen[1] |= member["status"]["error"].is_object();
                    seen[3] |= member["clusterResourceId"].as_str().unwrap().contains("/resourceGroups/rg-prod/");
                }
            }
        }
    }
    assert_eq!(seen, [true; 4], "escaped quotes, member errors, an empty group and a member's own cluster id");
}

/// `--dump-fleet` keeps every generated member's DTO and a plain load does not (its default pool,
/// when it has no image to draw, is not even made): the members built are the same either way,
/// for the examples and for generators without `nodePools` where Ubuntu images are, and are not,
/// released.
#[test]
fn generated_members_are_the_same_whether_their_dtos_are_kept_or_not() {
    let default_pools = r#"{"name": "t", "seed": 4, "start": "2026-03-02T00:00:00Z",
        "releases": {"kubernetes": [{"version": "1.33.1", "available": "-30d"}],
            "nodeImages": [{"version": "AKSUbuntu-2204gen2containerd-202602.10.0", "available": {"default": "-20d", "regions": {"centralindia": "+5d"}}},
                {"version": "AKSUbuntu-2204gen2containerd-202602.17.0", "available": {"default": "-13d", "regions": {"westeurope": "+1d", "centralindia": "+5d"}}}]},
        "memberGenerators": [
            {"count": 30, "namePattern": "d-{region}-{index}", "regions": {"eastus": 1, "westeurope": 1, "centralindia": 1}, "kubernetesVersions": {"1.33.1": 1}},
            {"count": 5, "namePattern": "w-{index}", "regions": {"eastus": 1}, "kubernetesVersions": {"1.33.1": 1}, "nodeImageAge": [0, 1]}]}"#;
    let mut texts = vec![("default pools".to_string(), default_pools.to_string())];
    for name in ["autoupgrade-year", "bad-release-spread", "late-regions", "quickstart", "regions-2000"] {
        texts.push((name.to_string(), std::fs::read_to_string(root().join(format!("scenarios/{name}.json"))).unwrap()));
    }
    for (name, text) in texts {
        let plain = fleetsim::scenario::parse_str(&text, None).unwrap();
        let (kept, dtos) = fleetsim::scenario::parse_str_with_fleet(&text, None).unwrap();
        assert_eq!(plain.fleet.len(), dtos.len(), "{name}");
        // Compared as they print: every field of every member and its pools.
        for (a, b) in plain.fleet.iter().zip(&kept.fleet) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        }
        if name == "default pools" {
            // The generators' regions have two images of the family, one, and none.
            let images = |region: &str| {
                let members = plain.fleet.iter().filter(|m| m.region == region);
                let image =
                    |m: &fleetsim::fleet::Member| m.node_pools[0].node_image_version.as_ref().map(|v| v.to_string());
                members.map(image).collect::<std::collections::BTreeSet<_>>()
            };
            let (ten, seventeen) =
                ("AKSUbuntu-2204gen2containerd-202602.10.0", "AKSUbuntu-2204gen2containerd-202602.17.0");
            assert_eq!(images("eastus"), [Some(ten.to_string()), Some(seventeen.to_string())].into());
            assert_eq!(images("westeurope"), [Some(ten.to_string())].into());
            assert_eq!(images("centralindia"), [None].into());
        }
    }
}
