//! The scenarios of the conformance review, each with its exact expected timeline: completions
//! during a halt (SEMANTICS §11 "Halts"), restart counts (§11 "Restart"), window occurrences that
//! began before the start (§11 "Window calendar"), runs that can no longer progress (§5.9), run
//! starts before the scenario start, zero-delay approvals (§11 "Approval policy") and the labels
//! Fleet Manager adds to every member.

use fleetsim::orchestrator::UpdateState::*;
use serde_json::{Value, json};

use crate::support::*;

fn text(v: Value) -> String {
    v.to_string()
}

/// The run's timeline as `+HH:MM entity From->To` lines.
fn timeline(json: &str) -> Vec<String> {
    let (s, r) = run(json);
    trace(&s, &r, "run1").lines().map(str::to_string).collect()
}

fn one_member_group(member: &str, group: &str) -> Value {
    json!({"name": member, "region": "westeurope", "group": group, "kubernetesVersion": "1.33.1"})
}

#[test]
fn a_run_stopped_while_its_last_members_run_completes() {
    let scenario = r#"{"name": "stop-while-last-members-run", "seed": 1, "start": "2026-03-02T00:00:00Z", "members": [{"name": "m1", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1"}, {"name": "m2", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1"}], "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}}, "updateRuns": [{"name": "run1", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}, "strategy": {"stages": [{"name": "s", "groups": [{"name": "g", "maxConcurrency": "2"}]}]}, "actions": [{"at": "2026-03-02T00:30:00Z", "action": "stop"}]}]}"#;
    assert_eq!(
        timeline(scenario),
        [
            "+00:00 run NotStarted->Running",
            "+00:00 stage s NotStarted->Running",
            "+00:00 group g NotStarted->Running",
            "+00:00 member m1 NotStarted->Running",
            "+00:00 member m2 NotStarted->Running",
            "+00:30 run Running->Stopping",
            "+00:30 stage s Running->Stopping",
            "+00:30 group g Running->Stopping",
            "+01:00 run Stopping->Completed",
            "+01:00 stage s Stopping->Completed",
            "+01:00 group g Stopping->Completed",
            "+01:00 member m1 Running->Completed",
            "+01:00 member m2 Running->Completed",
        ]
    );
}

/// Stage `s`: group `a` trips at 00:30, group `b`'s member runs on and completes at 01:00: `b` is
/// `Completed` (it needs nothing new), while `s` and the run are `Failed`; stage `t` is never reached.
#[test]
fn a_sibling_group_finishing_during_a_failure_halt_completes() {
    let scenario = text(json!({
        "name": "failure-halt-sibling-completes", "seed": 1, "start": START,
        "members": [one_member_group("a1", "a"), one_member_group("b1", "b"), one_member_group("c1", "c")],
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0},
            "overrides": [{"member": "a1", "outcome": "Failed", "duration": "30m"}]},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [
                {"name": "s", "maxConcurrency": "2", "groups": [{"name": "a", "maxAllowedFailures": "0"}, {"name": "b"}]},
                {"name": "t", "groups": [{"name": "c"}]}]}}]
    }));
    assert_eq!(
        timeline(&scenario),
        [
            "+00:00 run NotStarted->Running",
            "+00:00 stage s NotStarted->Running",
            "+00:00 group a NotStarted->Running",
            "+00:00 member a1 NotStarted->Running",
            "+00:00 group b NotStarted->Running",
            "+00:00 member b1 NotStarted->Running",
            "+00:30 run Running->Stopping",
            "+00:30 stage s Running->Failed",
            "+00:30 group a Running->Failed",
            "+00:30 member a1 Running->Failed",
            "+00:30 group b Running->Stopping",
            "+01:00 run Stopping->Failed",
            "+01:00 group b Stopping->Completed",
            "+01:00 member b1 Running->Completed",
        ]
    );
}

/// A group with afterGates does not open them during a halt: it ends `Stopped` with its members
/// `Completed`, and so does its stage. A stage with an after-stage wait does not start it either.
#[test]
fn after_gates_and_waits_do_not_open_during_a_halt() {
    let scenario = |strategy: Value| {
        text(json!({
            "name": "stop-with-after-gate", "seed": 1, "start": START,
            "members": [one_member_group("m1", "g")],
            "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}},
            "updateRuns": [{"name": "run1",
                "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
                "strategy": strategy,
                "actions": [{"at": "2026-03-02T00:30:00Z", "action": "stop"}]}]
        }))
    };
    let gated =
        scenario(json!({"stages": [{"name": "s", "groups": [{"name": "g", "afterGates": [{"type": "Approval"}]}]}]}));
    let (s, r) = run(&gated);
    let run1 = run_named(&r, "run1");
    assert_eq!((run1.state, run1.stages[0].state, run1.stages[0].groups[0].state), (Stopped, Stopped, Stopped));
    assert_eq!(member_state(&s, run1, "m1"), Completed);
    assert_eq!(run1.stages[0].groups[0].after_gates[0].state, NotStarted);
    let waited =
        scenario(json!({"stages": [{"name": "s", "afterStageWaitInSeconds": 3600, "groups": [{"name": "g"}]}]}));
    let (_, r) = run(&waited);
    let run1 = run_named(&r, "run1");
    assert_eq!((run1.state, run1.stages[0].state, run1.stages[0].groups[0].state), (Stopped, Stopped, Completed));
    assert_eq!(run1.stages[0].wait.as_ref().map(|w| w.state), Some(NotStarted));
    let stage_gated =
        scenario(json!({"stages": [{"name": "s", "afterGates": [{"type": "Approval"}], "groups": [{"name": "g"}]}]}));
    let (_, r) = run(&stage_gated);
    let run1 = run_named(&r, "run1");
    assert_eq!((run1.state, run1.stages[0].state, run1.stages[0].groups[0].state), (Stopped, Stopped, Completed));
}

#[test]
fn a_restart_with_retry_keeps_the_failure_counts() {
    let scenario = r#"{"name": "restart-with-retry-keeps-counts", "seed": 1, "start": "2026-03-02T00:00:00Z", "settings": {"retryFailedOnRestart": true}, "members": [{"name": "m1", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1"}, {"name": "m2", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1"}, {"name": "m3", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1"}], "models": {"duration": {"member": "30m"}, "failure": {"probability": 0}, "overrides": [{"member": "m1", "outcome": "Failed"}, {"member": "m2", "outcome": "Failed"}]}, "updateRuns": [{"name": "run1", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}, "strategy": {"stages": [{"name": "s", "maxAllowedFailures": "5", "groups": [{"name": "g", "maxAllowedFailures": "1"}]}]}, "actions": [{"at": "2026-03-02T02:00:00Z", "action": "start"}]}]}"#;
    assert_eq!(
        timeline(scenario),
        [
            "+00:00 run NotStarted->Running",
            "+00:00 stage s NotStarted->Running",
            "+00:00 group g NotStarted->Running",
            "+00:00 member m1 NotStarted->Running",
            "+00:30 member m1 Running->Failed",
            "+00:30 member m2 NotStarted->Running",
            "+01:00 run Running->Failed",
            "+01:00 stage s Running->Failed",
            "+01:00 group g Running->Failed",
            "+01:00 member m2 Running->Failed",
            "+02:00 run Failed->Running",
            "+02:00 stage s Failed->Running",
            "+02:00 group g Failed->Running",
            "+02:00 member m1 Failed->Running",
            "+02:00 member m2 Failed->NotStarted",
            "+02:30 run Running->Failed",
            "+02:30 stage s Running->Failed",
            "+02:30 group g Running->Failed",
            "+02:30 member m1 Running->Failed",
        ]
    );
    let (s, r) = run(scenario);
    let run = run_named(&r, "run1");
    assert_eq!((run.failure_count, run.stages[0].groups[0].failure_count), (3, 3));
    assert_eq!(member_state(&s, run, "m2"), NotStarted);
    assert_eq!(member_state(&s, run, "m3"), NotStarted);
}

/// Without retry the count stays too, and the group, already over its budget, trips on the next
/// failure.
#[test]
fn a_restart_without_retry_continues_with_the_counts() {
    let scenario = text(json!({
        "name": "restart-keeps-counts", "seed": 1, "start": START,
        "members": [one_member_group("m1", "g"), one_member_group("m2", "g"), one_member_group("m3", "g"), one_member_group("m4", "g")],
        "models": {"duration": {"member": "30m"}, "failure": {"probability": 0},
            "overrides": [{"member": "m1", "outcome": "Failed"}, {"member": "m2", "outcome": "Failed"}, {"member": "m4", "outcome": "Failed"}]},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "maxAllowedFailures": "5", "groups": [{"name": "g", "maxAllowedFailures": "1"}]}]},
            "actions": [{"at": "2026-03-02T02:00:00Z", "action": "start"}]}]
    }));
    let (s, r) = run(&scenario);
    let run = run_named(&r, "run1");
    // m3 completes 02:30, m4 fails at 03:00: count 3, tripped again.
    assert_eq!(run.failure_count, 3);
    assert_eq!(run.state, Failed);
    assert_eq!(member_state(&s, run, "m3"), Completed);
    assert_eq!(run.completed_time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-03-02T03:00:00Z"));
}

#[test]
fn a_window_open_since_the_evening_before_is_open_at_the_start() {
    let scenario = r#"{"name": "window-open-since-the-evening-before", "seed": 1, "start": "2026-03-02T02:00:00Z", "members": [{"name": "m1", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1", "aksManagedAutoUpgradeSchedule": {"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 6, "startTime": "22:00", "utcOffset": "+00:00"}}], "models": {"duration": {"member": "30m"}, "failure": {"probability": 0}}, "updateRuns": [{"name": "run1", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}, "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]}}]}"#;
    assert_eq!(
        timeline(scenario),
        [
            "+00:00 run NotStarted->Running",
            "+00:00 stage s NotStarted->Running",
            "+00:00 group g NotStarted->Running",
            "+00:00 member m1 NotStarted->Running",
            "+00:30 run Running->Completed",
            "+00:30 stage s Running->Completed",
            "+00:30 group g Running->Completed",
            "+00:30 member m1 Running->Completed",
        ]
    );
    // With `startDate` there is no occurrence before it: m1 waits for 22:00.
    let bounded = scenario.replace(r#""startTime": "22:00","#, r#""startTime": "22:00", "startDate": "2026-03-02","#);
    let (s, r) = run(&bounded);
    let run = run_named(&r, "run1");
    let start = run.stages[0].groups[0].members[0].start_time().expect("started");
    assert_eq!((start - s.start).as_seconds(), 20 * 3600);
}

/// An Approval gate nobody approves: the simulation runs to the 30-day horizon, and the gate's
/// waiting counts until then.
#[test]
fn a_run_blocked_on_an_approval_runs_to_the_horizon() {
    let scenario = text(json!({
        "name": "approval-nobody-gives", "seed": 1, "start": START, "settings": {"horizon": "30d"},
        "members": [one_member_group("m1", "g")],
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}],
                "beforeGates": [{"type": "Approval", "displayName": "prod sign-off"}]}]}}]
    }));
    let (s, r) = run(&scenario);
    assert!(r.horizon_reached);
    assert_eq!((r.end - s.start).as_seconds(), 30 * 86_400);
    let run = run_named(&r, "run1");
    assert_eq!(run.state, Pending);
    assert_eq!(run.stats.gate_pending_seconds, 720 * 3600);
    let summary = summary_json(&scenario);
    let run = &summary["runs"][0];
    assert_eq!(run["makespanHours"], json!(720.0));
    assert_eq!(run["hoursPending"]["gate"], json!(720.0));
    assert_eq!(summary["horizonReached"], json!(true));
    assert_eq!(run["blockedOn"]["reason"], "gate");
    assert_eq!(run["blockedOn"]["gate"], "prod sign-off");
    assert_eq!(run["blockedOn"]["since"], START);
}

#[test]
fn a_window_that_never_opens_and_a_manual_start_never_given_run_to_the_horizon() {
    // A weekly window whose every occurrence inside the horizon is blacked out.
    let scenario = text(json!({
        "name": "never-opens", "seed": 1, "start": START, "settings": {"horizon": "10d"},
        "members": [{"name": "m1", "region": "westeurope", "group": "g", "kubernetesVersion": "1.33.1",
            "aksManagedAutoUpgradeSchedule": {"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
                "durationHours": 4, "startTime": "00:00", "utcOffset": "+00:00",
                "notAllowedDates": [{"start": "2026-03-01", "end": "2026-03-31"}]}}],
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}},
        "updateRuns": [
            {"name": "run1", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
             "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]}},
            {"name": "run2", "start": "manual", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
             "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]}}]
    }));
    let (s, r) = run(&scenario);
    assert!(r.horizon_reached);
    assert_eq!((r.end - s.start).as_seconds(), 10 * 86_400);
    let run1 = run_named(&r, "run1");
    assert_eq!(run1.state, Pending);
    assert_eq!(run1.stats.pending_window_seconds, 240 * 3600);
    let summary = summary_json(&scenario);
    assert_eq!(summary["runs"][0]["blockedOn"]["reason"], "window");
    assert_eq!(summary["runs"][0]["blockedOn"]["members"], 1);
    assert_eq!(summary["runs"][0]["hoursPending"]["window"], json!(240.0));
    assert_eq!(summary["runs"][1]["state"], "NotStarted");
    assert_eq!(summary["runs"][1]["blockedOn"]["reason"], "start");
    assert!(summary["runs"][1]["blockedOn"]["text"].as_str().unwrap().contains("manual start was never given"));
}

/// Runs that finish end the simulation at their last event, as before.
#[test]
fn finished_runs_end_the_simulation_at_their_last_event() {
    let scenario = text(json!({
        "name": "finishes", "seed": 1, "start": START,
        "members": [one_member_group("m1", "g")],
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]}}]
    }));
    let (s, r) = run(&scenario);
    assert!(!r.horizon_reached);
    assert_eq!((r.end - s.start).as_seconds(), 3600);
    assert!(summary_json(&scenario)["runs"][0].get("blockedOn").is_none());
}

#[test]
fn a_run_start_before_the_scenario_start_is_invalid() {
    let scenario = text(json!({
        "name": "early-start", "seed": 1, "start": START,
        "members": [one_member_group("m1", "g")],
        "updateRuns": [{"name": "run1", "start": "2026-03-01T00:00:00Z",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]}}]
    }));
    let p = problems(&scenario);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].path, "/updateRuns/0/start");
    assert!(p[0].message.contains("before the scenario start"), "{}", p[0].message);
    // Relative starts before it too.
    let p = problems(&scenario.replace("2026-03-01T00:00:00Z", "-1h"));
    assert_eq!(p[0].path, "/updateRuns/0/start");
}

#[test]
fn naming_the_wait_of_a_stage_without_one_is_invalid() {
    let scenario = text(json!({
        "name": "no-wait", "seed": 1, "start": START,
        "members": [one_member_group("m1", "g")],
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}]}]},
            "actions": [{"at": "+1h", "action": "skip", "targets": [{"type": "AfterStageWait", "name": "s"}]}]}]
    }));
    let p = problems(&scenario);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].path.starts_with("/updateRuns/0/actions/0/targets/0"), "{}", p[0].path);
}

#[test]
fn a_zero_delay_approval_completes_before_scheduling() {
    let scenario = text(json!({
        "name": "zero-delay-approval", "seed": 1, "start": START,
        "members": [one_member_group("a1", "a"), one_member_group("b1", "b")],
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}, "approvals": "0m"},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "maxConcurrency": "1", "groups": [
                {"name": "a", "beforeGates": [{"type": "Approval"}]}, {"name": "b"}]}]}}]
    }));
    assert_eq!(
        timeline(&scenario),
        [
            "+00:00 run NotStarted->Running",
            "+00:00 stage s NotStarted->Running",
            "+00:00 group a NotStarted->Running",
            "+00:00 gate a/before NotStarted->Completed",
            "+00:00 member a1 NotStarted->Running",
            "+00:00 group b NotStarted->Pending",
            "+01:00 group a Running->Completed",
            "+01:00 member a1 Running->Completed",
            "+01:00 group b Pending->Running",
            "+01:00 member b1 NotStarted->Running",
            "+02:00 run Running->Completed",
            "+02:00 stage s Running->Completed",
            "+02:00 group b Running->Completed",
            "+02:00 member b1 Running->Completed",
        ]
    );
}

#[test]
fn members_carry_the_labels_fleet_manager_adds() {
    let fleet = json!([
        {"name": "m-east", "region": "eastus", "kubernetesVersion": "1.33.1",
         "clusterResourceId": "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-prod/providers/Microsoft.ContainerService/managedClusters/aks-east"},
        {"name": "m-west2", "region": "westus2", "kubernetesVersion": "1.33.1"},
        {"name": "m-weu", "region": "westeurope", "kubernetesVersion": "1.33.1",
         "labels": {"fleet.azure.com/location": "West Europe", "fleet.azure.com/member-name": "m-weu"}}
    ]);
    let scenario = text(json!({
        "name": "fleet-labels", "seed": 1, "start": START, "members": fleet,
        "models": {"duration": {"member": "60m"}, "failure": {"probability": 0}},
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [
                {"name": "us", "memberSelector": {"byLabel": "fleet.azure.com/location in (eastus, westus2)"}},
                {"name": "prod-rg", "memberSelector": {"byLabel": "fleet.azure.com/resource-group=rg-prod,fleet.azure.com/location notin (eastus)"}},
                {"name": "rest", "memberSelector": {"byLabel": "fleet.azure.com/member-name=m-weu"}}]}}]
    }));
    let (s, r) = run(&scenario);
    let run = run_named(&r, "run1");
    let names = |stage: usize| -> Vec<&str> {
        run.stages[stage].groups.iter().flat_map(|g| &g.members).map(|m| s.fleet[m.id.index()].name.as_str()).collect()
    };
    assert_eq!(names(0), ["m-east", "m-west2"]);
    // rg-prod holds only m-east, which the second stage's location requirement leaves out.
    assert!(names(1).is_empty());
    assert_eq!(names(2), ["m-weu"]);
    let east = &s.fleet[0].all_labels();
    assert_eq!(east["fleet.azure.com/cluster-name"], "aks-east");
    assert_eq!(east["fleet.azure.com/subscription-id"], "11111111-2222-3333-4444-555555555555");
    assert_eq!(east["fleet.azure.com/member-name"], "m-east");
    let west = &s.fleet[1].all_labels();
    assert_eq!(west["fleet.azure.com/cluster-name"], "m-west2");
    assert_eq!(west["fleet.azure.com/resource-group"], "fleetsim");
    assert_eq!(west["fleet.azure.com/subscription-id"], "00000000-0000-0000-0000-000000000000");
    assert_eq!(west["fleet.azure.com/location"], "westus2");
}

#[test]
fn a_fleet_label_with_another_value_is_an_error() {
    let scenario = text(json!({
        "name": "fleet-label-clash", "seed": 1, "start": START,
        "members": [
            {"name": "m1", "region": "westeurope", "kubernetesVersion": "1.33.1",
             "labels": {"fleet.azure.com/location": "eastus", "fleet.azure.com/cluster-name": "other"}},
            {"name": "m2", "region": "westeurope", "kubernetesVersion": "1.33.1",
             "clusterResourceId": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm"}
        ],
    }));
    let p = problems(&scenario);
    let lines: Vec<String> = p.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
    assert_eq!(p.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("/members/0/labels/fleet.azure.com~1cluster-name: fleet.azure.com/cluster-name is set by Fleet Manager: for this member it is \"m1\""), "{lines:?}");
    assert!(
        lines[1].starts_with(
            "/members/0/labels/fleet.azure.com~1location: fleet.azure.com/location is set by Fleet Manager"
        ),
        "{lines:?}"
    );
    assert!(lines[2].starts_with("/members/1/clusterResourceId: "), "{lines:?}");
}

#[test]
fn dump_fleet_shows_the_fleet_labels() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    let out = std::process::Command::new(binary())
        .args(["run", "scenarios/quickstart.json", "--quiet", "--out"])
        .arg(dir.path().join("report"))
        .arg("--dump-fleet")
        .arg(&fleet)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let members: Value = serde_json::from_slice(&std::fs::read(&fleet).unwrap()).unwrap();
    let first = &members[0];
    assert_eq!(first["labels"]["fleet.azure.com/location"], first["region"]);
    assert_eq!(first["labels"]["fleet.azure.com/member-name"], first["name"]);
}

fn summary_json(scenario: &str) -> Value {
    let (s, r) = run(scenario);
    let ctx = fleetsim::report::ReportContext::new(&s, &r);
    serde_json::to_value(fleetsim::report::summary::summary(&ctx)).unwrap()
}

/// A gate's displayName is printed on the console and in every report: control characters are
/// refused.
#[test]
fn a_display_name_with_control_characters_is_invalid() {
    let scenario = text(json!({
        "name": "control", "seed": 1, "start": START,
        "members": [one_member_group("m1", "g")],
        "updateRuns": [{"name": "run1",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}},
            "strategy": {"stages": [{"name": "s", "groups": [{"name": "g"}],
                "beforeGates": [{"type": "Approval", "displayName": "canary\nlooks \u{1b}[31mhealthy"}]}]}}]
    }));
    let p = problems(&scenario);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].path, "/updateRuns/0/strategy/stages/0/beforeGates/0/displayName");
    assert!(p[0].message.contains("control character") && !p[0].message.contains('\n'), "{}", p[0].message);
}
