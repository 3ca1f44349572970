//! One update run's state and its decision loop (SEMANTICS §5–7, §11).
//!
//! Pure: every method takes "now" and returns what should happen (members to start, timers to arm,
//! gates that opened) as [`Command`]s; the caller owns time, randomness and the world. Display states
//! (`Running` vs `Pending`, `Stopping`, `Failed`, …) are derived from a few stored facts by
//! [`UpdateRun::settle`], so they cannot drift from the rules that define them.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::engine::rng::{mix64, name_key};
use crate::engine::{Duration, Time, cache};
use crate::fleet::MemberId;

use super::facts::{Facts, Note, PendingKind, RunId, Verdict, examine};
use super::plan::{GroupPlan, RunPlan, StagePlan};
use super::ranking::Ranking;
use super::state::UpdateState;
use super::strategy::{GateConfig, GateKind, Timing};

mod restore;
pub use restore::{
    GateSnapshot, GroupSnapshot, MemberSnapshot, RestoreProblem, Restored, RunSnapshot, StageSnapshot, WaitSnapshot,
};

/// What happens when a failure threshold is exceeded (SEMANTICS §6, setting `failureScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureScope {
    /// The docs' cascade: no new member starts anywhere; the run ends `Failed`.
    Run,
    /// Only the tripped group (or stage) stops starting members; siblings go on.
    Segment,
}

/// Settings that shape a run's behaviour (SEMANTICS "settings").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSettings {
    pub failure_scope: FailureScope,
    /// SEMANTICS §6 `retryFailedOnRestart`.
    pub retry_failed_on_restart: bool,
    /// SEMANTICS §7: a ScheduledStart gate reached exactly at its instant completes then (default).
    pub scheduled_start_exact_instant_counts: bool,
    /// SEMANTICS §5 `windowPollInterval`.
    pub window_poll_interval: Duration,
}

/// Address of a gate inside a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GateRef {
    pub stage: u16,
    pub group: Option<u16>,
    pub timing: Timing,
    pub index: u16,
}

/// Address of a member inside a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub stage: u16,
    pub group: u16,
    pub index: u32,
}

/// Timers the run asks the caller to arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// A ScheduledStart gate's `absoluteStartTime`.
    GateDue(GateRef),
    /// The end of a stage's `afterStageWaitInSeconds`.
    WaitEnd(u16),
}

/// What the caller must do after a call into the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// The member goes `Running`: simulate its upgrade and report back with `member_finished`.
    Start {
        slot: Slot,
        member: MemberId,
        /// The member's attempts in the run, this one included (1 for its first).
        attempt: u32,
    },
    ArmTimer {
        at: Time,
        timer: Timer,
    },
    /// A gate became `Pending` (approval policies react to Approval gates).
    GateOpened {
        gate: GateRef,
        approval: bool,
    },
}

/// How a member's upgrade ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Completed(Note),
    Failed(Note),
}

/// User skip targets, resolved to positions (the API's `SkipProperties`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipTarget {
    Member(Slot),
    Group { stage: u16, group: u16 },
    Stage(u16),
    AfterStageWait(u16),
}

/// Anything in a run whose state the timeline reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entity {
    Run,
    Stage(u16),
    Group(u16, u16),
    Member(Slot),
    Gate(GateRef),
    Wait(u16),
}

impl Entity {
    /// Tree order: run, then per stage: stage, its before gates, its groups (group, before gates,
    /// members, after gates), its after gates, its wait.
    pub fn order_key(&self) -> (u32, u32, u32, u32, u32) {
        let timing_rank = |t: Timing| if t == Timing::Before { 1 } else { 3 };
        match *self {
            Entity::Run => (0, 0, 0, 0, 0),
            Entity::Stage(s) => (u32::from(s) + 1, 0, 0, 0, 0),
            Entity::Group(s, g) => (u32::from(s) + 1, 2, u32::from(g), 0, 0),
            Entity::Member(slot) => (u32::from(slot.stage) + 1, 2, u32::from(slot.group), 2, slot.index),
            Entity::Gate(r) => match r.group {
                None => (u32::from(r.stage) + 1, timing_rank(r.timing), 0, 0, u32::from(r.index)),
                Some(g) => (u32::from(r.stage) + 1, 2, u32::from(g), timing_rank(r.timing), u32::from(r.index)),
            },
            Entity::Wait(s) => (u32::from(s) + 1, 4, 0, 0, 0),
        }
    }
}

/// One state change between the end states of two instants (SEMANTICS §11 "Timeline rows").
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub entity: Entity,
    pub from: UpdateState,
    pub to: UpdateState,
    pub note: Note,
    /// Why a member became `Pending` (`to` is `Pending`): the reason the orchestrator recorded, so
    /// that reports never read it back from the message's wording.
    pub pending: Option<PendingKind>,
}

/// What an unfinished run waits for at an instant (SEMANTICS §5.9: a run that can no longer progress
/// is not finished, and the report says what it is blocked on).
#[derive(Clone, Debug, PartialEq)]
pub enum BlockedOn {
    /// Never started: no start time and no `start` action, or one after the end.
    Start,
    /// A `Pending` gate of the current stage (the first in tree order), since it opened; `until`:
    /// when a ScheduledStart gate is due (an Approval gate waits for someone).
    Gate { gate: GateRef, since: Time, until: Option<Time> },
    /// `Pending` members of the current stage waiting for `kind` (the most common reason), since
    /// the earliest of them began waiting; `until`: the earliest instant one of them could go on
    /// (the next window opening or regional release), `None` when none ever will.
    Members { stage: u16, kind: PendingKind, count: u32, since: Time, until: Option<Time> },
}

/// Lifecycle position of a stage or group; display states are derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NotReached,
    BeforeGates,
    Active,
    /// Groups: after gates open. Stages: after gates and wait running.
    After,
    Done,
}

/// A gate as the run tracks it (`UpdateRunGateStatus` plus timing).
#[derive(Debug)]
pub struct GateRt {
    pub config: GateConfig,
    pub state: UpdateState,
    pub gate_id: Option<String>,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    /// ScheduledStart: the `absoluteStartTime` computed when reached.
    pub due: Option<Time>,
    pub note: Note,
    /// The approval policy approves this gate with no delay: it completes as it opens.
    approve_at_open: bool,
    mark: u64,
}

clone_reusing!(GateRt { config, state, gate_id, start_time, completed_time, due, note, approve_at_open, mark });

/// `afterStageWaitStatus`.
#[derive(Clone, Debug)]
pub struct WaitRt {
    pub duration: Duration,
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub note: Note,
    mark: u64,
}

/// A member of the run (`MemberUpdateStatus`): one cache line, since every start and completion
/// reads and writes it (what only a `Pending` member has waits in its group's [`Waiting`] list).
#[derive(Debug)]
#[repr(align(64))]
pub struct MemberRt {
    pub id: MemberId,
    pub state: UpdateState,
    pub pending_kind: Option<PendingKind>,
    /// `Skipped` because it was already at the target (SEMANTICS §5.5 b), not by a user or a rule.
    pub at_target: bool,
    pub attempts: u32,
    /// The journal epoch of its last journaled change (its low bits; a member is not left
    /// unchanged for 2^32 instants of its run and then changed).
    mark: u32,
    /// Start and end of the latest attempt (SEMANTICS §11 "Status times"); [`NO_TIME`]: none.
    start: Time,
    end: Time,
    pub note: Note,
}

impl Clone for MemberRt {
    fn clone(&self) -> MemberRt {
        let mut copy = MemberRt { note: Note::default(), ..*self };
        copy.note.clone_from(&self.note);
        copy
    }

    /// Field by field, the note only when either has one: every replication starts by setting
    /// every member of the fleet back to the run's start (a note is rare there), so this is a
    /// copy of the cache line rather than a clone and a drop of its note.
    fn clone_from(&mut self, source: &MemberRt) {
        let MemberRt { id, state, pending_kind, at_target, attempts, mark, start, end, ref note } = *source;
        if !(self.note.is_empty() && note.is_empty()) {
            self.note.clone_from(note);
        }
        (self.id, self.state, self.pending_kind, self.at_target) = (id, state, pending_kind, at_target);
        (self.attempts, self.mark, self.start, self.end) = (attempts, mark, start, end);
    }
}

/// A member time not set.
pub(super) const NO_TIME: Time = Time(i64::MIN);

/// What a `Pending` member waits with (SEMANTICS §11 "Polls"), in its group's list by member index.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    /// When its current `Pending` spell began.
    pub(super) since: Time,
    /// The earliest instant its answer could change (`None`: never by itself).
    pub(super) recheck_at: Option<Time>,
    /// The instant it was last examined, if by the scheduler.
    pub(super) last_examined: Option<Time>,
}

impl Waiting {
    /// Examined again at a poll once its answer may have changed: its `recheck_at` has come
    /// (`Verdict::Pending`: "polls before it can be skipped without changing any outcome"), and
    /// only once per poll instant.
    pub(super) fn due_at_poll(&self, now: Time) -> bool {
        self.last_examined != Some(now) && self.recheck_at.is_some_and(|t| t <= now)
    }
}

#[derive(Debug)]
pub struct GroupRt {
    pub name: String,
    pub max_concurrency: u32,
    pub max_allowed_failures: u32,
    pub failure_count: u32,
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub note: Note,
    pub members: Vec<MemberRt>,
    pub before_gates: Vec<GateRt>,
    pub after_gates: Vec<GateRt>,
    /// Observed peak of members `Running` at once.
    pub peak_running: u32,
    pub running: u32,
    phase: Phase,
    done_state: UpdateState,
    tripped: bool,
    user_skipped: bool,
    terminal: u32,
    has_windows: bool,
    /// First index that may still be `NotStarted` (members only leave that state, except on a retry).
    cursor: usize,
    /// `Pending` members by index (name order), with what they wait with.
    pending: BTreeMap<u32, Waiting>,
    /// Poll scan position for the current instant: (instant, next index).
    pending_scan: Option<(Time, u32)>,
    /// Groups with windows: candidates ranked by (window class, name).
    ranking: Ranking,
    mark: u64,
}

clone_reusing!(GroupRt {
    name,
    max_concurrency,
    max_allowed_failures,
    failure_count,
    state,
    start_time,
    completed_time,
    note,
    members,
    before_gates,
    after_gates,
    peak_running,
    running,
    phase,
    done_state,
    tripped,
    user_skipped,
    terminal,
    has_windows,
    cursor,
    pending,
    pending_scan,
    ranking,
    mark,
});

#[derive(Debug)]
pub struct StageRt {
    pub name: String,
    pub max_concurrency: u32,
    pub max_allowed_failures: u32,
    pub failure_count: u32,
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub note: Note,
    pub groups: Vec<GroupRt>,
    pub before_gates: Vec<GateRt>,
    pub after_gates: Vec<GateRt>,
    /// `None` when `afterStageWaitInSeconds` is 0: "no wait at all" (SEMANTICS §11).
    pub wait: Option<WaitRt>,
    pub peak_running: u32,
    pub running: u32,
    phase: Phase,
    done_state: UpdateState,
    tripped: bool,
    /// How many of `groups` are tripped (read at every settle, kept so as not to scan them).
    pub(super) groups_tripped: u32,
    /// Whether the stage's limit can keep a group with room of its own from starting: its groups'
    /// limits (each at most its member count) add up to more than the stage's. When they do not, a
    /// full stage has every group at its own limit, and a freed slot concerns its group alone.
    pub(super) cap_binds: bool,
    user_skipped: bool,
    mark: u64,
}

clone_reusing!(StageRt {
    name,
    max_concurrency,
    max_allowed_failures,
    failure_count,
    state,
    start_time,
    completed_time,
    note,
    groups,
    before_gates,
    after_gates,
    wait,
    peak_running,
    running,
    phase,
    done_state,
    tripped,
    groups_tripped,
    cap_binds,
    user_skipped,
    mark,
});

/// Time spent waiting, for `summary.json` (PRODUCT.md "hours spent Pending by reason").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Member-seconds in `Pending` because the release had not reached the region.
    pub pending_availability_seconds: i64,
    /// Member-seconds in `Pending` because the maintenance window was closed.
    pub pending_window_seconds: i64,
    /// Gate-seconds in `Pending`.
    pub gate_pending_seconds: i64,
    /// Seconds of after-stage waits that ran.
    pub wait_seconds: i64,
    pub peak_running: u32,
}

/// One update run: plan, runtime state and the decision loop.
#[derive(Debug)]
pub struct UpdateRun {
    pub id: RunId,
    pub name: String,
    pub stages: Vec<StageRt>,
    pub not_selected: Vec<MemberId>,
    pub state: UpdateState,
    pub start_time: Option<Time>,
    pub completed_time: Option<Time>,
    pub failure_count: u32,
    pub note: Note,
    pub stats: RunStats,
    pub running: u32,
    /// First start: polls are anchored here and stay on this grid across stop and restart (§11).
    pub poll_anchor: Option<Time>,
    settings: RunSettings,
    started: bool,
    user_stop: bool,
    failure_halt: bool,
    current: usize,
    min_recheck: Option<Time>,
    /// `Pending` members by fleet id, to hear of changes made by other runs.
    pending_by_member: FxHashMap<MemberId, Slot>,
    /// When the run last entered a state in which nothing waits (Completed, Skipped, Failed, Stopped).
    ended_at: Option<Time>,
    record: bool,
    journal: Vec<(Entity, UpdateState)>,
    epoch: u64,
    run_mark: u64,
    /// What changed since the last [`advance`](Self::advance): only those groups are looked at again.
    dirty: Dirty,
    /// A member finished since the display states were last settled.
    unsettled: bool,
    /// A member started in this instant fails as it starts, and its failure trips a threshold:
    /// nothing more starts until that failure, due in this same instant, is counted (§11 "Trips").
    failing_at_once: bool,
    /// `note` is the failure note [`settle`](Self::settle) gave the run as it became `Failed`.
    failure_noted: bool,
    /// The instant of the last user action: what the completions finished is finished once per
    /// instant, before its first action (later ones follow the actions, at scheduling).
    actions_at: Option<Time>,
}

clone_reusing!(UpdateRun {
    id,
    name,
    stages,
    not_selected,
    state,
    start_time,
    completed_time,
    failure_count,
    note,
    stats,
    running,
    poll_anchor,
    settings,
    started,
    user_stop,
    failure_halt,
    current,
    min_recheck,
    pending_by_member,
    ended_at,
    record,
    journal,
    epoch,
    run_mark,
    dirty,
    unsettled,
    failing_at_once,
    failure_noted,
    actions_at,
});

/// Whether a group or stage with `failures` trips (SEMANTICS §6: exceeding, not equalling, its
/// threshold); one already tripped does not trip again, and a user-skipped one cannot trip (§11).
fn trips(user_skipped: bool, tripped: bool, failures: u32, max_allowed_failures: u32) -> bool {
    !user_skipped && !tripped && failures > max_allowed_failures
}

/// The groups of the current stage whose state may have changed since the run last settled: a
/// member's completion touches its own group only (and every group when the stage's limit was
/// full); anything else (starts, stops, trips, gates, skips, polls, a new stage) touches them all.
/// A group not touched has nothing new to do: it had no free slot or no candidate when the run last
/// settled, and only an event in it can change that.
#[derive(Clone, Copy, Debug)]
struct Dirty {
    all: bool,
    /// Bit `g`: group `g` of the current stage is touched. A stage has at most 50 groups
    /// (SEMANTICS §2); one with more than 64 is touched whole.
    groups: u64,
}

/// Groups of one stage in index order (the order of SEMANTICS §5's passes), from a [`Dirty`] set as
/// it was when asked: touches made while they are visited count from the next visit.
#[derive(Clone, Copy, Debug)]
struct GroupsToVisit {
    /// Every group below `all_below`, then the bits of `bits`.
    next: u32,
    all_below: u32,
    bits: u64,
}

impl Iterator for GroupsToVisit {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if self.next < self.all_below {
            self.next += 1;
            return Some((self.next - 1) as u16);
        }
        if self.bits == 0 {
            return None;
        }
        let g = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(g as u16)
    }
}

/// Checks that must hold at every instant; cheap enough to run in tests and debug builds.
macro_rules! invariant {
    ($cond:expr, $($arg:tt)+) => {
        debug_assert!($cond, $($arg)+)
    };
}

impl UpdateRun {
    /// Creates the run in `NotStarted`. `record` keeps the timeline journal (reports need it; sweeps
    /// that only want metrics turn it off).
    pub fn new(
        id: RunId,
        name: &str,
        plan: &RunPlan,
        settings: RunSettings,
        facts: &mut dyn Facts,
        record: bool,
    ) -> UpdateRun {
        let run_key = name_key(name);
        let stages =
            plan.stages.iter().enumerate().map(|(s, stage)| build_stage(id, run_key, s as u16, stage, facts)).collect();
        let mut run = UpdateRun {
            id,
            name: name.to_string(),
            stages,
            not_selected: plan.not_selected.clone(),
            state: UpdateState::NotStarted,
            start_time: None,
            completed_time: None,
            failure_count: 0,
            note: Note::default(),
            stats: RunStats::default(),
            running: 0,
            poll_anchor: None,
            settings,
            started: false,
            user_stop: false,
            failure_halt: false,
            current: 0,
            min_recheck: None,
            pending_by_member: FxHashMap::default(),
            ended_at: None,
            record,
            journal: Vec::new(),
            epoch: 1,
            run_mark: 0,
            dirty: Dirty { all: true, groups: 0 },
            unsettled: false,
            failing_at_once: false,
            failure_noted: false,
            actions_at: None,
        };
        run.decide_gates_approved_at_open(facts);
        run
    }

    /// The run as [`new`](Self::new) made `initial`, in the lists this one already has: a
    /// replication resets its runs from their initial state so instead of building them again.
    /// `record` as `new`'s; the approval policy, a draw of the replication, decides again which
    /// gates it approves as they open.
    pub fn reset_from(&mut self, initial: &UpdateRun, facts: &mut dyn Facts, record: bool) {
        self.clone_from(initial);
        self.record = record;
        self.decide_gates_approved_at_open(facts);
    }

    /// SEMANTICS §11 "Approval policy": Approval gates the policy approves with a delay of 0.
    fn decide_gates_approved_at_open(&mut self, facts: &mut dyn Facts) {
        for r in self.gate_refs() {
            if matches!(self.gate(r).config.kind, GateKind::Approval) {
                let at_open = facts.approves_at_open(self.id, r);
                self.gate_mut(r).approve_at_open = at_open;
            }
        }
    }

    /// Every group of the current stage is to be looked at again.
    fn touch_all(&mut self) {
        self.dirty.all = true;
    }

    /// Group `g` of stage `s` is to be looked at again.
    fn touch_group(&mut self, s: usize, g: usize) {
        if s != self.current || g >= 64 {
            self.touch_all();
            return;
        }
        self.dirty.groups |= 1 << g;
    }

    /// The groups of stage `s` to look at, in index order.
    fn dirty_groups(&self, s: usize) -> GroupsToVisit {
        if self.dirty.all || s != self.current {
            GroupsToVisit { next: 0, all_below: self.stages[s].groups.len() as u32, bits: 0 }
        } else {
            GroupsToVisit { next: 0, all_below: 0, bits: self.dirty.groups }
        }
    }

    /// The run settled: nothing is to be looked at again until something happens.
    fn clean(&mut self) {
        self.dirty = Dirty { all: false, groups: 0 };
    }

    /// The dirty set's premise (tests and debug builds): a group no event touched shows its current
    /// display state, has no step of its own left, and has no candidate it could start now.
    #[cfg(debug_assertions)]
    fn check_untouched_groups_are_settled(&self) {
        if self.dirty.all || self.current >= self.stages.len() {
            return;
        }
        let s = self.current;
        let stage = &self.stages[s];
        let blocked = self.is_blocked();
        let touched = |g: usize| g >= 64 || self.dirty.groups >> g & 1 == 1;
        for (g, group) in stage.groups.iter().enumerate().filter(|(g, _)| !touched(*g)) {
            assert_eq!(self.group_display(s, g), group.state, "untouched group {g} of stage {s} not settled");
            if stage.phase != Phase::Active {
                continue;
            }
            let step_left = match group.phase {
                Phase::NotReached => !blocked,
                Phase::BeforeGates => !blocked && group.before_gates.iter().all(|x| x.state == UpdateState::Completed),
                Phase::Active => {
                    group.terminal as usize == group.members.len()
                        && !group.tripped
                        && (!blocked || group.after_gates.is_empty())
                }
                Phase::After => group.after_gates.iter().all(|x| x.state == UpdateState::Completed),
                Phase::Done => false,
            };
            assert!(!step_left, "untouched group {g} of stage {s} has a step left in {:?}", group.phase);
            let has_room = !blocked && !stage.tripped && stage.running < stage.max_concurrency && group.takes_turns();
            if has_room {
                let candidate = group.members.iter().any(|m| m.state == UpdateState::NotStarted);
                assert!(!candidate, "untouched group {g} of stage {s} has room and a member to start");
            }
        }
    }

    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// Its members, stage by stage and group by group.
    pub fn member_ids(&self) -> impl Iterator<Item = MemberId> + Clone + '_ {
        self.stages.iter().flat_map(|s| s.groups.iter().flat_map(|g| g.members.iter().map(|m| m.id)))
    }

    pub fn member(&self, slot: Slot) -> &MemberRt {
        &self.stages[slot.stage as usize].groups[slot.group as usize].members[slot.index as usize]
    }

    pub fn gate(&self, r: GateRef) -> &GateRt {
        let stage = &self.stages[r.stage as usize];
        let list = match (r.group, r.timing) {
            (None, Timing::Before) => &stage.before_gates,
            (None, Timing::After) => &stage.after_gates,
            (Some(g), Timing::Before) => &stage.groups[g as usize].before_gates,
            (Some(g), Timing::After) => &stage.groups[g as usize].after_gates,
        };
        &list[r.index as usize]
    }

    fn gate_mut(&mut self, r: GateRef) -> &mut GateRt {
        let stage = &mut self.stages[r.stage as usize];
        let list = match (r.group, r.timing) {
            (None, Timing::Before) => &mut stage.before_gates,
            (None, Timing::After) => &mut stage.after_gates,
            (Some(g), Timing::Before) => &mut stage.groups[g as usize].before_gates,
            (Some(g), Timing::After) => &mut stage.groups[g as usize].after_gates,
        };
        &mut list[r.index as usize]
    }

    /// Every gate of the run with its address, in tree order.
    pub fn gate_refs(&self) -> Vec<GateRef> {
        let mut refs = Vec::new();
        for (s, stage) in self.stages.iter().enumerate() {
            let s = s as u16;
            let push = |refs: &mut Vec<GateRef>, group, timing, n: usize| {
                refs.extend((0..n).map(|i| GateRef { stage: s, group, timing, index: i as u16 }));
            };
            push(&mut refs, None, Timing::Before, stage.before_gates.len());
            for (g, group) in stage.groups.iter().enumerate() {
                push(&mut refs, Some(g as u16), Timing::Before, group.before_gates.len());
                push(&mut refs, Some(g as u16), Timing::After, group.after_gates.len());
            }
            push(&mut refs, None, Timing::After, stage.after_gates.len());
        }
        refs
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Whether the run is still open: not started, or `Running`, `Pending` or `Stopping` (a run
    /// that is `Completed`, `Skipped`, `Failed` or `Stopped` waits for nothing of its own).
    pub fn is_open(&self) -> bool {
        matches!(
            self.state,
            UpdateState::NotStarted | UpdateState::Running | UpdateState::Pending | UpdateState::Stopping
        )
    }

    /// What the run waits for, when it is not started or `Pending` (nothing of it running).
    pub fn blocked_on(&self) -> Option<BlockedOn> {
        match self.state {
            UpdateState::NotStarted => return Some(BlockedOn::Start),
            UpdateState::Pending => {}
            _ => return None,
        }
        let s = self.current;
        let stage = self.stages.get(s)?;
        if let Some(r) = self
            .gate_refs()
            .into_iter()
            .filter(|r| r.stage as usize == s)
            .find(|&r| self.gate(r).state == UpdateState::Pending)
        {
            let gate = self.gate(r);
            let until = match gate.config.kind {
                GateKind::ScheduledStart(_) => gate.due,
                GateKind::Approval => None,
            };
            return Some(BlockedOn::Gate { gate: r, since: gate.start_time.unwrap_or_default(), until });
        }
        let mut by_kind: BTreeMap<PendingKind, (u32, Time, Option<Time>)> = BTreeMap::new();
        for group in &stage.groups {
            for (&i, waiting) in &group.pending {
                let member = &group.members[i as usize];
                let (UpdateState::Pending, Some(kind)) = (member.state, member.pending_kind) else { continue };
                let entry = by_kind.entry(kind).or_insert((0, waiting.since, None));
                entry.0 += 1;
                entry.1 = entry.1.min(waiting.since);
                entry.2 = match (entry.2, waiting.recheck_at) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        by_kind
            .into_iter()
            .max_by_key(|&(kind, (count, _, _))| (count, std::cmp::Reverse(kind)))
            .map(|(kind, (count, since, until))| BlockedOn::Members { stage: s as u16, kind, count, since, until })
    }

    /// No new member can start and nothing new is reached (SEMANTICS §11 "Halts").
    pub fn is_blocked(&self) -> bool {
        !self.started || self.user_stop || self.failure_halt || self.current_stage_failed()
    }

    // ----- user actions (SEMANTICS §7, §11 "Restart") -----------------------------------------

    /// `start`: accepted on `NotStarted`, `Stopped` and `Failed`.
    pub fn start(&mut self, now: Time) -> Result<(), String> {
        self.before_action(now);
        match self.state {
            UpdateState::NotStarted => {
                self.started = true;
                self.start_time = Some(now);
                self.poll_anchor = Some(now);
            }
            UpdateState::Stopped | UpdateState::Failed => self.restart(),
            other => {
                return Err(format!(
                    "start is accepted on NotStarted, Stopped and Failed runs; run \"{}\" is {other}",
                    self.name
                ));
            }
        }
        self.note = Note::default();
        self.failure_noted = false;
        self.settle(now);
        Ok(())
    }

    /// Restart clears the halt and every trip but keeps the counts (SEMANTICS §11 "Restart").
    fn restart(&mut self) {
        self.user_stop = false;
        self.failure_halt = false;
        let retry = self.settings.retry_failed_on_restart;
        for s in 0..self.stages.len() {
            self.stages[s].tripped = false;
            self.stages[s].groups_tripped = 0;
            for g in 0..self.stages[s].groups.len() {
                self.stages[s].groups[g].tripped = false;
                if retry && self.stages[s].groups[g].phase != Phase::Done {
                    self.retry_failed_members(s, g);
                }
            }
        }
    }

    /// `retryFailedOnRestart`: failed members of unfinished groups go back to `NotStarted`. Their
    /// earlier failures stay in the counts and a failed retry adds one more (§11 "Restart"), so a
    /// group already over its budget trips on its next failure.
    fn retry_failed_members(&mut self, s: usize, g: usize) {
        for i in 0..self.stages[s].groups[g].members.len() {
            if self.stages[s].groups[g].members[i].state != UpdateState::Failed {
                continue;
            }
            let slot = Slot { stage: s as u16, group: g as u16, index: i as u32 };
            self.set_member_state(slot, UpdateState::NotStarted, Note::message("retried after restart"));
            let group = &mut self.stages[s].groups[g];
            group.terminal -= 1;
            group.cursor = group.cursor.min(i);
        }
    }

    /// `stop`: accepted on `Running` and `Pending`; in-flight members finish (SEMANTICS §7).
    pub fn stop(&mut self, now: Time) -> Result<(), String> {
        self.before_action(now);
        if !matches!(self.state, UpdateState::Running | UpdateState::Pending) {
            return Err(format!(
                "stop is accepted on Running and Pending runs; run \"{}\" is {}",
                self.name, self.state
            ));
        }
        self.user_stop = true;
        self.note = Note::message("stopped by user");
        self.failure_noted = false;
        self.settle(now);
        Ok(())
    }

    /// `approve` a gate: completes it if it is `Pending` (no pre-approval, SEMANTICS §11). Returns
    /// whether anything changed.
    pub fn approve(&mut self, gate: GateRef, now: Time, note: Note) -> bool {
        self.before_action(now);
        if self.gate(gate).state != UpdateState::Pending {
            return false;
        }
        self.complete_gate(gate, now, note);
        self.settle(now);
        true
    }

    /// `skip` (SEMANTICS §7, §11 "User skips").
    pub fn skip(&mut self, target: SkipTarget, now: Time) -> Result<(), String> {
        self.before_action(now);
        let result = match target {
            SkipTarget::Member(slot) => self.skip_member(slot, now),
            SkipTarget::Group { stage, group } => self.skip_group(stage as usize, group as usize, now),
            SkipTarget::Stage(stage) => self.skip_stage(stage as usize, now),
            SkipTarget::AfterStageWait(stage) => self.skip_wait(stage as usize, now),
        };
        self.settle(now);
        result
    }

    /// What a user action reads: the run as the instant's completions left it, settled.
    fn before_action(&mut self, now: Time) {
        self.settle_if_needed(now);
        self.touch_all();
        // Once, before the instant's first action: what an action makes finishable (a restart's
        // cleared trip) is finished at scheduling, after every action of the instant.
        if self.actions_at != Some(now) {
            self.actions_at = Some(now);
            if self.finish_what_completions_finished(now) {
                self.settle(now);
            }
        }
    }

    /// SEMANTICS §11 "Ties at one instant": the instant's member completions come before user
    /// actions, so what they finish that needs nothing new (§11 "Halts": a group without
    /// `afterGates` whose members are all terminal, then a stage whose groups are all done, with
    /// nothing running and no `afterGates` or wait) is finished before an action reads it: a skip
    /// of a group or stage its last completion finished is refused, as it would be an instant later.
    /// Returns whether anything finished.
    fn finish_what_completions_finished(&mut self, now: Time) -> bool {
        let s = self.current;
        if self.stages.get(s).is_none_or(|stage| stage.phase != Phase::Active) {
            return false;
        }
        let mut out = Vec::new();
        // Every group: the caller touched them all.
        let finished = self.progress_groups(s, now, true, &mut out) | self.enter_after_phase(s, now, true, &mut out);
        invariant!(out.is_empty(), "finishing what needs nothing new opens no gate and arms no timer");
        finished
    }

    fn skip_member(&mut self, slot: Slot, now: Time) -> Result<(), String> {
        let member = self.member(slot);
        if !matches!(member.state, UpdateState::NotStarted | UpdateState::Pending) {
            return Err(format!("member is {}; only NotStarted and Pending members can be skipped", member.state));
        }
        self.mark_member_skipped(slot, Note::message("skipped by user"), now);
        Ok(())
    }

    fn skip_group(&mut self, s: usize, g: usize, now: Time) -> Result<(), String> {
        let group = &self.stages[s].groups[g];
        if group.phase == Phase::Done {
            // Its state as the instant will end (a completion may have finished it just now).
            return Err(format!("group \"{}\" is already {}", group.name, self.group_display(s, g)));
        }
        self.skip_group_contents(s, g, now, "skipped by user");
        Ok(())
    }

    /// Marks a group skipped: its waiting members and gates are `Skipped`; running members finish.
    fn skip_group_contents(&mut self, s: usize, g: usize, now: Time, why: &str) {
        {
            let group = &mut self.stages[s].groups[g];
            group.user_skipped = true;
            group.phase = Phase::Done;
            group.done_state = UpdateState::Skipped;
            group.note = Note::message(why);
        }
        for i in 0..self.stages[s].groups[g].members.len() {
            let slot = Slot { stage: s as u16, group: g as u16, index: i as u32 };
            if matches!(self.member(slot).state, UpdateState::NotStarted | UpdateState::Pending) {
                self.mark_member_skipped(slot, Note::message(why), now);
            }
        }
        for timing in [Timing::Before, Timing::After] {
            let count = match timing {
                Timing::Before => self.stages[s].groups[g].before_gates.len(),
                Timing::After => self.stages[s].groups[g].after_gates.len(),
            };
            for index in 0..count {
                self.skip_gate(
                    GateRef { stage: s as u16, group: Some(g as u16), timing, index: index as u16 },
                    now,
                    why,
                );
            }
        }
        let state = self.group_display(s, g);
        self.set_group_state(s, g, state, now);
    }

    fn skip_stage(&mut self, s: usize, now: Time) -> Result<(), String> {
        let stage = &self.stages[s];
        if stage.phase == Phase::Done {
            return Err(format!("stage \"{}\" is already {}", stage.name, self.stage_display(s)));
        }
        self.skip_stage_contents(s, now, "skipped by user");
        self.stages[s].user_skipped = true;
        Ok(())
    }

    /// Marks a stage skipped with its groups, gates and wait (SEMANTICS §7, §11 "Empty and all-skipped").
    fn skip_stage_contents(&mut self, s: usize, now: Time, why: &str) {
        for g in 0..self.stages[s].groups.len() {
            if self.stages[s].groups[g].phase != Phase::Done {
                self.skip_group_contents(s, g, now, why);
            }
        }
        let gates: Vec<GateRef> =
            self.gate_refs().into_iter().filter(|r| r.stage == s as u16 && r.group.is_none()).collect();
        for r in gates {
            self.skip_gate(r, now, why);
        }
        self.skip_wait_entity(s, now, why);
        let stage = &mut self.stages[s];
        stage.phase = Phase::Done;
        stage.done_state = UpdateState::Skipped;
        stage.note = Note::message(why);
        self.set_stage_state(s, UpdateState::Skipped, now);
    }

    fn skip_wait(&mut self, s: usize, now: Time) -> Result<(), String> {
        match &self.stages[s].wait {
            None => Err(format!("stage \"{}\" has no after-stage wait", self.stages[s].name)),
            Some(w) if !matches!(w.state, UpdateState::NotStarted | UpdateState::Running) => {
                Err(format!("the after-stage wait of stage \"{}\" is already {}", self.stages[s].name, w.state))
            }
            Some(_) => {
                self.skip_wait_entity(s, now, "skipped by user");
                Ok(())
            }
        }
    }

    fn skip_wait_entity(&mut self, s: usize, now: Time, why: &str) {
        let Some(wait) = &self.stages[s].wait else {
            return;
        };
        if !matches!(wait.state, UpdateState::NotStarted | UpdateState::Running) {
            return;
        }
        if wait.state == UpdateState::Running {
            self.stats.wait_seconds += (now - wait.start_time.unwrap_or(now)).as_seconds();
        }
        self.set_wait_state(s, UpdateState::Skipped, Note::message(why), now);
    }

    fn skip_gate(&mut self, r: GateRef, now: Time, why: &str) {
        let state = self.gate(r).state;
        if matches!(state, UpdateState::NotStarted | UpdateState::Pending) {
            self.set_gate_state(r, UpdateState::Skipped, Note::message(why), now);
        }
    }

    // ----- world reports ------------------------------------------------------------------------

    /// A member's upgrade ended. Failures roll up and may trip thresholds (SEMANTICS §6, §11 "Trips").
    #[inline]
    pub fn member_finished(&mut self, slot: Slot, outcome: Outcome, now: Time) {
        invariant!(self.member(slot).state == UpdateState::Running, "only running members finish");
        // Counted below, with every other completion of the instant before anything is scheduled;
        // the groups that had no turn after it are looked at again.
        if std::mem::take(&mut self.failing_at_once) {
            self.touch_all();
        }
        let (s, g) = (slot.stage as usize, slot.group as usize);
        let failed = matches!(outcome, Outcome::Failed(_));
        let (state, note) = match outcome {
            Outcome::Completed(note) => (UpdateState::Completed, note),
            Outcome::Failed(note) => (UpdateState::Failed, note),
        };
        let group = &mut self.stages[s].groups[g];
        let journal = JournalAt { list: &mut self.journal, record: self.record, epoch: self.epoch };
        change_member_state(journal, group, slot, state, note).end = now;
        // A slot freed under a full stage limit is for the groups with room of their own: one at its
        // own limit could not take it, and neither could one that is not active or has tripped.
        let stage = &self.stages[s];
        if stage.running >= stage.max_concurrency && stage.cap_binds {
            for other in 0..stage.groups.len() {
                let group = &self.stages[s].groups[other];
                if group.takes_turns() {
                    self.touch_group(s, other);
                }
            }
        }
        self.touch_group(s, g);
        let group = &mut self.stages[s].groups[g];
        group.running -= 1;
        group.terminal += 1;
        self.stages[s].running -= 1;
        self.running -= 1;
        if failed {
            self.count_failure(s, g);
        }
        // Display states follow at the next call that reads or settles them (`advance` ends the
        // instant of every run an event touched).
        self.unsettled = true;
    }

    /// Settles display states a completion left (see [`member_finished`](Self::member_finished))
    /// before a call reads them.
    fn settle_if_needed(&mut self, now: Time) {
        if self.unsettled {
            self.settle(now);
        }
    }

    /// Whether one more failure in group `g` of stage `s` would trip the group or the stage (as
    /// [`count_failure`](Self::count_failure) trips them).
    fn next_failure_trips(&self, s: usize, g: usize) -> bool {
        let stage = &self.stages[s];
        let group = &stage.groups[g];
        trips(group.user_skipped, group.tripped, group.failure_count + 1, group.max_allowed_failures)
            || trips(stage.user_skipped, stage.tripped, stage.failure_count + 1, stage.max_allowed_failures)
    }

    fn count_failure(&mut self, s: usize, g: usize) {
        self.failure_count += 1;
        let scope = self.settings.failure_scope;
        let stage = &mut self.stages[s];
        stage.failure_count += 1;
        let group = &mut stage.groups[g];
        group.failure_count += 1;
        if trips(group.user_skipped, group.tripped, group.failure_count, group.max_allowed_failures) {
            self.dirty.all = true;
            group.tripped = true;
            stage.groups_tripped += 1;
            group.note = Note::message(format!(
                "failureCount {} exceeds maxAllowedFailures {}",
                group.failure_count, group.max_allowed_failures
            ));
            if scope == FailureScope::Run {
                self.failure_halt = true;
            }
        }
        if trips(stage.user_skipped, stage.tripped, stage.failure_count, stage.max_allowed_failures) {
            self.dirty.all = true;
            stage.tripped = true;
            stage.note = Note::message(format!(
                "failureCount {} exceeds maxAllowedFailures {}",
                stage.failure_count, stage.max_allowed_failures
            ));
            if scope == FailureScope::Run {
                self.failure_halt = true;
            }
        }
    }

    /// A timer armed by a [`Command::ArmTimer`] fired. Stale timers (gate approved or skipped
    /// meanwhile) do nothing.
    pub fn timer_fired(&mut self, timer: Timer, now: Time) {
        self.settle_if_needed(now);
        self.touch_all();
        match timer {
            Timer::GateDue(r) => {
                if self.gate(r).state == UpdateState::Pending {
                    self.complete_gate(r, now, Note::message(format!("scheduled start time {now} reached")));
                }
            }
            Timer::WaitEnd(s) => {
                let s = s as usize;
                if let Some(wait) = &self.stages[s].wait
                    && wait.state == UpdateState::Running
                {
                    self.stats.wait_seconds += wait.duration.as_seconds();
                    self.set_wait_state(s, UpdateState::Completed, Note::default(), now);
                }
            }
        }
        self.settle(now);
    }

    // ----- the decision loop (SEMANTICS §5) -----------------------------------------------------

    /// Reaches stages and groups, opens gates and starts members until nothing changes.
    /// `now` is a poll instant when it lies on the poll grid (SEMANTICS §11 "Polls").
    pub fn advance<F: Facts + ?Sized>(&mut self, now: Time, facts: &mut F, out: &mut Vec<Command>) {
        if !self.started {
            return;
        }
        let poll = self.is_poll_instant(now);
        if poll {
            // Pending members of any group are examined again.
            self.touch_all();
        }
        #[cfg(debug_assertions)]
        self.check_untouched_groups_are_settled();
        // Bounded: every iteration either reaches/opens/completes something or skips a member. Starts
        // alone call for no further iteration: a start reaches, opens and completes nothing, and
        // scheduling ends only with a pass that starts no one.
        for _ in 0..1_000_000 {
            let progressed = self.progress(now, out);
            let (_, skipped) = self.schedule_members(now, poll, facts, out);
            if !progressed && !skipped {
                break;
            }
        }
        if poll {
            self.recompute_min_recheck();
        }
        self.settle(now);
        self.clean();
    }

    fn is_poll_instant(&self, now: Time) -> bool {
        let interval = self.settings.window_poll_interval.as_seconds();
        match self.poll_anchor {
            Some(anchor) if interval > 0 && now >= anchor => (now - anchor).as_seconds() % interval == 0,
            _ => false,
        }
    }

    /// The next poll instant worth having: the first grid point at or after the earliest moment a
    /// `Pending` member's answer could change, and after `now`. `None` when no poll is needed.
    #[inline]
    pub fn next_poll_after(&self, now: Time) -> Option<Time> {
        // Asked at the end of every instant: the common answer (nothing waits) first.
        let min_recheck = self.min_recheck?;
        if self.is_blocked() {
            return None;
        }
        let anchor = self.poll_anchor?;
        let interval = self.settings.window_poll_interval.as_seconds();
        let wanted = min_recheck.max(now + Duration(1));
        let steps = (wanted - anchor).as_seconds().max(0);
        Some(anchor + Duration((steps + interval - 1) / interval * interval))
    }

    fn recompute_min_recheck(&mut self) {
        let mut min: Option<Time> = None;
        if let Some(stage) = self.stages.get(self.current) {
            for group in &stage.groups {
                for waiting in group.pending.values() {
                    if let Some(t) = waiting.recheck_at {
                        min = Some(min.map_or(t, |m| m.min(t)));
                    }
                }
            }
        }
        self.min_recheck = min;
    }

    /// Reaching, gates and completions (SEMANTICS §5.1–5.8, §11 "Reaching", "Empty and all-skipped").
    /// Returns whether anything changed.
    #[inline(always)]
    fn progress(&mut self, now: Time, out: &mut Vec<Command>) -> bool {
        let mut changed = false;
        while self.current < self.stages.len() {
            let s = self.current;
            let blocked = self.is_blocked();
            let step = match self.stages[s].phase {
                Phase::NotReached => !blocked && self.reach_stage(s, now, out),
                Phase::BeforeGates => !blocked && self.finish_before_gates(s),
                Phase::Active => {
                    let groups_changed = self.progress_groups(s, now, blocked, out);
                    changed |= groups_changed;
                    self.enter_after_phase(s, now, blocked, out)
                }
                Phase::After => self.finish_stage(s),
                Phase::Done => {
                    // The next stage waits for running members of a skipped stage (§11 "Reaching").
                    if self.stages[s].running == 0 {
                        self.current += 1;
                        self.min_recheck = None;
                        true
                    } else {
                        false
                    }
                }
            };
            if !step {
                break;
            }
            changed = true;
            // The stage moved on: its groups (or the next stage's) are all to be looked at.
            self.touch_all();
            self.settle(now);
        }
        changed
    }

    fn reach_stage(&mut self, s: usize, now: Time, out: &mut Vec<Command>) -> bool {
        self.stages[s].start_time = Some(now);
        let stage = &self.stages[s];
        let nothing_to_do = stage
            .groups
            .iter()
            .all(|g| g.phase == Phase::Done || g.members.iter().all(|m| m.state == UpdateState::Skipped));
        if nothing_to_do {
            let why = if stage.groups.iter().all(|g| g.members.is_empty()) {
                "stage has no members"
            } else {
                "every member of the stage is skipped"
            };
            self.skip_stage_contents(s, now, why);
            return true;
        }
        let count = self.stages[s].before_gates.len();
        for index in 0..count {
            self.open_gate(
                GateRef { stage: s as u16, group: None, timing: Timing::Before, index: index as u16 },
                now,
                out,
            );
        }
        self.stages[s].phase = Phase::BeforeGates;
        self.finish_before_gates(s);
        true
    }

    fn finish_before_gates(&mut self, s: usize) -> bool {
        let stage = &mut self.stages[s];
        if stage.before_gates.iter().all(|g| g.state == UpdateState::Completed) {
            stage.phase = Phase::Active;
            return true;
        }
        false
    }

    #[inline(always)]
    fn progress_groups(&mut self, s: usize, now: Time, blocked: bool, out: &mut Vec<Command>) -> bool {
        let mut changed = false;
        for g in self.dirty_groups(s) {
            // An active group with members still to finish (or tripped) has nothing to progress.
            let group = &self.stages[s].groups[g as usize];
            if group.phase == Phase::Active && (group.terminal as usize != group.members.len() || group.tripped) {
                continue;
            }
            changed |= self.progress_group(s, g as usize, now, blocked, out);
        }
        changed
    }

    fn progress_group(&mut self, s: usize, g: usize, now: Time, blocked: bool, out: &mut Vec<Command>) -> bool {
        let group = &self.stages[s].groups[g];
        match group.phase {
            Phase::NotReached if !blocked => {
                self.stages[s].groups[g].start_time = Some(now);
                let group = &self.stages[s].groups[g];
                if group.members.iter().all(|m| m.state == UpdateState::Skipped) {
                    let why = if group.members.is_empty() {
                        "group has no members"
                    } else {
                        "every member of the group is skipped"
                    };
                    self.skip_group_contents(s, g, now, why);
                    self.stages[s].groups[g].user_skipped = false;
                    return true;
                }
                for index in 0..group.before_gates.len() {
                    self.open_gate(
                        GateRef { stage: s as u16, group: Some(g as u16), timing: Timing::Before, index: index as u16 },
                        now,
                        out,
                    );
                }
                self.stages[s].groups[g].phase = Phase::BeforeGates;
                self.progress_group(s, g, now, blocked, out);
                true
            }
            Phase::BeforeGates if !blocked => {
                if group.before_gates.iter().all(|gate| gate.state == UpdateState::Completed) {
                    self.stages[s].groups[g].phase = Phase::Active;
                    return true;
                }
                false
            }
            Phase::Active if group.terminal as usize == group.members.len() && !group.tripped => {
                if group.members.iter().all(|m| m.state == UpdateState::Skipped) {
                    // §11: a group whose members all end Skipped is Skipped; its afterGates never open.
                    self.skip_group_contents(s, g, now, "every member of the group is skipped");
                    self.stages[s].groups[g].user_skipped = false;
                    return true;
                }
                // §11 "Halts": completing needs nothing new when there are no afterGates, so it
                // happens during a halt too; opening afterGates waits for the halt to clear.
                if blocked && !group.after_gates.is_empty() {
                    return false;
                }
                for index in 0..group.after_gates.len() {
                    self.open_gate(
                        GateRef { stage: s as u16, group: Some(g as u16), timing: Timing::After, index: index as u16 },
                        now,
                        out,
                    );
                }
                self.stages[s].groups[g].phase = Phase::After;
                self.progress_group(s, g, now, blocked, out);
                true
            }
            Phase::After => {
                if group.after_gates.iter().all(|gate| gate.state == UpdateState::Completed) {
                    let group = &mut self.stages[s].groups[g];
                    group.phase = Phase::Done;
                    group.done_state = UpdateState::Completed;
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// §5.7: when every group is done (and nothing of the stage runs, and the stage has not tripped),
    /// the stage's after gates and wait start together; a stage whose groups were all skipped is `Skipped`. During a halt only
    /// a stage with no after gates and no wait completes (§11 "Halts": it needs nothing new).
    #[inline(always)]
    fn enter_after_phase(&mut self, s: usize, now: Time, blocked: bool, out: &mut Vec<Command>) -> bool {
        let stage = &self.stages[s];
        // §11 "Trips": a stage over its own threshold is `Failed` even when the failure that tripped
        // it was its last member's and every group ended within its own threshold; it never opens
        // its afterGates or wait (a restart clears the trip and lets it complete).
        // A tripped group holds it too, also once skipped: under either failure scope the stage
        // ends `Failed` (§6), until a restart clears the trip.
        if stage.tripped
            || stage.groups_tripped > 0
            || stage.running > 0
            || !stage.groups.iter().all(|g| g.phase == Phase::Done)
        {
            return false;
        }
        // SEMANTICS §11 "Halts": a stage whose gates and wait have finished completes during a halt; a
        // wait the user skipped before it began is finished.
        let wait_pending = stage.wait.as_ref().is_some_and(|w| w.state == UpdateState::NotStarted);
        if blocked && (!stage.after_gates.is_empty() || wait_pending) {
            return false;
        }
        if stage.groups.iter().all(|g| g.done_state == UpdateState::Skipped) {
            self.skip_stage_contents(s, now, "every group of the stage is skipped");
            return true;
        }
        for index in 0..stage.after_gates.len() {
            self.open_gate(
                GateRef { stage: s as u16, group: None, timing: Timing::After, index: index as u16 },
                now,
                out,
            );
        }
        // A wait the user skipped before it began stays skipped (SEMANTICS §11 "User skips").
        if let Some(wait) = &self.stages[s].wait
            && wait.state == UpdateState::NotStarted
        {
            let at = now + wait.duration;
            self.set_wait_state(s, UpdateState::Running, Note::default(), now);
            out.push(Command::ArmTimer { at, timer: Timer::WaitEnd(s as u16) });
        }
        self.stages[s].phase = Phase::After;
        self.finish_stage(s);
        true
    }

    fn finish_stage(&mut self, s: usize) -> bool {
        let stage = &mut self.stages[s];
        let gates_done = stage.after_gates.iter().all(|g| g.state == UpdateState::Completed);
        let wait_done =
            stage.wait.as_ref().is_none_or(|w| matches!(w.state, UpdateState::Completed | UpdateState::Skipped));
        if gates_done && wait_done {
            stage.phase = Phase::Done;
            stage.done_state = UpdateState::Completed;
            return true;
        }
        false
    }

    fn open_gate(&mut self, r: GateRef, now: Time, out: &mut Vec<Command>) {
        let exact = self.settings.scheduled_start_exact_instant_counts;
        let gate = self.gate_mut(r);
        if gate.state != UpdateState::NotStarted {
            return;
        }
        gate.start_time = Some(now);
        let kind = gate.config.kind;
        self.set_gate_state(r, UpdateState::Pending, Note::default(), now);
        match kind {
            // §11 "Approval policy": a delay of 0 approves the gate as it opens, like a
            // ScheduledStart gate whose time has come.
            GateKind::Approval if self.gate(r).approve_at_open => {
                self.complete_gate(r, now, Note::message("approved by the approval policy"));
            }
            GateKind::Approval => out.push(Command::GateOpened { gate: r, approval: true }),
            GateKind::ScheduledStart(config) => {
                let due = config.next_occurrence(now, exact);
                self.gate_mut(r).due = Some(due);
                if due <= now {
                    self.complete_gate(r, now, Note::message(format!("scheduled start time {due} reached")));
                } else {
                    let message = format!("waiting for the scheduled start at {due}");
                    self.gate_mut(r).note = Note::message(message);
                    out.push(Command::ArmTimer { at: due, timer: Timer::GateDue(r) });
                    out.push(Command::GateOpened { gate: r, approval: false });
                }
            }
        }
    }

    fn complete_gate(&mut self, r: GateRef, now: Time, note: Note) {
        let opened = self.gate(r).start_time.unwrap_or(now);
        self.stats.gate_pending_seconds += (now - opened).as_seconds();
        self.set_gate_state(r, UpdateState::Completed, note, now);
    }

    /// §5.3 and §11 "Round-robin": passes over the groups in array order, one start per turn, the
    /// stage cap checked before each turn; a pass with no start ends scheduling. Returns whether a
    /// member started, and whether one was skipped on the way (a skip may finish its group).
    fn schedule_members<F: Facts + ?Sized>(
        &mut self,
        now: Time,
        poll: bool,
        facts: &mut F,
        out: &mut Vec<Command>,
    ) -> (bool, bool) {
        let s = self.current;
        if s >= self.stages.len() || self.is_blocked() || self.failing_at_once {
            return (false, false);
        }
        if self.stages[s].phase != Phase::Active || self.stages[s].tripped {
            return (false, false);
        }
        let mut any = false;
        let mut skipped_any = false;
        let groups = self.dirty_groups(s);
        loop {
            let mut started_in_pass = false;
            // Whether another pass could start someone: a group that started one and has room
            // left, or one whose turn started no one. A full stage, and groups at their limit,
            // inactive or tripped, stay so while members only start: another pass would pass them.
            let mut another_pass = false;
            for g in groups {
                let g = g as usize;
                let stage = &self.stages[s];
                if stage.running >= stage.max_concurrency {
                    break;
                }
                if !stage.groups[g].takes_turns() {
                    continue;
                }
                if self.turn(s, g, now, poll, facts, out, &mut skipped_any) {
                    started_in_pass = true;
                    if self.failing_at_once {
                        return (true, skipped_any);
                    }
                    another_pass |= self.stages[s].groups[g].takes_turns();
                } else {
                    another_pass = true;
                }
            }
            if !started_in_pass {
                return (any, skipped_any);
            }
            any = true;
            if !another_pass {
                #[cfg(debug_assertions)]
                for g in groups {
                    let stage = &self.stages[s];
                    assert!(
                        stage.running >= stage.max_concurrency || !stage.groups[g as usize].takes_turns(),
                        "another pass of scheduling could start a member of group {g}"
                    );
                }
                return (any, skipped_any);
            }
        }
    }

    /// One group's turn: examine candidates in order until one starts (§11 "Examination is lazy").
    #[allow(clippy::too_many_arguments)]
    fn turn<F: Facts + ?Sized>(
        &mut self,
        s: usize,
        g: usize,
        now: Time,
        poll: bool,
        facts: &mut F,
        out: &mut Vec<Command>,
        skipped_any: &mut bool,
    ) -> bool {
        while let Some(i) = self.next_candidate(s, g, now, poll, facts) {
            let slot = Slot { stage: s as u16, group: g as u16, index: i };
            let member_id = self.member(slot).id;
            match examine(facts, self.id, member_id, now) {
                Verdict::Skip(note) => {
                    self.mark_member_skipped(slot, note, now);
                    *skipped_any = true;
                }
                Verdict::AtTarget(note) => {
                    self.mark_member_skipped(slot, note, now);
                    self.stages[s].groups[g].members[i as usize].at_target = true;
                    *skipped_any = true;
                }
                Verdict::Pending { kind, note, recheck_at } => {
                    self.mark_member_pending(slot, kind, note, recheck_at, now, true)
                }
                Verdict::Start => {
                    // §6, §11 "Trips": a threshold trips at once, and after that no new member
                    // starts. An attempt that fails as it starts ends in this instant, so where its
                    // failure would trip a threshold nothing more starts before it is counted.
                    if self.next_failure_trips(s, g) && facts.fails_at_once(self.id, member_id, now) {
                        self.failing_at_once = true;
                    }
                    let attempt = self.mark_member_running(slot, now);
                    self.prefetch_next(slot, facts);
                    out.push(Command::Start { slot, member: member_id, attempt });
                    return true;
                }
            }
        }
        false
    }

    /// After a start, the group's next members in name order, which start next unless windows
    /// order them: the record of the one after the next is fetched into the caches, and what the
    /// world reads of the next one (its record was fetched at the start before). In a fleet too
    /// large for the caches these reads missed them at every start; now they are under way while
    /// the group's running members complete.
    #[inline(always)]
    fn prefetch_next<F: Facts + ?Sized>(&self, slot: Slot, facts: &F) {
        let members = &self.stages[slot.stage as usize].groups[slot.group as usize].members;
        let i = slot.index as usize;
        if let Some(after) = members.get(i + 2) {
            cache::prefetch(after);
        }
        if let Some(next) = members.get(i + 1) {
            facts.prefetch(self.id, next.id);
        }
    }

    /// The first eligible candidate by (window class, name) (SEMANTICS §5.4). `NotStarted` members are
    /// always eligible; `Pending` ones only at a poll, once per instant (§11 "Polls").
    fn next_candidate<F: Facts + ?Sized>(
        &mut self,
        s: usize,
        g: usize,
        now: Time,
        poll: bool,
        facts: &mut F,
    ) -> Option<u32> {
        let run = self.id;
        let group = &mut self.stages[s].groups[g];
        if group.has_windows {
            return next_by_window_class(run, group, now, poll, facts);
        }
        while group.cursor < group.members.len() && group.members[group.cursor].state != UpdateState::NotStarted {
            group.cursor += 1;
        }
        let not_started = (group.cursor < group.members.len()).then_some(group.cursor as u32);
        let pending = if poll { next_pending_at_poll(group, now) } else { None };
        match (not_started, pending) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ----- state setters: journal, times and statistics ----------------------------------------

    /// Returns the member's attempts in the run, this one included.
    #[inline(always)]
    #[must_use]
    fn mark_member_running(&mut self, slot: Slot, now: Time) -> u32 {
        let (s, g) = (slot.stage as usize, slot.group as usize);
        if self.stages[s].groups[g].members[slot.index as usize].pending_kind.is_some() {
            self.leave_pending(slot, now);
        }
        // One lookup of the stage, group and member for the whole start.
        let stage = &mut self.stages[s];
        let group = &mut stage.groups[g];
        let journal = JournalAt { list: &mut self.journal, record: self.record, epoch: self.epoch };
        let member = change_member_state(journal, group, slot, UpdateState::Running, Note::default());
        member.start = now;
        member.end = NO_TIME;
        member.attempts += 1;
        let attempt = member.attempts;
        group.running += 1;
        group.peak_running = group.peak_running.max(group.running);
        stage.running += 1;
        stage.peak_running = stage.peak_running.max(stage.running);
        self.running += 1;
        self.stats.peak_running = self.stats.peak_running.max(self.running);
        invariant!(
            self.stages[s].groups[g].running <= self.stages[s].groups[g].max_concurrency,
            "group limit exceeded"
        );
        invariant!(self.stages[s].running <= self.stages[s].max_concurrency, "stage limit exceeded");
        attempt
    }

    fn mark_member_skipped(&mut self, slot: Slot, note: Note, now: Time) {
        self.leave_pending(slot, now);
        self.set_member_state(slot, UpdateState::Skipped, note);
        self.stages[slot.stage as usize].groups[slot.group as usize].terminal += 1;
    }

    /// `examined`: the scheduler examined it at `now` (so a poll at `now` does not examine it again).
    fn mark_member_pending(
        &mut self,
        slot: Slot,
        kind: PendingKind,
        note: Note,
        recheck_at: Option<Time>,
        now: Time,
        examined: bool,
    ) {
        let (s, g) = (slot.stage as usize, slot.group as usize);
        let previous = self.member(slot).pending_kind;
        if previous.is_some() && previous != Some(kind) {
            self.leave_pending(slot, now);
        }
        self.set_member_state(slot, UpdateState::Pending, note);
        let group = &mut self.stages[s].groups[g];
        let member = &mut group.members[slot.index as usize];
        let id = member.id;
        let fresh = member.pending_kind != Some(kind);
        member.pending_kind = Some(kind);
        let waiting =
            group.pending.entry(slot.index).or_insert(Waiting { since: now, recheck_at, last_examined: None });
        if fresh {
            waiting.since = now;
        }
        waiting.recheck_at = recheck_at;
        if examined {
            waiting.last_examined = Some(now);
        }
        self.pending_by_member.insert(id, slot);
        if group.has_windows {
            group.ranking.on_pending(slot.index, recheck_at);
        }
        if let Some(t) = recheck_at {
            self.min_recheck = Some(self.min_recheck.map_or(t, |m| m.min(t)));
        }
    }

    /// Ends a `Pending` spell: its time goes to the statistics of its reason.
    fn leave_pending(&mut self, slot: Slot, now: Time) {
        let (s, g) = (slot.stage as usize, slot.group as usize);
        let group = &mut self.stages[s].groups[g];
        let member = &mut group.members[slot.index as usize];
        if let Some(kind) = member.pending_kind.take() {
            let id = member.id;
            let waiting = group.pending.remove(&slot.index).expect("a Pending member waits in its group");
            let seconds = (now - waiting.since).as_seconds();
            match kind {
                PendingKind::Availability => self.stats.pending_availability_seconds += seconds,
                PendingKind::Window => self.stats.pending_window_seconds += seconds,
            }
            self.pending_by_member.remove(&id);
        }
    }

    /// Another run changed `member` (its versions moved): if it is `Pending` here, its answer may have
    /// changed, so it is examined again at the next poll (SEMANTICS §11 "Polls"). Returns whether
    /// the run needs a poll for it.
    pub fn member_changed(&mut self, member: MemberId, now: Time) -> bool {
        let Some(&slot) = self.pending_by_member.get(&member) else { return false };
        let (s, g) = (slot.stage as usize, slot.group as usize);
        let waiting =
            self.stages[s].groups[g].pending.get_mut(&slot.index).expect("a Pending member waits in its group");
        if waiting.recheck_at.is_some_and(|t| t <= now) {
            return false;
        }
        waiting.recheck_at = Some(now);
        self.touch_all();
        let group = &mut self.stages[s].groups[g];
        if group.has_windows {
            group.ranking.on_pending(slot.index, Some(now));
        }
        self.min_recheck = Some(self.min_recheck.map_or(now, |t| t.min(now)));
        true
    }

    fn set_member_state(&mut self, slot: Slot, state: UpdateState, note: Note) {
        let group = &mut self.stages[slot.stage as usize].groups[slot.group as usize];
        let journal = JournalAt { list: &mut self.journal, record: self.record, epoch: self.epoch };
        change_member_state(journal, group, slot, state, note);
    }

    fn set_gate_state(&mut self, r: GateRef, state: UpdateState, note: Note, now: Time) {
        let epoch = self.epoch;
        let record = self.record;
        let gate = self.gate_mut(r);
        let old = gate.state;
        if old == state {
            return;
        }
        let first_touch = record && gate.mark != epoch;
        gate.mark = epoch;
        if state == UpdateState::Pending && gate.gate_id.is_none() {
            gate.start_time = Some(now);
        }
        if state.is_finished() {
            gate.completed_time = Some(now);
        }
        gate.state = state;
        gate.note = note;
        if first_touch {
            self.journal.push((Entity::Gate(r), old));
        }
    }

    fn set_wait_state(&mut self, s: usize, state: UpdateState, note: Note, now: Time) {
        let epoch = self.epoch;
        let record = self.record;
        let Some(wait) = self.stages[s].wait.as_mut() else {
            return;
        };
        let old = wait.state;
        if old == state {
            return;
        }
        let first_touch = record && wait.mark != epoch;
        wait.mark = epoch;
        match state {
            UpdateState::Running => wait.start_time = Some(now),
            s if s.is_finished() => wait.completed_time = Some(now),
            _ => {}
        }
        wait.state = state;
        wait.note = note;
        if first_touch {
            self.journal.push((Entity::Wait(s as u16), old));
        }
    }

    #[inline(always)]
    fn set_group_state(&mut self, s: usize, g: usize, state: UpdateState, now: Time) {
        let epoch = self.epoch;
        let record = self.record;
        let group = &mut self.stages[s].groups[g];
        let old = group.state;
        if old == state {
            return;
        }
        let first_touch = record && group.mark != epoch;
        group.mark = epoch;
        if state.is_finished() {
            group.completed_time = Some(now);
        } else if old.is_finished() {
            group.completed_time = None;
        }
        group.state = state;
        if first_touch {
            self.journal.push((Entity::Group(s as u16, g as u16), old));
        }
    }

    fn set_stage_state(&mut self, s: usize, state: UpdateState, now: Time) {
        let epoch = self.epoch;
        let record = self.record;
        let stage = &mut self.stages[s];
        let old = stage.state;
        if old == state {
            return;
        }
        let first_touch = record && stage.mark != epoch;
        stage.mark = epoch;
        if state.is_finished() {
            stage.completed_time = Some(now);
        } else if old.is_finished() {
            stage.completed_time = None;
        }
        stage.state = state;
        if first_touch {
            self.journal.push((Entity::Stage(s as u16), old));
        }
    }

    fn set_run_state(&mut self, state: UpdateState, now: Time) {
        let old = self.state;
        if old == state {
            return;
        }
        if self.record && self.run_mark != self.epoch {
            self.run_mark = self.epoch;
            self.journal.push((Entity::Run, old));
        }
        if state.is_finished() {
            self.completed_time = Some(now);
        } else if old.is_finished() {
            self.completed_time = None;
        }
        self.ended_at =
            matches!(state, UpdateState::Completed | UpdateState::Skipped | UpdateState::Failed | UpdateState::Stopped)
                .then_some(now);
        self.state = state;
    }

    // ----- derived display states (SEMANTICS §5.6, §11 "Running vs Pending", "Trips", "Halts") --

    /// Recomputes the display states of the current stage, its groups and the run.
    pub fn settle(&mut self, now: Time) {
        self.unsettled = false;
        if let Some(s) = (self.current < self.stages.len()).then_some(self.current) {
            for g in self.dirty_groups(s) {
                let state = self.group_display(s, g as usize);
                self.set_group_state(s, g as usize, state, now);
            }
            let state = self.stage_display(s);
            self.set_stage_state(s, state, now);
        }
        // §11 "Trips", "Halts", "Restart": a failed stage halts its run until a `start`, whatever
        // becomes of the stage meanwhile (a skip); under `failureScope: run` the trip itself does.
        if !self.failure_halt && self.current_stage_failed() {
            self.failure_halt = true;
        }
        let state = self.run_display();
        if state == UpdateState::Failed && self.note.is_empty() {
            self.note = self.failure_note();
            self.failure_noted = true;
        } else if self.failure_noted && matches!(state, UpdateState::Completed | UpdateState::Skipped) {
            // The failure is behind it (its failed stage was skipped, in this instant or later).
            self.note = Note::default();
            self.failure_noted = false;
        }
        self.set_run_state(state, now);
    }

    fn halted(&self) -> bool {
        self.user_stop || self.failure_halt
    }

    #[inline(always)]
    fn group_display(&self, s: usize, g: usize) -> UpdateState {
        let stage = &self.stages[s];
        let group = &stage.groups[g];
        match group.phase {
            Phase::NotReached => UpdateState::NotStarted,
            Phase::Done => group.done_state,
            _ if group.tripped => UpdateState::Failed,
            _ if self.halted() || stage.tripped => stopping_or_stopped(group.running),
            Phase::BeforeGates => UpdateState::Pending,
            _ => running_or_pending(group.running),
        }
    }

    /// SEMANTICS §6 and §11 "Trips": a stage is `Failed` when its own threshold tripped; under
    /// `failureScope: run` also when one of its groups tripped (the docs' cascade); under `segment`
    /// once the untripped groups are done and nothing of the stage runs.
    #[inline(always)]
    fn stage_failed(&self, s: usize) -> bool {
        let stage = &self.stages[s];
        debug_assert_eq!(stage.groups_tripped as usize, stage.groups.iter().filter(|g| g.tripped).count());
        // Asked several times for every member that starts or ends: the common answer (nothing of
        // the stage tripped) first.
        if !stage.tripped && stage.groups_tripped == 0 {
            return false;
        }
        if stage.phase == Phase::Done || stage.phase == Phase::NotReached {
            return false;
        }
        if stage.tripped {
            return true;
        }
        // A group tripped and the stage did not.
        match self.settings.failure_scope {
            FailureScope::Run => true,
            FailureScope::Segment => {
                stage.running == 0 && stage.groups.iter().all(|g| g.tripped || g.phase == Phase::Done)
            }
        }
    }

    fn current_stage_failed(&self) -> bool {
        self.current < self.stages.len() && self.stage_failed(self.current)
    }

    #[inline(always)]
    fn stage_display(&self, s: usize) -> UpdateState {
        let stage = &self.stages[s];
        match stage.phase {
            Phase::NotReached => UpdateState::NotStarted,
            Phase::Done => stage.done_state,
            _ if self.stage_failed(s) => UpdateState::Failed,
            _ if self.halted() => stopping_or_stopped(stage.running),
            Phase::Active => running_or_pending(stage.running),
            Phase::BeforeGates | Phase::After => UpdateState::Pending,
        }
    }

    fn run_display(&self) -> UpdateState {
        if !self.started {
            return UpdateState::NotStarted;
        }
        if self.running == 0 && self.stages.iter().all(|s| s.phase == Phase::Done) {
            // "Completion wins" (§11 "Halts").
            return if self.stages.iter().all(|s| s.done_state == UpdateState::Skipped) {
                UpdateState::Skipped
            } else {
                UpdateState::Completed
            };
        }
        if self.failure_halt || self.current_stage_failed() {
            return if self.running > 0 { UpdateState::Stopping } else { UpdateState::Failed };
        }
        if self.user_stop {
            return stopping_or_stopped(self.running);
        }
        running_or_pending(self.running)
    }

    fn failure_note(&self) -> Note {
        match self.stages.iter().find(|s| s.state == UpdateState::Failed || s.tripped) {
            Some(stage) => Note::message(format!(
                "stage \"{}\" failed: failureCount {} (run total {})",
                stage.name, stage.failure_count, self.failure_count
            )),
            None => Note::message(format!("failureCount {}", self.failure_count)),
        }
    }

    // ----- timeline -----------------------------------------------------------------------------

    /// The state changes of the instant that just ended, in tree order (SEMANTICS §11 "Timeline
    /// rows": a state held for zero time is not a row).
    #[inline]
    pub fn flush(&mut self, out: &mut Vec<Transition>) {
        invariant!(!self.unsettled, "flush reads settled display states");
        if self.journal.is_empty() {
            self.epoch += 1;
            return;
        }
        let start = out.len();
        // The journal's buffer is kept for the next instant (one allocation per run, not per instant).
        let mut journal = std::mem::take(&mut self.journal);
        for &(entity, from) in &journal {
            let (to, note) = self.entity_state(entity);
            if to != from {
                let pending = match entity {
                    Entity::Member(slot) if to == UpdateState::Pending => self.member(slot).pending_kind,
                    _ => None,
                };
                out.push(Transition { entity, from, to, note, pending });
            }
        }
        journal.clear();
        self.journal = journal;
        out[start..].sort_by_key(|t| t.entity.order_key());
        self.epoch += 1;
    }

    pub fn entity_state(&self, entity: Entity) -> (UpdateState, Note) {
        match entity {
            Entity::Run => (self.state, self.note.clone()),
            Entity::Stage(s) => {
                let stage = &self.stages[s as usize];
                (
                    stage.state,
                    if stage.state == UpdateState::Failed || stage.state == UpdateState::Skipped {
                        stage.note.clone()
                    } else {
                        Note::default()
                    },
                )
            }
            Entity::Group(s, g) => {
                let group = &self.stages[s as usize].groups[g as usize];
                (
                    group.state,
                    if group.state == UpdateState::Failed || group.state == UpdateState::Skipped {
                        group.note.clone()
                    } else {
                        Note::default()
                    },
                )
            }
            Entity::Member(slot) => {
                let member = self.member(slot);
                (member.state, member.note.clone())
            }
            Entity::Gate(r) => {
                let gate = self.gate(r);
                (gate.state, gate.note.clone())
            }
            Entity::Wait(s) => {
                let wait = self.stages[s as usize].wait.as_ref().expect("journaled waits exist");
                (wait.state, wait.note.clone())
            }
        }
    }

    /// Closes open waiting spells at the end of the simulation so statistics cover them.
    pub fn finalize(&mut self, end: Time) {
        invariant!(!self.unsettled, "a run is settled when its simulation ends");
        // A member waiting in a run that has ended (Failed, Stopped, Completed) waits for nothing.
        let member_end = self.ended_at.map_or(end, |t| t.min(end));
        for stage in &self.stages {
            for group in &stage.groups {
                for (&i, waiting) in &group.pending {
                    if let Some(kind) = group.members[i as usize].pending_kind {
                        let seconds = (member_end - waiting.since).as_seconds().max(0);
                        match kind {
                            PendingKind::Availability => self.stats.pending_availability_seconds += seconds,
                            PendingKind::Window => self.stats.pending_window_seconds += seconds,
                        }
                    }
                }
            }
        }
        let open_gates: i64 = self
            .gate_refs()
            .into_iter()
            .map(|r| self.gate(r))
            .filter(|g| g.state == UpdateState::Pending)
            .map(|g| (end - g.start_time.unwrap_or(end)).as_seconds())
            .sum();
        self.stats.gate_pending_seconds += open_gates;
        for stage in &self.stages {
            if let Some(w) = &stage.wait
                && w.state == UpdateState::Running
            {
                self.stats.wait_seconds += (end - w.start_time.unwrap_or(end)).as_seconds();
            }
        }
    }
}

/// Where a state change is journaled: the run's journal, whether it records, its epoch.
struct JournalAt<'r> {
    list: &'r mut Vec<(Entity, UpdateState)>,
    record: bool,
    epoch: u64,
}

/// The one place a member's state changes: its first change of an instant is journaled (the
/// timeline is the difference of instants), a group ranked by window hears of it, and the note
/// goes with the state. Returns the member.
#[inline(always)]
fn change_member_state<'g>(
    journal: JournalAt,
    group: &'g mut GroupRt,
    slot: Slot,
    state: UpdateState,
    note: Note,
) -> &'g mut MemberRt {
    let member = &mut group.members[slot.index as usize];
    if member.state != state && journal.record && member.mark != journal.epoch as u32 {
        member.mark = journal.epoch as u32;
        journal.list.push((Entity::Member(slot), member.state));
    }
    if group.has_windows {
        group.ranking.on_state_change(slot.index, member.state, state);
    }
    member.state = state;
    // Most changes have no note and replace none: nothing to drop or copy.
    if !(note.is_empty() && member.note.is_empty()) {
        member.note = note;
    }
    member
}

fn running_or_pending(running: u32) -> UpdateState {
    if running > 0 { UpdateState::Running } else { UpdateState::Pending }
}

fn stopping_or_stopped(running: u32) -> UpdateState {
    if running > 0 { UpdateState::Stopping } else { UpdateState::Stopped }
}

impl MemberRt {
    /// Start and end of the latest attempt (SEMANTICS §11 "Status times").
    pub fn start_time(&self) -> Option<Time> {
        (self.start != NO_TIME).then_some(self.start)
    }

    pub fn end_time(&self) -> Option<Time> {
        (self.end != NO_TIME).then_some(self.end)
    }

    /// A fresh `NotStarted` member.
    pub(super) fn new(id: MemberId) -> MemberRt {
        MemberRt {
            id,
            state: UpdateState::NotStarted,
            pending_kind: None,
            at_target: false,
            attempts: 0,
            mark: 0,
            start: NO_TIME,
            end: NO_TIME,
            note: Note::default(),
        }
    }
}

impl GroupRt {
    /// Whether the group takes turns at starting members: active, not tripped and below its
    /// `maxConcurrency` (SEMANTICS §5.3).
    #[inline(always)]
    fn takes_turns(&self) -> bool {
        self.phase == Phase::Active && !self.tripped && self.running < self.max_concurrency
    }

    /// When member `index`'s current `Pending` spell began (`None` unless it is `Pending`): the
    /// `startTime` the service shows for a `Pending` member.
    pub fn pending_since(&self, index: usize) -> Option<Time> {
        let member = &self.members[index];
        let waiting = self.pending.get(&(index as u32))?;
        member.pending_kind.filter(|_| member.state == UpdateState::Pending).map(|_| waiting.since)
    }
}

/// The next `Pending` member due at this poll instant, in name order.
fn next_pending_at_poll(group: &mut GroupRt, now: Time) -> Option<u32> {
    let from = match group.pending_scan {
        Some((t, next)) if t == now => next,
        _ => 0,
    };
    let found = group.pending.range(from..).find(|(_, w)| w.due_at_poll(now)).map(|(&i, _)| i);
    group.pending_scan = Some((now, found.map_or(u32::MAX, |i| i + 1)));
    found
}

/// Groups with maintenance windows: the first eligible candidate by (class, name) (SEMANTICS §5.4),
/// from the group's [`Ranking`].
fn next_by_window_class<F: Facts + ?Sized>(
    run: RunId,
    group: &mut GroupRt,
    now: Time,
    poll: bool,
    facts: &mut F,
) -> Option<u32> {
    group.ranking.next(run, &group.members, &group.pending, now, poll, facts)
}

fn gate_rt(run_key: u64, r: GateRef, config: GateConfig) -> GateRt {
    GateRt {
        config,
        state: UpdateState::NotStarted,
        gate_id: Some(gate_guid(run_key, r)),
        start_time: None,
        completed_time: None,
        due: None,
        note: Note::default(),
        approve_at_open: false,
        mark: 0,
    }
}

/// A stable GUID for a gate, derived from the run name and the gate's position.
fn gate_guid(run_key: u64, r: GateRef) -> String {
    let position = (u64::from(r.stage) << 40)
        | (u64::from(r.group.map_or(0xFFFF, |g| g)) << 24)
        | ((r.timing as u64) << 16)
        | u64::from(r.index);
    let hi = mix64(run_key ^ mix64(position));
    let lo = mix64(hi ^ 0x6A09_E667_F3BC_C908);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

fn build_stage(run: RunId, run_key: u64, s: u16, plan: &StagePlan, facts: &mut dyn Facts) -> StageRt {
    let gates = |list: &[GateConfig], group: Option<u16>, timing: Timing| -> Vec<GateRt> {
        list.iter()
            .cloned()
            .enumerate()
            .map(|(i, config)| gate_rt(run_key, GateRef { stage: s, group, timing, index: i as u16 }, config))
            .collect()
    };
    let groups =
        plan.groups.iter().enumerate().map(|(g, group)| build_group(run, g as u16, group, facts, &gates)).collect();
    StageRt {
        name: plan.name.clone(),
        max_concurrency: plan.max_concurrency,
        max_allowed_failures: plan.max_allowed_failures,
        failure_count: 0,
        state: UpdateState::NotStarted,
        start_time: None,
        completed_time: None,
        note: Note::default(),
        groups,
        before_gates: gates(&plan.before_gates, None, Timing::Before),
        after_gates: gates(&plan.after_gates, None, Timing::After),
        wait: (plan.after_stage_wait > Duration::ZERO).then(|| WaitRt {
            duration: plan.after_stage_wait,
            state: UpdateState::NotStarted,
            start_time: None,
            completed_time: None,
            note: Note::default(),
            mark: 0,
        }),
        peak_running: 0,
        running: 0,
        phase: Phase::NotReached,
        done_state: UpdateState::NotStarted,
        tripped: false,
        groups_tripped: 0,
        cap_binds: plan.groups.iter().map(|g| u64::from(g.max_concurrency.min(g.members.len() as u32))).sum::<u64>()
            > u64::from(plan.max_concurrency),
        user_skipped: false,
        mark: 0,
    }
}

/// Makes the runtime gates of one list: (configs, group, timing) → gates.
type GateBuilder<'a> = dyn Fn(&[GateConfig], Option<u16>, Timing) -> Vec<GateRt> + 'a;

fn build_group(run: RunId, g: u16, plan: &GroupPlan, facts: &mut dyn Facts, gates: &GateBuilder) -> GroupRt {
    let has_windows = plan.members.iter().any(|&m| facts.has_window(run, m));
    let member_count = plan.members.len();
    let members = plan.members.iter().map(|&id| MemberRt::new(id)).collect();
    GroupRt {
        name: plan.name.clone(),
        max_concurrency: plan.max_concurrency,
        max_allowed_failures: plan.max_allowed_failures,
        failure_count: 0,
        state: UpdateState::NotStarted,
        start_time: None,
        completed_time: None,
        note: Note::default(),
        members,
        before_gates: gates(&plan.before_gates, Some(g), Timing::Before),
        after_gates: gates(&plan.after_gates, Some(g), Timing::After),
        peak_running: 0,
        running: 0,
        phase: Phase::NotReached,
        done_state: UpdateState::NotStarted,
        tripped: false,
        user_skipped: false,
        terminal: 0,
        has_windows,
        cursor: 0,
        pending: BTreeMap::new(),
        pending_scan: None,
        ranking: if has_windows { Ranking::new(member_count) } else { Ranking::default() },
        mark: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replication sets every member back to the run's start with `clone_from`, which copies a
    /// note only when either side has one: it must leave what `clone` would, whatever was there.
    #[test]
    fn a_member_set_back_from_another_is_its_clone() {
        let fresh = MemberRt::new(MemberId(3));
        let mut failed = MemberRt::new(MemberId(7));
        (failed.state, failed.attempts, failed.mark, failed.start, failed.end) =
            (UpdateState::Failed, 2, 9, Time(10), Time(20));
        failed.note = Note::error("UpgradeFailed", "the upgrade failed");
        let mut pending = MemberRt::new(MemberId(8));
        (pending.state, pending.pending_kind, pending.at_target) =
            (UpdateState::Pending, Some(PendingKind::Window), true);
        pending.note = Note::message("waiting for its maintenance window");
        let members = [fresh, failed, pending];
        for source in &members {
            for target in &members {
                let mut set_back = target.clone();
                set_back.clone_from(source);
                assert_eq!(
                    format!("{set_back:?}"),
                    format!("{:?}", source.clone()),
                    "{target:?} set back from {source:?}"
                );
                assert_eq!(format!("{:?}", source.clone()), format!("{source:?}"));
            }
        }
    }
}
