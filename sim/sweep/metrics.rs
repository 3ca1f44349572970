//! The figures a sweep collects from each replication, one set per update run of the scenario.
//!
//! Why per run and not aggregated over runs: a scenario usually has one run, and when it has several
//! (a canary run and a production run, say) their makespans and states answer different questions;
//! summing them would hide exactly what a sweep is for. Every row of `results.csv` is one
//! (point, replication, run).
//!
//! Values are rendered to text here, once: the journal stores the text, and `results.csv` and
//! `summary.csv` are computed from that text, so a sweep gives the same bytes whether its results were
//! computed just now or read back after an interruption.

use std::fmt;

use crate::orchestrator::{UpdateRun, UpdateState};
use crate::report::outcome::{EndTimes, run_outcome_with};
use crate::report::summary::hours;
use crate::simulation::SimResult;

/// One collected metric. The order of [`Metric::ALL`] is the column order of the outputs: the
/// figures that judge a strategy first (time to bring the release to the fleet, false halts, how far
/// a bad release gets), makespan later, because a run that fails early has a short makespan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// Hours from the run's start until 50 % of its members were at the target (`Completed`, or
    /// `Skipped` as already there); empty when never reached.
    HoursTo50PctUpgraded,
    HoursTo90PctUpgraded,
    HoursTo100PctUpgraded,
    /// 1 when the run stopped or failed though no release marked bad was at risk, else 0; empty when
    /// one was at risk (a halt is then the strategy working).
    FalseHalt,
    /// Members that received a release marked bad before the run stopped.
    BlastRadius,
    /// The blast radius as a fraction of the members the bad release was at risk for.
    BlastRadiusFraction,
    /// Hours from the first failure a bad release caused to the run's halt.
    DetectionHours,
    /// The run's final state (`Completed`, `Failed`, `Stopped`, … or `Running` at the horizon).
    RunState,
    /// Members that ended `Failed`.
    FailedMembers,
    /// From the run's start to its end (or to the end of the simulation if it did not finish).
    MakespanHours,
    /// Hours from the run's start until 50 % of its members that were not skipped are `Completed`.
    HoursTo50PctDone,
    HoursTo90PctDone,
    HoursTo100PctDone,
    /// Member-hours `Pending` because a maintenance window was closed.
    PendingWindowHours,
    /// Member-hours `Pending` because the release had not reached the member's region.
    PendingAvailabilityHours,
    /// Gate-hours `Pending`.
    PendingGateHours,
    /// Most members `Running` at once.
    PeakConcurrency,
}

impl Metric {
    pub const ALL: [Metric; 17] = [
        Metric::HoursTo50PctUpgraded,
        Metric::HoursTo90PctUpgraded,
        Metric::HoursTo100PctUpgraded,
        Metric::FalseHalt,
        Metric::BlastRadius,
        Metric::BlastRadiusFraction,
        Metric::DetectionHours,
        Metric::RunState,
        Metric::FailedMembers,
        Metric::MakespanHours,
        Metric::HoursTo50PctDone,
        Metric::HoursTo90PctDone,
        Metric::HoursTo100PctDone,
        Metric::PendingWindowHours,
        Metric::PendingAvailabilityHours,
        Metric::PendingGateHours,
        Metric::PeakConcurrency,
    ];

    /// The name used in sweep files and output headers (camelCase, like `summary.json`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::HoursTo50PctUpgraded => "hoursTo50PctUpgraded",
            Metric::HoursTo90PctUpgraded => "hoursTo90PctUpgraded",
            Metric::HoursTo100PctUpgraded => "hoursTo100PctUpgraded",
            Metric::FalseHalt => "falseHalt",
            Metric::BlastRadius => "blastRadius",
            Metric::BlastRadiusFraction => "blastRadiusFraction",
            Metric::DetectionHours => "detectionHours",
            Metric::RunState => "runState",
            Metric::FailedMembers => "failedMembers",
            Metric::MakespanHours => "makespanHours",
            Metric::HoursTo50PctDone => "hoursTo50PctDone",
            Metric::HoursTo90PctDone => "hoursTo90PctDone",
            Metric::HoursTo100PctDone => "hoursTo100PctDone",
            Metric::PendingWindowHours => "pendingWindowHours",
            Metric::PendingAvailabilityHours => "pendingAvailabilityHours",
            Metric::PendingGateHours => "pendingGateHours",
            Metric::PeakConcurrency => "peakConcurrency",
        }
    }

    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the metric is a number (statistics apply) rather than a state name.
    pub fn is_numeric(self) -> bool {
        self != Metric::RunState
    }

    /// Whether the metric is 0 or 1 (its mean is a probability, with Wilson's interval).
    pub fn is_indicator(self) -> bool {
        self == Metric::FalseHalt
    }

    /// Whether less is better (hours, members, probabilities), for paired comparisons; `None` for
    /// figures that are neither better nor worse (peak concurrency, the state).
    pub fn lower_is_better(self) -> Option<bool> {
        match self {
            Metric::RunState | Metric::PeakConcurrency => None,
            _ => Some(true),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The metrics of one run in one replication, as text in the order of the requested metrics.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunMetrics {
    pub run: String,
    /// One cell per requested metric; empty when the metric has no value (e.g. never reached).
    pub cells: Vec<String>,
}

/// Collects `metrics` for every run of a replication.
pub fn collect(result: &SimResult, metrics: &[Metric]) -> Vec<RunMetrics> {
    result
        .runs
        .iter()
        .enumerate()
        .map(|(r, run)| {
            // One sorted list of end times for the shares upgraded and done.
            let ends = EndTimes::of(run);
            let outcome = run_outcome_with(result, r, &ends);
            let optional = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
            let cells = metrics
                .iter()
                .map(|m| match m {
                    Metric::HoursTo50PctUpgraded => optional(outcome.hours_to_upgraded[0]),
                    Metric::HoursTo90PctUpgraded => optional(outcome.hours_to_upgraded[1]),
                    Metric::HoursTo100PctUpgraded => optional(outcome.hours_to_upgraded[2]),
                    Metric::FalseHalt => outcome.false_halt.map(|h| u8::from(h).to_string()).unwrap_or_default(),
                    Metric::BlastRadiusFraction => optional(outcome.blast_radius_fraction),
                    Metric::DetectionHours => optional(outcome.detection_hours),
                    Metric::MakespanHours => run
                        .start_time
                        .map(|s| hours_text((run.completed_time.unwrap_or(result.end) - s).as_seconds()))
                        .unwrap_or_default(),
                    Metric::HoursTo50PctDone => optional(ends.hours_to_done(run, 50)),
                    Metric::HoursTo90PctDone => optional(ends.hours_to_done(run, 90)),
                    Metric::HoursTo100PctDone => optional(ends.hours_to_done(run, 100)),
                    Metric::FailedMembers => {
                        members(run).filter(|m| m.state == UpdateState::Failed).count().to_string()
                    }
                    Metric::RunState => run.state.api_name().to_string(),
                    Metric::BlastRadius => outcome.blast_radius.to_string(),
                    Metric::PendingWindowHours => hours_text(run.stats.pending_window_seconds),
                    Metric::PendingAvailabilityHours => hours_text(run.stats.pending_availability_seconds),
                    Metric::PendingGateHours => hours_text(run.stats.gate_pending_seconds),
                    Metric::PeakConcurrency => run.stats.peak_running.to_string(),
                })
                .collect();
            RunMetrics { run: run.name.clone(), cells }
        })
        .collect()
}

fn members(run: &UpdateRun) -> impl Iterator<Item = &crate::orchestrator::run::MemberRt> {
    run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter())
}

/// Hours with four decimals (as in `summary.json`), printed in Rust's shortest round-trip form.
fn hours_text(seconds: i64) -> String {
    hours(seconds).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Metric::ALL {
            assert_eq!(Metric::from_name(m.name()), Some(m));
        }
        assert_eq!(Metric::from_name("makespan"), None);
    }

    #[test]
    fn hours_are_rounded_and_short() {
        assert_eq!(hours_text(5400), "1.5");
        assert_eq!(hours_text(0), "0");
        assert_eq!(hours_text(12_913), "3.5869");
    }
}
