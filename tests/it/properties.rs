//! Property tests over random strategies, outcomes and user actions: the invariants of SEMANTICS
//! §5–7 hold whatever the scenario.

use std::collections::BTreeMap;

use fleetsim::orchestrator::{Entity, UpdateRun, UpdateState};
use fleetsim::report::outcome::{EndTimes, run_outcome};
use fleetsim::scenario::parse_str;
use fleetsim::simulation::{SimOptions, SimResult, simulate};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct GroupSpec {
    members: usize,
    concurrency: String,
    failures: String,
    gate: bool,
}

#[derive(Debug, Clone)]
struct StageSpec {
    groups: Vec<GroupSpec>,
    concurrency: Option<String>,
    failures: String,
    before_gate: u8,
    after_gate: bool,
    wait_minutes: u32,
}

fn limit(allow_zero: bool) -> impl Strategy<Value = String> {
    let low = if allow_zero { 0u32 } else { 1 };
    prop_oneof![(low..6u32).prop_map(|n| n.to_string()), (low.max(1)..=100u32).prop_map(|p| format!("{p}%"))]
}

fn group() -> impl Strategy<Value = GroupSpec> {
    (0usize..7, limit(false), limit(true), any::<bool>()).prop_map(|(members, concurrency, failures, gate)| GroupSpec {
        members,
        concurrency,
        failures,
        gate: gate && members % 3 == 0,
    })
}

fn stage() -> impl Strategy<Value = StageSpec> {
    (prop::collection::vec(group(), 1..4), prop::option::of(limit(false)), limit(true), 0u8..3, any::<bool>(), 0u32..90)
        .prop_map(|(groups, concurrency, failures, before_gate, after_gate, wait_minutes)| StageSpec {
            groups,
            concurrency,
            failures,
            before_gate,
            after_gate,
            wait_minutes,
        })
}

#[derive(Debug, Clone)]
struct Case {
    stages: Vec<StageSpec>,
    fail_every: usize,
    segment: bool,
    stop_restart: Option<(u32, u32)>,
    skip_group: Option<(usize, u32)>,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(stage(), 1..4),
        2usize..9,
        any::<bool>(),
        prop::option::of((10u32..300, 10u32..600)),
        prop::option::of((0usize..6, 0u32..300)),
        any::<u64>(),
    )
        .prop_map(|(stages, fail_every, segment, stop_restart, skip_group, seed)| Case {
            stages,
            fail_every,
            segment,
            stop_restart,
            skip_group,
            seed,
        })
}

fn scenario_text(case: &Case) -> String {
    let mut members = Vec::new();
    let mut overrides = Vec::new();
    let mut stages = Vec::new();
    let mut index = 0;
    let mut group_names = Vec::new();
    for (s, stage) in case.stages.iter().enumerate() {
        let mut groups = Vec::new();
        for (g, group) in stage.groups.iter().enumerate() {
            let name = format!("g{s}{g}");
            group_names.push(name.clone());
            for m in 0..group.members {
                let member = format!("m{s}{g}{m}");
                index += 1;
                if index % case.fail_every == 0 {
                    overrides.push(json!({"member": member, "outcome": "Failed"}));
                }
                members.push(json!({"name": member, "region": "eastus", "group": name, "kubernetesVersion": "1.32.4"}));
            }
            let mut g =
                json!({"name": name, "maxConcurrency": group.concurrency, "maxAllowedFailures": group.failures});
            if group.gate {
                g["beforeGates"] = json!([{"type": "Approval"}]);
            }
            groups.push(g);
        }
        let mut st = json!({"name": format!("s{s}"), "groups": groups, "maxAllowedFailures": stage.failures,
            "afterStageWaitInSeconds": stage.wait_minutes * 60});
        if let Some(c) = &stage.concurrency {
            st["maxConcurrency"] = json!(c);
        }
        match stage.before_gate {
            1 => st["beforeGates"] = json!([{"type": "Approval"}]),
            2 => {
                st["beforeGates"] = json!([{"type": "ScheduledStart",
                "scheduledStartConfiguration": {"startDay": "Tuesday", "startTime": "06:30", "utcOffset": "+02:00"}}])
            }
            _ => {}
        }
        if stage.after_gate {
            st["afterGates"] = json!([{"type": "Approval"}]);
        }
        stages.push(st);
    }
    let mut actions = Vec::new();
    if let Some((stop, restart)) = case.stop_restart {
        actions.push(json!({"at": format!("+{stop}m"), "action": "stop"}));
        actions.push(json!({"at": format!("+{}m", stop + restart), "action": "start"}));
        actions.push(json!({"at": format!("+{}m", stop + restart + 600), "action": "start"}));
    }
    if let Some((g, at)) = case.skip_group
        && let Some(name) = group_names.get(g % group_names.len().max(1))
    {
        actions.push(json!({"at": format!("+{at}m"), "action": "skip", "targets": [{"type": "Group", "name": name}]}));
    }
    let doc = json!({
        "name": "prop", "seed": case.seed, "start": "2026-03-02T00:00:00Z",
        "settings": {"groupAboveStageConcurrency": "throttle", "failureScope": if case.segment { "segment" } else { "run" }, "horizon": "60d"},
        "models": {"duration": {"member": {"min": "10m", "max": "2h"}}, "failure": {"probability": 0.0}, "overrides": overrides,
            "approvals": {"min": "0s", "max": "3h"}},
        "members": members,
        "updateRuns": [{"name": "r", "strategy": {"stages": stages}, "actions": actions,
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}}],
    });
    serde_json::to_string(&doc).unwrap()
}

/// SEMANTICS §4, resolved here independently of the code under test: concurrency percent
/// `max(1, floor(p × N / 100))`, failures percent `ceil(p × N / 100)`, integers as written; stage
/// concurrency defaults to 50.
fn resolve(limit: &str, n: usize, concurrency: bool) -> u32 {
    match limit.strip_suffix('%') {
        Some(p) => {
            let p: usize = p.parse().unwrap();
            if concurrency { (p * n / 100).max(1) as u32 } else { (p * n).div_ceil(100) as u32 }
        }
        None => limit.parse().unwrap(),
    }
}

/// Expected (stage concurrency, stage failures, [(group concurrency, group failures)]) per stage.
type Limits = Vec<(u32, u32, Vec<(u32, u32)>)>;

fn expected_limits(case: &Case) -> Limits {
    case.stages
        .iter()
        .map(|stage| {
            let n: usize = stage.groups.iter().map(|g| g.members).sum();
            let groups = stage
                .groups
                .iter()
                .map(|g| (resolve(&g.concurrency, g.members, true), resolve(&g.failures, g.members, false)))
                .collect();
            let concurrency = stage.concurrency.as_deref().map_or(50, |c| resolve(c, n, true));
            (concurrency, resolve(&stage.failures, n, false), groups)
        })
        .collect()
}

/// Replays the timeline and checks the invariants at the end of every instant.
fn check_invariants(run: &UpdateRun, result: &SimResult, limits: &Limits) -> Result<(), String> {
    let mut member_state: BTreeMap<(u16, u16, u32), UpdateState> = BTreeMap::new();
    let mut state: BTreeMap<String, UpdateState> = BTreeMap::new();
    let key = |e: &Entity| format!("{e:?}");
    let rows = &result.timeline;
    let mut i = 0;
    while i < rows.len() {
        let now = rows[i].time;
        let mut starts = Vec::new();
        while i < rows.len() && rows[i].time == now {
            let t = &rows[i].transition;
            if let Entity::Member(slot) = t.entity {
                member_state.insert((slot.stage, slot.group, slot.index), t.to);
                if t.to == UpdateState::Running {
                    starts.push(slot);
                }
            }
            state.insert(key(&t.entity), t.to);
            i += 1;
        }
        // Limits: running members per group and stage never exceed the resolved limits.
        let mut per_group: BTreeMap<(u16, u16), u32> = BTreeMap::new();
        let mut per_stage: BTreeMap<u16, u32> = BTreeMap::new();
        for (&(s, g, _), st) in &member_state {
            if *st == UpdateState::Running {
                *per_group.entry((s, g)).or_default() += 1;
                *per_stage.entry(s).or_default() += 1;
            }
        }
        for (&(s, g), &n) in &per_group {
            let (stage_cap, _, groups) = &limits[s as usize];
            let cap = groups[g as usize].0.min(*stage_cap);
            if n > cap {
                return Err(format!(
                    "{now}: group {} runs {n} > {cap}",
                    run.stages[s as usize].groups[g as usize].name
                ));
            }
        }
        for (&s, &n) in &per_stage {
            if n > limits[s as usize].0 {
                return Err(format!("{now}: stage {s} runs {n} > {}", limits[s as usize].0));
            }
        }
        for slot in starts {
            // Stages never overlap: every earlier stage is finished when a member starts.
            for earlier in 0..slot.stage {
                let st = state.get(&key(&Entity::Stage(earlier))).copied().unwrap_or(UpdateState::NotStarted);
                if !matches!(st, UpdateState::Completed | UpdateState::Skipped) {
                    return Err(format!(
                        "{now}: a member of stage {} starts while stage {earlier} is {st}",
                        slot.stage
                    ));
                }
                if per_stage.get(&earlier).copied().unwrap_or(0) > 0 {
                    return Err(format!("{now}: stage {earlier} still runs members"));
                }
            }
            // Gates: no member starts while a gate it sits behind is not Completed.
            for r in run.gate_refs() {
                let behind = r.stage == slot.stage
                    && r.timing == fleetsim::orchestrator::Timing::Before
                    && r.group.is_none_or(|g| g == slot.group);
                let earlier_after = r.stage < slot.stage && r.timing == fleetsim::orchestrator::Timing::After;
                if behind || earlier_after {
                    let st = state.get(&key(&Entity::Gate(r))).copied().unwrap_or(UpdateState::NotStarted);
                    let ok = st == UpdateState::Completed || (earlier_after && st == UpdateState::Skipped);
                    if !ok {
                        return Err(format!("{now}: member starts behind gate {r:?} in state {st}"));
                    }
                }
            }
        }
    }
    Ok(())
}

fn check_counts_and_ends(run: &UpdateRun, limits: &Limits) -> Result<(), String> {
    let mut run_failed = 0;
    for (stage, (stage_cap, stage_failures, groups)) in run.stages.iter().zip(limits) {
        let resolved = (stage.max_concurrency, stage.max_allowed_failures);
        let groups_resolved: Vec<(u32, u32)> =
            stage.groups.iter().map(|g| (g.max_concurrency, g.max_allowed_failures)).collect();
        if resolved != (*stage_cap, *stage_failures) || &groups_resolved != groups {
            return Err(format!(
                "stage {} resolved {resolved:?} {groups_resolved:?}, SEMANTICS §4 gives {:?} {groups:?}",
                stage.name,
                (stage_cap, stage_failures)
            ));
        }
        let mut stage_failed = 0;
        for group in &stage.groups {
            let failed = group.members.iter().filter(|m| m.state == UpdateState::Failed).count() as u32;
            if failed != group.failure_count {
                return Err(format!(
                    "group {} failureCount {} but {failed} failed members",
                    group.name, group.failure_count
                ));
            }
            if group.running > group.max_concurrency || group.peak_running > group.max_concurrency {
                return Err(format!(
                    "group {} peak {} above {}",
                    group.name, group.peak_running, group.max_concurrency
                ));
            }
            stage_failed += failed;
        }
        if stage_failed != stage.failure_count {
            return Err(format!("stage {} failureCount {} but {stage_failed}", stage.name, stage.failure_count));
        }
        if stage.peak_running > stage.max_concurrency {
            return Err(format!("stage {} peak {} above {}", stage.name, stage.peak_running, stage.max_concurrency));
        }
        run_failed += stage_failed;
    }
    if run_failed != run.failure_count {
        return Err(format!("run failureCount {} but {run_failed}", run.failure_count));
    }
    let all_terminal =
        run.stages.iter().flat_map(|s| &s.groups).flat_map(|g| &g.members).all(|m| m.state.is_member_terminal());
    // What the inputs imply: every gate is answered (policy approvals within 3 h, scheduled starts
    // within a week, a 60-day horizon) and every stop is followed by starts, so the run ends
    // Completed, Skipped or Failed; Failed only when some budget was exceeded, and never without
    // a failed member.
    let exceeded = run.stages.iter().any(|s| {
        s.failure_count > s.max_allowed_failures || s.groups.iter().any(|g| g.failure_count > g.max_allowed_failures)
    });
    match run.state {
        UpdateState::Completed | UpdateState::Skipped if !all_terminal => {
            Err(format!("run {} with unfinished members", run.state))
        }
        UpdateState::Failed if !exceeded => Err("the run Failed with every failureCount within its budget".into()),
        UpdateState::Completed | UpdateState::Skipped | UpdateState::Failed => Ok(()),
        other => Err(format!("the run ended {other}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_random_strategies_outcomes_and_actions(case in case()) {
        let text = scenario_text(&case);
        let scenario = parse_str(&text, None).map_err(|p| TestCaseError::fail(format!("{p:?}")))?;
        let result = simulate(&scenario, SimOptions::default());
        let run = &result.runs[0];
        let limits = expected_limits(&case);
        check_invariants(run, &result, &limits).map_err(TestCaseError::fail)?;
        check_counts_and_ends(run, &limits).map_err(TestCaseError::fail)?;
        // Determinism: the same scenario again gives the same timeline.
        let again = simulate(&scenario, SimOptions::default());
        prop_assert_eq!(&again.timeline, &result.timeline);
    }
}

#[test]
fn the_generator_makes_valid_scenarios() {
    let case = Case {
        stages: vec![StageSpec {
            groups: vec![GroupSpec { members: 3, concurrency: "2".into(), failures: "0".into(), gate: true }],
            concurrency: Some("50%".into()),
            failures: "1".into(),
            before_gate: 2,
            after_gate: true,
            wait_minutes: 30,
        }],
        fail_every: 2,
        segment: false,
        stop_restart: Some((30, 60)),
        skip_group: None,
        seed: 1,
    };
    let text = scenario_text(&case);
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["members"].as_array().unwrap().len(), 3);
    assert!(parse_str(&text, None).is_ok());
}

/// Hours until `percent` % of the run's members were at the target, as the share is defined: every
/// member's time at the target (`Completed`: its end; `Skipped` as already there: the start), sorted.
fn upgraded_by_definition(run: &UpdateRun, percent: usize) -> Option<f64> {
    let start = run.start_time?;
    let mut total = 0usize;
    let mut at_target = Vec::new();
    for member in run.stages.iter().flat_map(|s| &s.groups).flat_map(|g| &g.members) {
        total += 1;
        match member.state {
            UpdateState::Completed => at_target.extend(member.end_time().map(|t| (t - start).as_seconds().max(0))),
            UpdateState::Skipped if member.at_target => at_target.push(0),
            _ => {}
        }
    }
    at_target.sort_unstable();
    let needed = (total * percent).div_ceil(100).max(1);
    (total > 0).then(|| at_target.get(needed - 1).map(|&s| hours(s))).flatten()
}

/// Hours until `percent` % of the members not `Skipped` were `Completed`, as the share is defined.
fn done_by_definition(run: &UpdateRun, percent: usize) -> Option<f64> {
    let start = run.start_time?;
    let counted: Vec<_> = run
        .stages
        .iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.members)
        .filter(|m| m.state != UpdateState::Skipped)
        .collect();
    let mut ends: Vec<i64> = counted
        .iter()
        .filter(|m| m.state == UpdateState::Completed)
        .filter_map(|m| m.end_time())
        .map(|t| t.0)
        .collect();
    ends.sort_unstable();
    let needed = (counted.len() * percent).div_ceil(100).max(1);
    (!counted.is_empty()).then(|| ends.get(needed - 1).map(|&end| hours(end - start.0))).flatten()
}

fn hours(seconds: i64) -> f64 {
    (seconds as f64 / 3600.0 * 10_000.0).round() / 10_000.0
}

/// `case` with every `at_target_every`-th member at the run's target version already.
fn with_members_at_target(case: &Case, at_target_every: usize) -> String {
    let mut doc: Value = serde_json::from_str(&scenario_text(case)).unwrap();
    for (i, member) in doc["members"].as_array_mut().unwrap().iter_mut().enumerate() {
        if i % at_target_every == 0 {
            member["kubernetesVersion"] = json!("1.33.2");
        }
    }
    doc.to_string()
}

/// Every share of [`EndTimes`], read from one sorted list, against its definition.
fn check_shares(result: &SimResult) -> Result<(), String> {
    let run = &result.runs[0];
    let ends = EndTimes::of(run);
    for percent in 0..=100 {
        let (upgraded, done) = (ends.hours_to_upgraded(run, percent), ends.hours_to_done(run, percent));
        if upgraded != upgraded_by_definition(run, percent) || done != done_by_definition(run, percent) {
            return Err(format!(
                "{percent} %: upgraded {upgraded:?} against {:?}, done {done:?} against {:?}",
                upgraded_by_definition(run, percent),
                done_by_definition(run, percent)
            ));
        }
    }
    let outcome = run_outcome(result, 0).hours_to_upgraded;
    if outcome != [50, 90, 100].map(|p| upgraded_by_definition(run, p)) {
        return Err(format!("run_outcome gave {outcome:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn shares_upgraded_and_done_from_one_sort_are_as_defined(case in case(), at_target_every in 2usize..6) {
        let scenario = parse_str(&with_members_at_target(&case, at_target_every), None)
            .map_err(|p| TestCaseError::fail(format!("{p:?}")))?;
        check_shares(&simulate(&scenario, SimOptions::default())).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn shares_are_as_defined_with_every_kind_of_member() {
    let group = |members| GroupSpec { members, concurrency: "2".into(), failures: "100%".into(), gate: false };
    let stage = |groups| StageSpec {
        groups,
        concurrency: None,
        failures: "100%".into(),
        before_gate: 0,
        after_gate: false,
        wait_minutes: 0,
    };
    let case = Case {
        stages: vec![stage(vec![group(6), group(6)]), stage(vec![group(6), group(5)])],
        fail_every: 4,
        segment: false,
        stop_restart: None,
        skip_group: Some((2, 0)),
        seed: 3,
    };
    let result = simulate(&parse_str(&with_members_at_target(&case, 3), None).unwrap(), SimOptions::default());
    let members: Vec<_> = result.runs[0].stages.iter().flat_map(|s| &s.groups).flat_map(|g| &g.members).collect();
    let count = |f: &dyn Fn(&&fleetsim::orchestrator::run::MemberRt) -> bool| members.iter().filter(|m| f(m)).count();
    assert!(count(&|m| m.state == UpdateState::Completed) > 5, "members complete");
    assert!(count(&|m| m.state == UpdateState::Failed) > 0, "members fail");
    assert!(count(&|m| m.state == UpdateState::Skipped && m.at_target) > 0, "members are at the target already");
    assert!(count(&|m| m.state == UpdateState::Skipped && !m.at_target) > 0, "a group is skipped by the user");
    check_shares(&result).unwrap();
}
