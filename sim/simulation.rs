//! One replication: the event loop that joins the engine, the world and the orchestrator.
//!
//! Events at one instant are handled in the tie order of SEMANTICS §11 (member completions, run starts
//! and user actions in file order, timers), then every touched run schedules until nothing changes;
//! zero-delay consequences (a stopped cluster failing at once, a policy approving at once) are handled
//! in further rounds of the same instant. At the end of the instant each touched run reports its state
//! changes (the timeline) and asks for its next maintenance-window poll.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::{EventQueue, Phase, SeedTree, Time};
use crate::fleet::{MemberId, NodeImageVersion};
use crate::orchestrator::{Command, GateRef, Note, Outcome, RunId, Slot, Timer, Transition, UpdateRun};
use crate::scenario::{ActionKind, Scenario};
use crate::world::{UpgradeRecord, World};

/// Options of one replication.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Keep the state-change timeline (reports need it; metric-only sweeps do not).
    pub record_timeline: bool,
    /// Replication number (0 for `fleetsim run`); replication r of every sweep point shares streams.
    pub replication: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { record_timeline: true, replication: 0 }
    }
}

/// One timeline row: a state change of some run's entity at `time`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineRow {
    pub time: Time,
    pub run: RunId,
    pub transition: Transition,
}

/// Everything a replication produced.
#[derive(Clone, Debug)]
pub struct SimResult {
    pub runs: Vec<UpdateRun>,
    /// `Consistent` selections per run (SEMANTICS §8).
    pub selected_images: Vec<Option<BTreeMap<String, NodeImageVersion>>>,
    /// The latest attempt of each member in each run.
    pub records: BTreeMap<(RunId, Slot), UpgradeRecord>,
    /// Members that received a release marked bad, per run (blast radius).
    pub bad_release_members: Vec<BTreeSet<MemberId>>,
    pub timeline: Vec<TimelineRow>,
    /// Actions that did nothing and why, with their time.
    pub notes: Vec<(Time, String)>,
    /// When the simulation stopped: the horizon, or the last instant with events.
    pub end: Time,
    /// Whether the horizon cut the simulation short.
    pub horizon_reached: bool,
    pub events_processed: u64,
}

#[derive(Clone, Debug)]
enum Event {
    MemberDone { run: RunId, slot: Slot, member: MemberId, outcome: Outcome },
    RunStart { run: RunId },
    Action { run: RunId, index: usize },
    Timer { run: RunId, timer: Timer },
    PolicyApproval { run: RunId, gate: GateRef },
    Poll { run: RunId },
}

impl Event {
    fn run(&self) -> RunId {
        match *self {
            Event::MemberDone { run, .. }
            | Event::RunStart { run }
            | Event::Action { run, .. }
            | Event::Timer { run, .. }
            | Event::PolicyApproval { run, .. }
            | Event::Poll { run } => run,
        }
    }
}

/// Rounds of one instant are bounded: each round needs a new zero-delay event, and those come from
/// members failing at once or approvals, both bounded by the scenario's size.
const MAX_ROUNDS_PER_INSTANT: usize = 1_000_000;

/// Simulates a scenario once.
pub fn simulate(scenario: &Scenario, options: SimOptions) -> SimResult {
    let tree = SeedTree::new(scenario.seed, options.replication);
    // Rollout releases reach regions at times drawn per replication (borrowed for replication 0).
    let releases = scenario.releases.for_replication(tree);
    let mut world = World::new(&scenario.fleet, &releases, &scenario.models, scenario.settings.world, tree);
    let mut runs = Vec::with_capacity(scenario.runs.len());
    for (i, spec) in scenario.runs.iter().enumerate() {
        let id = world.add_run(&spec.name, spec.upgrade.clone(), spec.approval_policy.or(scenario.models.approvals));
        debug_assert_eq!(id as usize, i);
        runs.push(UpdateRun::new(
            id,
            &spec.name,
            spec.plan.clone(),
            scenario.settings.run,
            &mut world,
            options.record_timeline,
        ));
    }
    let mut sim = Sim {
        scenario,
        world,
        runs,
        queue: EventQueue::with_capacity(1024),
        records: BTreeMap::new(),
        bad_release_members: vec![BTreeSet::new(); scenario.runs.len()],
        timeline: Vec::new(),
        notes: Vec::new(),
        armed_polls: vec![None; scenario.runs.len()],
        commands: Vec::new(),
        transitions: Vec::new(),
        events_processed: 0,
    };
    for (i, spec) in scenario.runs.iter().enumerate() {
        let run = i as RunId;
        if let Some(at) = spec.start {
            sim.queue.push(at, Phase::StartsAndActions, Event::RunStart { run });
        }
        for (index, action) in spec.actions.iter().enumerate() {
            sim.queue.push(action.at, Phase::StartsAndActions, Event::Action { run, index });
        }
    }
    sim.run_loop()
}

struct Sim<'a> {
    scenario: &'a Scenario,
    world: World<'a>,
    runs: Vec<UpdateRun>,
    queue: EventQueue<Event>,
    records: BTreeMap<(RunId, Slot), UpgradeRecord>,
    bad_release_members: Vec<BTreeSet<MemberId>>,
    timeline: Vec<TimelineRow>,
    notes: Vec<(Time, String)>,
    armed_polls: Vec<Option<Time>>,
    commands: Vec<Command>,
    transitions: Vec<Transition>,
    events_processed: u64,
}

impl Sim<'_> {
    fn run_loop(mut self) -> SimResult {
        let horizon = self.scenario.end();
        let mut end = self.scenario.start;
        let mut horizon_reached = false;
        let mut touched = vec![false; self.runs.len()];
        while let Some(key) = self.queue.peek_key() {
            if key.time > horizon {
                horizon_reached = true;
                break;
            }
            let now = key.time;
            end = now;
            let mut rounds = 0;
            while self.queue.peek_key().is_some_and(|k| k.time == now) {
                rounds += 1;
                assert!(rounds < MAX_ROUNDS_PER_INSTANT, "instant {now} does not settle");
                while let Some((_, event)) = self.queue.pop_at(now) {
                    touched[event.run() as usize] = true;
                    self.handle(event, now);
                    self.events_processed += 1;
                }
                for (run, _) in touched.clone().iter().enumerate().filter(|(_, t)| **t) {
                    self.schedule(run as RunId, now);
                }
            }
            for (run, was_touched) in touched.iter_mut().enumerate() {
                if std::mem::take(was_touched) {
                    self.end_instant(run as RunId, now);
                }
            }
        }
        if horizon_reached || self.queue.is_empty() && self.runs.iter().any(|r| r.running > 0) {
            end = horizon;
        }
        for run in &mut self.runs {
            run.finalize(end);
        }
        let selected_images =
            (0..self.runs.len()).map(|r| self.world.run(r as RunId).selected_images.clone()).collect();
        SimResult {
            runs: self.runs,
            selected_images,
            records: self.records,
            bad_release_members: self.bad_release_members,
            timeline: self.timeline,
            notes: self.notes,
            end,
            horizon_reached,
            events_processed: self.events_processed,
        }
    }

    fn handle(&mut self, event: Event, now: Time) {
        match event {
            Event::MemberDone { run, slot, member, outcome } => {
                let record = self.world.finish_upgrade(run, member, &outcome, now);
                self.records.insert((run, slot), record);
                self.runs[run as usize].member_finished(slot, outcome, now);
            }
            Event::RunStart { run } => self.start_run(run, now, "at its start time"),
            Event::Action { run, index } => self.action(run, index, now),
            Event::Timer { run, timer } => self.runs[run as usize].timer_fired(timer, now),
            Event::PolicyApproval { run, gate } => {
                self.runs[run as usize].approve(gate, now, Note::message("approved by the approval policy"));
            }
            Event::Poll { run } => {
                if self.armed_polls[run as usize] == Some(now) {
                    self.armed_polls[run as usize] = None;
                }
            }
        }
    }

    fn start_run(&mut self, run: RunId, now: Time, why: &str) {
        let first = !self.runs[run as usize].is_started();
        match self.runs[run as usize].start(now) {
            Ok(()) if first => {
                let members: Vec<MemberId> = self.runs[run as usize]
                    .stages
                    .iter()
                    .flat_map(|s| s.groups.iter().flat_map(|g| g.members.iter().map(|m| m.id)))
                    .collect();
                self.world.run_started(run, &members, now);
            }
            Ok(()) => {}
            Err(e) => self.notes.push((now, format!("start {why} ignored: {e}"))),
        }
    }

    fn action(&mut self, run: RunId, index: usize, now: Time) {
        let action = &self.scenario.runs[run as usize].actions[index];
        let name = &self.scenario.runs[run as usize].name;
        match &action.kind {
            ActionKind::Start => self.start_run(run, now, "action"),
            ActionKind::Stop => {
                if let Err(e) = self.runs[run as usize].stop(now) {
                    self.notes.push((now, format!("stop action ignored: {e}")));
                }
            }
            ActionKind::Skip(targets) => {
                for target in targets {
                    if let Err(e) = self.runs[run as usize].skip(*target, now) {
                        self.notes.push((now, format!("skip action on run \"{name}\" ignored for one target: {e}")));
                    }
                }
            }
            ActionKind::Approve { gates, label } => {
                let note = Note::message(format!("approved by action at {now}"));
                let approved = gates.iter().filter(|g| self.runs[run as usize].approve(**g, now, note.clone())).count();
                if approved == 0 {
                    self.notes.push((now, format!("approve action on run \"{name}\" ({label}) found no Pending gate; gates cannot be approved before they are reached")));
                }
            }
        }
    }

    fn schedule(&mut self, run: RunId, now: Time) {
        let mut commands = std::mem::take(&mut self.commands);
        self.runs[run as usize].advance(now, &mut self.world, &mut commands);
        for command in commands.drain(..) {
            match command {
                Command::Start { slot, member } => {
                    let attempt = self.world.start_upgrade(run, member, now);
                    if self.world_received_bad(run, member) {
                        self.bad_release_members[run as usize].insert(member);
                    }
                    self.queue.push(
                        now + attempt.duration,
                        Phase::MemberCompletion,
                        Event::MemberDone { run, slot, member, outcome: attempt.outcome },
                    );
                }
                Command::ArmTimer { at, timer } => {
                    self.queue.push(at, Phase::Timers, Event::Timer { run, timer });
                }
                Command::GateOpened { gate, approval } => {
                    if approval && let Some(delay) = self.world.approval_delay(run, gate) {
                        self.queue.push(now + delay, Phase::Timers, Event::PolicyApproval { run, gate });
                    }
                }
            }
        }
        self.commands = commands;
    }

    fn world_received_bad(&self, run: RunId, member: MemberId) -> bool {
        self.world.in_flight_received_bad(run, member)
    }

    fn end_instant(&mut self, run: RunId, now: Time) {
        let r = &mut self.runs[run as usize];
        r.flush(&mut self.transitions);
        self.timeline.extend(self.transitions.drain(..).map(|transition| TimelineRow { time: now, run, transition }));
        if let Some(at) = r.next_poll_after(now) {
            let armed = self.armed_polls[run as usize];
            if armed.is_none_or(|a| a <= now || a > at) {
                self.armed_polls[run as usize] = Some(at);
                self.queue.push(at, Phase::Polls, Event::Poll { run });
            }
        }
    }
}
