//! The critical path (`criticalPath` in `summary.json`, the lines under each run on the console) on
//! scenarios where it is known by construction. Every upgrade takes 1 h; polls are hourly.

use std::process::Command;

use fleetsim::report::critical::{CriticalPath, Seconds, StagePath, critical_paths};
use serde_json::{Value, json};

use crate::support::*;

const H: i64 = 3600;

fn path_of(json: &str) -> CriticalPath {
    let (s, r) = run(json);
    critical_paths(&s, &r).remove(0)
}

/// (total, upgrading, window, availability, after-stage wait, other) in seconds.
fn split(p: &StagePath) -> (i64, i64, i64, i64, i64, i64) {
    (p.total.0, p.upgrading.0, p.window.0, p.availability.0, p.after_stage_wait.0, p.other.0)
}

fn daily_window(start_time: &str, hours: u32) -> Value {
    json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": hours, "startTime": start_time, "utcOffset": "+00:00"})
}

#[test]
fn one_member_s_window_holds_the_stage() {
    // One at a time (the default limit): a01 00:00–01:00, a02 01:00–02:00; w1's window opens at 10:00,
    // so s1 waits 8 h for it alone and s2 is reached at 11:00.
    let mut fleet = members("a", "ga", 2);
    fleet.push(json!({"name": "w1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": daily_window("10:00", 4)}));
    fleet.extend(members("b", "gb", 1));
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "gb"}]}]});
    let p = path_of(&scenario_json(fleet, strategy, json!({}), json!({})));
    let s1 = &p.stages[0];
    assert_eq!(split(s1), (11 * H, 3 * H, 8 * H, 0, 0, 0));
    assert_eq!(s1.held_by_windows.members, 1);
    assert_eq!(s1.held_by_windows.regions[0].region, "eastus");
    assert_eq!(s1.held_by_windows.last_start.as_deref(), Some("2026-03-02T10:00:00Z"));
    let last = &s1.last_to_finish[0];
    assert_eq!(
        (last.member.as_str(), last.reason, last.started_after, last.pending),
        ("w1", "window", Seconds(10 * H), Seconds(8 * H))
    );
    assert_eq!(
        s1.text,
        "s1 11.0 h: 8.0 h waiting for 1 member's maintenance windows (eastus), 3.0 h upgrading — the last started Mon 2026-03-02 10:00"
    );
    assert_eq!(p.stages[1].reached.as_deref(), Some("2026-03-02T11:00:00Z"));
    assert_eq!(split(&p.stages[1]), (H, H, 0, 0, 0, 0));
    assert_eq!(p.ended.reason, "Completed");
    assert_eq!(p.lines(), vec![s1.text.clone(), "s2 1.0 h: 1.0 h upgrading".to_string()]);
}

#[test]
fn gates_and_the_after_stage_wait_are_charged_to_what_finished_last() {
    // s1: a01 00:00–01:00, then the "ok" gate (approved 01:10) and a 30 min wait run together: the wait
    // finishes last and holds the stage. s2: "go" is approved at 05:00, b01 runs 05:00–06:00.
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterGates": [{"displayName": "ok", "type": "Approval"}], "afterStageWaitInSeconds": 1800},
        {"name": "s2", "groups": [{"name": "gb"}], "beforeGates": [{"displayName": "go", "type": "Approval"}]}]});
    let actions = json!({"actions": [
        {"at": "+1h10m", "action": "approve", "gate": {"displayName": "ok"}},
        {"at": "+5h", "action": "approve", "gate": {"displayName": "go"}}]});
    let fleet = [members("a", "ga", 1), members("b", "gb", 1)].concat();
    let p = path_of(&scenario_json(fleet, strategy, actions, json!({})));
    assert_eq!(split(&p.stages[0]), (H + H / 2, H, 0, 0, H / 2, 0));
    assert!(p.stages[0].gates.is_empty(), "{:?}", p.stages[0].gates);
    let s2 = &p.stages[1];
    assert_eq!(split(s2), (4 * H + H / 2, H, 0, 0, 0, 0));
    assert_eq!(s2.gates.len(), 1);
    assert_eq!((s2.gates[0].gate.as_str(), s2.gates[0].hours), ("\"go\"", Seconds(3 * H + H / 2)));
    assert_eq!(s2.text, "s2 4.5 h: 3.5 h on gate \"go\", 1.0 h upgrading");
}

#[test]
fn a_late_region_holds_the_stage_until_the_release_arrives() {
    let fleet = vec![
        json!({"name": "east1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}),
        json!({"name": "west1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let releases = json!({"releases": {"kubernetes": [
        {"version": "1.32.4"},
        {"version": "1.33.2", "available": {"default": "+0s", "regions": {"westeurope": "+5h30m"}}}]}});
    let p = path_of(&scenario_json(fleet, strategy, json!({}), releases));
    let s1 = &p.stages[0];
    // east1 00:00–01:00; west1 Pending until the poll at 06:00, then 06:00–07:00.
    assert_eq!(split(s1), (7 * H, 2 * H, 0, 5 * H, 0, 0));
    assert_eq!(s1.held_by_availability.members, 1);
    assert_eq!(s1.held_by_availability.regions[0].region, "westeurope");
    assert_eq!(s1.last_to_finish[0].reason, "availability");
    assert_eq!(s1.last_to_finish[0].pending, Seconds(6 * H));
    assert!(
        s1.text.starts_with("s1 7.0 h: 5.0 h waiting for the release to reach 1 member's regions (westeurope)"),
        "{}",
        s1.text
    );
}

#[test]
fn queued_members_are_upgrading_time_and_the_last_to_finish_says_it_was_queued() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "1"}]}]});
    let p = path_of(&scenario_json(members("a", "ga", 3), strategy, json!({}), json!({})));
    assert_eq!(split(&p.stages[0]), (3 * H, 3 * H, 0, 0, 0, 0));
    let last = &p.stages[0].last_to_finish;
    assert_eq!(last.iter().map(|m| m.member.as_str()).collect::<Vec<_>>(), ["a03", "a02", "a01"]);
    assert_eq!((last[0].reason, last[0].started_after), ("queued", Seconds(2 * H)));
    assert_eq!(last[2].reason, "none");
}

#[test]
fn a_run_blocked_on_a_gate_and_a_run_cut_by_the_horizon_say_so() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [{"displayName": "sign-off", "type": "Approval"}]}]});
    let p =
        path_of(&scenario_json(members("a", "ga", 1), strategy, json!({}), json!({"settings": {"horizon": "10h"}})));
    assert_eq!(p.ended.reason, "blocked");
    assert_eq!(p.ended.text, "blocked on gate \"sign-off\" since 2026-03-02T00:00:00Z");
    assert_eq!(split(&p.stages[0]), (10 * H, 0, 0, 0, 0, 0));
    assert_eq!(p.stages[0].gates[0].hours, Seconds(10 * H));
    assert_eq!(p.stages[0].text, "s1 10.0 h (not done): 10.0 h on gate \"sign-off\"");

    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "1"}]}]});
    let p =
        path_of(&scenario_json(members("a", "ga", 5), strategy, json!({}), json!({"settings": {"horizon": "150m"}})));
    assert_eq!(p.ended.reason, "horizon");
    assert_eq!(p.ended.text, "cut by the horizon at 2026-03-02T02:30:00Z");
    assert_eq!(p.lines().last().unwrap(), "cut by the horizon at 2026-03-02T02:30:00Z");
    assert_eq!(split(&p.stages[0]), (150 * 60, 150 * 60, 0, 0, 0, 0));
}

#[test]
fn stage_parts_add_up_to_the_run_on_the_shipped_scenarios() {
    for name in ["example", "quickstart", "late-regions", "bad-release-spread"] {
        let text = std::fs::read_to_string(root().join(format!("scenarios/{name}.json"))).unwrap();
        let (s, r) = run(&text);
        for (run, path) in r.runs.iter().zip(critical_paths(&s, &r)) {
            let stages: i64 = path.stages.iter().map(|p| p.total.0).sum();
            let makespan = (run.completed_time.unwrap_or(r.end) - run.start_time.unwrap()).as_seconds();
            assert_eq!(stages + path.stopping.0, makespan, "{name}: {path:#?}");
            for p in &path.stages {
                let gates: i64 = p.gates.iter().map(|g| g.hours.0).sum();
                let (total, u, w, a, wait, other) = split(p);
                assert_eq!(total, u + w + a + wait + other + gates, "{name} {}", p.name);
            }
        }
    }
}

fn run_cli(scenario: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = root().join(format!("scenarios/{scenario}.json"));
    let output = Command::new(binary())
        .args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The page shows the same lines, above the charts.
    let critical = html.find("id=\"critical-path\"").expect("index.html has the critical path");
    assert!(critical < html.find("id=\"charts\"").unwrap());
    for line in summary["runs"][0]["criticalPath"]["stages"].as_array().unwrap() {
        let text = line["text"].as_str().unwrap();
        assert!(stdout.contains(&format!("    {text}\n")), "{stdout}");
        assert!(html.contains(&fleetsim::report::html::escape(text)), "{text}");
    }
    stdout
}

#[test]
fn the_console_prints_the_critical_path_blast_radius_and_skipped_members() {
    let canary = run_cli("bad-release-canary");
    assert!(canary.contains("    blast radius 2 (members that received the bad release)\n"), "{canary}");
    let spread = run_cli("bad-release-spread");
    assert!(spread.contains("    blast radius 82 (members that received the bad release)\n"), "{spread}");
    assert!(spread.contains("Stopping while members already upgrading finished"), "{spread}");
    let example = run_cli("example");
    assert!(example.contains("\n    1 Skipped\n"), "{example}");
    assert!(
        example
            .contains("\n    broad 10.3 h: 4.7 h waiting for 3 members' maintenance windows (northeurope, westeurope)"),
        "{example}"
    );
}

#[test]
fn the_console_says_what_a_blocked_or_cut_run_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [{"displayName": "sign-off", "type": "Approval"}]}]});
    let blocked = scenario_json(members("a", "ga", 1), strategy, json!({}), json!({"settings": {"horizon": "10h"}}));
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "1"}]}]});
    let cut = scenario_json(members("a", "ga", 5), strategy, json!({}), json!({"settings": {"horizon": "150m"}}));
    let mut outputs = Vec::new();
    for (name, text) in [("blocked", blocked), ("cut", cut)] {
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, text).unwrap();
        let out = dir.path().join(name);
        let output = Command::new(binary())
            .args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(output.status.success());
        outputs.push(String::from_utf8(output.stdout).unwrap());
    }
    assert!(
        outputs[0].contains(
            "  run r: Pending after 10.0 h, 0/1 members completed, failureCount 0\n    s1 10.0 h (not done): 10.0 h on gate \"sign-off\"\n    blocked on gate \"sign-off\" since 2026-03-02T00:00:00Z\n"
        ),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1]
            .contains("    s1 2.5 h (not done): 2.5 h upgrading\n    cut by the horizon at 2026-03-02T02:30:00Z\n"),
        "{}",
        outputs[1]
    );
}

/// A user stop while members run: the stage's time ends at the stop and the rest is Stopping, so
/// the parts still add up to the run (no time counted twice).
#[test]
fn a_user_stop_splits_the_stage_from_the_stopping_time() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let actions = json!({"actions": [{"at": "+30m", "action": "stop"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 3), strategy, actions, json!({})));
    let p = critical_paths(&s, &r).remove(0);
    assert_eq!(split(&p.stages[0]), (30 * 60, 30 * 60, 0, 0, 0, 0));
    assert_eq!(p.stopping, Seconds(30 * 60));
    let makespan = (r.runs[0].completed_time.unwrap_or(r.end) - r.runs[0].start_time.unwrap()).as_seconds();
    assert_eq!(p.stages[0].total.0 + p.stopping.0, makespan);
}
