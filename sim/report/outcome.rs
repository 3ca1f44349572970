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
        hours_to_upgraded: UPGRADED_PERCENTS.map(|p| hours_to_upgraded(run, p)),
        false_halt: (started && facts.at_risk == 0).then_some(halted),
        blast_radius,
        at_risk: facts.at_risk,
        blast_radius_fraction: (facts.at_risk > 0)
            .then(|| (blast_radius as f64 / f64::from(facts.at_risk) * 10_000.0).round() / 10_000.0),
        detection_hours,
    }
}

/// Hours from the run's start until `percent` % of its members (every member its stages select) were
/// at the target: `Completed`, or `Skipped` because they were at the target already (counted from the
/// start). Members skipped by a user or a rule, failed or never reached are not at the target, so a
/// run that stops early never reaches 100 %. `None` when the share was never reached.
pub fn hours_to_upgraded(run: &UpdateRun, percent: usize) -> Option<f64> {
    let start = run.start_time?;
    let members = run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter());
    let mut total = 0usize;
    let mut at_target: Vec<i64> = Vec::new();
    for member in members {
        total += 1;
        match member.state {
            UpdateState::Completed => at_target.extend(member.end_time().map(|t| (t - start).as_seconds().max(0))),
            UpdateState::Skipped if member.at_target => at_target.push(0),
            _ => {}
        }
    }
    if total == 0 {
        return None;
    }
    at_target.sort_unstable();
    let needed = (total * percent).div_ceil(100).max(1);
    at_target.get(needed - 1).map(|s| hours(*s))
}
