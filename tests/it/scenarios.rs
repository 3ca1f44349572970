//! Data-driven scenario tests, one per rule of SEMANTICS.md, the docs' worked examples among them.
//! Each builds a small scenario, simulates it, and checks resolved limits, observed concurrency,
//! final states or the exact timeline.

use fleetsim::orchestrator::UpdateState::*;
use serde_json::{Value, json};

use crate::support::*;

fn concat(parts: Vec<Vec<Value>>) -> Vec<Value> {
    parts.into_iter().flatten().collect()
}

fn failures(names: &[&str]) -> Value {
    let overrides: Vec<Value> =
        names.iter().map(|n| json!({"member": n, "outcome": "Failed", "errorCode": "PodDrainFailure"})).collect();
    json!({"models": {"overrides": overrides}})
}

// ----- SEMANTICS §4: the docs' concurrency examples -------------------------------------------

#[test]
fn concurrency_example_1_fixed_limits() {
    // Stage "4", groups "2" and "2": up to 4 at once, at most 2 per group.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "4", "groups": [
        {"name": "ga", "maxConcurrency": "2"}, {"name": "gb", "maxConcurrency": "2"}]}]});
    let (_, r) =
        run(&scenario_json(concat(vec![members("a", "ga", 5), members("b", "gb", 5)]), strategy, json!({}), json!({})));
    let run = &r.runs[0];
    assert_eq!(limits(run, 0), (4, 0, vec![(2, 0), (2, 0)]));
    assert_eq!(peaks(run, 0), (4, vec![2, 2]));
    assert_eq!(run.state, Completed);
}

#[test]
fn concurrency_example_2_stage_limit_throttles_groups() {
    // Stage "2", groups "5" and "5": accepted under `throttle`, the stage cap wins.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "2", "groups": [
        {"name": "ga", "maxConcurrency": "5"}, {"name": "gb", "maxConcurrency": "5"}]}]});
    let fleet = concat(vec![members("a", "ga", 5), members("b", "gb", 5)]);
    let throttle = json!({"settings": {"groupAboveStageConcurrency": "throttle"}});
    let (_, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), throttle));
    assert_eq!(limits(&r.runs[0], 0), (2, 0, vec![(5, 0), (5, 0)]));
    assert_eq!(r.runs[0].stages[0].peak_running, 2);
    // Round-robin from group 0 at every pass: one start each while the stage cap allows.
    assert_eq!(peaks(&r.runs[0], 0), (2, vec![1, 1]));
    // Under the default `reject` the service refuses the strategy.
    let p = problems(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(p[0].path, "/updateStrategies/s/stages/0/groups/0/maxConcurrency");
    assert!(p[0].message.contains("above its stage's 2"), "{}", p[0].message);
}

#[test]
fn a_stage_may_resolve_exactly_to_the_stage_limit_but_not_above_it() {
    // settings.limits.stageMaxConcurrency bounds what a stage's maxConcurrency may resolve to.
    let fleet = members("a", "ga", 6);
    let limited = |mc: &str| {
        let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": mc, "groups": [{"name": "ga", "maxConcurrency": "3"}]}]});
        scenario_json(fleet.clone(), strategy, json!({}), json!({"settings": {"limits": {"stageMaxConcurrency": 3}}}))
    };
    let (_, r) = run(&limited("3"));
    assert_eq!(limits(&r.runs[0], 0), (3, 0, vec![(3, 0)]));
    assert_eq!(r.runs[0].stages[0].peak_running, 3);
    // 50 % of 6 is 3 as well.
    let (_, r) = run(&limited("50%"));
    assert_eq!(limits(&r.runs[0], 0).0, 3);
    let p = problems(&limited("4"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].path, "/updateStrategies/s/stages/0/maxConcurrency");
    assert!(p[0].message.contains("resolves to 4 for its 6 members, above the stage limit of 3"), "{}", p[0].message);
    assert_eq!(problems(&limited("67%")).len(), 1);
}

#[test]
fn concurrency_example_3_percentages() {
    // 20-member stage, groups of 8 and 12: stage 25% → 5, A 50% → 4, B 25% → 3.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "25%", "groups": [
        {"name": "ga", "maxConcurrency": "50%"}, {"name": "gb", "maxConcurrency": "25%"}]}]});
    let (s, r) = run(&scenario_json(
        concat(vec![members("a", "ga", 8), members("b", "gb", 12)]),
        strategy,
        json!({}),
        json!({}),
    ));
    let run = &r.runs[0];
    assert_eq!(limits(run, 0), (5, 0, vec![(4, 0), (3, 0)]));
    // Round-robin under the stage cap never lets A reach its own 4 while B has work: 3 + 2, then 2 + 3.
    assert_eq!(peaks(run, 0), (5, vec![3, 3]));
    // The first instant: passes alternate a, b, a, b, a until the stage holds 5.
    let first: Vec<String> =
        member_trace(&s, &r, "r").lines().take_while(|l| l.starts_with("+00:00")).map(str::to_string).collect();
    assert_eq!(
        first,
        [
            "+00:00 member a01 NotStarted->Running",
            "+00:00 member a02 NotStarted->Running",
            "+00:00 member a03 NotStarted->Running",
            "+00:00 member b01 NotStarted->Running",
            "+00:00 member b02 NotStarted->Running",
        ]
    );
    assert_eq!(run.state, Completed);
}

#[test]
fn howto_strat_example_limits() {
    // HOWTO-STRAT: stage-1 "7"/"2"; group-1 "3"/"1"; group-2 "50%"/"25%" (4 members → 2 and 1);
    // stage-2 "100%"/"0"; group-3 "2"/"0".
    let strategy = json!({"stages": [
        {"name": "stage-1", "maxConcurrency": "7", "maxAllowedFailures": "2", "groups": [
            {"name": "group-1", "maxConcurrency": "3", "maxAllowedFailures": "1"},
            {"name": "group-2", "maxConcurrency": "50%", "maxAllowedFailures": "25%"}]},
        {"name": "stage-2", "maxConcurrency": "100%", "maxAllowedFailures": "0", "groups": [
            {"name": "group-3", "maxConcurrency": "2", "maxAllowedFailures": "0"}]}]});
    let fleet = concat(vec![members("a", "group-1", 5), members("b", "group-2", 4), members("c", "group-3", 6)]);
    let (_, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    let run = &r.runs[0];
    assert_eq!(limits(run, 0), (7, 2, vec![(3, 1), (2, 1)]));
    assert_eq!(limits(run, 1), (6, 0, vec![(2, 0)]));
    assert_eq!(peaks(run, 0), (5, vec![3, 2]));
    assert_eq!(peaks(run, 1), (2, vec![2]));
}

#[test]
fn label_example_implicit_group_and_frontend_backend() {
    // HOWTO-STRAT label example: staging "1" (implicit group, one at a time); production "4" with
    // frontend "3" and backend "3".
    let mut fleet = Vec::new();
    for i in 1..=3 {
        fleet.push(json!({"name": format!("stg{i}"), "region": "westeurope", "labels": {"env": "staging"}, "kubernetesVersion": "1.32.4"}));
    }
    for (tier, n) in [("frontend", 4), ("backend", 4)] {
        for i in 1..=n {
            fleet.push(json!({"name": format!("{tier}{i}"), "region": "eastus", "labels": {"env": "prod", "tier": tier}, "kubernetesVersion": "1.32.4"}));
        }
    }
    let strategy = json!({"stages": [
        {"name": "staging", "memberSelector": {"byLabel": "env=staging"}, "maxConcurrency": "1"},
        {"name": "production", "memberSelector": {"byLabel": "env=prod"}, "maxConcurrency": "4", "groups": [
            {"name": "frontend", "memberSelector": {"byLabel": "tier=frontend"}, "maxConcurrency": "3"},
            {"name": "backend", "memberSelector": {"byLabel": "tier in (backend)"}, "maxConcurrency": "3"}]}]});
    let (_, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    let run = &r.runs[0];
    assert_eq!(run.stages[0].groups.len(), 1);
    assert_eq!(run.stages[0].groups[0].name, "staging", "the implicit group is named after the stage");
    assert_eq!(limits(run, 0), (1, 0, vec![(1, 0)]));
    assert_eq!(peaks(run, 0), (1, vec![1]));
    assert_eq!(limits(run, 1), (4, 0, vec![(3, 0), (3, 0)]));
    assert_eq!(peaks(run, 1), (4, vec![2, 2]), "the stage cap 4 is shared round-robin");
    assert_eq!(run.state, Completed);
}

// ----- SEMANTICS §4, §6: the docs' failure examples -------------------------------------------

#[test]
fn failure_example_1_fixed_limits() {
    // Stage "5", group A "2", group B "3": A's third failure exceeds its own threshold.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "1", "maxAllowedFailures": "5", "groups": [
        {"name": "ga", "maxAllowedFailures": "2"}, {"name": "gb", "maxAllowedFailures": "3"}]}]});
    let fleet = concat(vec![members("a", "ga", 4), members("b", "gb", 4)]);
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), failures(&["a01", "a02", "a03"])));
    let run = &r.runs[0];
    assert_eq!(limits(run, 0), (1, 5, vec![(1, 2), (1, 3)]));
    assert_eq!(run.stages[0].groups[0].state, Failed);
    assert_eq!(run.stages[0].groups[0].failure_count, 3);
    assert_eq!(run.stages[0].failure_count, 3);
    assert_eq!(run.failure_count, 3);
    assert_eq!(run.state, Failed);
    // Stage cap 1 and round-robin: a01, b01, a02, b02, a03 (fails: trip) — then nothing new starts.
    assert_eq!(member_state(&s, run, "a04"), NotStarted);
    assert_eq!(member_state(&s, run, "b03"), NotStarted);
}

#[test]
fn failure_example_2_percentages_round_up() {
    // 19-member stage, groups of 7 and 12, all "25%" → 5 / 2 / 3.
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "25%", "groups": [
        {"name": "ga", "maxAllowedFailures": "25%"}, {"name": "gb", "maxAllowedFailures": "25%"}]}]});
    let (_, r) = run(&scenario_json(
        concat(vec![members("a", "ga", 7), members("b", "gb", 12)]),
        strategy,
        json!({}),
        json!({}),
    ));
    assert_eq!(limits(&r.runs[0], 0), (50, 5, vec![(1, 2), (1, 3)]));
}

#[test]
fn completed_with_zero_percent_success() {
    // A group of 4 with maxAllowedFailures "4": all four fail, the group is still Completed.
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "4", "groups": [
        {"name": "ga", "maxAllowedFailures": "4"}]}]});
    let (_, r) =
        run(&scenario_json(members("a", "ga", 4), strategy, json!({}), failures(&["a01", "a02", "a03", "a04"])));
    let run = &r.runs[0];
    assert_eq!(run.stages[0].groups[0].state, Completed);
    assert_eq!(run.stages[0].state, Completed);
    assert_eq!(run.state, Completed);
    assert_eq!(run.failure_count, 4);
}

#[test]
fn small_group_caution() {
    // "2" in a two-member group: Completed with zero successes.
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "2", "groups": [
        {"name": "ga", "maxAllowedFailures": "2"}]}]});
    let (_, r) = run(&scenario_json(members("a", "ga", 2), strategy, json!({}), failures(&["a01", "a02"])));
    assert_eq!(r.runs[0].state, Completed);
    assert_eq!(r.runs[0].stages[0].groups[0].failure_count, 2);
}

#[test]
fn monitor_example_twenty_percent_of_ten() {
    // A stage of 10 with "20%" can finish Completed with failureCount 2.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "10", "maxAllowedFailures": "20%", "groups": [
        {"name": "ga", "maxConcurrency": "10", "maxAllowedFailures": "20%"}]}]});
    let (_, r) = run(&scenario_json(members("a", "ga", 10), strategy, json!({}), failures(&["a03", "a07"])));
    assert_eq!(limits(&r.runs[0], 0), (10, 2, vec![(10, 2)]));
    assert_eq!(r.runs[0].state, Completed);
    assert_eq!(r.runs[0].failure_count, 2);
}

#[test]
fn default_maf_zero_fails_fast_and_in_flight_members_finish() {
    // Default maxAllowedFailures 0: the first failure trips; members already running finish, so the
    // final failureCount can exceed the threshold (SEMANTICS §6).
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "3"}]}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 6), strategy, json!({}), failures(&["a01", "a02"])));
    assert_eq!(
        trace(&s, &r, "r"),
        "+00:00 run NotStarted->Running
+00:00 stage s1 NotStarted->Running
+00:00 group ga NotStarted->Running
+00:00 member a01 NotStarted->Running
+00:00 member a02 NotStarted->Running
+00:00 member a03 NotStarted->Running
+01:00 run Running->Failed
+01:00 stage s1 Running->Failed
+01:00 group ga Running->Failed
+01:00 member a01 Running->Failed
+01:00 member a02 Running->Failed
+01:00 member a03 Running->Completed
"
    );
    assert_eq!(r.runs[0].failure_count, 2);
    assert_eq!(r.runs[0].stages[0].groups[0].max_allowed_failures, 0);
}

// ----- SEMANTICS §3, §11 "Limits": membership -----------------------------------------------

#[test]
fn one_by_one_without_a_strategy() {
    // No strategy: one stage and one group named "default", members one at a time in name order.
    let mut fleet = members("m", "ga", 3);
    fleet.reverse();
    let (s, r) = run(&scenario_json(fleet, Value::Null, json!({}), json!({})));
    let run = &r.runs[0];
    assert_eq!((run.stages[0].name.as_str(), run.stages[0].groups[0].name.as_str()), ("default", "default"));
    assert_eq!(limits(run, 0), (50, 0, vec![(1, 0)]));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member m01 NotStarted->Running
+01:00 member m01 Running->Completed
+01:00 member m02 NotStarted->Running
+02:00 member m02 Running->Completed
+02:00 member m03 NotStarted->Running
+03:00 member m03 Running->Completed
"
    );
}

#[test]
fn stage_selector_filters_name_mode_groups_and_unselected_members_are_listed() {
    let mut fleet = members("a", "ga", 2);
    fleet[0]["labels"] = json!({"ring": "one"});
    fleet.push(json!({"name": "x1", "region": "eastus", "kubernetesVersion": "1.32.4"}));
    let strategy =
        json!({"stages": [{"name": "s1", "memberSelector": {"byLabel": "ring=one"}, "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    let run = &r.runs[0];
    assert_eq!(run.stages[0].groups[0].members.len(), 1);
    let not_selected: Vec<&str> = run.not_selected.iter().map(|m| s.fleet[m.index()].name.as_str()).collect();
    assert_eq!(not_selected, ["a02", "x1"]);
}

#[test]
fn member_selected_twice_is_a_validation_error_naming_both() {
    let fleet = vec![
        json!({"name": "m1", "region": "eastus", "labels": {"env": "prod", "tier": "web"}, "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [
        {"name": "by-env", "memberSelector": {"byLabel": "env=prod"}},
        {"name": "by-tier", "memberSelector": {"byLabel": "tier=web"}}]}]});
    let p = problems(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].path, "/updateStrategies/s/stages/0/groups/1/memberSelector/byLabel");
    assert!(
        p[0].message.contains("stage \"s1\" group \"by-env\" and stage \"s1\" group \"by-tier\""),
        "{}",
        p[0].message
    );
}

#[test]
fn membership_is_a_snapshot_taken_when_the_run_is_created() {
    // Two runs over the same fleet see the same membership regardless of the first run's outcome.
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let extra = json!({"updateRuns": [
        {"name": "r", "updateStrategyId": "s", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}},
        {"name": "r2", "updateStrategyId": "s", "start": "+10h", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.3"}}}]});
    let (_, r) = run(&scenario_json(members("a", "ga", 3), strategy, json!({}), extra));
    assert_eq!(r.runs[1].stages[0].groups[0].members.len(), 3);
    assert_eq!(r.runs[1].state, Completed);
}

// ----- SEMANTICS §5: stages, waits, reaching -------------------------------------------------

#[test]
fn stages_run_in_sequence_and_the_wait_runs_with_after_gates_also_after_the_last_stage() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 1800},
        {"name": "s2", "groups": [{"name": "gb"}], "afterStageWaitInSeconds": 600}]});
    let (s, r) =
        run(&scenario_json(concat(vec![members("a", "ga", 1), members("b", "gb", 1)]), strategy, json!({}), json!({})));
    assert_eq!(
        trace(&s, &r, "r"),
        "+00:00 run NotStarted->Running
+00:00 stage s1 NotStarted->Running
+00:00 group ga NotStarted->Running
+00:00 member a01 NotStarted->Running
+01:00 run Running->Pending
+01:00 stage s1 Running->Pending
+01:00 group ga Running->Completed
+01:00 member a01 Running->Completed
+01:00 wait s1 NotStarted->Running
+01:30 run Pending->Running
+01:30 stage s1 Pending->Completed
+01:30 wait s1 Running->Completed
+01:30 stage s2 NotStarted->Running
+01:30 group gb NotStarted->Running
+01:30 member b01 NotStarted->Running
+02:30 run Running->Pending
+02:30 stage s2 Running->Pending
+02:30 group gb Running->Completed
+02:30 member b01 Running->Completed
+02:30 wait s2 NotStarted->Running
+02:40 run Pending->Completed
+02:40 stage s2 Pending->Completed
+02:40 wait s2 Running->Completed
"
    );
    let status = &r.runs[0].stages[1];
    assert_eq!(status.start_time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-03-02T01:30:00Z"));
    assert_eq!(status.completed_time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-03-02T02:40:00Z"));
}

#[test]
fn after_stage_wait_and_after_gate_start_together_and_both_must_finish() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 3600,
         "afterGates": [{"displayName": "check", "type": "Approval"}]},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    // Approved 30 minutes into the wait: the wait still decides.
    let early = json!({"actions": [{"at": "+1h30m", "action": "approve", "gate": {"stage": "s1", "timing": "After"}}]});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), early, json!({})));
    assert!(trace(&s, &r, "r").contains("+02:00 stage s2 NotStarted->Running"), "{}", trace(&s, &r, "r"));
    // Approved after the wait: the gate decides.
    let late = json!({"actions": [{"at": "+5h", "action": "approve", "gate": {"displayName": "check"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, late, json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 gate s1/after \"check\" NotStarted->Pending"), "{t}");
    assert!(t.contains("+05:00 stage s2 NotStarted->Running"), "{t}");
}

#[test]
fn empty_stage_is_skipped_when_reached_without_asking_for_approval() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}]},
        {"name": "empty", "groups": [{"name": "nobody"}], "afterStageWaitInSeconds": 3600,
         "beforeGates": [{"type": "Approval"}], "afterGates": [{"type": "Approval"}]},
        {"name": "s3", "groups": [{"name": "gc"}]}]});
    let (s, r) =
        run(&scenario_json(concat(vec![members("a", "ga", 1), members("c", "gc", 1)]), strategy, json!({}), json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 stage empty NotStarted->Skipped"), "{t}");
    assert!(t.contains("+01:00 gate empty/before NotStarted->Skipped"), "{t}");
    assert!(t.contains("+01:00 wait empty NotStarted->Skipped"), "{t}");
    assert!(t.contains("+01:00 member c01 NotStarted->Running"), "{t}");
    assert!(!t.contains("Pending"), "no approval is asked: {t}");
    assert_eq!(r.runs[0].state, Completed);
}

#[test]
fn all_skipped_run_is_skipped_and_already_at_target_members_skip_lazily() {
    // Every member already at the target: each is Skipped when a start is possible, the group and
    // stage are Skipped, their after gates never open, and the run is Skipped.
    let mut fleet = members("a", "ga", 2);
    for m in &mut fleet {
        m["kubernetesVersion"] = json!("1.33.2");
    }
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "afterGates": [{"type": "Approval"}]}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(
        trace(&s, &r, "r"),
        "+00:00 run NotStarted->Skipped
+00:00 stage s1 NotStarted->Skipped
+00:00 group ga NotStarted->Skipped
+00:00 member a01 NotStarted->Skipped
+00:00 member a02 NotStarted->Skipped
+00:00 gate ga/after NotStarted->Skipped
"
    );
}

#[test]
fn examination_is_lazy_an_at_target_member_is_skipped_only_when_a_start_is_possible() {
    let mut fleet = members("a", "ga", 3);
    fleet[1]["kubernetesVersion"] = json!("1.33.2");
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member a01 NotStarted->Running
+01:00 member a01 Running->Completed
+01:00 member a02 NotStarted->Skipped
+01:00 member a03 NotStarted->Running
+02:00 member a03 Running->Completed
"
    );
}

// ----- SEMANTICS §7: gates ------------------------------------------------------------------

#[test]
fn before_gate_blocks_the_stage_until_approved_and_no_pre_approval() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}]},
        {"name": "s2", "groups": [{"name": "gb"}], "beforeGates": [{"displayName": "go", "type": "Approval"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    // The first approval comes before the gate is reached: it does nothing.
    let actions = json!({"actions": [
        {"at": "+30m", "action": "approve", "gate": {"displayName": "go"}},
        {"at": "+3h", "action": "approve", "gate": {"displayName": "go"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 stage s2 NotStarted->Pending"), "{t}");
    assert!(t.contains("+01:00 gate s2/before \"go\" NotStarted->Pending"), "{t}");
    assert!(t.contains("+03:00 member b01 NotStarted->Running"), "{t}");
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].1.contains("found no Pending gate"));
    assert!(r.runs[0].gate_refs().iter().all(|g| r.runs[0].gate(*g).gate_id.is_some()));
}

#[test]
fn group_gate_blocks_only_its_group() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [
        {"name": "ga", "beforeGates": [{"type": "Approval"}]}, {"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [{"at": "+2h", "action": "approve", "gate": {"group": "ga"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = member_trace(&s, &r, "r");
    assert_eq!(
        t,
        "+00:00 member b01 NotStarted->Running
+01:00 member b01 Running->Completed
+02:00 member a01 NotStarted->Running
+03:00 member a01 Running->Completed
"
    );
}

#[test]
fn scheduled_start_gate_completes_at_the_next_occurrence_in_its_offset() {
    // Scenario start is Monday 00:00 UTC; the gate waits for Wednesday 02:00 +00:00.
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [
        {"displayName": "wed", "type": "ScheduledStart",
         "scheduledStartConfiguration": {"startDay": "Wednesday", "startTime": "02:00", "utcOffset": "+00:00"}}]}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, json!({}), json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+00:00 gate s1/before \"wed\" NotStarted->Pending"), "{t}");
    assert!(t.contains("+50:00 gate s1/before \"wed\" Pending->Completed"), "{t}");
    assert!(t.contains("+50:00 member a01 NotStarted->Running"), "{t}");
    let due = r.runs[0].gate(r.runs[0].gate_refs()[0]).due.unwrap();
    assert_eq!(due.to_rfc3339(), "2026-03-04T02:00:00Z");
}

#[test]
fn scheduled_start_gate_can_be_approved_early() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [
        {"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Friday", "startTime": "18:00", "utcOffset": "-05:00"}}]}]});
    let actions = json!({"actions": [{"at": "+5h", "action": "approve", "gate": {"stage": "s1"}}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, actions, json!({})));
    assert!(member_trace(&s, &r, "r").starts_with("+05:00 member a01 NotStarted->Running"));
    // SEMANTICS §11 erratum: Friday 18:00 -05:00 that week is 2026-03-06T23:00:00Z.
    assert_eq!(r.runs[0].gate(r.runs[0].gate_refs()[0]).due.unwrap().to_rfc3339(), "2026-03-06T23:00:00Z");
}

#[test]
fn scheduled_start_reached_at_its_exact_instant() {
    // Monday 00:00 UTC exactly: completes at once by default, a week later with `nextWeek`.
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [
        {"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Monday", "startTime": "00:00", "utcOffset": "+00:00"}}]}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy.clone(), json!({}), json!({})));
    assert!(member_trace(&s, &r, "r").starts_with("+00:00 member a01 NotStarted->Running"));
    let next_week = json!({"settings": {"scheduledStartAtExactInstant": "nextWeek"}});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, json!({}), next_week));
    assert!(
        member_trace(&s, &r, "r").starts_with("+168:00 member a01 NotStarted->Running"),
        "{}",
        member_trace(&s, &r, "r")
    );
}

#[test]
fn approval_policy_approves_each_approval_gate_after_its_delay() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterGates": [{"type": "Approval"}]},
        {"name": "s2", "groups": [{"name": "gb"}], "beforeGates": [{"type": "Approval"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let (s, r) = run(&scenario_json(fleet, strategy, json!({"approvalPolicy": "45m"}), json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:45 stage s1 Pending->Completed"), "{t}");
    assert!(t.contains("+02:30 member b01 NotStarted->Running"), "{t}");
    assert_eq!(r.runs[0].stats.gate_pending_seconds, 2 * 45 * 60);
}

// ----- SEMANTICS §6, §11 "Trips": failure scope ---------------------------------------------

#[test]
fn failure_scope_segment_lets_sibling_groups_go_on_and_the_stage_ends_failed() {
    let strategy = json!({"stages": [
        {"name": "s1", "maxAllowedFailures": "5", "groups": [{"name": "ga"}, {"name": "gb"}]},
        {"name": "s2", "groups": [{"name": "gc"}]}]});
    let fleet = concat(vec![members("a", "ga", 3), members("b", "gb", 3), members("c", "gc", 1)]);
    let mut extra = failures(&["a01"]);
    merge(&mut extra, json!({"settings": {"failureScope": "segment"}}));
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), extra));
    let run = &r.runs[0];
    assert_eq!(run.stages[0].groups[0].state, Failed);
    assert_eq!(member_state(&s, run, "a02"), NotStarted, "the tripped group starts nothing more");
    assert_eq!(member_state(&s, run, "b03"), Completed, "the sibling group goes on");
    assert_eq!(run.stages[0].state, Failed);
    assert_eq!(run.stages[1].state, NotStarted);
    assert_eq!(run.state, Failed);
    assert!(trace(&s, &r, "r").contains("+03:00 run Running->Failed"), "{}", trace(&s, &r, "r"));
    // Under the default scope the whole run stops at the first trip.
    let (s, r) = crate::support::run(&scenario_json(fleet, strategy, json!({}), failures(&["a01"])));
    assert_eq!(member_state(&s, &r.runs[0], "b02"), NotStarted);
    assert_eq!(r.runs[0].stages[0].groups[1].state, Stopped);
    assert!(trace(&s, &r, "r").contains("+01:00 run Running->Failed"));
}

#[test]
fn stage_threshold_is_the_overall_ceiling() {
    // Groups tolerate 1 each, the stage only 1 in total: the second failure (in another group) trips
    // the stage although neither group exceeded its own threshold.
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "1", "groups": [
        {"name": "ga", "maxAllowedFailures": "1"}, {"name": "gb", "maxAllowedFailures": "1"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 2)]);
    let (_, r) = run(&scenario_json(fleet, strategy, json!({}), failures(&["a01", "b01"])));
    let run = &r.runs[0];
    assert_eq!(run.stages[0].state, Failed);
    assert_ne!(run.stages[0].groups[0].state, Failed);
    assert_eq!(run.state, Failed);
    assert_eq!(run.failure_count, 2);
}

#[test]
fn a_stage_tripped_by_its_last_failures_ends_failed_although_every_group_completed() {
    // Each group tolerates one failure and its last member fails, so both groups complete; the
    // stage tolerates one in total and the second failure, the stage's last member, trips it.
    let strategy = json!({"stages": [
        {"name": "s1", "maxAllowedFailures": "1", "groups": [
            {"name": "ga", "maxAllowedFailures": "1"}, {"name": "gb", "maxAllowedFailures": "1"}]},
        {"name": "s2", "groups": [{"name": "gc"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 2), members("c", "gc", 1)]);
    for scope in ["run", "segment"] {
        let mut extra = failures(&["a02", "b02"]);
        merge(&mut extra, json!({"settings": {"failureScope": scope}}));
        let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), extra));
        let run = &r.runs[0];
        assert_eq!(run.stages[0].groups[0].state, Completed, "{scope}");
        assert_eq!(run.stages[0].groups[1].state, Completed, "{scope}");
        assert_eq!(run.stages[0].state, Failed, "{scope}: {}", trace(&s, &r, "r"));
        assert_eq!(run.stages[1].state, NotStarted, "{scope}: the run goes no further");
        assert_eq!(member_state(&s, run, "c01"), NotStarted, "{scope}");
        assert_eq!(run.state, Failed, "{scope}");
        assert_eq!(run.failure_count, 2, "{scope}");
    }
}

#[test]
fn stopping_while_members_run_and_failed_after_they_finish() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let mut extra = failures(&["a01"]);
    merge(&mut extra, json!({"models": {"overrides": [{"member": "a01", "outcome": "Failed", "duration": "20m"}]}}));
    let (s, r) = run(&scenario_json(members("a", "ga", 3), strategy, json!({}), extra));
    assert_eq!(
        trace(&s, &r, "r"),
        "+00:00 run NotStarted->Running
+00:00 stage s1 NotStarted->Running
+00:00 group ga NotStarted->Running
+00:00 member a01 NotStarted->Running
+00:00 member a02 NotStarted->Running
+00:20 run Running->Stopping
+00:20 stage s1 Running->Failed
+00:20 group ga Running->Failed
+00:20 member a01 Running->Failed
+01:00 run Stopping->Failed
+01:00 member a02 Running->Completed
"
    );
}

// ----- SEMANTICS §7, §11: stop, start, skip, ties -------------------------------------------

#[test]
fn stop_lets_in_flight_members_finish_and_start_resumes_with_unprocessed_members() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let actions = json!({"actions": [{"at": "+30m", "action": "stop"}, {"at": "+3h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 4), strategy, actions, json!({})));
    assert_eq!(
        trace(&s, &r, "r"),
        "+00:00 run NotStarted->Running
+00:00 stage s1 NotStarted->Running
+00:00 group ga NotStarted->Running
+00:00 member a01 NotStarted->Running
+00:00 member a02 NotStarted->Running
+00:30 run Running->Stopping
+00:30 stage s1 Running->Stopping
+00:30 group ga Running->Stopping
+01:00 run Stopping->Stopped
+01:00 stage s1 Stopping->Stopped
+01:00 group ga Stopping->Stopped
+01:00 member a01 Running->Completed
+01:00 member a02 Running->Completed
+03:00 run Stopped->Running
+03:00 stage s1 Stopped->Running
+03:00 group ga Stopped->Running
+03:00 member a03 NotStarted->Running
+03:00 member a04 NotStarted->Running
+04:00 run Running->Completed
+04:00 stage s1 Running->Completed
+04:00 group ga Running->Completed
+04:00 member a03 Running->Completed
+04:00 member a04 Running->Completed
"
    );
    let run = &r.runs[0];
    assert_eq!(run.stages[0].completed_time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-03-02T04:00:00Z"));
}

#[test]
fn completion_and_stop_at_the_same_instant_leave_the_freed_slot_unused() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+1h", "action": "stop"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 2), strategy, actions, json!({})));
    assert_eq!(member_state(&s, &r.runs[0], "a02"), NotStarted);
    assert_eq!(r.runs[0].state, Stopped);
    // The run never shows Stopping: nothing was running once the instant settled.
    assert!(!trace(&s, &r, "r").contains("Stopping"));
}

#[test]
fn a_trip_during_a_user_stop_ends_the_run_failed() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let actions = json!({"actions": [{"at": "+10m", "action": "stop"}]});
    let (_, r) = run(&scenario_json(members("a", "ga", 3), strategy, actions, failures(&["a02"])));
    assert_eq!(r.runs[0].state, Failed);
}

#[test]
fn timers_and_approvals_still_complete_while_stopped_but_nothing_new_is_reached() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterGates": [{"displayName": "ok", "type": "Approval"}], "afterStageWaitInSeconds": 1800},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [
        {"at": "+1h10m", "action": "stop"},
        {"at": "+1h20m", "action": "approve", "gate": {"displayName": "ok"}},
        {"at": "+4h", "action": "start"}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:20 gate s1/after \"ok\" Pending->Completed"), "{t}");
    assert!(t.contains("+01:30 wait s1 Running->Completed"), "{t}");
    assert!(t.contains("+01:30 stage s1 Stopped->Completed"), "{t}");
    assert!(t.contains("+04:00 stage s2 NotStarted->Running"), "the next stage is only reached after the restart: {t}");
}

#[test]
fn restart_after_failure_keeps_counts_and_can_end_completed_above_the_threshold() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+2h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 3), strategy, actions, failures(&["a01"])));
    let run = &r.runs[0];
    assert_eq!(run.state, Completed);
    assert_eq!(run.failure_count, 1);
    assert_eq!(run.stages[0].groups[0].failure_count, 1);
    assert_eq!(member_state(&s, run, "a01"), Failed, "failed members are not retried by default");
    let t = trace(&s, &r, "r");
    assert!(t.contains("+02:00 run Failed->Running"), "{t}");
    assert!(t.contains("+02:00 member a02 NotStarted->Running"), "{t}");
}

#[test]
fn restart_trips_again_at_the_next_failure() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+2h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 3), strategy, actions, failures(&["a01", "a02"])));
    assert_eq!(r.runs[0].state, Failed);
    assert_eq!(member_state(&s, &r.runs[0], "a03"), NotStarted);
    assert_eq!(r.runs[0].failure_count, 2);
}

/// SEMANTICS §11 "Restart" and common random numbers: a retry is the member's next attempt and
/// draws that attempt's stream, not the first attempt's again (which would fail every retry of a
/// member whose first attempt failed at random).
#[test]
fn a_retried_member_draws_its_next_attempt_not_its_first_again() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let restarts: Vec<Value> = (1..=40).map(|k| json!({"at": format!("+{}h", 2 * k), "action": "start"})).collect();
    let extra = json!({"settings": {"retryFailedOnRestart": true}, "models": {"failure": {"probability": 0.5}}});
    let (s, r) = run(&scenario_json(members("a", "ga", 10), strategy, json!({"actions": restarts}), extra));
    let run = &r.runs[0];
    let members = &run.stages[0].groups[0].members;
    let retried_and_completed = members.iter().filter(|m| m.attempts >= 2 && m.state == Completed).count();
    assert!(retried_and_completed > 0, "no retry of a member that failed at random completed");
    assert!(run.failure_count > 0, "the premise: first attempts failed at random");
    assert_eq!(run.state, Completed, "{}", trace(&s, &r, "r"));
}

#[test]
fn retry_failed_on_restart_setting() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+2h", "action": "start"}]});
    let mut extra = json!({"settings": {"retryFailedOnRestart": true},
        "models": {"overrides": [{"member": "a01", "run": "r", "outcome": "Failed"}]}});
    // The override fails a01 every time: retried once, it fails again and trips again.
    let (s, r) = run(&scenario_json(members("a", "ga", 2), strategy.clone(), actions.clone(), extra.clone()));
    assert_eq!(member_state(&s, &r.runs[0], "a01"), Failed);
    assert_eq!(r.runs[0].stages[0].groups[0].members[0].attempts, 2);
    // SEMANTICS §11 "Restart": the first failure still counts and the failed retry adds one more.
    assert_eq!(r.runs[0].failure_count, 2, "failureCount counts failed attempts across a restart");
    // A transient failure: the retry succeeds.
    extra["models"]["overrides"] = json!([]);
    merge(&mut extra, json!({"models": {"failure": {"probability": 0.0}}}));
    let (_, r) = run(&scenario_json(members("a", "ga", 2), strategy, actions, extra));
    assert_eq!(r.runs[0].state, Completed);
}

/// A run `Failed` only within one instant is not a failed run (SEMANTICS §11 "Timeline rows": a
/// state held for zero time is not a row): a01's failure at +1h trips its stage, and a skip of that
/// stage in the same instant (user actions come after completions) ends the run `Skipped`. Its
/// timeline never shows it `Failed`, and it carries no "stage … failed" note.
#[test]
fn a_run_failed_only_within_one_instant_carries_no_failure_note() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+1h", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    let extra = json!({"models": {"overrides": [{"member": "a01", "run": "r", "outcome": "Failed"}]}});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, actions, extra));
    let t = trace(&s, &r, "r");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(t.contains("+01:00 member a01 Running->Failed"), "{t}");
    assert!(t.contains("+01:00 stage s1 Running->Skipped"), "{t}");
    assert!(!t.lines().any(|l| l.contains(" run ") && l.contains("Failed")), "{t}");
    assert_eq!(r.runs[0].state, Skipped);
    assert_eq!(r.runs[0].failure_count, 1);
    let note = r.runs[0].note.message.as_deref().unwrap_or_default();
    assert!(!note.contains("failed"), "{note:?}");

    // Skipped an hour later, the run was `Failed` for that hour, with the note; it ends without it.
    let actions = json!({"actions": [{"at": "+2h", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    let extra = json!({"models": {"overrides": [{"member": "a01", "run": "r", "outcome": "Failed"}]}});
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, actions, extra));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 run Running->Failed"), "{t}");
    assert!(t.contains("+02:00 run Failed->Skipped"), "{t}");
    assert_eq!(r.runs[0].state, Skipped);
    assert!(r.runs[0].note.is_empty(), "{:?}", r.runs[0].note);
}

#[test]
fn skip_member_group_stage_and_wait() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}, {"name": "gb"}], "afterStageWaitInSeconds": 36000},
        {"name": "s2", "groups": [{"name": "gc"}]},
        {"name": "s3", "groups": [{"name": "gd"}]}]});
    let fleet =
        concat(vec![members("a", "ga", 3), members("b", "gb", 2), members("c", "gc", 1), members("d", "gd", 1)]);
    let actions = json!({"actions": [
        {"at": "+10m", "action": "skip", "targets": [{"type": "Member", "name": "a03"}, {"type": "Group", "name": "gb"}]},
        {"at": "+10m", "action": "skip", "targets": [{"type": "Stage", "name": "s2"}]},
        {"at": "+2h", "action": "skip", "targets": [{"type": "AfterStageWait", "name": "s1"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let run = &r.runs[0];
    assert_eq!(member_state(&s, run, "a03"), Skipped);
    assert_eq!(member_state(&s, run, "b01"), Completed, "a running member of a skipped group finishes");
    assert_eq!(member_state(&s, run, "b02"), Skipped);
    assert_eq!(run.stages[0].groups[1].state, Skipped);
    assert_eq!(run.stages[1].state, Skipped);
    assert_eq!(member_state(&s, run, "c01"), Skipped);
    let t = trace(&s, &r, "r");
    assert!(t.contains("+02:00 wait s1 Running->Skipped"), "{t}");
    assert!(t.contains("+02:00 member d01 NotStarted->Running"), "{t}");
    assert_eq!(run.state, Completed);
}

#[test]
fn a_skipped_stage_with_running_members_holds_the_next_stage_until_they_finish() {
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 1)]);
    let actions = json!({"actions": [{"at": "+10m", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, failures(&["a01"])));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+00:10 stage s1 Running->Skipped"), "{t}");
    assert!(t.contains("+01:00 member b01 NotStarted->Running"), "{t}");
    // The failure counts everywhere but cannot trip the skipped group or stage.
    assert_eq!(r.runs[0].failure_count, 1);
    assert_eq!(r.runs[0].stages[0].failure_count, 1);
    assert_eq!(r.runs[0].state, Completed);
}

// ----- SEMANTICS §5.4–5.5, §11 "Polls": windows and availability -----------------------------

fn daily_window(start_time: &str, hours: u32) -> Value {
    json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": hours, "startTime": start_time, "utcOffset": "+00:00"})
}

#[test]
fn members_are_picked_by_window_class_then_name() {
    // At 00:00: m1's window is open (class 1), a1's opens at 02:00 (class 2), z1 has none (class 3),
    // c1's opens at 12:00 (class 4). One at a time.
    let fleet = vec![
        json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4", "aksManagedAutoUpgradeSchedule": daily_window("02:00", 4)}),
        json!({"name": "c1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4", "aksManagedAutoUpgradeSchedule": daily_window("12:00", 4)}),
        json!({"name": "m1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4", "aksManagedAutoUpgradeSchedule": daily_window("00:00", 4)}),
        json!({"name": "z1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member m1 NotStarted->Running
+01:00 member a1 NotStarted->Pending
+01:00 member m1 Running->Completed
+01:00 member z1 NotStarted->Running
+02:00 member a1 Pending->Running
+02:00 member z1 Running->Completed
+03:00 member a1 Running->Completed
+03:00 member c1 NotStarted->Pending
+12:00 member c1 Pending->Running
+13:00 member c1 Running->Completed
"
    );
    let c1 = &r.runs[0].stages[0].groups[0].members[1];
    assert_eq!(c1.state, Completed);
    assert!(r.runs[0].stats.pending_window_seconds == 9 * 3600 + 3600, "{:?}", r.runs[0].stats);
}

#[test]
fn a_newly_opened_window_is_noticed_at_the_next_poll_and_a_started_upgrade_runs_past_its_end() {
    // Window 03:30–07:30; polls every hour from the run start (00:00): noticed at 04:00. The upgrade
    // takes 5 h and runs past the window's end.
    let fleet = vec![json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": daily_window("03:30", 4)})];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(
        fleet.clone(),
        strategy.clone(),
        json!({}),
        json!({"models": {"duration": {"member": "5h"}}}),
    ));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member a1 NotStarted->Pending
+04:00 member a1 Pending->Running
+09:00 member a1 Running->Completed
"
    );
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({"settings": {"windowPollInterval": "15m"}})));
    assert!(member_trace(&s, &r, "r").contains("+03:30 member a1 Pending->Running"), "{}", member_trace(&s, &r, "r"));
}

#[test]
fn pending_window_message_gives_the_next_opening_and_node_image_runs_use_the_node_os_window() {
    let fleet = vec![json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": daily_window("03:00", 4),
        "aksManagedNodeOSUpgradeSchedule": daily_window("10:00", 4)})];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let stop = json!({"settings": {"horizon": "1h"}});
    let (_, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), stop.clone()));
    let member = &r.runs[0].stages[0].groups[0].members[0];
    assert_eq!(member.state, Pending);
    assert_eq!(
        member.note.message.as_deref(),
        Some("maintenance window aksManagedAutoUpgradeSchedule is closed; it next opens at 2026-03-02T03:00:00Z")
    );
    let node_image = json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly", "kubernetesVersion": null}}});
    let mut fleet = fleet;
    fleet[0]["nodePools"] = json!([{"name": "system", "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202601.01.0"}]);
    let mut world = stop;
    merge(&mut world, json!({"releases": {"nodeImages": [{"version": "AKSUbuntu-2204gen2containerd-202602.01.0"}]}}));
    let (_, r) = run(&scenario_json(fleet, strategy, node_image, world));
    let member = &r.runs[0].stages[0].groups[0].members[0];
    assert!(
        member
            .note
            .message
            .as_deref()
            .unwrap()
            .contains("aksManagedNodeOSUpgradeSchedule is closed; it next opens at 2026-03-02T10:00:00Z")
    );
}

#[test]
fn approval_does_not_override_a_window() {
    // FAQ: gate done at 02:00, window opens at 06:00 → the member starts at 06:00.
    let fleet = vec![json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": daily_window("06:00", 4)})];
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}], "beforeGates": [{"type": "Approval"}]}]});
    let actions = json!({"actions": [{"at": "+2h", "action": "approve", "gate": {"stage": "s1"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+02:00 member a1 NotStarted->Pending
+06:00 member a1 Pending->Running
+07:00 member a1 Running->Completed
"
    );
}

#[test]
fn pending_on_availability_then_running_at_the_poll_after_the_release_arrives() {
    let fleet = vec![
        json!({"name": "east1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}),
        json!({"name": "west1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let releases = json!({"releases": {"kubernetes": [
        {"version": "1.32.4"},
        {"version": "1.33.2", "available": {"default": "+0s", "regions": {"westeurope": "+5h30m"}}}]}});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), releases));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member east1 NotStarted->Running
+00:00 member west1 NotStarted->Pending
+01:00 member east1 Running->Completed
+06:00 member west1 Pending->Running
+07:00 member west1 Running->Completed
"
    );
    let t = fleetsim::report::tables::timeline_csv(&fleetsim::report::ReportContext::new(&s, &r)).unwrap();
    let text = String::from_utf8(t).unwrap();
    assert!(
        text.contains(r#"NotStarted,Pending,"KubernetesVersionNotAvailable: target Kubernetes version ""1.33.2"" is not available in region ""westeurope"""#),
        "{text}"
    );
    assert_eq!(r.runs[0].stats.pending_availability_seconds, 6 * 3600);
}

#[test]
fn a_version_absent_from_the_release_list_cannot_be_targeted() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let releases = json!({"releases": {"kubernetes": [{"version": "1.32.4"}]}});
    let p = problems(&scenario_json(members("a", "ga", 1), strategy, json!({}), releases));
    assert_eq!(p[0].path, "/updateRuns/0/managedClusterUpdate/upgrade/kubernetesVersion");
}

// ----- several runs, the horizon --------------------------------------------------------------

#[test]
fn overlapping_runs_fail_members_already_being_upgraded() {
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [{"name": "ga", "maxAllowedFailures": "100%"}]}]});
    let extra = json!({"updateRuns": [
        {"name": "r", "updateStrategyId": "s", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}},
        {"name": "r2", "updateStrategyId": "s", "start": "+30m", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.3"}}}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 2), strategy, json!({}), extra));
    let r2 = run_named(&r, "r2");
    assert_eq!(member_state(&s, r2, "a01"), Failed);
    assert_eq!(r2.stages[0].groups[0].members[0].note.code.as_deref(), Some("OperationNotAllowed"));
    assert_eq!(member_state(&s, r2, "a02"), Completed);
    assert_eq!(member_state(&s, run_named(&r, "r"), "a01"), Completed, "the first run's upgrade is not disturbed");
}

#[test]
fn stopped_clusters_fail_at_once() {
    let mut fleet = members("a", "ga", 2);
    fleet[0]["stopped"] = json!(true);
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    assert_eq!(trace(&s, &r, "r").lines().filter(|l| l.starts_with("+00:00")).count(), 4, "{}", trace(&s, &r, "r"));
    assert!(trace(&s, &r, "r").contains("+00:00 member a01 NotStarted->Failed"), "a zero-time Running is not a row");
    assert_eq!(r.runs[0].state, Failed);
}

#[test]
fn runs_open_at_the_horizon_are_reported_in_their_current_state() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) =
        run(&scenario_json(members("a", "ga", 5), strategy, json!({}), json!({"settings": {"horizon": "2h30m"}})));
    assert!(r.horizon_reached);
    assert_eq!(r.runs[0].state, Running);
    assert_eq!(member_state(&s, &r.runs[0], "a03"), Running);
    assert_eq!(member_state(&s, &r.runs[0], "a04"), NotStarted);
    assert_eq!(r.end.to_rfc3339(), "2026-03-02T02:30:00Z");
}

#[test]
fn a_manual_run_waits_for_its_start_action() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let run_extra = json!({"start": "manual", "actions": [{"at": "2026-03-03T09:00:00+01:00", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, run_extra, json!({})));
    assert!(trace(&s, &r, "r").starts_with("+32:00 run NotStarted->Running"), "{}", trace(&s, &r, "r"));
}

#[test]
fn pending_time_stops_counting_when_the_run_ends() {
    // a1 waits for a window opening at 12:00; a2 fails at 01:00 and fails the run. The simulation
    // goes on (a poll is armed), but a1's waiting ends with the run.
    let fleet = vec![
        json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
            "aksManagedAutoUpgradeSchedule": daily_window("12:00", 4)}),
        json!({"name": "a2", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let (_, r) = run(&scenario_json(fleet, strategy, json!({}), failures(&["a2"])));
    assert_eq!(r.runs[0].state, Failed);
    assert_eq!(r.runs[0].stats.pending_window_seconds, 3600);
}

#[test]
fn a_pending_member_upgraded_by_another_run_is_skipped_at_the_next_poll() {
    // Run r waits for 1.33.2 in westeurope (+10h); run r2 moves the member to 1.33.3 meanwhile. At the
    // next poll after that, r finds the member ahead of its target (SEMANTICS §5.5a, §11 "Polls").
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let extra = json!({
        "releases": {"kubernetes": [
            {"version": "1.32.4"},
            {"version": "1.33.2", "available": {"default": "+0s", "regions": {"westeurope": "+10h"}}},
            {"version": "1.33.3"}]},
        "updateRuns": [
            {"name": "r", "updateStrategyId": "s", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}},
            {"name": "r2", "updateStrategyId": "s", "start": "+30m", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.3"}}}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, json!({}), extra));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member a01 NotStarted->Pending
+02:00 member a01 Pending->Skipped
"
    );
}

// ----- Cases that make a wrong rule visible (each fails if its rule is planted wrong) ----------

/// SEMANTICS §4: percent `maxConcurrency` rounds down. 3 members at "50%" resolve to 1 (1.5 floored),
/// so they run one at a time; rounding up would give 2.
#[test]
fn percent_concurrency_rounds_down_on_an_uneven_share() {
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "50%", "groups": [{"name": "ga", "maxConcurrency": "50%"}]}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 3), strategy, json!({}), json!({})));
    assert_eq!(limits(&r.runs[0], 0), (1, 0, vec![(1, 0)]));
    assert_eq!(peaks(&r.runs[0], 0), (1, vec![1]));
    let starts: Vec<String> =
        member_trace(&s, &r, "r").lines().filter(|l| l.ends_with("NotStarted->Running")).map(str::to_string).collect();
    assert_eq!(
        starts,
        [
            "+00:00 member a01 NotStarted->Running",
            "+01:00 member a02 NotStarted->Running",
            "+02:00 member a03 NotStarted->Running"
        ]
    );
}

/// SEMANTICS §11 "Ties": member completions come before user actions at one instant. The last
/// running member of a stopped run finishes at 01:00, so the run is `Stopped` when the `start` of
/// 01:00 arrives: the start is accepted and the run goes on.
#[test]
fn a_start_at_the_instant_the_last_member_of_a_stopped_run_finishes_is_accepted() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+30m", "action": "stop"}, {"at": "+1h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 2), strategy, actions, json!({})));
    assert!(r.notes.is_empty(), "the start was not refused: {:?}", r.notes);
    assert_eq!(r.runs[0].state, Completed);
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 run Stopping->Running"), "{t}");
    assert!(t.contains("+01:00 member a02 NotStarted->Running"), "{t}");
    assert!(t.contains("+02:00 run Running->Completed"), "{t}");
}

/// SEMANTICS §11 "Trips" under `failureScope: segment`: a tripped group never opens its
/// afterGates, while its sibling group goes on to completion.
#[test]
fn a_tripped_group_keeps_its_after_gates_shut_under_segment_scope() {
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "3", "maxAllowedFailures": "5", "groups": [
        {"name": "ga", "maxAllowedFailures": "0", "afterGates": [{"type": "Approval", "displayName": "after a"}]},
        {"name": "gb", "afterGates": [{"type": "Approval", "displayName": "after b"}]}]}]});
    let mut extra = failures(&["a01"]);
    merge(&mut extra, json!({"settings": {"failureScope": "segment"}, "models": {"approvals": "10m"}}));
    let fleet = [members("a", "ga", 2), members("b", "gb", 2)].concat();
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), extra));
    let run = &r.runs[0];
    let (ga, gb) = (&run.stages[0].groups[0], &run.stages[0].groups[1]);
    assert_eq!(ga.state, Failed);
    assert_eq!(ga.after_gates[0].state, NotStarted, "the tripped group's after gate stays shut");
    assert_eq!(member_state(&s, run, "a02"), NotStarted);
    assert_eq!((gb.state, gb.after_gates[0].state), (Completed, Completed));
    assert_eq!(member_state(&s, run, "b02"), Completed);
    assert_eq!(run.state, Failed);
}

/// SEMANTICS §5.5: regional availability (c) is checked before the window (d). The release reaches
/// westeurope at +6 h; the window first opens at +26 h: 6 h pending on availability, then 20 h on
/// the window.
#[test]
fn availability_is_checked_before_the_window() {
    let member = json!({"name": "m1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": {"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4,
            "startTime": "02:00", "utcOffset": "+00:00", "startDate": "2026-03-03"}});
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let releases = json!({"releases": {"kubernetes": [{"version": "1.32.4", "available": "-30d"},
        {"version": "1.33.2", "available": {"regions": {"westeurope": "+6h"}}}]}});
    let (s, r) = run(&scenario_json(vec![member], strategy, json!({}), releases));
    let run = &r.runs[0];
    assert_eq!(run.stats.pending_availability_seconds, 6 * 3600);
    assert_eq!(run.stats.pending_window_seconds, 20 * 3600);
    let start = run.stages[0].groups[0].members[0].start_time().unwrap();
    assert_eq!((start - s.start).as_seconds(), 26 * 3600);
}

/// SEMANTICS §11 "Polls": the poll grid is anchored at the run's first start and stays there across
/// stop and restart. The window opens at 03:15; after a restart at 01:30 the member starts at the
/// 04:00 poll of the original grid, not at 03:30.
#[test]
fn the_poll_grid_stays_fixed_across_a_restart() {
    let member = json!({"name": "m1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4",
        "aksManagedAutoUpgradeSchedule": {"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4,
            "startTime": "03:15", "utcOffset": "+00:00", "startDate": "2026-03-02"}});
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+30m", "action": "stop"}, {"at": "+90m", "action": "start"}]});
    let (s, r) = run(&scenario_json(vec![member], strategy, actions, json!({})));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let start = r.runs[0].stages[0].groups[0].members[0].start_time().unwrap();
    assert_eq!((start - s.start).as_seconds(), 4 * 3600, "started at {start}");
}

/// SEMANTICS §4 and §5.3: the stage cap holds across groups, visible in the timeline: stage "2",
/// three groups of two, each group "2": two run at once, the next two start only as the first two
/// finish, each pass serving the groups from the first.
#[test]
fn the_stage_cap_holds_in_the_timeline() {
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "2", "groups": [
        {"name": "ga", "maxConcurrency": "2"}, {"name": "gb", "maxConcurrency": "2"}, {"name": "gc", "maxConcurrency": "2"}]}]});
    let fleet = [members("a", "ga", 2), members("b", "gb", 2), members("c", "gc", 2)].concat();
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    let starts: Vec<String> =
        member_trace(&s, &r, "r").lines().filter(|l| l.ends_with("NotStarted->Running")).map(str::to_string).collect();
    assert_eq!(
        starts,
        [
            "+00:00 member a01 NotStarted->Running",
            "+00:00 member b01 NotStarted->Running",
            "+01:00 member a02 NotStarted->Running",
            "+01:00 member b02 NotStarted->Running",
            "+02:00 member c01 NotStarted->Running",
            "+02:00 member c02 NotStarted->Running",
        ]
    );
    assert_eq!(r.runs[0].stages[0].peak_running, 2);
}

// ----- Status details the reports read: spells, notes, open time at the horizon, gate ids ------

/// A `Pending` member's `startTime` is when its current spell began (SEMANTICS leaves it open; the
/// README states the choice, after the monitoring docs' sample), and a re-examination that finds it waiting for the same reason does not begin a new spell. a1's
/// window (01:00–05:00) opens while the only slot is busy until 06:00; examined again at 06:00 it is
/// still waiting on its window, since 00:00.
#[test]
fn a_member_examined_again_for_the_same_reason_keeps_its_pending_spell() {
    let fleet = vec![
        json!({"name": "a1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4", "aksManagedAutoUpgradeSchedule": daily_window("01:00", 4)}),
        json!({"name": "z1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let extra = json!({"settings": {"horizon": "20h"}, "models": {"overrides": [{"member": "z1", "duration": "6h"}]}});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), extra));
    assert_eq!(
        member_trace(&s, &r, "r"),
        "+00:00 member a1 NotStarted->Pending
+00:00 member z1 NotStarted->Running
+06:00 member z1 Running->Completed
"
    );
    assert_eq!(r.runs[0].stages[0].groups[0].pending_since(0), Some(s.start));
    assert_eq!(r.runs[0].stats.pending_window_seconds, 20 * 3600);
}

/// A run's note: none while it goes well, the failing stage and counts when it fails (SEMANTICS §6).
#[test]
fn a_failed_run_says_which_stage_failed_and_a_completed_one_says_nothing() {
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 3)]);
    let (_, ok) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), json!({})));
    assert_eq!(ok.runs[0].state, Completed);
    assert!(ok.runs[0].note.is_empty(), "{:?}", ok.runs[0].note);
    let (_, bad) = run(&scenario_json(fleet, strategy, json!({}), failures(&["b01"])));
    let run = &bad.runs[0];
    assert_eq!(run.state, Failed);
    assert_eq!(run.note.text(), "stage \"s2\" failed: failureCount 1 (run total 1)");
    assert_eq!(bad.runs[0].stages[0].state, Completed);
}

/// Timeline rows carry the note of a `Skipped` or `Failed` stage or group, and none for other
/// states (SEMANTICS §11 "Timeline rows").
#[test]
fn timeline_rows_of_skipped_and_failed_stages_and_groups_carry_their_notes() {
    let strategy =
        json!({"stages": [{"name": "s1", "maxConcurrency": "2", "groups": [{"name": "ga"}, {"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 2)]);
    let skip = json!({"actions": [{"at": "+30m", "action": "skip", "targets": [{"type": "Group", "name": "gb"}]}]});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), skip, json!({})));
    let r0 = &r.runs[0];
    let group_rows: Vec<(String, String, String)> = r
        .timeline
        .iter()
        .filter_map(|row| match row.transition.entity {
            fleetsim::orchestrator::Entity::Group(_, g) => Some((
                format!("+{}m", (row.time - s.start).as_seconds() / 60),
                format!("{} {}", r0.stages[0].groups[g as usize].name, row.transition.to),
                row.transition.note.text(),
            )),
            _ => None,
        })
        .collect();
    let rows: Vec<(&str, &str, &str)> =
        group_rows.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    assert_eq!(
        rows,
        [
            ("+0m", "ga Running", ""),
            ("+0m", "gb Running", ""),
            ("+30m", "gb Skipped", "skipped by user"),
            ("+120m", "ga Completed", "")
        ]
    );
    let (_, failed) = run(&scenario_json(fleet.clone(), strategy, json!({}), failures(&["a01"])));
    let note = failed
        .timeline
        .iter()
        .find(|row| row.transition.entity == fleetsim::orchestrator::Entity::Group(0, 0) && row.transition.to == Failed)
        .map(|row| row.transition.note.text());
    assert!(note.as_deref().is_some_and(|n| !n.is_empty()), "{note:?}");
    // Stages likewise: a skipped stage's row says why, a failed one's how; a completed one's nothing.
    let two =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "gb"}]}]});
    let skip_s2 = json!({"actions": [{"at": "+30m", "action": "skip", "targets": [{"type": "Stage", "name": "s2"}]}]});
    let (_, r) = run(&scenario_json(fleet.clone(), two.clone(), skip_s2, json!({})));
    let stage_rows = |r: &fleetsim::simulation::SimResult| -> Vec<(u16, String, String)> {
        r.timeline
            .iter()
            .filter_map(|row| match row.transition.entity {
                fleetsim::orchestrator::Entity::Stage(st) => {
                    Some((st, row.transition.to.to_string(), row.transition.note.text()))
                }
                _ => None,
            })
            .collect()
    };
    let rows = stage_rows(&r);
    assert!(rows.contains(&(1, "Skipped".into(), "skipped by user".into())), "{rows:?}");
    assert!(rows.contains(&(0, "Completed".into(), String::new())), "{rows:?}");
    assert!(rows.contains(&(0, "Running".into(), String::new())), "{rows:?}");
    let (_, r) = run(&scenario_json(fleet, two, json!({}), failures(&["a01"])));
    let rows = stage_rows(&r);
    let failed = rows.iter().find(|(st, to, _)| *st == 0 && to == "Failed").expect("s1 fails");
    assert!(!failed.2.is_empty(), "{rows:?}");
}

/// At the horizon an after-stage wait still running and a gate still `Pending` count the time they
/// have spent (SEMANTICS §5.9: waiting counts until the horizon).
#[test]
fn waits_and_gates_open_at_the_horizon_count_their_time() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 36000},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let (_, r) = run(&scenario_json(fleet.clone(), strategy, json!({}), json!({"settings": {"horizon": "4h"}})));
    // a01 01:00, then the wait runs 01:00 → 04:00.
    assert_eq!(r.runs[0].stats.wait_seconds, 3 * 3600);
    let gated = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 3600},
        {"name": "s2", "groups": [{"name": "gb"}], "beforeGates": [{"type": "Approval"}]}]});
    let (_, r) = run(&scenario_json(fleet, gated, json!({}), json!({"settings": {"horizon": "5h"}})));
    // The wait 01:00 → 02:00 ran whole; the gate waits from 02:00 to the horizon.
    assert_eq!(r.runs[0].stats.wait_seconds, 3600);
    assert_eq!(r.runs[0].stats.gate_pending_seconds, 3 * 3600);
}

/// Every gate of a run has its own GUID-shaped `gateId`, the same in every replication.
#[test]
fn every_gate_has_its_own_stable_gate_id() {
    let approval = || json!([{"type": "Approval"}, {"type": "Approval"}]);
    let strategy = json!({"stages": [
        {"name": "s1", "beforeGates": approval(), "afterGates": approval(), "groups": [
            {"name": "ga", "beforeGates": approval(), "afterGates": approval()},
            {"name": "gb", "beforeGates": approval(), "afterGates": approval()}]},
        {"name": "s2", "beforeGates": approval(), "groups": [{"name": "gc", "beforeGates": approval()}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1), members("c", "gc", 1)]);
    let doc = scenario_json(fleet, strategy, json!({}), json!({}));
    let s = scenario(&doc);
    let ids = |replication: u64| -> Vec<String> {
        let r = fleetsim::simulation::simulate(
            &s,
            fleetsim::simulation::SimOptions { record_timeline: false, replication },
        );
        let run = &r.runs[0];
        run.gate_refs().into_iter().map(|g| run.gate(g).gate_id.clone().expect("every gate has an id")).collect()
    };
    let first = ids(0);
    assert_eq!(first.len(), 16);
    let distinct: std::collections::BTreeSet<&String> = first.iter().collect();
    assert_eq!(distinct.len(), 16, "{first:?}");
    for id in &first {
        let parts: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12], "{id}");
        assert!(id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()), "{id}");
    }
    assert_eq!(ids(3), first);
    // Pinned: ids derive from the run's name and the gate's place, and outputs compared across
    // versions must not change them.
    assert_eq!(first[0], "b7fdf91e-e9e5-2c5f-f57b-033477112716", "{first:?}");
}

/// SEMANTICS §11 "Timeline rows": rows of one instant in tree order. This one covers the run, the
/// stages, their before and after gates, and a group with its member; group gates and waits are
/// ordered by the same key (`Entity::order_key`) and not repeated here.
#[test]
fn rows_of_one_instant_follow_the_tree_order() {
    let strategy = json!({"stages": [
        {"name": "s1", "beforeGates": [{"type": "Approval", "displayName": "one"}], "groups": [{"name": "ga"}],
         "afterGates": [{"type": "Approval", "displayName": "out"}]},
        {"name": "s2", "beforeGates": [{"type": "Approval", "displayName": "two"}], "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [
        {"at": "+1h", "action": "approve", "gate": {"displayName": "one"}},
        {"at": "+3h", "action": "approve", "gate": {"displayName": "out"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    assert_eq!(
        trace(&s, &r, "r"),
        r#"+00:00 run NotStarted->Pending
+00:00 stage s1 NotStarted->Pending
+00:00 gate s1/before "one" NotStarted->Pending
+01:00 run Pending->Running
+01:00 stage s1 Pending->Running
+01:00 gate s1/before "one" Pending->Completed
+01:00 group ga NotStarted->Running
+01:00 member a01 NotStarted->Running
+02:00 run Running->Pending
+02:00 stage s1 Running->Pending
+02:00 group ga Running->Completed
+02:00 member a01 Running->Completed
+02:00 gate s1/after "out" NotStarted->Pending
+03:00 stage s1 Pending->Completed
+03:00 gate s1/after "out" Pending->Completed
+03:00 stage s2 NotStarted->Pending
+03:00 gate s2/before "two" NotStarted->Pending
"#
    );
}

/// SEMANTICS §7: a skip of an after-stage wait that is already over is refused, and said so.
#[test]
fn skipping_a_wait_that_is_over_is_refused() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 1800},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions =
        json!({"actions": [{"at": "+2h", "action": "skip", "targets": [{"type": "AfterStageWait", "name": "s1"}]}]});
    let (_, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].1.contains("the after-stage wait of stage \"s1\" is already Completed"), "{:?}", r.notes);
    assert_eq!(r.runs[0].state, Completed);
}

/// SEMANTICS §11 "Ties at one instant": member completions come before user actions, and what a
/// completion finishes that needs nothing new (§11 "Halts") is finished then. A skip of a group at
/// the instant its last member completes, or of a stage at the instant its last member completes, is
/// refused as it would be an instant later: the group and the stage end `Completed`.
#[test]
fn a_skip_at_the_instant_of_the_last_completion_finds_the_group_or_stage_completed() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}, {"name": "gb"}]},
        {"name": "s2", "groups": [{"name": "gc"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 2), members("c", "gc", 1)]);
    let actions = json!({"actions": [
        {"at": "+1h", "action": "skip", "targets": [{"type": "Group", "name": "ga"}]},
        {"at": "+2h", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(r.notes[0].1.contains("group \"ga\" is already Completed"), "{:?}", r.notes);
    assert!(r.notes[1].1.contains("stage \"s1\" is already Completed"), "{:?}", r.notes);
    assert!(t.contains("+01:00 group ga Running->Completed"), "{t}");
    assert!(t.contains("+02:00 group gb Running->Completed"), "{t}");
    assert!(t.contains("+02:00 stage s1 Running->Completed"), "{t}");
    assert!(t.contains("+02:00 member c01 NotStarted->Running"), "{t}");
    assert!(!t.contains("Skipped"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// A group with `afterGates` is not finished by its last completion (opening its gates is
/// something new), so a skip at that instant still skips it and its gates.
#[test]
fn a_skip_at_the_instant_of_the_last_completion_skips_a_group_whose_after_gates_had_yet_to_open() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [
        {"name": "ga", "afterGates": [{"type": "Approval", "displayName": "done a"}]}, {"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 2)]);
    let actions = json!({"actions": [{"at": "+1h", "action": "skip", "targets": [{"type": "Group", "name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(t.contains("+01:00 group ga Running->Skipped"), "{t}");
    assert!(t.contains("+01:00 gate ga/after \"done a\" NotStarted->Skipped"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// SEMANTICS §6 and §11 "Trips": a threshold trips at once and no new member starts after it. An
/// attempt that fails as it starts (here a stopped cluster's, azure-fleet-semantics.md §9) ends in
/// the instant it starts: where its failure trips the group or the stage, the members after it in
/// that instant do not start, in its group (a02) or in a sibling group (b01).
#[test]
fn a_failure_as_an_attempt_starts_that_trips_a_threshold_starts_nothing_after_it() {
    let mut fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 1)]);
    fleet[0]["stopped"] = json!(true);
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "3", "groups": [
        {"name": "ga", "maxConcurrency": "2"}, {"name": "gb"}]}]});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy, json!({}), json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+00:00 member a01 NotStarted->Failed"), "{t}");
    assert!(t.contains("+00:00 group ga NotStarted->Failed"), "{t}");
    assert!(t.contains("+00:00 run NotStarted->Failed"), "{t}");
    assert!(!t.contains("a02") && !t.contains("b01"), "{t}");
    assert_eq!(r.runs[0].state, Failed);

    // Within its thresholds the failure frees its slot in the same instant, as before: a02 and
    // b01 start at once.
    let strategy = json!({"stages": [{"name": "s1", "maxConcurrency": "3", "maxAllowedFailures": "1", "groups": [
        {"name": "ga", "maxConcurrency": "2", "maxAllowedFailures": "1"}, {"name": "gb"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+00:00 member a01 NotStarted->Failed"), "{t}");
    assert!(t.contains("+00:00 member a02 NotStarted->Running"), "{t}");
    assert!(t.contains("+00:00 member b01 NotStarted->Running"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// Under `failureScope: segment` a run is `Failed` when its last running member ends after a
/// group tripped; a `start` in that instant comes after the completion (§11 "Ties at one instant")
/// and is accepted (§11 "Restart"): ga goes on with a02.
#[test]
fn a_start_at_the_instant_a_segment_run_fails_restarts_it() {
    let strategy =
        json!({"stages": [{"name": "s1", "maxAllowedFailures": "5", "groups": [{"name": "ga"}, {"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 2), members("b", "gb", 1)]);
    let actions = json!({"actions": [{"at": "+2h", "action": "start"}]});
    let extra = json!({"settings": {"failureScope": "segment"}, "models": {"overrides": [
        {"member": "a01", "outcome": "Failed"}, {"member": "b01", "duration": "2h"}]}});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, extra));
    let t = trace(&s, &r, "r");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(t.contains("+01:00 group ga Running->Failed"), "{t}");
    assert!(t.contains("+02:00 member b01 Running->Completed"), "{t}");
    assert!(t.contains("+02:00 member a02 NotStarted->Running"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// SEMANTICS §11 "Halts" and "Restart": a `Failed` run starts nothing new until a `start`, under
/// either failure scope. Skipping its failed stage does not resume it: s2 is not reached.
#[test]
fn skipping_the_failed_stage_of_a_failed_run_does_not_resume_it() {
    let strategy =
        json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [{"at": "+2h", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    for scope in ["run", "segment"] {
        let extra = json!({"settings": {"failureScope": scope}, "models": {"overrides": [{"member": "a01", "outcome": "Failed"}]}});
        let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), actions.clone(), extra));
        let t = trace(&s, &r, "r");
        assert!(t.contains("+01:00 run Running->Failed"), "{scope}: {t}");
        assert!(t.contains("+02:00 stage s1 Failed->Skipped"), "{scope}: {t}");
        assert!(!t.contains("b01"), "{scope}: {t}");
        assert_eq!(r.runs[0].state, Failed, "{scope}");
    }
}

/// SEMANTICS §11 "Ties at one instant": what the completions finish is finished before the
/// instant's first action, and what an action makes finishable waits for scheduling, after every
/// action. A `start` clears ga's trip, so ga, all of whose members have ended, could complete; a
/// skip of its stage in the same instant comes first and skips it.
#[test]
fn what_a_restart_makes_finishable_is_skipped_by_a_skip_in_the_same_instant() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}, {"name": "gb"}]}, {"name": "s2", "groups": [{"name": "gc"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1), members("c", "gc", 1)]);
    let actions = json!({"actions": [
        {"at": "+3h", "action": "start"},
        {"at": "+3h", "action": "skip", "targets": [{"type": "Stage", "name": "s1"}]}]});
    let extra =
        json!({"models": {"overrides": [{"member": "a01", "outcome": "Failed"}, {"member": "b01", "duration": "2h"}]}});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, extra));
    let t = trace(&s, &r, "r");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(t.contains("+02:00 run Stopping->Failed"), "{t}");
    assert!(t.contains("+03:00 group ga Failed->Skipped"), "{t}");
    assert!(t.contains("+03:00 stage s1 Failed->Skipped"), "{t}");
    assert!(t.contains("+03:00 member c01 NotStarted->Running"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// SEMANTICS §6: a stage with a tripped group ends `Failed`, under either failure scope. Skipping
/// the tripped group does not make the stage complete: only a restart clears the trip.
#[test]
fn skipping_a_tripped_group_leaves_its_stage_failed() {
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "5", "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [{"at": "+2h", "action": "skip", "targets": [{"type": "Group", "name": "ga"}]}]});
    for scope in ["run", "segment"] {
        let extra = json!({"settings": {"failureScope": scope}, "models": {"overrides": [{"member": "a01", "outcome": "Failed"}]}});
        let (s, r) = run(&scenario_json(members("a", "ga", 2), strategy.clone(), actions.clone(), extra));
        let t = trace(&s, &r, "r");
        assert!(t.contains("+01:00 group ga Running->Failed"), "{scope}: {t}");
        assert!(t.contains("+02:00 group ga Failed->Skipped"), "{scope}: {t}");
        assert!(!t.contains("stage s1 Failed->"), "{scope}: {t}");
        assert_eq!(r.runs[0].state, Failed, "{scope}");
    }
}

/// SEMANTICS §11 "Halts": a stopped run reaches nothing new. s1's before gate is approved while the
/// run is stopped: its group is reached only when the run starts again. Two guards hold this (the
/// stage passing its gates, the group being reached, both only outside a halt); the test fails when
/// both are dropped, not either alone.
#[test]
fn a_gate_approved_while_the_run_is_stopped_reaches_its_groups_only_at_the_restart() {
    let strategy = json!({"stages": [{"name": "s1", "beforeGates": [{"type": "Approval", "displayName": "go"}], "groups": [{"name": "ga"}]}]});
    let actions = json!({"actions": [
        {"at": "+30m", "action": "stop"},
        {"at": "+1h", "action": "approve", "gate": {"displayName": "go"}},
        {"at": "+2h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(!t.contains("+01:00 group"), "{t}");
    assert!(t.contains("+02:00 group ga NotStarted->Running"), "{t}");
    assert!(t.contains("+02:00 member a01 NotStarted->Running"), "{t}");
    assert_eq!(r.runs[0].state, Completed);
}

/// The same for a group's own before gate approved during a stop: the group moves on only at the
/// restart.
#[test]
fn a_group_gate_approved_while_the_run_is_stopped_takes_effect_at_the_restart() {
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "beforeGates": [{"type": "Approval", "displayName": "go"}]}]}]});
    let actions = json!({"actions": [
        {"at": "+30m", "action": "stop"},
        {"at": "+1h", "action": "approve", "gate": {"displayName": "go"}},
        {"at": "+2h", "action": "start"}]});
    let (s, r) = run(&scenario_json(members("a", "ga", 1), strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert_eq!(
        t.lines().filter(|l| l.contains("group ga")).collect::<Vec<_>>(),
        [
            "+00:00 group ga NotStarted->Pending",
            "+00:30 group ga Pending->Stopped",
            "+02:00 group ga Stopped->Running",
            "+03:00 group ga Running->Completed"
        ],
        "{t}"
    );
    assert!(t.contains("+02:00 member a01 NotStarted->Running"), "{t}");
}

/// SEMANTICS §5.7: a group's after gates hold the group, and so its stage, until approved.
#[test]
fn a_group_waits_for_its_after_gates() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga", "afterGates": [{"type": "Approval", "displayName": "done a"}]}]},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [{"at": "+3h", "action": "approve", "gate": {"displayName": "done a"}}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 gate ga/after \"done a\" NotStarted->Pending"), "{t}");
    assert!(t.contains("+03:00 group ga Pending->Completed"), "{t}");
    assert!(t.contains("+03:00 stage s1 Pending->Completed"), "{t}");
    assert!(t.contains("+03:00 member b01 NotStarted->Running"), "{t}");
}

/// SEMANTICS §11 "User skips": an after-stage wait can be skipped before it runs; it stays
/// `Skipped` when its stage finishes and the next stage starts at once. Also at the very instant the
/// stage finishes: user actions come before the stage's progress in that instant.
#[test]
fn a_wait_skipped_before_it_runs_never_runs() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 3600},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    for (at, row) in [("+30m", "+00:30 wait s1 NotStarted->Skipped"), ("+1h", "+01:00 wait s1 NotStarted->Skipped")] {
        let actions =
            json!({"actions": [{"at": at, "action": "skip", "targets": [{"type": "AfterStageWait", "name": "s1"}]}]});
        let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), actions, json!({})));
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        let t = trace(&s, &r, "r");
        let waits: Vec<&str> = t.lines().filter(|l| l.contains(" wait ")).collect();
        assert_eq!(waits, [row], "{t}");
        assert!(t.contains("+01:00 stage s1 Running->Completed"), "{t}");
        assert!(t.contains("+01:00 member b01 NotStarted->Running"), "{t}");
        assert_eq!(r.runs[0].stats.wait_seconds, 0);
    }
}

/// SEMANTICS §11 "Halts": a stage whose groups are done and whose wait was skipped before it began
/// completes during a stop (its wait has finished); the next stage waits for the restart.
#[test]
fn a_stage_whose_wait_was_skipped_completes_during_a_stop() {
    let strategy = json!({"stages": [
        {"name": "s1", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 3600},
        {"name": "s2", "groups": [{"name": "gb"}]}]});
    let fleet = concat(vec![members("a", "ga", 1), members("b", "gb", 1)]);
    let actions = json!({"actions": [
        {"at": "+10m", "action": "skip", "targets": [{"type": "AfterStageWait", "name": "s1"}]},
        {"at": "+20m", "action": "stop"},
        {"at": "+3h", "action": "start"}]});
    let (s, r) = run(&scenario_json(fleet, strategy, actions, json!({})));
    let t = trace(&s, &r, "r");
    assert!(t.contains("+01:00 stage s1 Stopping->Completed"), "{t}");
    assert!(t.contains("+03:00 member b01 NotStarted->Running"), "{t}");
    assert!(!t.contains("wait s1 Skipped->"), "{t}");
}
