//! Tests: `fleetsim tune` — validation with file and pointer, determinism across thread counts,
//! racing that never drops the best candidate of an exhaustive search, and honest output when no
//! candidate meets the constraints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use fleetsim::tune::{self, Status, TunePlan, search};

use crate::support::binary;

/// A 40-member fleet, two stages, a release that is bad for GPU clusters (half of those that get it
/// fail) and rare random failures.
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
    "failure": { "patchProbability": 0.005 },
    "badReleases": [{ "version": "1.33.2", "failureFraction": 0.5, "memberSelector": "workload=gpu" }]
  },
  "updateStrategies": { "prod": { "stages": [
    { "name": "canary", "memberSelector": { "byLabel": "ring=canary" }, "maxConcurrency": 2, "maxAllowedFailures": 0 },
    { "name": "broad", "memberSelector": { "byLabel": "ring=broad" }, "maxConcurrency": 5, "maxAllowedFailures": 2 }
  ] } },
  "updateRuns": [{ "name": "patch", "updateStrategyId": "prod",
    "managedClusterUpdate": { "upgrade": { "type": "Full", "kubernetesVersion": "1.33.2" } } }]
}"#;

fn tune_text(max_blast: f64, budget: u64) -> String {
    format!(
        r#"{{
  "name": "small-tune",
  "scenario": "base.json",
  "run": "patch",
  "worlds": [
    {{ "name": "good", "overrides": [
      {{ "pointer": "/models/badReleases", "value": [] }},
      {{ "pointer": "/models/failure", "value": {{ "patchProbability": 0 }} }} ] }},
    {{ "name": "noisy", "overrides": [ {{ "pointer": "/models/badReleases", "value": [] }} ] }},
    {{ "name": "bad" }}
  ],
  "space": [
    {{ "name": "broadConcurrency", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "values": [1, 3, 5, 10, 20] }},
    {{ "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 1, 2, 4] }}
  ],
  "objective": {{ "metric": "hoursTo100PctUpgraded", "statistic": "p90", "world": "good" }},
  "constraints": [
    {{ "metric": "blastRadius", "statistic": "mean", "world": "bad", "max": {max_blast} }},
    {{ "metric": "falseHalt", "statistic": "mean", "world": "noisy", "max": 0.3 }}
  ],
  "budget": {{ "replications": {budget}, "initial": 4, "maxPerCandidate": 64 }}
}}"#
    )
}

/// A temporary folder with `base.json` and `tune.json`.
fn workspace(tune: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.json"), BASE).unwrap();
    let path = dir.path().join("tune.json");
    std::fs::write(&path, tune).unwrap();
    (dir, path)
}

fn plan(path: &Path) -> TunePlan {
    match tune::load(path) {
        Ok(p) => p,
        Err(problems) => {
            panic!("invalid tune file:\n{}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))
        }
    }
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::support::folder_files(dir)
}

fn run_cli(path: &Path, out: &Path, threads: usize) {
    let status = Command::new(binary())
        .args(["tune", path.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", &threads.to_string(), "-q"])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn outputs_are_byte_identical_at_one_and_two_threads() {
    let (dir, path) = workspace(&tune_text(4.0, 20_000));
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_cli(&path, &one, 1);
    run_cli(&path, &two, 2);
    let (a, b) = (files(&one), files(&two));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs");
    }
    for name in
        ["recommendation.json", "candidates.csv", "pareto.csv", "index.html", "baseline/good.json", "baseline/bad.json"]
    {
        assert!(a.contains_key(name), "{name} is missing: {:?}", a.keys().collect::<Vec<_>>());
    }
    let recommendation: serde_json::Value = serde_json::from_slice(&a["recommendation.json"]).unwrap();
    let strategy = &recommendation["recommended"]["strategy"];
    assert!(strategy["stages"][1]["maxConcurrency"].is_string(), "limits are strings: {strategy}");
    assert!(a.contains_key("recommended/good.json"));
    let html = String::from_utf8(a["index.html"].clone()).unwrap();
    assert!(html.contains("id=\"recommendation\">Use ") || html.contains("id=\"recommendation\">Keep the base"));
    // The recommended scenario is runnable as written.
    let check =
        Command::new(binary()).args(["validate", one.join("recommended/bad.json").to_str().unwrap()]).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}

#[test]
fn racing_never_drops_the_best_candidate_of_an_exhaustive_search() {
    let (_dir, path) = workspace(&tune_text(4.0, 1_000_000));
    let plan = plan(&path);
    let full = plan.budget.max_per_candidate;
    // Exhaustive: every candidate with every replication, the best feasible objective (lowest index on ties).
    let mut best: Option<(usize, f64)> = None;
    for c in 0..plan.initial.len() {
        let e = search::evaluate(&plan, &plan.initial[c], full);
        if !search::feasible(&plan, &e) {
            continue;
        }
        let v = e.estimate(&plan.objective).unwrap().value;
        if best.is_none_or(|(_, b)| v < b) {
            best = Some((c, v));
        }
    }
    let (exhaustive, _) = best.expect("the small space has a feasible candidate");
    let result = search::search(&plan, 2, |_| {}).unwrap();
    assert_eq!(result.recommended, Some(exhaustive), "the race kept the exhaustive answer");
    assert_eq!(result.status[exhaustive], Status::Recommended);
    let left = result.left_in_round.iter().filter(|r| r.is_some()).count();
    assert!(left > 0, "the race eliminated some candidates early");
    assert!(
        result.spent < plan.initial.len() as u64 * plan.worlds.len() as u64 * full,
        "racing spent less than exhaustion"
    );
    // The survivors were evaluated with the same replications as the exhaustive search.
    assert_eq!(result.evaluations[exhaustive], search::evaluate(&plan, &plan.initial[exhaustive], full));
}

#[test]
fn no_feasible_candidate_is_said_plainly_with_the_closest_ones() {
    let (dir, path) = workspace(&tune_text(-1.0, 20_000));
    let out = dir.path().join("out");
    run_cli(&path, &out, 2);
    let found = files(&out);
    assert!(!found.keys().any(|k| k.starts_with("recommended")), "no recommended scenarios without a recommendation");
    let recommendation: serde_json::Value = serde_json::from_slice(&found["recommendation.json"]).unwrap();
    assert!(recommendation["recommended"].is_null());
    assert!(!recommendation["closest"].as_array().unwrap().is_empty());
    assert!(recommendation["summary"].as_str().unwrap().starts_with("No candidate meets the constraints"));
    let html = String::from_utf8(found["index.html"].clone()).unwrap();
    assert!(html.contains("No candidate meets the constraints") && html.contains("The closest candidates"));
    let csv = String::from_utf8(found["candidates.csv"].clone()).unwrap();
    assert!(!csv.contains(",recommended,") && csv.contains(",infeasible,"));
}

#[test]
fn bad_tune_files_give_one_line_per_problem_with_file_and_pointer() {
    let good = tune_text(4.0, 20_000);
    let cases: Vec<(String, &str)> = vec![
        (good.replace("\"run\": \"patch\"", "\"run\": \"patch\", \"colour\": 1"), "tune.json: /colour: "),
        (good.replace("\"world\": \"good\" }", "\"world\": \"nice\" }"), "tune.json: /objective/world: "),
        (
            good.replace("{ \"name\": \"bad\" }", "{ \"name\": \"worse\" }"),
            "tune.json: /worlds: a world named \"bad\" is required",
        ),
        (good.replace("/models/failure\"", "/models/nothing/here\""), "tune.json: /worlds/0/overrides/1/pointer: "),
        (good.replace("[1, 3, 5, 10, 20]", "[1, -3]"), "tune.json: /space/0/values/1: "),
        (good.replace("\"replications\": 20000", "\"replications\": 10"), "tune.json: /budget/replications: "),
        (good.replace("\"statistic\": \"p90\"", "\"statistic\": \"p42\""), "tune.json: /objective/statistic: "),
    ];
    for (text, expected) in cases {
        let (dir, path) = workspace(&text);
        let output = Command::new(binary()).current_dir(dir.path()).args(["tune", "tune.json", "-q"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{expected}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(!lines.is_empty() && lines.iter().all(|l| l.starts_with("tune.json: /")), "{expected}: {stderr}");
        assert!(lines.iter().any(|l| l.starts_with(expected)), "{expected}: {stderr}");
        let validate = Command::new(binary()).current_dir(dir.path()).args(["validate", "tune.json"]).output().unwrap();
        assert_eq!(validate.status.code(), Some(2));
        assert_eq!(String::from_utf8(validate.stderr).unwrap(), stderr, "validate reports the same lines");
        assert!(tune::load(&path).is_err());
    }
}

#[test]
fn the_cli_validates_tune_files_and_prints_their_schema() {
    let (dir, _path) = workspace(&tune_text(4.0, 20_000));
    let output = Command::new(binary()).current_dir(dir.path()).args(["validate", "tune.json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        String::from_utf8(output.stdout).unwrap().contains("valid tune file \"small-tune\": 20 candidates × 3 worlds")
    );
    let schema = Command::new(binary()).args(["schema", "tune"]).output().unwrap();
    assert!(schema.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert!(schema["properties"]["worlds"].is_object() && schema["properties"]["space"].is_object());
    for command in ["run", "sweep"] {
        let out = Command::new(binary()).current_dir(dir.path()).args([command, "tune.json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr, "tune.json: a tune file: run it with `fleetsim tune tune.json`\n");
    }
}

fn tune_cli(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(binary()).current_dir(dir).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
fn shards_round_by_round_and_a_resumed_tune_end_byte_identical_to_one_process() {
    let (dir, _path) = workspace(&tune_text(4.0, 20_000));
    let work = dir.path();
    tune_cli(work, &["tune", "tune.json", "--out", "whole", "--threads", "1", "-q"]);
    let whole = files(&work.join("whole"));
    assert!(whole.contains_key("journal.jsonl") && whole.contains_key("manifest.json"));
    // Two shards per round, merged after each round, until the merge writes the results.
    let mut rounds = 0;
    while !work.join("merged/recommendation.json").exists() {
        rounds += 1;
        assert!(rounds <= 12, "the sharded search ends");
        for (k, threads) in [(1, "1"), (2, "2")] {
            let shard = format!("{k}/2");
            let out = format!("shard-{k}");
            tune_cli(
                work,
                &[
                    "tune",
                    "tune.json",
                    "--shard",
                    &shard,
                    "--from",
                    "merged",
                    "--out",
                    &out,
                    "--threads",
                    threads,
                    "-q",
                ],
            );
        }
        tune_cli(work, &["tune", "tune.json", "--out", "merged", "--merge", "shard-1", "shard-2", "-q"]);
    }
    assert!(rounds > 1, "the search took several rounds: {rounds}");
    let merged = files(&work.join("merged"));
    assert_eq!(merged.keys().collect::<Vec<_>>(), whole.keys().collect::<Vec<_>>());
    for (name, bytes) in &whole {
        assert!(bytes == &merged[name], "{name} differs between one process and merged shards");
    }
    // A shard whose share is done says so and runs nothing more; a merge of a shard twice is refused.
    let again = Command::new(binary())
        .current_dir(work)
        .args(["tune", "tune.json", "--out", "merged2", "--merge", "shard-1", "shard-1"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("are both shard 1/2"));

    // Interrupted: the folder holds the manifest and the first half of the journal with a torn last
    // line. The same command resumes, runs only what is missing and ends with the same bytes.
    let cut = work.join("cut");
    std::fs::create_dir(&cut).unwrap();
    std::fs::write(cut.join("manifest.json"), &whole["manifest.json"]).unwrap();
    let journal = String::from_utf8(whole["journal.jsonl"].clone()).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let half = lines.len() / 2;
    let mut partial: String = lines[..half].iter().map(|l| format!("{l}\n")).collect();
    partial.push_str(&lines[half][..10]);
    std::fs::write(cut.join("journal.jsonl"), partial).unwrap();
    let output = tune_cli(work, &["tune", "tune.json", "--out", "cut", "--threads", "2"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let expected = format!("({} run now, {half} from the journal)", lines.len() - half);
    assert!(stdout.contains(&expected), "{expected} in {stdout}");
    let resumed = files(&cut);
    for (name, bytes) in &whole {
        assert!(bytes == &resumed[name], "{name} differs after a resume");
    }
    // Started again on a finished folder: nothing is simulated, nothing changes.
    let output = tune_cli(work, &["tune", "tune.json", "--out", "cut"]);
    assert!(
        String::from_utf8(output.stdout).unwrap().contains(&format!("(0 run now, {} from the journal)", lines.len()))
    );
    assert_eq!(files(&cut), whole);
    // Another space is another tune: its folder is refused.
    std::fs::write(work.join("other.json"), tune_text(4.0, 20_000).replace("[0, 1, 2, 4]", "[0, 1, 3]")).unwrap();
    let refused =
        Command::new(binary()).current_dir(work).args(["tune", "other.json", "--out", "cut", "-q"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("holds the simulations of another tune"));
}

#[test]
fn a_large_space_is_sampled_by_latin_hypercube_and_refined_around_the_best() {
    let text = tune_text(4.0, 40_000)
        .replace("\"values\": [1, 3, 5, 10, 20]", "\"range\": { \"from\": 1, \"to\": 20, \"step\": 1 }")
        .replace("\"maxPerCandidate\": 64 }", "\"maxPerCandidate\": 32, \"enumerate\": 50, \"sample\": 8 }");
    let (dir, path) = workspace(&text);
    let plan = plan(&path);
    assert!(plan.sampled && plan.combinations == 80, "20 × 4 combinations is above enumerate = 50");
    assert!(plan.initial.len() <= 9 && plan.initial.len() >= 6, "the baseline and the sample: {}", plan.initial.len());
    let result = search::search(&plan, 2, |_| {}).unwrap();
    assert!(result.candidates.len() > plan.initial.len(), "neighbours of the best joined the race");
    assert!(result.rounds.iter().any(|r| r.added > 0));
    let c = result.recommended.expect("a feasible candidate");
    assert!(search::feasible(&plan, &result.evaluations[c]));
    // The best's neighbours were all raced: it is a local optimum of the space.
    if c != 0 {
        for n in plan.neighbours(&result.candidates[c]) {
            assert!(plan.is_baseline(&n) || result.candidates.contains(&n), "{n:?} was raced");
        }
    }
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_cli(&path, &one, 1);
    run_cli(&path, &two, 2);
    assert_eq!(files(&one), files(&two));
    let recommendation: serde_json::Value = serde_json::from_slice(&files(&one)["recommendation.json"]).unwrap();
    assert_eq!(recommendation["search"]["sampled"], true);
    assert_eq!(recommendation["search"]["candidates"].as_u64(), Some(result.candidates.len() as u64));
}

#[test]
fn the_tuner_assigns_ring_labels_by_fraction_nested_and_stages_select_by_them() {
    let text = tune_text(4.0, 20_000).replace(
        "\"space\": [",
        r#""space": [
    { "name": "rings", "label": "ring", "assign": [
      { "canary": 0.05, "broad": "rest" }, { "canary": 0.1, "broad": "rest" }, { "canary": 0.2, "broad": "rest" } ] },"#,
    );
    let (dir, path) = workspace(&text);
    let plan = plan(&path);
    let canary = |levels: Vec<usize>| -> Vec<String> {
        let doc = plan.scenario_value(&tune::Candidate::at(levels), 0);
        assert!(doc.get("memberGenerators").is_none(), "the fleet is written out");
        let members = doc["members"].as_array().unwrap();
        assert_eq!(members.len(), 40);
        members
            .iter()
            .filter(|m| m["labels"]["ring"] == "canary")
            .map(|m| m["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (five, ten, twenty) = (canary(vec![0, 0, 0]), canary(vec![1, 0, 0]), canary(vec![2, 3, 1]));
    assert_eq!((five.len(), ten.len(), twenty.len()), (2, 4, 8));
    assert!(five.iter().all(|m| ten.contains(m)) && ten.iter().all(|m| twenty.contains(m)), "nested sets");
    assert_eq!(canary(vec![1, 4, 3]), ten, "the same members whatever else varies");
    // The baseline keeps the generator's own labels.
    assert!(plan.scenario_value(&tune::Candidate::BASELINE, 0).get("memberGenerators").is_some());
    let out = dir.path().join("out");
    run_cli(&path, &out, 2);
    let found = files(&out);
    let recommendation: serde_json::Value = serde_json::from_slice(&found["recommendation.json"]).unwrap();
    let words = recommendation["summary"].as_str().unwrap();
    if recommendation["recommended"]["candidate"] != 0 {
        let rings = recommendation["recommended"]["values"]["rings"].as_object().unwrap();
        let share = rings["canary"].as_f64().unwrap();
        let expected = format!("canary with {} % of the fleet ({} clusters)", share * 100.0, (share * 40.0).ceil());
        assert!(words.contains(&expected), "{expected} in {words}");
        let check = Command::new(binary())
            .args(["validate", out.join("recommended/good.json").to_str().unwrap()])
            .output()
            .unwrap();
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    }
    // Problems of a label field, each with its pointer.
    let bad = text.replace("{ \"canary\": 0.05, \"broad\": \"rest\" }", "{ \"canary\": 0.5, \"broad\": 0.4 }");
    let (dir, _) = workspace(&bad);
    let output = Command::new(binary()).current_dir(dir.path()).args(["tune", "tune.json", "-q"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("tune.json: /space/0/assign/0: the fractions add up to 0.9"), "{stderr}");
}

#[test]
fn the_recommendation_reads_as_a_strategy_in_words() {
    let (dir, path) = workspace(&tune_text(4.0, 20_000));
    let out = dir.path().join("out");
    run_cli(&path, &out, 2);
    let found = files(&out);
    let recommendation: serde_json::Value = serde_json::from_slice(&found["recommendation.json"]).unwrap();
    let words = recommendation["summary"].as_str().unwrap();
    let c = recommendation["recommended"]["candidate"].as_u64().unwrap();
    assert!(c != 0, "the small example beats its base strategy: {words}");
    let values = &recommendation["recommended"]["values"];
    let (concurrency, failures) =
        (values["broadConcurrency"].as_u64().unwrap(), values["broadFailures"].as_u64().unwrap());
    let failures = match failures {
        0 => "no failure allowed".to_string(),
        1 => "1 failure allowed".to_string(),
        n => format!("{n} failures allowed"),
    };
    // Every stage from the strategy itself: its name, the share of the fleet it selects, its limits.
    let canary_members = std::fs::read_to_string(out.join("recommended/good.json")).unwrap();
    assert!(canary_members.contains("ring=canary"));
    assert!(words.starts_with("Use canary with "), "{words}");
    assert!(words.contains("of the fleet ("), "{words}");
    assert!(words.contains(", 2 at a time, no failure allowed; then broad with "), "{words}");
    assert!(words.contains(&format!(", {concurrency} at a time, {failures}: the whole fleet in ")), "{words}");
    assert!(words.contains(" h (p90 in good) instead of "), "{words}");
    assert!(words.contains("a bad release reaches on average "), "{words}");
    assert!(words.contains("(mean in bad, limit 4) instead of"), "{words}");
    assert!(words.contains("it halts for nothing (random failures only) in "), "{words}");
    assert!(!words.contains('#') && !words.contains("candidate"), "{words}");
    let html = String::from_utf8(found["index.html"].clone()).unwrap();
    assert!(html.contains(&format!("id=\"recommendation\">{}", words.replace('"', "&quot;"))));
    assert!(html.contains("id=\"baseline\">The base strategy: canary with "));
}

#[test]
fn a_tune_killed_midway_resumes_to_the_same_bytes() {
    let (dir, _path) = workspace(&tune_text(4.0, 20_000));
    let work = dir.path();
    tune_cli(work, &["tune", "tune.json", "--out", "whole", "--threads", "2", "-q"]);
    let whole = files(&work.join("whole"));
    let mut child = Command::new(binary())
        .current_dir(work)
        .args(["tune", "tune.json", "--out", "killed", "--threads", "1", "-q"])
        .spawn()
        .unwrap();
    // Killed once it has journaled some simulations (or, on a fast machine, after it finished).
    let journal = work.join("killed/journal.jsonl");
    let started = std::time::Instant::now();
    while std::fs::metadata(&journal).map_or(0, |m| m.len()) < 2_000 && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    tune_cli(work, &["tune", "tune.json", "--out", "killed", "--threads", "2", "-q"]);
    let resumed = files(&work.join("killed"));
    assert_eq!(resumed.keys().collect::<Vec<_>>(), whole.keys().collect::<Vec<_>>());
    for (name, bytes) in &whole {
        assert!(bytes == &resumed[name], "{name} differs after a kill and a resume");
    }
}
