//! Tests: sweeps — validation with paths, common random numbers, thread-count independence, resume
//! after kill -9, shards and merge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetsim::sweep::{self, ExecOptions, Shard, SweepError, SweepPlan};

use crate::support::{binary, root};

/// A 40-member fleet, two stages, a release that is bad for GPU clusters.
const BASE: &str = r#"{
  "name": "small-base",
  "seed": 7,
  "start": "2026-03-02T08:00:00Z",
  "settings": { "horizon": "10d" },
  "memberGenerators": [{
    "count": 40, "namePattern": "m-{index}", "regions": { "eastus": 1, "westeurope": 1 },
    "labels": { "ring": { "canary": 1, "broad": 3 }, "workload": { "web": 4, "gpu": 1 } },
    "kubernetesVersions": { "1.33.1": 1 }
  }],
  "models": {
    "failure": { "patchProbability": 0.02 },
    "badReleases": [{ "version": "1.33.2", "failureFraction": 0.3, "memberSelector": "workload=gpu" }]
  },
  "updateStrategies": { "prod": { "stages": [
    { "name": "canary", "memberSelector": { "byLabel": "ring=canary" }, "maxConcurrency": 2, "maxAllowedFailures": 1 },
    { "name": "broad", "memberSelector": { "byLabel": "ring=broad" }, "maxConcurrency": 5, "maxAllowedFailures": 2 }
  ] } },
  "updateRuns": [{ "name": "patch", "updateStrategyId": "prod",
    "managedClusterUpdate": { "upgrade": { "type": "Full", "kubernetesVersion": "1.33.2" } } }]
}"#;

fn sweep_text(replications: u64) -> String {
    format!(
        r#"{{
  "name": "small-sweep",
  "scenario": "base.json",
  "parameters": [
    {{ "name": "broadConcurrency", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "values": [1, 5, 20] }},
    {{ "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 3] }}
  ],
  "replications": {replications}
}}"#
    )
}

/// A temporary folder with `base.json` and `sweep.json`.
fn workspace(sweep: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.json"), BASE).unwrap();
    let path = dir.path().join("sweep.json");
    std::fs::write(&path, sweep).unwrap();
    (dir, path)
}

fn plan(path: &Path) -> SweepPlan {
    match sweep::load(path) {
        Ok(p) => p,
        Err(problems) => {
            panic!("invalid sweep:\n{}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// Problems of an invalid sweep given as text (with the small base scenario next to it).
fn problems(sweep: &str) -> Vec<String> {
    let (_dir, path) = workspace(sweep);
    match sweep::load(&path) {
        Ok(_) => panic!("expected the sweep to be invalid"),
        Err(problems) => {
            problems.iter().map(|p| p.to_string().replace(&path.display().to_string(), "sweep.json")).collect()
        }
    }
}

fn options(threads: usize) -> ExecOptions {
    ExecOptions { threads, shard: None, progress: false }
}

/// Every file of a folder (relative path → bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::support::folder_files(dir)
}

#[track_caller]
fn assert_same_files(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{name} differs");
    }
}

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    reader.records().map(|r| header.iter().cloned().zip(r.unwrap().iter().map(str::to_string)).collect()).collect()
}

// ----- sweep files ---------------------------------------------------------------------------------

#[test]
fn cartesian_points_vary_the_last_parameter_fastest() {
    let (_dir, path) = workspace(&sweep_text(2));
    let plan = plan(&path);
    let points: Vec<String> = plan.points.iter().map(|p| format!("{}/{}", p[0], p[1])).collect();
    assert_eq!(points, ["1/0", "1/3", "5/0", "5/3", "20/0", "20/3"]);
    assert_eq!(plan.jobs(), 12);
    assert_eq!((plan.root_seed, plan.scenario_name.as_str()), (7, "small-base"));
    let point = plan.build_point(3).unwrap();
    assert_eq!(point.runs[0].plan.stages[1].max_concurrency, 5);
    assert_eq!(point.runs[0].plan.stages[1].max_allowed_failures, 3);
}

#[test]
fn zip_ranges_and_sampling() {
    let zipped = r#"{"name": "z", "scenario": "base.json", "combine": "zip", "replications": 1, "parameters": [
        {"pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "range": {"from": 2, "to": 8, "step": 3}},
        {"pointer": "/models/failure/patchProbability", "range": {"from": 0.1, "to": 0.3, "step": 0.1}}]}"#;
    let (_dir, path) = workspace(zipped);
    let points: Vec<String> = plan(&path).points.iter().map(|p| format!("{} {}", p[0], p[1])).collect();
    assert_eq!(points, ["2 0.1", "5 0.2", "8 0.3"]);

    let sampled = r#"{"name": "s", "scenario": "base.json", "replications": 1,
        "sample": {"method": "latinHypercube", "points": 8, "seed": 3}, "parameters": [
        {"pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "range": {"from": 1, "to": 8}},
        {"pointer": "/models/failure/patchProbability", "range": {"from": 0.0, "to": 0.4}}]}"#;
    let (_dir, path) = workspace(sampled);
    let plan = plan(&path);
    let mut concurrency: Vec<i64> = plan.points.iter().map(|p| p[0].as_i64().unwrap()).collect();
    concurrency.sort_unstable();
    assert_eq!(concurrency, (1..=8).collect::<Vec<_>>(), "a Latin hypercube uses every stratum once");
    let mut strata: Vec<u64> = plan.points.iter().map(|p| (p[1].as_f64().unwrap() / 0.05) as u64).collect();
    strata.sort_unstable();
    assert_eq!(strata, (0..8).collect::<Vec<_>>());
}

#[test]
fn inline_scenarios_work_like_files() {
    let inline = sweep_text(2).replace("\"base.json\"", BASE);
    let (_dir, path) = workspace(&sweep_text(2));
    let (_dir2, inline_path) = workspace(&inline);
    let (a, b) = (plan(&path), plan(&inline_path));
    assert_eq!(a.scenario_hash, b.scenario_hash, "the hash is of the scenario's content, not its file");
    assert_eq!(a.sweep_hash, b.sweep_hash);
}

#[test]
fn problems_name_the_sweep_field() {
    let bad_value = sweep_text(2).replace("[1, 5, 20]", "[1, \"0\", 60]");
    let found = problems(&bad_value);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("sweep.json: /parameters/0/values/1: value \"0\" at /updateStrategies/prod/stages/1/maxConcurrency: scenario /updateStrategies/prod/stages/1/maxConcurrency: "),
        "{found:#?}"
    );
    assert!(found[1].starts_with("sweep.json: /parameters/0/values/2: value 60 at "), "{found:#?}");

    let bad_pointer = sweep_text(2).replace("/stages/1/maxConcurrency", "/stages/7/maxConcurrency");
    let found = problems(&bad_pointer);
    assert_eq!(
        found,
        [
            "sweep.json: /parameters/0/pointer: /updateStrategies/prod/stages/7/maxConcurrency: \"7\" is not an index of the array at /updateStrategies/prod/stages (2 items)"
        ]
    );

    let cases = [
        (
            sweep_text(2).replace("\"replications\"", "\"replication\""),
            "sweep.json: /replication: unknown field \"replication\"; did you mean \"replications\"?",
        ),
        (sweep_text(0), "sweep.json: /replications: 0 replications: give 1–1000000"),
        (sweep_text(2).replace("base.json", "missing.json"), "sweep.json: /scenario: cannot read the scenario file"),
        (
            sweep_text(2).replace("\"replications\"", "\"metrics\": [\"makespan\"], \"replications\""),
            "sweep.json: /metrics/0: \"makespan\" is not a metric",
        ),
        (sweep_text(2).replace("broadFailures", "broadConcurrency"), "sweep.json: /parameters/1/name: two parameters"),
        (
            sweep_text(2).replace("broadFailures", "seed"),
            "sweep.json: /parameters/1/name: \"seed\" is an output column",
        ),
        (
            sweep_text(2).replace("\"values\": [0, 3]", "\"range\": {\"from\": 0, \"to\": 3}"),
            "sweep.json: /parameters/1/range: a range needs a `step`",
        ),
        (
            sweep_text(2).replace("\"replications\"", "\"combine\": \"zip\", \"replications\""),
            "sweep.json: /parameters/1: 2 values, but parameter 0 has 3",
        ),
        (
            sweep_text(2).replace(
                "\"replications\"",
                "\"combine\": \"zip\", \"sample\": {\"method\": \"random\", \"points\": 3}, \"replications\"",
            ),
            "sweep.json: /combine: `combine` does not apply when `sample` draws the points",
        ),
        (
            sweep_text(2)
                .replace("\"replications\"", "\"sample\": {\"method\": \"sobol\", \"points\": 3}, \"replications\""),
            "sweep.json: /sample/method: \"sobol\" is not one of",
        ),
    ];
    for (text, expected) in cases {
        let found = problems(&text);
        assert!(found.iter().any(|p| p.starts_with(expected)), "expected {expected:?} in {found:#?}");
    }
}

#[test]
fn problems_of_the_base_scenario_name_its_file() {
    let (dir, path) = workspace(&sweep_text(2));
    std::fs::write(dir.path().join("base.json"), BASE.replace("\"maxConcurrency\": 2", "\"maxConcurrency\": \"0\""))
        .unwrap();
    let Err(found) = sweep::load(&path) else { panic!("expected problems") };
    assert!(found[0].file.ends_with("base.json"), "{found:?}");
    assert_eq!(found[0].path, "/updateStrategies/prod/stages/0/maxConcurrency");
}

#[test]
fn clashing_values_are_reported_per_point() {
    // Alone, each value is fine; together, a group limit above its stage's limit is rejected.
    let text = r#"{"name": "clash", "scenario": "base.json", "replications": 1, "parameters": [
        {"name": "stage", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "values": [2, 10]},
        {"name": "groups", "pointer": "/updateStrategies/prod/stages/1/groups", "values": [
            [{"name": "g", "memberSelector": {"byLabel": "ring=broad"}, "maxConcurrency": 5}]]}]}"#;
    let found = problems(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("sweep.json: /parameters: point 0 (stage=2, groups=[{"), "{found:#?}");
}

#[test]
fn the_cli_validates_sweeps_and_prints_both_schemas() {
    let out = Command::new(binary())
        .args(["validate", "scenarios/sweep-concurrency.json"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("valid sweep \"sweep-concurrency\": 16 points × 200 replications = 3200"), "{stdout}");

    let (_dir, path) = workspace(&sweep_text(2).replace("[0, 3]", "[0, \"x\"]"));
    let out = Command::new(binary()).arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "sweep.json: /parameters/1/values/1: value \"x\" at /updateStrategies/prod/stages/1/maxAllowedFailures"
        ),
        "{stderr}"
    );

    let out =
        Command::new(binary()).args(["run", "scenarios/sweep-concurrency.json"]).current_dir(root()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a sweep file: run it with `fleetsim sweep"));

    let schema = |args: &[&str]| -> serde_json::Value {
        let out = Command::new(binary()).arg("schema").args(args).output().unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let both = schema(&[]);
    assert_eq!(both["anyOf"].as_array().map(Vec::len), Some(3), "scenario, sweep and tune files");
    assert!(schema(&["sweep"])["properties"]["parameters"].is_object());
    assert!(schema(&["scenario"])["properties"]["updateStrategies"].is_object());
}

// ----- running ---------------------------------------------------------------------------------------

/// Two `fleetsim sweep` processes, one thread and two, write byte-identical folders.
#[test]
fn sweeps_in_separate_processes_at_one_and_two_threads_give_the_same_bytes() {
    let (dir, path) = workspace(&sweep_text(6));
    let outputs: Vec<std::path::PathBuf> = ["1", "2"]
        .iter()
        .map(|threads| {
            let out = dir.path().join(format!("threads-{threads}"));
            let status = Command::new(binary())
                .args(["sweep", "--quiet", "--threads", threads, "--out"])
                .arg(&out)
                .arg(&path)
                .status()
                .unwrap();
            assert!(status.success());
            out
        })
        .collect();
    assert_same_files(&outputs[0], &outputs[1]);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let (dir, path) = workspace(&sweep_text(12));
    let plan = plan(&path);
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let report = sweep::run(&plan, &one, options(1)).unwrap();
    assert_eq!((report.jobs, report.ran, report.already_done, report.finalized), (72, 72, 0, true));
    sweep::run(&plan, &two, options(2)).unwrap();
    assert_same_files(&one, &two);
    let names: Vec<String> = files(&one).into_keys().collect();
    let expected = ["journal.jsonl", "manifest.json", "points.csv", "points/0.json", "points/1.json", "points/2.json"];
    assert!(expected.iter().all(|e| names.contains(&e.to_string())), "{names:?}");
    assert!(names.contains(&"results.csv".to_string()) && names.contains(&"summary.csv".to_string()));

    let results = csv_rows(&one.join("results.csv"));
    assert_eq!(results.len(), 72);
    assert_eq!(
        results[0].keys().cloned().collect::<Vec<_>>().len(),
        23,
        "point, 2 parameters, replication, seed, run and 17 metrics"
    );
    assert_eq!((results[13]["point"].as_str(), results[13]["replication"].as_str()), ("1", "1"));
    let summary = csv_rows(&one.join("summary.csv"));
    assert_eq!(summary.len(), 6 * 17, "17 rows per point: 16 numeric metrics and runFailed");
    let failed = summary.iter().find(|r| r["metric"] == "runFailed").unwrap();
    let expected_failed = results.iter().take(12).filter(|r| r["runState"] == "Failed").count() as f64 / 12.0;
    assert_eq!(failed["mean"], format!("{expected_failed:.4}"));
}

#[test]
fn chart_data_follows_the_summary() {
    use fleetsim::sweep::report::{ChartData, charts_of_folder};
    let (dir, path) = workspace(&sweep_text(6));
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(2)).unwrap();
    let charts = charts_of_folder(&out).unwrap();
    let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert!(stems.contains(&"sweep-hoursTo90PctUpgraded") && stems.contains(&"sweep-pareto-blast-radius"), "{stems:?}");
    assert!(stems.contains(&"paired-runFailed"), "paired differences are charted: {stems:?}");
    assert!(!stems.iter().any(|s| s.contains("makespan")), "makespan is never a chart axis: {stems:?}");
    let heatmap = charts.iter().find(|c| c.file_stem == "sweep-runFailed").unwrap();
    let ChartData::Heatmap { xs, ys, values, .. } = &heatmap.data else {
        panic!("two parameters on a grid: a heatmap")
    };
    assert_eq!(
        (xs.as_slice(), ys.as_slice()),
        (["1", "5", "20"].map(String::from).as_slice(), ["0", "3"].map(String::from).as_slice())
    );
    let summary = csv_rows(&out.join("summary.csv"));
    let p3 = summary.iter().find(|r| r["point"] == "3" && r["metric"] == "runFailed").unwrap();
    assert_eq!(values[1][1].map(|v| format!("{v:.4}")), Some(p3["mean"].clone()), "point 3 is (5, 3)");
    let pareto = charts.iter().find(|c| c.file_stem == "sweep-pareto-run-failed").unwrap();
    let ChartData::Pareto { points, .. } = &pareto.data else { panic!("a scatter") };
    // Only points where some run reached 90 % upgraded have a speed to plot: never the time of a
    // failure.
    let reached: Vec<&String> = summary
        .iter()
        .filter(|r| r["metric"] == "hoursTo90PctUpgraded" && r["n"] != "0")
        .map(|r| &r["point"])
        .collect();
    assert_eq!(points.len(), reached.len());
    assert!(points.len() < 6, "a point that never reached 90 % is left out");
    assert!(points.iter().any(|p| p.0 == "broadConcurrency=5, broadFailures=3"));

    let manifest = fleetsim::sweep::folder::Manifest::read(&out).unwrap();
    let table = fleetsim::sweep::folder::PointTable::read(&out, &manifest).unwrap();
    let rows = fleetsim::sweep::finish::read_summary(&out, &table).unwrap();
    let paired = fleetsim::sweep::finish::read_paired(&out, &table).unwrap();
    let (header, body) = fleetsim::sweep::report::index_table(&table, &rows, &paired);
    assert_eq!(header[..3], ["point", "broadConcurrency", "broadFailures"]);
    assert_eq!(body.len(), 6);
    assert_eq!(body[3][..3], ["3", "5", "3"]);
    assert!(body[3][3].ends_with("/6)"), "hours to 90 % upgraded counts the runs that got there: {}", body[3][3]);
}

#[test]
fn replication_r_shares_its_random_numbers_across_points() {
    // A parameter that changes nothing the simulation sees: every point must give the same results,
    // replication by replication (common random numbers), while replications differ from each other.
    let text = sweep_text(8).replace(
        r#"{ "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 3] }"#,
        r#"{ "name": "note", "pointer": "/description", "values": ["a", "b"] }"#,
    );
    let (dir, path) = workspace(&text);
    sweep::run(&plan(&path), &dir.path().join("out"), options(2)).unwrap();
    let rows = csv_rows(&dir.path().join("out/results.csv"));
    let metrics = |r: &BTreeMap<String, String>| {
        r.iter()
            .filter(|(k, _)| !["point", "note", "replication"].contains(&k.as_str()))
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>()
    };
    for concurrency in 0..3 {
        for r in 0..8 {
            let a = &rows[concurrency * 16 + r];
            let b = &rows[concurrency * 16 + 8 + r];
            assert_eq!((a["note"].as_str(), b["note"].as_str()), ("a", "b"));
            assert_eq!(
                metrics(a),
                metrics(b),
                "replication {r} differs between points that differ only in /description"
            );
        }
    }
    let distinct: std::collections::BTreeSet<Vec<String>> = rows[..8].iter().map(metrics).collect();
    assert!(distinct.len() > 1, "replications should differ from each other");
}

#[test]
fn sweeps_skip_the_timeline_without_changing_any_metric() {
    // Sweeps simulate with `record_timeline: false` for speed; every metric must be what a full run
    // (as `fleetsim run` does it) gives.
    use fleetsim::simulation::{SimOptions, simulate};
    use fleetsim::sweep::metrics::{Metric, collect};
    let (_dir, path) = workspace(&sweep_text(1));
    let plan = plan(&path);
    for p in 0..plan.points.len() {
        let scenario = plan.build_point(p).unwrap();
        for replication in 0..6 {
            let lean = collect(&simulate(&scenario, SimOptions { record_timeline: false, replication }), &Metric::ALL);
            let full = collect(&simulate(&scenario, SimOptions { record_timeline: true, replication }), &Metric::ALL);
            assert_eq!(lean, full, "point {p}, replication {replication}");
        }
    }
}

#[test]
fn the_manifest_command_reproduces_a_replication() {
    let (dir, path) = workspace(&sweep_text(4));
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(2)).unwrap();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["reproduce"]["command"],
        "fleetsim run points/{point}.json --seed {seed} --replication {replication}"
    );
    assert_eq!(manifest["crates"]["rand_chacha"], "0.9.0");
    let row =
        csv_rows(&out.join("results.csv")).into_iter().find(|r| r["point"] == "4" && r["replication"] == "3").unwrap();
    let command = manifest["reproduce"]["command"]
        .as_str()
        .unwrap()
        .replace("{point}", "4")
        .replace("{seed}", &row["seed"])
        .replace("{replication}", "3");
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    let report = dir.path().join("replay");
    let status =
        Command::new(binary()).args(&args).arg("--out").arg(&report).arg("--quiet").current_dir(&out).status().unwrap();
    assert!(status.success());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("summary.json")).unwrap()).unwrap();
    let run = &summary["runs"][0];
    assert_eq!(run["state"], row["runState"].as_str());
    assert_eq!(run["makespanHours"].as_f64(), row["makespanHours"].parse().ok());
    assert_eq!(run["blastRadius"].to_string(), row["blastRadius"]);
    assert_eq!(run["peakConcurrency"].to_string(), row["peakConcurrency"]);
    assert_eq!(run["members"]["byState"]["Failed"].as_u64().unwrap_or(0).to_string(), row["failedMembers"]);
}

// ----- resume ----------------------------------------------------------------------------------------

#[test]
fn a_finished_sweep_reruns_nothing_and_a_partial_one_only_the_rest() {
    let (dir, path) = workspace(&sweep_text(10));
    let plan = plan(&path);
    let (reference, resumed) = (dir.path().join("reference"), dir.path().join("resumed"));
    sweep::run(&plan, &reference, options(2)).unwrap();
    let again = sweep::run(&plan, &reference, options(2)).unwrap();
    assert_eq!((again.ran, again.already_done), (0, 60));

    // Keep 25 finished lines and a torn 26th, as a kill in the middle of a write would.
    sweep::run(&plan, &resumed, options(1)).unwrap();
    let journal = std::fs::read_to_string(resumed.join("journal.jsonl")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let mut partial: String = lines[..25].iter().map(|l| format!("{l}\n")).collect();
    partial.push_str(&lines[25][..lines[25].len() / 2]);
    std::fs::write(resumed.join("journal.jsonl"), partial).unwrap();
    std::fs::remove_file(resumed.join("results.csv")).unwrap();
    std::fs::remove_file(resumed.join("points/5.json")).unwrap();
    let report = sweep::run(&plan, &resumed, options(2)).unwrap();
    assert_eq!((report.ran, report.already_done, report.unreadable_lines), (35, 25, 0));
    assert_same_files(&reference, &resumed);
}

#[test]
fn a_sweep_killed_with_sigkill_resumes_to_the_same_files() {
    let (dir, path) = workspace(&sweep_text(400));
    let (killed, reference) = (dir.path().join("killed"), dir.path().join("reference"));
    let journal = killed.join("journal.jsonl");
    let mut child = Command::new(binary())
        .args(["sweep", "--threads", "2", "--quiet", "--out"])
        .arg(&killed)
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let lines = || std::fs::read(&journal).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
    while lines() < 100 {
        assert!(Instant::now() < deadline, "the sweep wrote no journal");
        assert!(child.try_wait().unwrap().is_none(), "the sweep finished before it could be killed");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done_at_kill = lines();
    assert!(done_at_kill < 2400, "the sweep was not interrupted ({done_at_kill} lines)");
    assert!(!killed.join("results.csv").exists());

    let out =
        Command::new(binary()).args(["sweep", "--threads", "2", "--out"]).arg(&killed).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ran = 2400 - done_at_kill;
    assert!(stdout.contains(&format!("{ran} of 2400 replications run now ({done_at_kill} found done)")), "{stdout}");

    sweep::run(&plan(&path), &reference, options(2)).unwrap();
    assert_same_files(&reference, &killed);
}

#[test]
fn a_folder_of_another_sweep_is_refused() {
    // Fewer replications than the folder holds is another sweep (more is a growth, below).
    let (dir, path) = workspace(&sweep_text(3));
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(1)).unwrap();
    std::fs::write(&path, sweep_text(2)).unwrap();
    let Err(SweepError::Conflict(message)) = sweep::run(&plan(&path), &out, options(1)) else {
        panic!("expected a conflict")
    };
    assert!(message.contains("holds the results of another sweep (\"small-sweep\", sha256:"), "{message}");

    let cli = Command::new(binary()).args(["sweep", "--quiet", "--out"]).arg(&out).arg(&path).output().unwrap();
    assert_eq!(cli.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cli.stderr).starts_with("error: "), "one clear line");

    let stranger = dir.path().join("stranger");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::write(stranger.join("notes.txt"), "mine").unwrap();
    let Err(SweepError::Conflict(message)) = sweep::run(&plan(&path), &stranger, options(1)) else {
        panic!("expected a conflict")
    };
    assert!(message.contains("is not a sweep folder"), "{message}");

    // A file as --out is refused and left as it was.
    std::fs::write(dir.path().join("afile"), "mine").unwrap();
    let cli = Command::new(binary())
        .args(["sweep", "--quiet", "--out", "afile", "sweep.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cli.stderr).contains("afile exists and is not a folder"));
    assert_eq!(std::fs::read_to_string(dir.path().join("afile")).unwrap(), "mine");
}

/// Raising `replications` keeps the finished replications and runs only the new ones; the folder
/// then holds exactly what a fresh sweep with the larger count writes.
#[test]
fn a_sweep_grows_when_its_replications_grow() {
    let (dir, path) = workspace(&sweep_text(2));
    let grown = dir.path().join("grown");
    let first = sweep::run(&plan(&path), &grown, options(2)).unwrap();
    assert_eq!((first.jobs, first.ran), (12, 12));
    std::fs::write(&path, sweep_text(3)).unwrap();
    let second =
        Command::new(binary()).args(["sweep", "--threads", "2", "--out"]).arg(&grown).arg(&path).output().unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains("6 of 18 replications run now (12 found done)"), "{stdout}");
    let fresh = dir.path().join("fresh");
    sweep::run(&plan(&path), &fresh, options(1)).unwrap();
    assert_same_files(&grown, &fresh);

    // A shard folder cannot grow: its jobs are spread by the replication count.
    std::fs::write(&path, sweep_text(2)).unwrap();
    let shard_dir = dir.path().join("shard");
    let shard = ExecOptions { shard: Some(Shard::parse("1/2").unwrap()), ..options(1) };
    sweep::run(&plan(&path), &shard_dir, shard).unwrap();
    std::fs::write(&path, sweep_text(3)).unwrap();
    let Err(SweepError::Conflict(message)) = sweep::run(&plan(&path), &shard_dir, shard) else {
        panic!("expected a conflict")
    };
    assert!(message.contains("a shard cannot grow"), "{message}");
}

/// Two processes on one folder: the second exits 2 at once, naming the folder; the first's
/// results are untouched.
#[test]
fn a_second_process_on_a_locked_sweep_folder_exits_at_once() {
    let (dir, path) = workspace(&sweep_text(2));
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(1)).unwrap();
    let before = files(&out);
    let lock = sweep::FolderLock::take(&out).unwrap();
    let started = Instant::now();
    let cli = Command::new(binary()).args(["sweep", "--quiet", "--out"]).arg(&out).arg(&path).output().unwrap();
    assert_eq!(cli.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert!(stderr.contains("is being written by another fleetsim process"), "{stderr}");
    assert!(stderr.contains(&out.display().to_string()), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(files(&out) == before, "the locked folder is untouched");
    // A new folder is locked from its creation on, and released when the process ends.
    drop(lock);
    let again = Command::new(binary()).args(["sweep", "--quiet", "--out"]).arg(&out).arg(&path).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
}

// ----- shards ----------------------------------------------------------------------------------------

#[test]
fn merged_shards_equal_an_unsharded_run() {
    let (dir, path) = workspace(&sweep_text(7));
    let plan = plan(&path);
    let whole = dir.path().join("whole");
    sweep::run(&plan, &whole, options(2)).unwrap();
    let shard_dirs: Vec<PathBuf> = (1..=3).map(|k| dir.path().join(format!("shard-{k}"))).collect();
    for (k, shard_dir) in shard_dirs.iter().enumerate().rev() {
        let shard = Shard { index: k as u64 + 1, count: 3 };
        let report = sweep::run(&plan, shard_dir, ExecOptions { shard: Some(shard), ..options(1) }).unwrap();
        assert_eq!(report.ran, 14, "42 jobs split 14/14/14");
        assert!(!report.finalized && !shard_dir.join("results.csv").exists());
    }
    // Merge through the CLI, in any order of folders.
    let merged = dir.path().join("merged");
    let status = Command::new(binary())
        .args(["merge", "--quiet"])
        .arg(&merged)
        .args([&shard_dirs[2], &shard_dirs[0], &shard_dirs[1]])
        .status()
        .unwrap();
    assert!(status.success());
    assert_same_files(&whole, &merged);
    // `--out DIR` as for run and sweep; merging again into the merged folder replaces it.
    for out in [dir.path().join("merged-out"), merged.clone()] {
        let status =
            Command::new(binary()).args(["merge", "--quiet", "--out"]).arg(&out).args(&shard_dirs).status().unwrap();
        assert!(status.success());
        assert_same_files(&whole, &out);
    }
    // Never over a file, the working directory, or a folder of something else; nothing left behind.
    std::fs::write(dir.path().join("afile"), "mine").unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/a.txt"), "mine").unwrap();
    let before = std::fs::read_dir(dir.path()).unwrap().count();
    for out in ["afile", ".", "notes"] {
        let cli = Command::new(binary())
            .args(["merge", "--quiet", "--out", out])
            .args(&shard_dirs)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(cli.status.code(), Some(2), "{out}: {}", String::from_utf8_lossy(&cli.stderr));
        assert_eq!(String::from_utf8_lossy(&cli.stderr).lines().count(), 1);
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("afile")).unwrap(), "mine");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/a.txt")).unwrap(), "mine");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before);
    let cli = Command::new(binary()).args(["merge", "--quiet"]).arg(&shard_dirs[0]).output().unwrap();
    assert_eq!(cli.status.code(), Some(2), "an output folder and no shard");

    let Err(SweepError::Conflict(message)) = sweep::merge(&dir.path().join("m2"), &shard_dirs[..2]) else {
        panic!("expected a conflict")
    };
    assert_eq!(message, "shards missing: 3/3");
    let journal = shard_dirs[1].join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(&journal, text.lines().skip(1).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let Err(SweepError::Conflict(message)) = sweep::merge(&dir.path().join("m3"), &shard_dirs) else {
        panic!("expected a conflict")
    };
    assert!(message.contains("(shard 2/3) is not finished: the journal has 13 of 14 replications"), "{message}");
    let Err(SweepError::Conflict(message)) = sweep::merge(&dir.path().join("m4"), std::slice::from_ref(&whole)) else {
        panic!("expected a conflict")
    };
    assert!(message.contains("is not a shard folder"), "{message}");
    // A shard folder that is missing, or holds no sweep, is a wrong argument (exit 2), said in one line.
    let missing = dir.path().join("no-such-shard");
    let cli = Command::new(binary())
        .args(["merge", "--quiet", "--out"])
        .arg(dir.path().join("m5"))
        .arg(&shard_dirs[0])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("error: {} is not a sweep shard folder: it does not exist or is not a folder", missing.display())
    );
    let Err(SweepError::Conflict(message)) = sweep::merge(&dir.path().join("m6"), &[dir.path().join("notes")]) else {
        panic!("expected a conflict")
    };
    assert!(message.ends_with("is not a sweep shard folder: it has no manifest.json"), "{message}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..proptest::prelude::ProptestConfig::default() })]

    /// Workers finish in any order, so an interrupted journal holds any subset of the jobs, in any
    /// order, maybe with a torn last line: resuming from any of them ends with the reference files.
    #[test]
    fn any_interrupted_journal_resumes_to_the_same_files(
        keep in proptest::collection::vec(proptest::prelude::any::<bool>(), 24),
        order_seed in 0u64..1000,
        torn in 0usize..40,
    ) {
        let (dir, path) = workspace(&sweep_text(4));
        let plan = plan(&path);
        let (reference, resumed) = (dir.path().join("reference"), dir.path().join("resumed"));
        sweep::run(&plan, &reference, options(1)).unwrap();
        std::fs::create_dir(&resumed).unwrap();
        for name in ["manifest.json", "points.csv"] {
            std::fs::copy(reference.join(name), resumed.join(name)).unwrap();
        }
        let journal = std::fs::read_to_string(reference.join("journal.jsonl")).unwrap();
        let mut lines: Vec<&str> = journal.lines().zip(&keep).filter(|(_, k)| **k).map(|(l, _)| l).collect();
        let n = lines.len().max(1);
        for i in 0..lines.len() {
            lines.swap(i, (order_seed as usize * 7 + i * 13) % n);
        }
        let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        if let Some(cut) = journal.lines().nth(torn % 24) {
            text.push_str(&cut[..cut.len() / 3]);
        }
        std::fs::write(resumed.join("journal.jsonl"), text).unwrap();
        let report = sweep::run(&plan, &resumed, options(2)).unwrap();
        proptest::prop_assert_eq!(report.already_done, lines.len() as u64);
        proptest::prop_assert_eq!(report.ran, 24 - lines.len() as u64);
        assert_same_files(&reference, &resumed);
    }
}

// ----- metrics that cannot reward failing fast, and paired comparisons ------------------------------

#[test]
fn time_to_upgraded_is_empty_for_runs_that_never_get_there() {
    // Budget 0 in the broad stage: runs that trip it stop early, and their hours to 100 % upgraded
    // must be empty (never the time of the failure), with falseHalt empty too (a bad release was at
    // risk) and detectionHours set when a bad-release failure came before the halt.
    use fleetsim::simulation::{SimOptions, simulate};
    use fleetsim::sweep::metrics::{Metric, collect};
    let (_dir, path) = workspace(&sweep_text(1));
    let plan = plan(&path);
    let scenario = plan.build_point(1).unwrap(); // broadConcurrency 1, broadFailures 3
    let column = |m: Metric| Metric::ALL.iter().position(|x| *x == m).unwrap();
    let (mut stopped, mut completed) = (0, 0);
    for replication in 0..40 {
        let result = simulate(&scenario, SimOptions { record_timeline: false, replication });
        let cells = &collect(&result, &Metric::ALL)[0].cells;
        let state = &cells[column(Metric::RunState)];
        let t100 = &cells[column(Metric::HoursTo100PctUpgraded)];
        assert_eq!(cells[column(Metric::FalseHalt)], "", "a bad release was at risk: no false halt to speak of");
        let fraction: f64 = cells[column(Metric::BlastRadiusFraction)].parse().unwrap();
        assert!((0.0..=1.0).contains(&fraction));
        if state == "Completed" {
            completed += 1;
            // Failures within the budget leave members behind: then 100 % is never reached either.
            let clean = cells[column(Metric::FailedMembers)] == "0";
            assert_eq!(t100.parse::<f64>().is_ok_and(|h| h > 0.0), clean, "replication {replication}: {t100}");
            assert_eq!(cells[column(Metric::DetectionHours)], "");
        } else {
            stopped += 1;
            assert_eq!(t100, "", "replication {replication}: {state} run has no time to 100 %");
            if !cells[column(Metric::DetectionHours)].is_empty() {
                let d: f64 = cells[column(Metric::DetectionHours)].parse().unwrap();
                assert!(d >= 0.0);
            }
        }
    }
    assert!(stopped > 0 && completed > 0, "the case has both kinds: {stopped} stopped, {completed} completed");

    // Without the bad release, a run that stops is a false halt; one that completes is not.
    let mut good = serde_json::from_str::<serde_json::Value>(BASE).unwrap();
    good["models"].as_object_mut().unwrap().remove("badReleases");
    good["models"]["failure"]["patchProbability"] = serde_json::json!(0.1);
    let good = fleetsim::sweep::plan::build_value(good, None).unwrap();
    let mut seen = BTreeMap::new();
    for replication in 0..30 {
        let result = simulate(&good, SimOptions { record_timeline: false, replication });
        let cells = &collect(&result, &Metric::ALL)[0].cells;
        let expected = if cells[column(Metric::RunState)] == "Completed" { "0" } else { "1" };
        assert_eq!(cells[column(Metric::FalseHalt)], expected);
        assert_eq!(cells[column(Metric::BlastRadiusFraction)], "", "nothing was at risk");
        *seen.entry(expected).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 2, "both outcomes occur: {seen:?}");
}

#[test]
fn paired_differences_of_a_parameter_that_changes_nothing_are_zero() {
    // A parameter the simulation does not see: every paired difference is exactly 0 with a zero-width
    // interval and P(better) 0 (common random numbers), and the reference can be named.
    let text = sweep_text(8)
        .replace(
            r#"{ "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 3] }"#,
            r#"{ "name": "note", "pointer": "/description", "values": ["a", "b"] }"#,
        )
        .replace(r#""replications": 8"#, r#""replications": 8, "reference": {"broadConcurrency": 5, "note": "b"}"#);
    let (dir, path) = workspace(&text);
    let plan = plan(&path);
    assert_eq!(plan.reference, 3);
    let out = dir.path().join("out");
    sweep::run(&plan, &out, options(2)).unwrap();
    let paired = csv_rows(&out.join("paired.csv"));
    assert_eq!(paired.len(), 6 * 17);
    for row in paired.iter().filter(|r| r["point"] == "2" && r["n"] != "0") {
        assert_eq!(row["reference"], "3");
        assert_eq!((row["mean_diff"].as_str(), row["ci95_low"].as_str()), ("0.0000", "0.0000"), "{row:?}");
        assert!(["", "0.0000"].contains(&row["p_better"].as_str()), "{row:?}");
    }
    // Against a slower concurrency, the paired speed-up is negative (faster) in every replication
    // that reaches 90 %.
    let faster = paired.iter().find(|r| r["point"] == "5" && r["metric"] == "hoursTo90PctUpgraded" && r["n"] != "0");
    if let Some(row) = faster {
        assert!(row["mean_diff"].parse::<f64>().unwrap() <= 0.0, "{row:?}");
    }
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("vs point 3"), "the page shows the paired deltas");
}

#[test]
fn a_reference_that_matches_no_point_is_a_problem_at_its_pointer() {
    let text =
        sweep_text(2).replace(r#""replications": 2"#, r#""replications": 2, "reference": {"broadConcurrency": 7}"#);
    assert_eq!(problems(&text), ["sweep.json: /reference: no point of the sweep has these values"]);
    let text = sweep_text(2).replace(r#""replications": 2"#, r#""replications": 2, "reference": {"nope": 7}"#);
    let found = problems(&text);
    assert_eq!(found.len(), 1);
    assert!(found[0].starts_with("sweep.json: /reference/nope: \"nope\" is not a parameter"), "{found:?}");
}

#[test]
fn text_valued_parameters_get_line_charts() {
    use fleetsim::sweep::report::{ChartData, charts_of_folder};
    let text = sweep_text(3).replace(
        r#"{ "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 3] }"#,
        "",
    );
    let text = text
        .replace(r#""values": [1, 5, 20] },"#, r#""values": ["10%", "25%", "50%"] }"#)
        .replace("broadConcurrency", "broadShare");
    let (dir, path) = workspace(&text);
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(2)).unwrap();
    let charts = charts_of_folder(&out).unwrap();
    let line = charts.iter().find(|c| c.file_stem == "sweep-runFailed").unwrap();
    let ChartData::Line { categories, points, .. } = &line.data else { panic!("a line chart") };
    assert_eq!(categories.as_deref(), Some(["10%", "25%", "50%"].map(String::from).as_slice()));
    assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), [0.0, 1.0, 2.0]);
    assert!(out.join("charts/sweep-runFailed.svg").exists() && out.join("charts/paired-runFailed.svg").exists());
}

/// The sweep page says what was swept (description, base scenario, parameters, points,
/// replications, seed, reference, metrics), and its Pareto charts number the front points with a
/// key naming each, so that no two labels overlap.
#[test]
fn the_sweep_page_says_what_was_swept_and_keys_its_pareto_points() {
    let text = sweep_text(2).replace(
        "\"name\": \"small-sweep\",",
        "\"name\": \"small-sweep\", \"description\": \"Budgets against speed.\",",
    );
    let (dir, path) = workspace(&text);
    let out = dir.path().join("out");
    sweep::run(&plan(&path), &out, options(1)).unwrap();
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    for wanted in [
        "<p>Budgets against speed.</p>",
        "Base scenario &quot;small-base&quot;, parameters broadConcurrency (/updateStrategies/prod/stages/1/maxConcurrency)",
        "6 points, cartesian; 2 replications per point (12 in all), root seed 7",
        "paired against point 0 (broadConcurrency=1, broadFailures=0",
        "metrics: hoursTo50PctUpgraded",
    ] {
        assert!(page.contains(wanted), "{wanted:?} is on the page");
    }
    let svg = std::fs::read_to_string(out.join("charts/sweep-pareto-blast-radius.svg")).unwrap();
    let lines: Vec<&str> = svg.lines().map(str::trim).collect();
    assert_eq!(lines.iter().filter(|l| **l == "Pareto front").count(), 2, "the legend entry and the key's heading");
    assert!(lines.iter().any(|l| l.starts_with("broadConcurrency=")), "the key names the front points");
}
