//! A run restored from a status: the state an `UpdateRunStatus` shows at one instant, taken up by the
//! decision loop so that the rest of the run can be simulated (`fleetsim forecast`).
//!
//! The status shows display states; the run stores the few facts they are derived from (SEMANTICS
//! §5.6, §11 "Running vs Pending", "Trips", "Halts"). Restoring works the other way round, by the same
//! rules:
//!
//! - a stage or group `Completed`/`Skipped` is done; `NotStarted` is not reached; any other state is
//!   reached, and its phase follows from its gates: before gates not all `Completed` → waiting for
//!   them; every member terminal and after gates (or, for a stage, the wait) started → the after phase;
//!   else active;
//! - a group shown `Failed` has tripped; a stage shown `Failed` whose own count exceeds its threshold
//!   has tripped (otherwise one of its groups did); under `failureScope: run` a trip halts the run. A
//!   count above its threshold without a `Failed` state is a restarted run (§11 "Restart": restart
//!   clears the trips and keeps the counts), and it is kept so;
//! - a run shown `Stopping`/`Stopped` without a trip was stopped by a user;
//! - members keep their state, times and messages; `Running` members hold their slots; `Pending`
//!   members are examined again at the next poll (the status does not say when their answer changes);
//! - gates and the after-stage wait keep their state and start time: a `Pending` ScheduledStart gate
//!   is due at the occurrence after the moment it was reached, a running wait ends its duration after
//!   it started; both are armed as timers, at `now` when that moment has already passed.
//!
//! The run's start time anchors the poll grid, as it did for the service (§11 "Polls").

use crate::engine::Time;
use crate::fleet::MemberId;

use super::super::facts::{Facts, Note, PendingKind, RunId};
use super::super::plan::RunPlan;
use super::super::state::UpdateState;
use super::super::strategy::{GateKind, Timing};
use super::{Command, FailureScope, GateRef, NO_TIME, Phase, RunSettings, Slot, Timer, UpdateRun};

/// A gate's status (`UpdateRunGateStatus`).
#[derive(Clone, Debug, PartialEq)]
pub struct GateSnapshot {
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
}

/// `afterStageWaitStatus`.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSnapshot {
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
}

/// A member's status (`MemberUpdateStatus`).
#[derive(Clone, Debug, PartialEq)]
pub struct MemberSnapshot {
    pub id: MemberId,
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub end_time: Option<Time>,
    pub note: Note,
    /// Why a `Pending` member waits.
    pub pending_kind: Option<PendingKind>,
}

/// A group's status, members in the plan's order.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSnapshot {
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub failure_count: u32,
    pub members: Vec<MemberSnapshot>,
    pub before_gates: Vec<GateSnapshot>,
    pub after_gates: Vec<GateSnapshot>,
}

/// A stage's status.
#[derive(Clone, Debug, PartialEq)]
pub struct StageSnapshot {
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub failure_count: u32,
    pub groups: Vec<GroupSnapshot>,
    pub before_gates: Vec<GateSnapshot>,
    pub after_gates: Vec<GateSnapshot>,
    pub wait: Option<WaitSnapshot>,
}

/// A run's status at one instant, aligned with a [`RunPlan`]: stage `s`, group `g`, member `i` and
/// every gate list are those of the plan at the same positions.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSnapshot {
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub failure_count: u32,
    pub stages: Vec<StageSnapshot>,
}

/// Where a status contradicts the rules a run follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreProblem {
    pub stage: Option<usize>,
    pub group: Option<usize>,
    pub member: Option<usize>,
    pub message: String,
}

/// A restored run, the commands the caller must carry out for it (timers to arm, Approval gates
/// already open), and the members that are upgrading with the time they started.
#[derive(Debug)]
pub struct Restored {
    pub run: UpdateRun,
    pub commands: Vec<Command>,
    pub running: Vec<(Slot, MemberId, Time)>,
}

fn reached(state: UpdateState) -> bool {
    state != UpdateState::NotStarted
}

/// A wait began if it runs or ran; one skipped before it began (no start time) did not, so its
/// stage's after phase, with its after gates, is still to be entered.
fn wait_began(state: UpdateState, start_time: Option<Time>) -> bool {
    match state {
        UpdateState::NotStarted => false,
        UpdateState::Skipped => start_time.is_some(),
        _ => true,
    }
}

fn done(state: UpdateState) -> bool {
    matches!(state, UpdateState::Completed | UpdateState::Skipped)
}

impl UpdateRun {
    /// Builds the run of `plan` in the state `snapshot` shows at `now` (see the module's rules).
    /// `snapshot` must have the plan's shape (same numbers of stages, groups, members and gates);
    /// every state it shows must be one a run can be in, else the problems say where it is not.
    #[allow(clippy::too_many_arguments)]
    pub fn restore(
        id: RunId,
        name: &str,
        plan: RunPlan,
        settings: RunSettings,
        facts: &mut dyn Facts,
        record: bool,
        snapshot: &RunSnapshot,
        now: Time,
    ) -> Result<Restored, Vec<RestoreProblem>> {
        let mut run = UpdateRun::new(id, name, &plan, settings, facts, false);
        let problems = check(&run, snapshot);
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut commands = Vec::new();
        let mut running = Vec::new();
        if reached(snapshot.state) {
            run.started = true;
            run.start_time = snapshot.start_time.or(Some(now));
            run.poll_anchor = run.start_time;
        }
        run.failure_count = snapshot.failure_count;
        for (s, stage) in snapshot.stages.iter().enumerate() {
            run.restore_stage(s, stage, now, &mut commands, &mut running);
        }
        for stage in &mut run.stages {
            stage.groups_tripped = stage.groups.iter().filter(|g| g.tripped).count() as u32;
            // A status may show more members running than the limits allow: every freed slot is
            // then offered to every group with room.
            stage.cap_binds = true;
        }
        let tripped = run.stages.iter().any(|s| s.tripped || s.groups_tripped > 0);
        run.failure_halt = tripped && settings.failure_scope == FailureScope::Run;
        run.user_stop = !tripped && matches!(snapshot.state, UpdateState::Stopping | UpdateState::Stopped);
        run.current =
            run.stages.iter().position(|s| s.phase != Phase::Done || s.running > 0).unwrap_or(run.stages.len());
        run.min_recheck = (!run.pending_by_member.is_empty()).then_some(now);
        run.state = snapshot.state;
        run.settle(now);
        run.record = record;
        Ok(Restored { run, commands, running })
    }

    fn restore_stage(
        &mut self,
        s: usize,
        snap: &StageSnapshot,
        now: Time,
        commands: &mut Vec<Command>,
        running: &mut Vec<(Slot, MemberId, Time)>,
    ) {
        let stage_ref = |timing, index: usize| GateRef { stage: s as u16, group: None, timing, index: index as u16 };
        for (g, group) in snap.groups.iter().enumerate() {
            self.restore_group(s, g, group, now, commands, running);
        }
        for (i, gate) in snap.before_gates.iter().enumerate() {
            self.restore_gate(stage_ref(Timing::Before, i), gate, now, commands);
        }
        for (i, gate) in snap.after_gates.iter().enumerate() {
            self.restore_gate(stage_ref(Timing::After, i), gate, now, commands);
        }
        let stage = &mut self.stages[s];
        stage.failure_count = snap.failure_count;
        stage.state = snap.state;
        stage.start_time = snap.start_time.filter(|_| reached(snap.state));
        stage.completed_time = snap.completed_time.filter(|_| snap.state.is_finished());
        if let (Some(wait), Some(ws)) = (stage.wait.as_mut(), &snap.wait) {
            wait.state = ws.state;
            wait.start_time = ws.start_time;
            wait.completed_time = ws.completed_time.filter(|_| ws.state.is_finished());
            if ws.state == UpdateState::Running {
                let started = ws.start_time.unwrap_or(now);
                commands.push(Command::ArmTimer {
                    at: (started + wait.duration).max(now),
                    timer: Timer::WaitEnd(s as u16),
                });
            }
        }
        let stage = &mut self.stages[s];
        stage.phase = if done(snap.state) {
            stage.done_state = snap.state;
            Phase::Done
        } else if !reached(snap.state) {
            Phase::NotReached
        } else if stage.before_gates.iter().any(|g| g.state != UpdateState::Completed) {
            Phase::BeforeGates
        } else if stage.groups.iter().all(|g| g.phase == Phase::Done)
            && (stage.after_gates.iter().any(|g| reached(g.state))
                || stage.wait.as_ref().is_some_and(|w| wait_began(w.state, w.start_time)))
        {
            Phase::After
        } else {
            Phase::Active
        };
        stage.tripped = snap.state == UpdateState::Failed && stage.failure_count > stage.max_allowed_failures;
        stage.peak_running = stage.running;
    }

    fn restore_group(
        &mut self,
        s: usize,
        g: usize,
        snap: &GroupSnapshot,
        now: Time,
        commands: &mut Vec<Command>,
        running: &mut Vec<(Slot, MemberId, Time)>,
    ) {
        for (i, member) in snap.members.iter().enumerate() {
            let slot = Slot { stage: s as u16, group: g as u16, index: i as u32 };
            self.restore_member(slot, member, now, running);
        }
        let group_ref =
            |timing, index: usize| GateRef { stage: s as u16, group: Some(g as u16), timing, index: index as u16 };
        for (i, gate) in snap.before_gates.iter().enumerate() {
            self.restore_gate(group_ref(Timing::Before, i), gate, now, commands);
        }
        for (i, gate) in snap.after_gates.iter().enumerate() {
            self.restore_gate(group_ref(Timing::After, i), gate, now, commands);
        }
        let group = &mut self.stages[s].groups[g];
        group.failure_count = snap.failure_count;
        group.state = snap.state;
        group.start_time = snap.start_time.filter(|_| reached(snap.state));
        group.completed_time = snap.completed_time.filter(|_| snap.state.is_finished());
        group.tripped = snap.state == UpdateState::Failed;
        group.user_skipped = snap.state == UpdateState::Skipped;
        group.phase = if done(snap.state) {
            group.done_state = snap.state;
            Phase::Done
        } else if !reached(snap.state) {
            Phase::NotReached
        } else if group.before_gates.iter().any(|gate| gate.state != UpdateState::Completed) {
            Phase::BeforeGates
        } else if group.terminal as usize == group.members.len()
            && !group.tripped
            && group.after_gates.iter().any(|gate| reached(gate.state))
        {
            Phase::After
        } else {
            Phase::Active
        };
        group.peak_running = group.running;
        if group.tripped {
            group.note = Note::message(format!(
                "failureCount {} exceeds maxAllowedFailures {}",
                group.failure_count, group.max_allowed_failures
            ));
        }
    }

    fn restore_member(
        &mut self,
        slot: Slot,
        snap: &MemberSnapshot,
        now: Time,
        running: &mut Vec<(Slot, MemberId, Time)>,
    ) {
        let (s, g, i) = (slot.stage as usize, slot.group as usize, slot.index as usize);
        match snap.state {
            UpdateState::NotStarted => {}
            UpdateState::Running => {
                // Counted by hand: a status may show more members running than the limits allow
                // (limits changed meanwhile); they keep their slots and no new one starts.
                self.set_member_state(slot, UpdateState::Running, Note::default());
                let started = snap.start_time.unwrap_or(now).min(now);
                let member = &mut self.stages[s].groups[g].members[i];
                member.start = started;
                member.attempts = 1;
                self.stages[s].groups[g].running += 1;
                self.stages[s].running += 1;
                self.running += 1;
                self.stats.peak_running = self.stats.peak_running.max(self.running);
                running.push((slot, snap.id, started));
            }
            UpdateState::Pending => {
                let kind = snap.pending_kind.unwrap_or(PendingKind::Window);
                self.mark_member_pending(slot, kind, snap.note.clone(), Some(now), now, false);
                let group = &mut self.stages[s].groups[g];
                group.pending.get_mut(&(i as u32)).expect("just marked Pending").since =
                    snap.start_time.unwrap_or(now).min(now);
                group.members[i].start = snap.start_time.unwrap_or(NO_TIME);
            }
            state => {
                // Completed, Failed, Skipped: terminal, never examined again.
                self.set_member_state(slot, state, snap.note.clone());
                self.stages[s].groups[g].terminal += 1;
                let member = &mut self.stages[s].groups[g].members[i];
                member.start = snap.start_time.unwrap_or(NO_TIME);
                member.end = snap.end_time.unwrap_or(NO_TIME);
                member.attempts = u32::from(snap.start_time.is_some() && state != UpdateState::Skipped);
            }
        }
        if snap.state != UpdateState::Pending && snap.state != UpdateState::NotStarted {
            self.stages[s].groups[g].members[i].note = snap.note.clone();
        }
    }

    fn restore_gate(&mut self, r: GateRef, snap: &GateSnapshot, now: Time, commands: &mut Vec<Command>) {
        let exact = self.settings.scheduled_start_exact_instant_counts;
        let gate = self.gate_mut(r);
        gate.state = snap.state;
        gate.start_time = snap.start_time.filter(|_| reached(snap.state));
        gate.completed_time = snap.completed_time.filter(|_| snap.state.is_finished());
        if snap.state != UpdateState::Pending {
            return;
        }
        let opened = gate.start_time.unwrap_or(now).min(now);
        gate.start_time = Some(opened);
        match gate.config.kind {
            GateKind::ScheduledStart(config) => {
                let due = config.next_occurrence(opened, exact);
                gate.due = Some(due);
                gate.note = Note::message(format!("waiting for the scheduled start at {due}"));
                commands.push(Command::ArmTimer { at: due.max(now), timer: Timer::GateDue(r) });
            }
            GateKind::Approval if gate.approve_at_open => {
                // A policy that approves at once would have approved it when it opened.
                self.complete_gate(r, now, Note::message("approved by the approval policy"));
            }
            GateKind::Approval => commands.push(Command::GateOpened { gate: r, approval: true }),
        }
    }
}

/// The problems of a snapshot against the run's shape and rules: states a run cannot show together.
fn check(run: &UpdateRun, snap: &RunSnapshot) -> Vec<RestoreProblem> {
    let mut problems = Vec::new();
    let mut at = |stage: Option<usize>, group: Option<usize>, member: Option<usize>, message: String| {
        problems.push(RestoreProblem { stage, group, member, message })
    };
    check_into(run, snap, &mut at);
    problems
}

fn check_into(
    run: &UpdateRun,
    snap: &RunSnapshot,
    at: &mut impl FnMut(Option<usize>, Option<usize>, Option<usize>, String),
) {
    if snap.stages.len() != run.stages.len() {
        at(
            None,
            None,
            None,
            format!("the status has {} stages, the run's strategy {}", snap.stages.len(), run.stages.len()),
        );
        return;
    }
    let run_finished = snap.state.is_finished();
    let mut open_stage: Option<usize> = None;
    for (s, (stage, rt)) in snap.stages.iter().zip(&run.stages).enumerate() {
        if stage.groups.len() != rt.groups.len() {
            at(
                Some(s),
                None,
                None,
                format!("{} groups in the status, {} in the strategy", stage.groups.len(), rt.groups.len()),
            );
            continue;
        }
        if stage.before_gates.len() != rt.before_gates.len() || stage.after_gates.len() != rt.after_gates.len() {
            at(Some(s), None, None, "the stage's gates differ from the strategy's".to_string());
        }
        if reached(stage.state) && !reached(snap.state) {
            at(Some(s), None, None, format!("the stage is {} in a run that is NotStarted", stage.state));
        }
        if reached(stage.state) && !done(stage.state) {
            if let Some(first) = open_stage
                && !run_finished
            {
                at(
                    Some(s),
                    None,
                    None,
                    format!(
                        "the stage is {} while stage {} is not done yet; stages run one after another",
                        stage.state,
                        first + 1
                    ),
                );
            }
            open_stage.get_or_insert(s);
        }
        if reached(stage.state) && s > 0 && !reached(snap.stages[s - 1].state) {
            at(Some(s), None, None, format!("the stage is {} but the stage before it has not started", stage.state));
        }
        for (g, (group, grt)) in stage.groups.iter().zip(&rt.groups).enumerate() {
            if group.members.len() != grt.members.len() {
                at(
                    Some(s),
                    Some(g),
                    None,
                    format!("{} members in the status, {} in the run", group.members.len(), grt.members.len()),
                );
                continue;
            }
            if group.before_gates.len() != grt.before_gates.len() || group.after_gates.len() != grt.after_gates.len() {
                at(Some(s), Some(g), None, "the group's gates differ from the strategy's".to_string());
            }
            if reached(group.state) && !reached(stage.state) {
                at(Some(s), Some(g), None, format!("the group is {} in a stage that is NotStarted", group.state));
            }
            for (i, member) in group.members.iter().enumerate() {
                let active = matches!(member.state, UpdateState::Running | UpdateState::Pending)
                    || member.state.is_member_terminal();
                if active && !reached(group.state) {
                    at(
                        Some(s),
                        Some(g),
                        Some(i),
                        format!("the member is {} in a group that is NotStarted", member.state),
                    );
                }
                if matches!(member.state, UpdateState::Stopping | UpdateState::Stopped) {
                    at(Some(s), Some(g), Some(i), format!("a member is never {}", member.state));
                }
            }
        }
    }
}
