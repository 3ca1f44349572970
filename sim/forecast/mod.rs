//! `fleetsim forecast`: when will a run in progress finish? From a scenario (the fleet, the run's
//! strategy and update, the world models) and the run's live status, the rest of the run is
//! simulated many times from the status's instant on, and the replications are summed up: when each
//! remaining stage and the run finish (p10/p50/p90), how likely the run fails first, and what it will
//! wait on.
//!
//! - The run is the scenario's run of the status's name; its strategy and `managedClusterUpdate` come
//!   from the scenario (`fleetsim import` of the same `az fleet updaterun show` output puts the
//!   status's strategy snapshot there). Membership is the status's: the run resolved it when it was
//!   created (SEMANTICS §3), and resolved limits the status shows are used as shown.
//! - "Now" is the latest time the status names (a start or completion of anything in it), or
//!   `--now`, which may not be earlier.
//! - The run is restored by the orchestrator ([`crate::orchestrator::UpdateRun::restore`]) and each
//!   replication runs from now ([`crate::simulation::simulate_resumed`]): members upgrading go on,
//!   conditioned on the time they have spent; other runs and auto-upgrade profiles of the scenario
//!   are not simulated (their state now is not in the status); the run's timed actions after now
//!   still happen. The simulation runs to the scenario's horizon counted from now.
//! - Replication r uses the streams of (seed, r), so the answer does not depend on the thread count.

pub mod report;
pub mod status;

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::engine::{Duration, Time};
use crate::fleet::MemberId;
use crate::orchestrator::plan::GroupPlan;
use crate::orchestrator::{
    Entity, GateRef, GateSnapshot, GroupSnapshot, MemberSnapshot, Note, PendingKind, RestoreProblem, RunPlan,
    RunSnapshot, StageSnapshot, Timing, UpdateState, WaitSnapshot,
};
use crate::scenario::problem::join;
use crate::scenario::{Problem, Scenario};
use crate::simulation::{Resume, SimOptions, SimResult, simulate_resumed};

use status::{GateStatus, RunStatus, StatusTimes};

/// The default number of replications.
pub const DEFAULT_REPLICATIONS: u64 = 200;

/// A forecast ready to run: the scenario reduced to the run, and the run's status in the
/// orchestrator's terms.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The scenario with only the forecast run (its actions before now dropped), no profiles, and
    /// its horizon counted from now.
    pub scenario: Scenario,
    pub plan: RunPlan,
    pub snapshot: RunSnapshot,
    pub now: Time,
    /// Whether `now` is the status's latest time (`false`: given with `--now`).
    pub now_from_status: bool,
    pub status: RunStatus,
}

/// A run whose status shows it finished: nothing is left to forecast.
#[derive(Clone, Debug)]
pub struct Finished {
    pub run: String,
    pub state: UpdateState,
    pub start: Option<Time>,
    pub completed: Option<Time>,
    pub members: usize,
    pub completed_members: usize,
    pub failed_members: usize,
    pub skipped_members: usize,
    pub failure_count: u32,
    pub error: Option<String>,
    /// The problem line that says so.
    pub problem: Problem,
}

/// What [`prepare`] found.
#[derive(Clone, Debug)]
pub enum Prepared {
    InProgress(Box<Setup>),
    Finished(Finished),
}

/// Matches the status with the scenario (see the module's rules). Problems point into the status.
pub fn prepare(scenario: &Scenario, status: &RunStatus, now: Option<Time>) -> Result<Prepared, Vec<Problem>> {
    let Some(index) = scenario.runs.iter().position(|r| r.name == status.name) else {
        let names: Vec<String> = scenario.runs.iter().map(|r| format!("\"{}\"", r.name)).collect();
        let known =
            if names.is_empty() { "it has none".to_string() } else { format!("its runs: {}", names.join(", ")) };
        return Err(vec![Problem::new(
            &status.name_pointer,
            format!(
                "run \"{}\" is not in the scenario ({known}); import the run with the fleet (`fleetsim import … RUN.json`) so that the scenario has its strategy",
                status.name
            ),
        )]);
    };
    let spec = &scenario.runs[index];
    let mut problems = Vec::new();
    let latest = status.latest_time();
    let now_from_status = now.is_none();
    let now = match (now, latest) {
        (Some(now), Some(latest)) if now < latest => {
            problems.push(Problem::new(
                &status.pointer,
                format!("--now {now} is before the latest time in the status ({latest}); give a later --now or none"),
            ));
            now
        }
        (Some(now), _) => now,
        (None, Some(latest)) => latest,
        (None, None) => scenario.start.max(spec.start.unwrap_or(scenario.start)),
    };
    if status.status.state.is_finished() {
        return Ok(Prepared::Finished(finished(status)));
    }
    let (plan, snapshot) = align(scenario, index, status, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut reduced = scenario.clone();
    let mut run = spec.clone();
    run.actions.retain(|a| a.at >= now);
    if status.status.state == UpdateState::NotStarted {
        // A run not started yet starts at its start time, or now when that has passed.
        run.start = run.start.map(|t| t.max(now));
    }
    reduced.runs = vec![run];
    reduced.profiles.clear();
    reduced.settings.horizon = (now - scenario.start).max(Duration::ZERO) + scenario.settings.horizon;
    Ok(Prepared::InProgress(Box::new(Setup {
        scenario: reduced,
        plan,
        snapshot,
        now,
        now_from_status,
        status: status.clone(),
    })))
}

fn finished(status: &RunStatus) -> Finished {
    let members = status.stages.iter().flat_map(|s| &s.groups).flat_map(|g| &g.members);
    let count = |state| members.clone().filter(|m| m.status.state == state).count();
    let at = status.status.completed.map(|t| format!(" at {t}")).unwrap_or_default();
    Finished {
        run: status.name.clone(),
        state: status.status.state,
        start: status.status.start,
        completed: status.status.completed,
        members: members.clone().count(),
        completed_members: count(UpdateState::Completed),
        failed_members: count(UpdateState::Failed),
        skipped_members: count(UpdateState::Skipped),
        failure_count: status.failure_count,
        error: status.status.error_message.clone(),
        problem: Problem::new(
            join(&join(&status.pointer, "status"), "state"),
            format!(
                "run \"{}\" already finished: {}{at}; there is nothing left to forecast (forecast.json has the finished facts)",
                status.name, status.status.state
            ),
        ),
    }
}

/// The run's plan with the status's membership and limits, and the status in the orchestrator's
/// terms, position by position.
fn align(scenario: &Scenario, index: usize, status: &RunStatus, problems: &mut Vec<Problem>) -> (RunPlan, RunSnapshot) {
    let spec = &scenario.runs[index];
    let mut plan = RunPlan::clone(&spec.plan);
    let mut stages = Vec::new();
    let names: Vec<&str> = plan.stages.iter().map(|s| s.name.as_str()).collect();
    if status.stages.len() != plan.stages.len() {
        problems.push(Problem::new(
            join(&status.pointer, "stages"),
            format!(
                "{} stages in the status, {} in run \"{}\" of the scenario ({}): the status is of another strategy",
                status.stages.len(),
                plan.stages.len(),
                spec.name,
                names.join(", ")
            ),
        ));
        return (plan, RunSnapshot { state: status.status.state, start_time: None, failure_count: 0, stages });
    }
    let mut in_run = vec![false; scenario.fleet.len()];
    for (s, st) in status.stages.iter().enumerate() {
        let stage_plan = &mut plan.stages[s];
        if st.name != stage_plan.name {
            problems.push(Problem::new(
                join(&st.pointer, "name"),
                format!(
                    "stage {} is \"{}\" in the status but \"{}\" in the scenario's run",
                    s + 1,
                    st.name,
                    stage_plan.name
                ),
            ));
            continue;
        }
        if let Some(n) = st.max_concurrency {
            stage_plan.max_concurrency = n.max(1);
        }
        if let Some(n) = st.max_allowed_failures {
            stage_plan.max_allowed_failures = n;
        }
        let mut groups = Vec::new();
        let mut plan_groups = Vec::new();
        for gs in &st.groups {
            let Some(gp) = stage_plan.groups.iter().find(|g| g.name == gs.name) else {
                let known: Vec<&str> = stage_plan.groups.iter().map(|g| g.name.as_str()).collect();
                problems.push(Problem::new(
                    join(&gs.pointer, "name"),
                    format!(
                        "group \"{}\" is not in stage \"{}\" of the scenario's run (its groups: {})",
                        gs.name,
                        st.name,
                        known.join(", ")
                    ),
                ));
                continue;
            };
            let mut members: Vec<(MemberId, MemberSnapshot)> = Vec::new();
            for m in &gs.members {
                match scenario.fleet.binary_search_by(|f| f.name.as_str().cmp(&m.name)) {
                    Ok(i) => {
                        if in_run[i] {
                            problems.push(Problem::new(join(&m.pointer, "name"), format!("member \"{}\" appears twice in the status", m.name)));
                        }
                        in_run[i] = true;
                        let id = MemberId(i as u32);
                        members.push((id, member_snapshot(id, &m.status, m.message.as_deref())));
                    }
                    Err(_) => problems.push(Problem::new(
                        join(&m.pointer, "name"),
                        format!("member \"{}\" is not in the scenario's fleet; import its member and cluster with the others", m.name),
                    )),
                }
            }
            // The plan's order: member names in byte order (SEMANTICS §5.4).
            members.sort_by(|a, b| scenario.fleet[a.0.index()].name.cmp(&scenario.fleet[b.0.index()].name));
            plan_groups.push(GroupPlan {
                name: gp.name.clone(),
                members: members.iter().map(|m| m.0).collect(),
                max_concurrency: gs.max_concurrency.unwrap_or(gp.max_concurrency).max(1),
                max_allowed_failures: gs.max_allowed_failures.unwrap_or(gp.max_allowed_failures),
                before_gates: gp.before_gates.clone(),
                after_gates: gp.after_gates.clone(),
            });
            groups.push(GroupSnapshot {
                state: gs.status.state,
                start_time: gs.status.start,
                completed_time: gs.status.completed,
                failure_count: gs.failure_count,
                members: members.into_iter().map(|m| m.1).collect(),
                before_gates: gates(
                    &gs.before_gates,
                    gp.before_gates.len(),
                    &join(&gs.pointer, "beforeGates"),
                    problems,
                ),
                after_gates: gates(&gs.after_gates, gp.after_gates.len(), &join(&gs.pointer, "afterGates"), problems),
            });
        }
        // Groups of the strategy the status does not list had no members.
        let listed: Vec<String> = plan_groups.iter().map(|g| g.name.clone()).collect();
        for gp in stage_plan.groups.iter().filter(|g| !listed.contains(&g.name)) {
            plan_groups.push(GroupPlan { members: Vec::new(), ..gp.clone() });
            groups.push(GroupSnapshot {
                state: if st.status.state.is_finished() { UpdateState::Skipped } else { UpdateState::NotStarted },
                start_time: None,
                completed_time: None,
                failure_count: 0,
                members: Vec::new(),
                before_gates: vec![not_started(); gp.before_gates.len()],
                after_gates: vec![not_started(); gp.after_gates.len()],
            });
        }
        // The plan's group order: the strategy's.
        let order: Vec<usize> =
            stage_plan.groups.iter().filter_map(|g| plan_groups.iter().position(|p| p.name == g.name)).collect();
        let mut paired: Vec<Option<(GroupPlan, GroupSnapshot)>> =
            plan_groups.into_iter().zip(groups).map(Some).collect();
        let (plan_groups, groups): (Vec<GroupPlan>, Vec<GroupSnapshot>) =
            order.iter().filter_map(|&i| paired[i].take()).unzip();
        stage_plan.groups = plan_groups;
        let wait = match (&st.wait, stage_plan.after_stage_wait > Duration::ZERO) {
            (Some(w), true) => Some(WaitSnapshot {
                state: w.status.state,
                start_time: w.status.start,
                completed_time: w.status.completed,
            }),
            (None, true) => {
                Some(WaitSnapshot { state: UpdateState::NotStarted, start_time: None, completed_time: None })
            }
            (Some(w), false) => {
                problems.push(Problem::new(
                    &w.pointer,
                    format!("stage \"{}\" of the scenario's run has no afterStageWaitInSeconds, but the status has its wait", st.name),
                ));
                None
            }
            (None, false) => None,
        };
        stages.push(StageSnapshot {
            state: st.status.state,
            start_time: st.status.start,
            completed_time: st.status.completed,
            failure_count: st.failure_count,
            groups,
            before_gates: gates(
                &st.before_gates,
                stage_plan.before_gates.len(),
                &join(&st.pointer, "beforeGates"),
                problems,
            ),
            after_gates: gates(
                &st.after_gates,
                stage_plan.after_gates.len(),
                &join(&st.pointer, "afterGates"),
                problems,
            ),
            wait,
        });
    }
    plan.not_selected = (0..scenario.fleet.len()).filter(|&i| !in_run[i]).map(|i| MemberId(i as u32)).collect();
    let snapshot = RunSnapshot {
        state: status.status.state,
        start_time: status.status.start,
        failure_count: status.failure_count,
        stages,
    };
    (plan, snapshot)
}

fn not_started() -> GateSnapshot {
    GateSnapshot { state: UpdateState::NotStarted, start_time: None, completed_time: None }
}

/// A gate list of the status against the strategy's `expected` gates: an absent list is gates not
/// reached (the service omits empty lists); a list of another length is a problem.
fn gates(
    list: &Option<Vec<GateStatus>>,
    expected: usize,
    pointer: &str,
    problems: &mut Vec<Problem>,
) -> Vec<GateSnapshot> {
    match list {
        None => vec![not_started(); expected],
        Some(list) if list.len() == expected => list
            .iter()
            .map(|g| GateSnapshot {
                state: g.status.state,
                start_time: g.status.start,
                completed_time: g.status.completed,
            })
            .collect(),
        Some(list) => {
            problems.push(Problem::new(
                pointer,
                format!("{} gates in the status, {expected} in the scenario's strategy", list.len()),
            ));
            vec![not_started(); expected]
        }
    }
}

fn member_snapshot(id: MemberId, status: &StatusTimes, message: Option<&str>) -> MemberSnapshot {
    let note = match (&status.error_code, &status.error_message, message) {
        (Some(code), Some(m), _) => Note::error(code.as_str(), m.as_str()),
        (Some(code), None, _) => Note { code: Some(code.as_str().into()), message: None },
        (None, Some(m), _) => Note::message(m.as_str()),
        (None, None, Some(m)) => Note::message(m),
        (None, None, None) => Note::default(),
    };
    let kind = match status.error_code.as_deref() {
        Some("KubernetesVersionNotAvailable" | "NodeImageVersionNotAvailable") => PendingKind::Availability,
        _ => PendingKind::Window,
    };
    let pending_kind = (status.state == UpdateState::Pending).then_some(kind);
    MemberSnapshot { id, state: status.state, start_time: status.start, end_time: status.completed, note, pending_kind }
}

/// Maps the orchestrator's restore problems to pointers into the status.
pub fn locate(setup: &Setup, problems: Vec<RestoreProblem>) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|p| {
            let stage = p.stage.and_then(|s| setup.status.stages.get(s));
            let group = stage.zip(p.group).and_then(|(st, g)| {
                let name = &setup.plan.stages[p.stage.unwrap_or(0)].groups.get(g)?.name;
                st.groups.iter().find(|gs| &gs.name == name)
            });
            let member = group.zip(p.member).and_then(|(gs, i)| {
                let id = setup.plan.stages[p.stage?].groups[p.group?].members.get(i)?;
                let name = &setup.scenario.fleet[id.index()].name;
                gs.members.iter().find(|m| &m.name == name)
            });
            let pointer = member
                .map(|m| m.pointer.clone())
                .or_else(|| group.map(|g| g.pointer.clone()))
                .or_else(|| stage.map(|s| s.pointer.clone()))
                .unwrap_or_else(|| setup.status.pointer.clone());
            Problem::new(pointer, p.message)
        })
        .collect()
}

/// One replication's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Replication {
    /// The run's end state: `Completed`, `Skipped`, `Failed`, or an open state at the horizon.
    pub state: UpdateState,
    /// When it ended (`Completed`, `Skipped` or `Failed`).
    pub finished: Option<Time>,
    /// When it ended `Completed` or `Skipped`.
    pub completed: Option<Time>,
    /// Per stage: when it was `Completed` or `Skipped`.
    pub stage_done: Vec<Option<Time>>,
    pub stage_failed: Vec<bool>,
    /// (time, +1/−1) changes of the number of members done (`Completed`, `Failed` or `Skipped`).
    pub done_changes: Vec<(Time, i32)>,
    /// Seconds each thing held the run from now to its end, by (stage, what).
    pub held: BTreeMap<(u16, Hold), i64>,
    /// Seconds regions held a stage while its members waited for windows or the release.
    pub regions: BTreeMap<(u16, PendingKind, String), i64>,
    /// What an unfinished run is blocked on at the end.
    pub blocked: Option<String>,
    pub overdue: Vec<MemberId>,
}

/// What holds the run's current stage at an instant (the order of `report::critical`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hold {
    Upgrading,
    Window,
    Availability,
    Gate(String),
    AfterStageWait,
    /// Stopped, halted, or queued with nothing to wait for.
    Other,
}

/// Runs `replications` replications on `threads` threads; replication r has the streams of
/// (seed, r) whatever the thread count, and results come back in replication order.
pub fn replicate(setup: &Setup, replications: u64, threads: usize) -> Result<Vec<Replication>, Vec<Problem>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| vec![Problem::new("", format!("cannot start worker threads: {e}"))])?;
    let resume = Resume { plan: &setup.plan, snapshot: &setup.snapshot, now: setup.now };
    let results: Vec<Result<Replication, Vec<RestoreProblem>>> = pool.install(|| {
        (0..replications)
            .into_par_iter()
            .map(|r| {
                let options = SimOptions { record_timeline: true, replication: r };
                let (result, facts) = simulate_resumed(&setup.scenario, options, resume)?;
                Ok(summarize(setup, &result, facts.overdue))
            })
            .collect()
    });
    let mut out = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Ok(r) => out.push(r),
            Err(problems) => return Err(locate(setup, problems)),
        }
    }
    Ok(out)
}

/// One replication's figures, from its final state and its timeline replayed from the status.
fn summarize(setup: &Setup, result: &SimResult, overdue: Vec<MemberId>) -> Replication {
    let run = &result.runs[0];
    let finished = matches!(run.state, UpdateState::Completed | UpdateState::Skipped | UpdateState::Failed)
        .then_some(run.completed_time)
        .flatten();
    let completed = finished.filter(|_| run.state != UpdateState::Failed);
    let stage_done = run
        .stages
        .iter()
        .map(|s| matches!(s.state, UpdateState::Completed | UpdateState::Skipped).then_some(s.completed_time).flatten())
        .collect();
    let stage_failed = run.stages.iter().map(|s| s.state == UpdateState::Failed).collect();
    let end = finished.unwrap_or(result.end);
    let mut replay = Replay::new(setup);
    let mut done_changes = Vec::new();
    for row in &result.timeline {
        replay.advance_to(row.time.min(end));
        let t = &row.transition;
        if let Entity::Member(_) = t.entity {
            match (t.from.is_member_terminal(), t.to.is_member_terminal()) {
                (false, true) => done_changes.push((row.time, 1)),
                (true, false) => done_changes.push((row.time, -1)),
                _ => {}
            }
        }
        replay.apply(t.entity, t.to, t.pending);
    }
    replay.advance_to(end);
    let blocked = (finished.is_none())
        .then(|| crate::report::summary::blocked(run, &result.specs[0]).map(|b| b.text))
        .flatten()
        .or_else(|| finished.is_none().then(|| format!("{} at the end of the simulation", run.state)));
    Replication {
        state: run.state,
        finished,
        completed,
        stage_done,
        stage_failed,
        done_changes,
        held: replay.held,
        regions: replay.regions,
        blocked,
        overdue,
    }
}

/// The run's member, gate, wait and stage states replayed from the status along a timeline, charging
/// every interval to what holds the current stage.
type MemberState = (UpdateState, Option<PendingKind>);

struct Replay<'s> {
    setup: &'s Setup,
    at: Time,
    stages: Vec<UpdateState>,
    /// Per stage, group and member: its state and why it is `Pending`.
    members: Vec<Vec<Vec<MemberState>>>,
    gates: BTreeMap<GateRef, UpdateState>,
    waits: Vec<UpdateState>,
    held: BTreeMap<(u16, Hold), i64>,
    regions: BTreeMap<(u16, PendingKind, String), i64>,
}

impl<'s> Replay<'s> {
    fn new(setup: &'s Setup) -> Replay<'s> {
        let snap = &setup.snapshot;
        let mut gates = BTreeMap::new();
        for (s, st) in snap.stages.iter().enumerate() {
            let s = s as u16;
            let mut put = |group, timing, list: &[GateSnapshot]| {
                for (i, g) in list.iter().enumerate() {
                    gates.insert(GateRef { stage: s, group, timing, index: i as u16 }, g.state);
                }
            };
            put(None, Timing::Before, &st.before_gates);
            put(None, Timing::After, &st.after_gates);
            for (g, gs) in st.groups.iter().enumerate() {
                put(Some(g as u16), Timing::Before, &gs.before_gates);
                put(Some(g as u16), Timing::After, &gs.after_gates);
            }
        }
        Replay {
            setup,
            at: setup.now,
            stages: snap.stages.iter().map(|s| s.state).collect(),
            members: snap
                .stages
                .iter()
                .map(|s| {
                    s.groups.iter().map(|g| g.members.iter().map(|m| (m.state, m.pending_kind)).collect()).collect()
                })
                .collect(),
            gates,
            waits: snap.stages.iter().map(|s| s.wait.as_ref().map_or(UpdateState::NotStarted, |w| w.state)).collect(),
            held: BTreeMap::new(),
            regions: BTreeMap::new(),
        }
    }

    fn apply(&mut self, entity: Entity, to: UpdateState, pending: Option<PendingKind>) {
        match entity {
            Entity::Stage(s) => self.stages[s as usize] = to,
            Entity::Member(slot) => {
                self.members[slot.stage as usize][slot.group as usize][slot.index as usize] = (to, pending)
            }
            Entity::Gate(r) => {
                self.gates.insert(r, to);
            }
            Entity::Wait(s) => self.waits[s as usize] = to,
            Entity::Run | Entity::Group(..) => {}
        }
    }

    /// Charges `[self.at, t)` to what holds the current stage.
    fn advance_to(&mut self, t: Time) {
        let seconds = (t - self.at).as_seconds();
        if seconds <= 0 {
            return;
        }
        self.at = t;
        let Some(s) = self.stages.iter().position(|st| {
            *st != UpdateState::NotStarted && !matches!(st, UpdateState::Completed | UpdateState::Skipped)
        }) else {
            return;
        };
        let members = self.members[s].iter().flatten();
        let hold = if members.clone().any(|m| m.0 == UpdateState::Running) {
            Hold::Upgrading
        } else {
            let count = |kind| members.clone().filter(|m| m.0 == UpdateState::Pending && m.1 == Some(kind)).count();
            let (window, availability) = (count(PendingKind::Window), count(PendingKind::Availability));
            if window + availability > 0 {
                let kind = if availability > window { PendingKind::Availability } else { PendingKind::Window };
                let plan = &self.setup.plan.stages[s];
                let mut regions: Vec<&str> = Vec::new();
                for (g, group) in self.members[s].iter().enumerate() {
                    for (i, m) in group.iter().enumerate() {
                        if m.0 == UpdateState::Pending && m.1 == Some(kind) {
                            let region = self.setup.scenario.fleet[plan.groups[g].members[i].index()].region.as_str();
                            if !regions.contains(&region) {
                                regions.push(region);
                            }
                        }
                    }
                }
                for region in regions {
                    *self.regions.entry((s as u16, kind, region.to_string())).or_default() += seconds;
                }
                if kind == PendingKind::Window { Hold::Window } else { Hold::Availability }
            } else if let Some((&r, _)) =
                self.gates.iter().find(|(r, st)| r.stage as usize == s && **st == UpdateState::Pending)
            {
                Hold::Gate(self.gate_name(r))
            } else if self.waits[s] == UpdateState::Running {
                Hold::AfterStageWait
            } else {
                Hold::Other
            }
        };
        *self.held.entry((s as u16, hold)).or_default() += seconds;
    }

    fn gate_name(&self, r: GateRef) -> String {
        let stage = &self.setup.plan.stages[r.stage as usize];
        let (list, place) = match r.group {
            Some(g) => {
                let group = &stage.groups[g as usize];
                let list = if r.timing == Timing::Before { &group.before_gates } else { &group.after_gates };
                (list, format!("group \"{}\"", group.name))
            }
            None => {
                let list = if r.timing == Timing::Before { &stage.before_gates } else { &stage.after_gates };
                (list, format!("stage \"{}\"", stage.name))
            }
        };
        match list.get(r.index as usize).and_then(|g| g.display_name.as_ref()) {
            Some(name) => format!("\"{name}\""),
            None => format!("gate {} {place}", r.timing.api_name().to_lowercase()),
        }
    }
}

/// The `percent` percentile of `sorted` (type 7, as the sweep's statistics), with `+∞` for
/// replications that never got there: `None` when the percentile falls among those.
pub fn percentile(sorted: &[f64], percent: u32) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let position = (sorted.len() - 1) as f64 * f64::from(percent) / 100.0;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    let (a, b) = (sorted[below], sorted[above]);
    if !a.is_finite() || (fraction > 0.0 && !b.is_finite()) {
        return None;
    }
    Some(if fraction > 0.0 { a + (b - a) * fraction } else { a })
}
