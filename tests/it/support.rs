//! Helpers shared by the integration tests.

#![allow(dead_code)]

use fleetsim::scenario::{Problem, Scenario, parse_str};
use fleetsim::simulation::{SimOptions, SimResult, simulate};

/// Parses and validates a scenario, panicking with every problem if it is invalid.
#[track_caller]
pub fn scenario(json: &str) -> Scenario {
    match parse_str(json, None) {
        Ok(s) => s,
        Err(problems) => {
            panic!("invalid scenario:\n{}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// The problems of an invalid scenario (panics if it is valid).
#[track_caller]
pub fn problems(json: &str) -> Vec<Problem> {
    match parse_str(json, None) {
        Ok(_) => panic!("expected the scenario to be invalid"),
        Err(problems) => problems,
    }
}

/// Simulates a scenario given as JSON text.
#[track_caller]
pub fn run(json: &str) -> (Scenario, SimResult) {
    let s = scenario(json);
    let r = simulate(&s, SimOptions::default());
    (s, r)
}

/// Path of the fleetsim binary built for the tests.
pub fn binary() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_fleetsim"))
}

/// The repository root.
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

use fleetsim::orchestrator::{Entity, UpdateRun, UpdateState};
use serde_json::{Value, json};

/// Scenario start used by the tests: Monday 2026-03-02 00:00 UTC.
pub const START: &str = "2026-03-02T00:00:00Z";

/// `n` members named `{prefix}{i}` (1-based, two digits) in update group `group`.
pub fn members(prefix: &str, group: &str, n: usize) -> Vec<Value> {
    (1..=n)
        .map(|i| json!({"name": format!("{prefix}{i:02}"), "region": "westeurope", "group": group, "kubernetesVersion": "1.32.4"}))
        .collect()
}

/// A scenario: members, one strategy `s` (or none when `strategy` is null) and one run `r` upgrading
/// the control plane to 1.33.2; every upgrade takes 1 h and never fails unless `extra` says otherwise.
/// `extra` is merged into the top level (e.g. `models`, `settings`) and `run_extra` into the run.
pub fn scenario_json(members: Vec<Value>, strategy: Value, run_extra: Value, extra: Value) -> String {
    let mut run = json!({
        "name": "r",
        "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}
    });
    if !strategy.is_null() {
        run["updateStrategyId"] = json!("s");
    }
    merge(&mut run, run_extra);
    let mut doc = json!({
        "name": "test",
        "seed": 7,
        "start": START,
        "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
        "members": members,
        "updateRuns": [run],
    });
    if !strategy.is_null() {
        doc["updateStrategies"] = json!({"s": strategy});
    }
    merge(&mut doc, extra);
    serde_json::to_string_pretty(&doc).unwrap()
}

/// Deep-merges objects (RFC 7386 merge patch): `null` removes a field, other values replace.
pub fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(&k);
                } else {
                    merge(t.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p,
    }
}

/// Compact timeline of one run: `+HH:MM scope name From->To` per row, times from the scenario start.
pub fn trace(scenario: &Scenario, result: &SimResult, run_name: &str) -> String {
    let run_index = result.runs.iter().position(|r| r.name == run_name).expect("run exists") as u32;
    let run = &result.runs[run_index as usize];
    let mut out = String::new();
    for row in result.timeline.iter().filter(|r| r.run == run_index) {
        let minutes = (row.time - scenario.start).as_seconds() / 60;
        let t = &row.transition;
        let label = match t.entity {
            Entity::Run => "run".to_string(),
            Entity::Stage(s) => format!("stage {}", run.stages[s as usize].name),
            Entity::Group(s, g) => format!("group {}", run.stages[s as usize].groups[g as usize].name),
            Entity::Member(slot) => format!("member {}", scenario.fleet[run.member(slot).id.index()].name),
            Entity::Gate(r) => {
                let gate = run.gate(r);
                let owner = match r.group {
                    Some(g) => run.stages[r.stage as usize].groups[g as usize].name.clone(),
                    None => run.stages[r.stage as usize].name.clone(),
                };
                format!(
                    "gate {owner}/{}{}",
                    r.timing.api_name().to_lowercase(),
                    gate.config.display_name.as_ref().map(|d| format!(" \"{d}\"")).unwrap_or_default()
                )
            }
            Entity::Wait(s) => format!("wait {}", run.stages[s as usize].name),
        };
        out.push_str(&format!("+{:02}:{:02} {label} {}->{}\n", minutes / 60, minutes % 60, t.from, t.to));
    }
    out
}

/// Rows of the trace that concern members only.
pub fn member_trace(scenario: &Scenario, result: &SimResult, run_name: &str) -> String {
    trace(scenario, result, run_name).lines().filter(|l| l.contains(" member ")).map(|l| format!("{l}\n")).collect()
}

pub fn run_named<'r>(result: &'r SimResult, name: &str) -> &'r UpdateRun {
    result.runs.iter().find(|r| r.name == name).expect("run exists")
}

/// Final state of a member in a run, by member name.
pub fn member_state(scenario: &Scenario, run: &UpdateRun, name: &str) -> UpdateState {
    run.stages
        .iter()
        .flat_map(|s| s.groups.iter())
        .flat_map(|g| g.members.iter())
        .find(|m| scenario.fleet[m.id.index()].name == name)
        .map(|m| m.state)
        .expect("member is in the run")
}

/// (stage peak, [group peaks]) of stage `s`.
pub fn peaks(run: &UpdateRun, s: usize) -> (u32, Vec<u32>) {
    let stage = &run.stages[s];
    (stage.peak_running, stage.groups.iter().map(|g| g.peak_running).collect())
}

/// (stage resolved maxConcurrency, maxAllowedFailures, [(group mc, group maf)]).
pub fn limits(run: &UpdateRun, s: usize) -> (u32, u32, Vec<(u32, u32)>) {
    let stage = &run.stages[s];
    (
        stage.max_concurrency,
        stage.max_allowed_failures,
        stage.groups.iter().map(|g| (g.max_concurrency, g.max_allowed_failures)).collect(),
    )
}

/// Every file of a folder and its subfolders: path relative to it (with `/`) → bytes.
pub fn folder_files(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}
