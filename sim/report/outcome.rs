//! The figures that judge a strategy without rewarding it for failing fast, per run of one
//! replication: how long until a share of the run's members is at the target (never the time of a
//! failure or of the horizon), whether the run halted without a bad release to stop, how far a bad
//! release got and how long the run took to notice it. `summary.json` and the sweep metrics read
//! them from here, so the two agree.

use crate::orchestrator::{UpdateRun, UpdateState};
use crate::simulation::SimResult;

use super::summary::hours;

/// The shares of [`RunOutcome::hours_to_upgraded`], in percent.
pub const UPGRADED_PERCENTS: [usize; 3] = [50, 90, 100];

/// One run's outcome in one replication.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunOutcome {
    /// Hours from the run's start until 50 / 90 / 100 % of its members were at the target; `None`
    /// when that never happened.
    pub hours_to_upgraded: [Option<f64>; 3],
    /// The run stopped or failed in a future where no release marked bad was at risk for any of
    /// its members: random failures tripped a budget. `None` when a bad release was at risk (a halt
    /// is then the strategy working) or the run never started.
    pub false_halt: Option<bool>,
    /// Members that received a release marked bad before the run halted.
    pub blast_radius: usize,
    /// The run's members a release marked bad was at risk for.
    pub at_risk: u32,
    /// `blast_radius / at_risk`; `None` when nothing was at risk.
    pub blast_radius_fraction: Option<f64>,
    /// Hours from the first failure a bad release caused to the halt; `None` when the run did not
    /// halt after one.
    pub detection_hours: Option<f64>,
}

/// The outcome of run `r` of a replication.
pub fn run_outcome(result: &SimResult, r: usize) -> RunOutcome {
    run_outcome_with(result, r, &EndTimes::of(&result.runs[r]))
}

/// [`run_outcome`] from the run's end times taken already ([`EndTimes::of`] of run `r`).
pub fn run_outcome_with(result: &SimResult, r: usize, ends: &EndTimes) -> RunOutcome {
    let run = &result.runs[r];
    let facts = result.run_facts.get(r).copied().unwrap_or_default();
    let blast_radius = result.bad_release_members[r].len();
    let started = run.start_time.is_some();
    let halted = matches!(run.state, UpdateState::Failed | UpdateState::Stopped | UpdateState::Stopping);
    let detection_hours = match (facts.first_bad_failure, facts.halted_at) {
        (Some(first), Some(halt)) if halt >= first => Some(hours((halt - first).as_seconds())),
        _ => None,
    };
    RunOutcome {
        hours_to_upgraded: UPGRADED_PERCENTS.map(|p| ends.hours_to_upgraded(run, p)),
        false_halt: (started && facts.at_risk == 0).then_some(halted),
        blast_radius,
        at_risk: facts.at_risk,
        blast_radius_fraction: (facts.at_risk > 0)
            .then(|| (blast_radius as f64 / f64::from(facts.at_risk) * 10_000.0).round() / 10_000.0),
        detection_hours,
    }
}

/// A run's members' end times, sorted once for every share asked of them: the hours until a share
/// of the members was at the target ([`RunOutcome::hours_to_upgraded`]) or done (the sweep's
/// `hours_to_*_pct_done`). Both read the `Completed` members' end times in order, so one sorted list
/// serves all six: a sweep's replication of 1,000 members sorted them four times, which cost a
/// quarter of what simulating the replication cost.
#[derive(Clone, Debug, PartialEq)]
pub struct EndTimes {
    /// The end times of the `Completed` members, in seconds, ascending.
    completed: Vec<i64>,
    /// Members `Skipped` because they were at the target already.
    skipped_at_target: usize,
    /// Members `Skipped` for any reason.
    skipped: usize,
    /// Every member the run's stages select.
    members: usize,
}

impl EndTimes {
    pub fn of(run: &UpdateRun) -> EndTimes {
        let groups = || run.stages.iter().flat_map(|s| s.groups.iter());
        // Room for every member at once, rather than growing as they are read.
        let completed = Vec::with_capacity(groups().map(|g| g.members.len()).sum());
        let mut ends = EndTimes { completed, skipped_at_target: 0, skipped: 0, members: 0 };
        for member in groups().flat_map(|g| g.members.iter()) {
            ends.members += 1;
            match member.state {
                UpdateState::Completed => ends.completed.extend(member.end_time().map(|t| t.0)),
                UpdateState::Skipped => {
                    ends.skipped += 1;
                    ends.skipped_at_target += usize::from(member.at_target);
                }
                _ => {}
            }
        }
        ends.completed.sort_unstable();
        ends
    }

    /// Hours from the run's start until `percent` % of its members (every member its stages select)
    /// were at the target: `Completed`, or `Skipped` because they were at the target already (counted
    /// from the start). Members skipped by a user or a rule, failed or never reached are not at the
    /// target, so a run that stops early never reaches 100 %. `None` when the share was never
    /// reached.
    pub fn hours_to_upgraded(&self, run: &UpdateRun, percent: usize) -> Option<f64> {
        let start = run.start_time?;
        if self.members == 0 {
            return None;
        }
        // In time order the members already at the target come first (at 0 s), then the completed
        // ones, whose times from the start keep the order of their end times.
        let needed = (self.members * percent).div_ceil(100).max(1);
        let seconds = match (needed - 1).checked_sub(self.skipped_at_target) {
            None => 0,
            Some(i) => (self.completed.get(i)? - start.0).max(0),
        };
        Some(hours(seconds))
    }

    /// Hours from the run's start until `percent` % of its members that needed an upgrade were
    /// done (`Completed`). Members `Skipped` (already at the target, or skipped by a user or a rule)
    /// need none and are left out of the total, so a run that completes every other member reaches
    /// 100 %. `None` when the run never started, nothing needed an upgrade or the share was never
    /// reached.
    pub fn hours_to_done(&self, run: &UpdateRun, percent: usize) -> Option<f64> {
        let start = run.start_time?;
        let counted = self.members - self.skipped;
        if counted == 0 {
            return None;
        }
        let needed = (counted * percent).div_ceil(100).max(1);
        self.completed.get(needed - 1).map(|end| hours(end - start.0))
    }
}
