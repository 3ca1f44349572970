//! `summary.json`: per run, the figures a reviewer asks first (PRODUCT.md).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::orchestrator::{BlockedOn, GateKind, GateRef, PendingKind, UpdateRun, UpdateState};
use crate::scenario::{Problem, RunSpec, Scenario};
use crate::simulation::SimResult;

use super::ReportContext;
use super::tables::count_state;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub start: String,
    /// When the simulation stopped: the last event, or the horizon.
    pub end: String,
    pub horizon_reached: bool,
    pub members: usize,
    /// What is valid but most likely a mistake (`fleetsim validate` prints the same warnings).
    pub warnings: Vec<Warning>,
    pub runs: Vec<RunSummary>,
    /// Auto-upgrade profiles: runs generated and per-cluster version lag.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<super::profiles::ProfileSummary>,
    /// Actions that did nothing, with the reason.
    pub notes: Vec<String>,
}

/// One warning: where in the scenario file, and what to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// JSON Pointer into the scenario file.
    pub pointer: String,
    pub message: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub name: String,
    pub state: &'static str,
    pub start: Option<String>,
    pub end: Option<String>,
    /// From the run's start to its completion (or to the end of the simulation if it is not finished).
    pub makespan_hours: Option<f64>,
    pub members: MemberCounts,
    pub failure_count: u32,
    /// Failed members by error code.
    pub failures_by_code: BTreeMap<String, usize>,
    pub hours_pending: PendingHours,
    pub after_stage_wait_hours: f64,
    /// Members that received a release marked bad before the run stopped.
    pub blast_radius: usize,
    /// Members of the run a release marked bad was at risk for.
    pub at_risk_members: u32,
    /// `blastRadius / atRiskMembers` (null when nothing was at risk).
    pub blast_radius_fraction: Option<f64>,
    /// Hours from the first failure a bad release caused to the run's halt (null if it did not halt
    /// after one).
    pub detection_hours: Option<f64>,
    /// Hours from the start until 50 / 90 / 100 % of the run's members were at the target (null if
    /// never: not the time of a failure or of the horizon).
    #[serde(rename = "hoursTo50PctUpgraded")]
    pub hours_to_50_pct_upgraded: Option<f64>,
    #[serde(rename = "hoursTo90PctUpgraded")]
    pub hours_to_90_pct_upgraded: Option<f64>,
    #[serde(rename = "hoursTo100PctUpgraded")]
    pub hours_to_100_pct_upgraded: Option<f64>,
    /// The run stopped or failed though no release marked bad was at risk (null when one was).
    pub false_halt: Option<bool>,
    pub peak_concurrency: u32,
    /// What a run that is not finished waits for, and since when (SEMANTICS §5.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_on: Option<Blocked>,
    pub stages: Vec<StageSummary>,
    /// Where the run's time went, stage by stage, and what ended it.
    pub critical_path: super::critical::CriticalPath,
}

/// `blockedOn`: why an unfinished run makes no progress.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    /// `start`, `gate`, `window` or `availability`.
    pub reason: &'static str,
    /// The gate's display name, or a description of it by type and position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Members `Pending` for that reason in the current stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// When the wait would end (a ScheduledStart gate's time, a window's next opening, a release
    /// reaching a region), after the end of the simulation; absent when nothing ends it by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// One line for people: "blocked on gate \"prod sign-off\" since 2026-03-02T00:00:00Z".
    pub text: String,
}

/// Runs the horizon cut while they were still running or waiting: their figures stop at the end of
/// the simulation. Runs of auto-upgrade profiles are left out (a profile runs on past any horizon).
pub fn horizon_warnings(scenario: &Scenario, result: &SimResult) -> Vec<Problem> {
    if !result.horizon_reached {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (run, spec) in result.runs.iter().zip(&result.specs) {
        if spec.auto_upgrade_profile.is_some() || !run.is_open() || run.state == UpdateState::NotStarted {
            continue;
        }
        let advice = match blocked(run, spec) {
            Some(b) if b.until.is_none() => format!("it is {}, so a longer horizon would not finish it", b.text),
            Some(b) => format!("it is {}: raise settings.horizon to see it go on", b.text),
            None => "raise settings.horizon to see it finish".to_string(),
        };
        out.push(Problem::new(
            "/settings/horizon",
            format!(
                "run \"{}\" is still {} at the end of the simulation ({}, horizon {}): its figures stop there; {advice}",
                run.name, run.state, result.end, scenario.settings.horizon
            ),
        ));
    }
    out
}

/// What `run` is blocked on, for `summary.json` and the console.
pub fn blocked(run: &UpdateRun, spec: &RunSpec) -> Option<Blocked> {
    Some(match run.blocked_on()? {
        BlockedOn::Start => Blocked {
            reason: "start",
            gate: None,
            members: None,
            since: None,
            until: spec.start.map(|t| t.to_rfc3339()),
            text: match spec.start {
                None => "not started: a manual start was never given".to_string(),
                Some(at) => format!("not started: its start {at} is after the end of the simulation"),
            },
        },
        BlockedOn::Gate { gate, since, until } => {
            let name = gate_description(run, gate);
            let due = until.map(|t| format!(", due {t}")).unwrap_or_default();
            Blocked {
                reason: "gate",
                text: format!("blocked on gate {name} since {since}{due}"),
                gate: Some(run.gate(gate).config.display_name.clone().unwrap_or(name)),
                members: None,
                since: Some(since.to_rfc3339()),
                until: until.map(|t| t.to_rfc3339()),
            }
        }
        BlockedOn::Members { stage, kind, count, since, until } => {
            let (reason, why) = match kind {
                PendingKind::Window => ("window", "maintenance windows that did not open"),
                PendingKind::Availability => ("availability", "a release not yet in their region"),
            };
            let stage = &run.stages[stage as usize].name;
            Blocked {
                reason,
                gate: None,
                members: Some(count),
                text: format!(
                    "blocked on {why}: {count} members of stage \"{stage}\" Pending since {since}{}",
                    match until {
                        Some(t) => format!(", the first could go on at {t}"),
                        None => ", and none ever will by itself".to_string(),
                    }
                ),
                since: Some(since.to_rfc3339()),
                until: until.map(|t| t.to_rfc3339()),
            }
        }
    })
}

/// A gate's display name in quotes, else its type and position ("Approval gate before stage \"prod\"").
pub(crate) fn gate_description(run: &UpdateRun, r: GateRef) -> String {
    let gate = run.gate(r);
    if let Some(name) = &gate.config.display_name {
        return format!("\"{name}\"");
    }
    let kind = match gate.config.kind {
        GateKind::Approval => "Approval",
        GateKind::ScheduledStart(_) => "ScheduledStart",
    };
    let stage = &run.stages[r.stage as usize];
    let place = match r.group {
        Some(g) => format!("group \"{}\" of stage \"{}\"", stage.groups[g as usize].name, stage.name),
        None => format!("stage \"{}\"", stage.name),
    };
    format!("{kind} gate {} {place}", r.timing.api_name().to_lowercase())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberCounts {
    pub total: usize,
    pub not_selected: usize,
    pub by_state: BTreeMap<&'static str, usize>,
}

/// Hours spent Pending by reason: member-hours for windows and availability, gate-hours for gates.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingHours {
    pub window: f64,
    pub availability: f64,
    pub gate: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageSummary {
    pub name: String,
    pub state: &'static str,
    pub members: usize,
    pub max_concurrency: u32,
    pub peak_concurrency: u32,
    pub max_allowed_failures: u32,
    pub failure_count: u32,
    pub groups: Vec<GroupSummary>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupSummary {
    pub name: String,
    pub state: &'static str,
    pub members: usize,
    pub max_concurrency: u32,
    pub peak_concurrency: u32,
    pub max_allowed_failures: u32,
    pub failure_count: u32,
}

/// Hours with four decimals: readable, and stable in text.
pub fn hours(seconds: i64) -> f64 {
    (seconds as f64 / 3600.0 * 10_000.0).round() / 10_000.0
}

pub fn summary(ctx: &ReportContext) -> Summary {
    let result = ctx.result;
    let paths = super::critical::critical_paths(ctx.scenario, result);
    let runs = result
        .runs
        .iter()
        .enumerate()
        .zip(paths)
        .map(|((r, run), critical_path)| {
            let total: usize = run.stages.iter().flat_map(|s| s.groups.iter()).map(|g| g.members.len()).sum();
            let by_state =
                UpdateState::ALL.iter().map(|s| (s.api_name(), count_state(run, *s))).filter(|(_, n)| *n > 0).collect();
            let mut failures_by_code = BTreeMap::new();
            for member in run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter()) {
                if member.state == UpdateState::Failed {
                    *failures_by_code
                        .entry(member.note.code.as_deref().unwrap_or("UpgradeFailed").to_string())
                        .or_insert(0) += 1;
                }
            }
            let makespan = run.start_time.map(|s| hours((run.completed_time.unwrap_or(result.end) - s).as_seconds()));
            let outcome = super::outcome::run_outcome(result, r);
            RunSummary {
                name: run.name.clone(),
                state: run.state.api_name(),
                start: run.start_time.map(|t| t.to_rfc3339()),
                end: run.completed_time.map(|t| t.to_rfc3339()),
                makespan_hours: makespan,
                members: MemberCounts { total, not_selected: run.not_selected.len(), by_state },
                failure_count: run.failure_count,
                failures_by_code,
                hours_pending: PendingHours {
                    window: hours(run.stats.pending_window_seconds),
                    availability: hours(run.stats.pending_availability_seconds),
                    gate: hours(run.stats.gate_pending_seconds),
                },
                after_stage_wait_hours: hours(run.stats.wait_seconds),
                blast_radius: outcome.blast_radius,
                at_risk_members: outcome.at_risk,
                blast_radius_fraction: outcome.blast_radius_fraction,
                detection_hours: outcome.detection_hours,
                hours_to_50_pct_upgraded: outcome.hours_to_upgraded[0],
                hours_to_90_pct_upgraded: outcome.hours_to_upgraded[1],
                hours_to_100_pct_upgraded: outcome.hours_to_upgraded[2],
                false_halt: outcome.false_halt,
                peak_concurrency: run.stats.peak_running,
                blocked_on: blocked(run, &result.specs[r]),
                stages: run
                    .stages
                    .iter()
                    .map(|s| StageSummary {
                        name: s.name.clone(),
                        state: s.state.api_name(),
                        members: s.groups.iter().map(|g| g.members.len()).sum(),
                        max_concurrency: s.max_concurrency,
                        peak_concurrency: s.peak_running,
                        max_allowed_failures: s.max_allowed_failures,
                        failure_count: s.failure_count,
                        groups: s
                            .groups
                            .iter()
                            .map(|g| GroupSummary {
                                name: g.name.clone(),
                                state: g.state.api_name(),
                                members: g.members.len(),
                                max_concurrency: g.max_concurrency,
                                peak_concurrency: g.peak_running,
                                max_allowed_failures: g.max_allowed_failures,
                                failure_count: g.failure_count,
                            })
                            .collect(),
                    })
                    .collect(),
                critical_path,
            }
        })
        .collect();
    Summary {
        scenario: ctx.scenario.name.clone(),
        seed: ctx.scenario.seed,
        start: ctx.scenario.start.to_rfc3339(),
        end: result.end.to_rfc3339(),
        horizon_reached: result.horizon_reached,
        members: ctx.scenario.fleet.len(),
        warnings: ctx
            .warnings
            .iter()
            .map(|w| Warning { pointer: w.path.clone(), message: w.message.clone() })
            .collect(),
        runs,
        profiles: super::profiles::profile_summaries(ctx),
        notes: result.notes.iter().map(|(t, n)| format!("{t}: {n}")).collect(),
    }
}
