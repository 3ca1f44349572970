//! A replication that takes a run up from its status instead of starting at the scenario's start
//! (`fleetsim forecast`): the run comes restored ([`UpdateRun::restore`]); members already upgrading
//! go on with the time they have spent ([`World::resume_upgrade`]), timers and open Approval gates are
//! armed as the restore asked, and the loop runs from the status's instant on.

use crate::engine::{Phase, SeedTree, Time};
use crate::fleet::MemberId;
use crate::orchestrator::{Command, RestoreProblem, RunId, RunPlan, RunSnapshot, UpdateRun};
use crate::scenario::Scenario;
use crate::world::World;

use super::{Event, Recycled, Sim, SimOptions, SimResult};

/// The run to take up and the instant of its status.
#[derive(Clone, Copy, Debug)]
pub struct Resume<'r> {
    /// The plan of the scenario's run 0, with the membership its status shows.
    pub plan: &'r RunPlan,
    /// Its status, aligned with `plan` (see [`UpdateRun::restore`]).
    pub snapshot: &'r RunSnapshot,
    pub now: Time,
}

/// What only a resumed replication tells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResumeFacts {
    /// Members upgrading for longer than any try of their duration model lasted
    /// ([`crate::world::Resumed::overdue`]): they finish at once.
    pub overdue: Vec<MemberId>,
}

const RUN: RunId = 0;

/// Simulates `scenario` once from `resume.now`, with its only run (run 0) in the restored state.
/// Actions of that run before `now` have happened already and are not repeated; auto-upgrade
/// profiles are not simulated (`scenario.profiles` should be empty). The run is restored in each
/// replication (an approval policy that approves at once is a draw of the replication); a status
/// the run cannot be in gives the restore's problems.
pub fn simulate_resumed(
    scenario: &Scenario,
    options: SimOptions,
    resume: Resume,
) -> Result<(SimResult, ResumeFacts), Vec<RestoreProblem>> {
    assert_eq!(scenario.runs.len(), 1, "a resumed simulation has exactly the restored run");
    let now = resume.now;
    let tree = SeedTree::new(scenario.seed, options.replication);
    let releases = scenario.releases.for_replication(tree);
    let mut world = World::new(&scenario.fleet, &releases, &scenario.models, scenario.settings.world, tree);
    let spec = &scenario.runs[0];
    let id = world.add_run(&spec.name, spec.upgrade.clone(), spec.approval_policy.or(scenario.models.approvals));
    debug_assert_eq!(id, RUN);
    let restored = UpdateRun::restore(
        RUN,
        &spec.name,
        resume.plan.clone(),
        scenario.settings.run,
        &mut world,
        options.record_timeline,
        resume.snapshot,
        now,
    )?;
    let run = restored.run;
    let started = run.is_started().then_some(run.start_time).flatten();
    let mut sim = Sim::new(
        scenario,
        &releases,
        world,
        vec![run],
        Vec::new(),
        Vec::new(),
        options.record_timeline,
        Recycled::default(),
    );
    let mut facts = ResumeFacts::default();
    if let Some(start) = started {
        sim.first_start(RUN, start);
    }
    for &(slot, member, started) in &restored.running {
        let resumed = sim.world.resume_upgrade(RUN, member, started, now);
        if resumed.overdue {
            facts.overdue.push(member);
        }
        if resumed.started.received_bad_release {
            sim.bad_release_members[0].insert(member);
        }
        let at = (started + resumed.started.duration).max(now);
        sim.note_slot(resumed.started.flight, slot);
        sim.queue.push(at, Phase::MemberCompletion, Event::MemberDone { run: RUN, flight: resumed.started.flight });
    }
    for command in &restored.commands {
        match *command {
            Command::ArmTimer { at, timer } => {
                sim.queue.push(at.max(now), Phase::Timers, Event::Timer { run: RUN, timer });
            }
            Command::GateOpened { gate, approval: true } => {
                let opened = sim.runs[0].gate(gate).start_time.unwrap_or(now);
                if let Some(delay) = sim.world.approval_delay_after(RUN, gate, opened, now) {
                    sim.queue.push((opened + delay).max(now), Phase::Timers, Event::PolicyApproval { run: RUN, gate });
                }
            }
            Command::GateOpened { approval: false, .. } | Command::Start { .. } => {}
        }
    }
    if started.is_none()
        && let Some(at) = spec.start
    {
        sim.queue.push(at.max(now), Phase::StartsAndActions, Event::RunStart { run: RUN });
    }
    for (index, action) in spec.actions.iter().enumerate().filter(|(_, a)| a.at >= now) {
        sim.queue.push(action.at, Phase::StartsAndActions, Event::Action { run: RUN, index: index as u32 });
    }
    // The run is examined at `now`, as after any event.
    sim.queue.push(now, Phase::Polls, Event::Poll { run: RUN });
    Ok((sim.run_loop().0, facts))
}
