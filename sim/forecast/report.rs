//! What a forecast says: `forecast.json`, the console lines, and `index.html` with the fan chart
//! (`charts/fan.svg`, `charts/fan.png`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::engine::Time;
use crate::orchestrator::{PendingKind, UpdateState};
use crate::report::charts::forecast::{Fan, fan_chart};
use crate::report::summary::hours;
use crate::report::{ReportFile, html, to_json};

use super::{Finished, Hold, Replication, Setup, percentile};

/// Points of the fan chart's time grid.
const FAN_POINTS: usize = 241;
/// A percentile that falls among replications in which the run or stage never completes.
const NOT_DONE: &str = "does not complete (fails, or not by the horizon)";
/// Things the console names under "waits on".
const WAITS_SHOWN: usize = 5;

/// `forecast.json`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forecast {
    pub run: String,
    pub scenario: String,
    pub seed: u64,
    pub replications: u64,
    /// The instant the forecast starts from.
    pub now: String,
    /// `status` (the latest time in the status) or `--now`.
    pub now_from: &'static str,
    pub status: NowFacts,
    /// Absent when the run had finished already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<FinishedFacts>,
    pub stages: Vec<StageForecast>,
    /// What holds the run from now to its end, per stage, most hours first.
    pub waits: Vec<WaitFigure>,
    /// Regions whose members held a stage waiting for a window or the release.
    pub regions: Vec<RegionFigure>,
    /// What the replications that did not finish by the horizon were blocked on.
    pub unfinished: Vec<Count>,
    /// Members upgrading longer than their duration model practically allows: they were taken to
    /// finish at once (replications in which that happened).
    pub overdue: Vec<Count>,
    /// The fan chart's data: members done over time.
    pub members_done: Vec<FanPoint>,
}

/// The run at the status's instant.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NowFacts {
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    pub members: usize,
    pub completed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub running: usize,
    pub pending: usize,
    pub not_started: usize,
    pub failure_count: u32,
}

/// When the run finishes, over the replications.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finish {
    /// Percentiles of the time the run completes (`Completed`, or `Skipped`); absent where that
    /// percentile falls among replications in which it fails or does not end by the horizon.
    pub p10: Option<String>,
    pub p50: Option<String>,
    pub p90: Option<String>,
    /// The same, in hours from now.
    pub p10_hours: Option<f64>,
    pub p50_hours: Option<f64>,
    pub p90_hours: Option<f64>,
    pub completed: usize,
    pub failed: usize,
    pub unfinished: usize,
    /// P(the run fails before it finishes): the share of replications that end `Failed`.
    pub failure_probability: f64,
    /// The end of the simulation (the scenario's horizon counted from now).
    pub horizon: String,
}

/// The facts of a run whose status shows it finished.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishedFacts {
    pub state: &'static str,
    pub start_time: Option<String>,
    pub completed_time: Option<String>,
    pub hours: Option<f64>,
    pub members: usize,
    pub completed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub failure_count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageForecast {
    pub name: String,
    pub state_now: &'static str,
    /// Done (`Completed`/`Skipped`) at the status's instant: `completedTime` says when. Otherwise
    /// the percentiles of when it completes, absent where they fall among replications in which it
    /// does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_time: Option<String>,
    pub p10: Option<String>,
    pub p50: Option<String>,
    pub p90: Option<String>,
    pub p50_hours: Option<f64>,
    /// Share of replications in which the stage ends `Failed`.
    pub failure_probability: f64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitFigure {
    pub stage: String,
    /// `upgrading`, `window`, `availability`, `gate`, `afterStageWait` or `other` (stopped, halted,
    /// or nothing else to wait for).
    pub what: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Mean over the replications.
    pub mean_hours: f64,
    /// Replications in which it held the stage at all.
    pub replications: usize,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionFigure {
    pub stage: String,
    /// `window` or `availability`.
    pub reason: &'static str,
    pub region: String,
    pub mean_hours: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Count {
    pub what: String,
    pub replications: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct FanPoint {
    pub time: String,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
}

fn counts(setup: &Setup) -> NowFacts {
    let members: Vec<UpdateState> =
        setup.snapshot.stages.iter().flat_map(|s| &s.groups).flat_map(|g| &g.members).map(|m| m.state).collect();
    let n = |state| members.iter().filter(|s| **s == state).count();
    NowFacts {
        state: setup.status.status.state.api_name(),
        start_time: setup.status.status.start.map(Time::to_rfc3339),
        members: members.len(),
        completed: n(UpdateState::Completed),
        failed: n(UpdateState::Failed),
        skipped: n(UpdateState::Skipped),
        running: n(UpdateState::Running),
        pending: n(UpdateState::Pending),
        not_started: n(UpdateState::NotStarted),
        failure_count: setup.status.failure_count,
    }
}

/// Times as seconds, with `+∞` for "never": sorted, ready for [`percentile`].
fn sorted_times(times: impl Iterator<Item = Option<Time>>) -> Vec<f64> {
    let mut v: Vec<f64> = times.map(|t| t.map_or(f64::INFINITY, |t| t.0 as f64)).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn at(seconds: Option<f64>) -> Option<Time> {
    seconds.map(|s| Time(s.round() as i64))
}

/// Sums the replications up.
pub fn forecast(setup: &Setup, replications: &[Replication]) -> Forecast {
    let now = setup.now;
    let n = replications.len();
    let share = |k: usize| if n == 0 { 0.0 } else { (k as f64 / n as f64 * 10_000.0).round() / 10_000.0 };
    let from_now = |t: Option<Time>| t.map(|t| hours((t - now).as_seconds()));
    let run_times = sorted_times(replications.iter().map(|r| r.completed));
    let p = |sorted: &[f64], q| at(percentile(sorted, q));
    let failed = replications.iter().filter(|r| r.state == UpdateState::Failed).count();
    let unfinished = replications.iter().filter(|r| r.finished.is_none()).count();
    let (p10, p50, p90) = (p(&run_times, 10), p(&run_times, 50), p(&run_times, 90));
    let finish = Finish {
        p10: p10.map(Time::to_rfc3339),
        p50: p50.map(Time::to_rfc3339),
        p90: p90.map(Time::to_rfc3339),
        p10_hours: from_now(p10),
        p50_hours: from_now(p50),
        p90_hours: from_now(p90),
        completed: n - failed - unfinished,
        failed,
        unfinished,
        failure_probability: share(failed),
        horizon: setup.scenario.end().to_rfc3339(),
    };
    let stages = setup
        .snapshot
        .stages
        .iter()
        .enumerate()
        .map(|(s, st)| {
            let done = matches!(st.state, UpdateState::Completed | UpdateState::Skipped);
            let times = sorted_times(replications.iter().map(|r| r.stage_done[s]));
            let (p10, p50, p90) = if done { (None, None, None) } else { (p(&times, 10), p(&times, 50), p(&times, 90)) };
            StageForecast {
                name: setup.plan.stages[s].name.clone(),
                state_now: st.state.api_name(),
                completed_time: st.completed_time.filter(|_| done).map(Time::to_rfc3339),
                p10: p10.map(Time::to_rfc3339),
                p50: p50.map(Time::to_rfc3339),
                p90: p90.map(Time::to_rfc3339),
                p50_hours: from_now(p50),
                failure_probability: share(replications.iter().filter(|r| r.stage_failed[s]).count()),
            }
        })
        .collect();
    let mut held: BTreeMap<&(u16, Hold), (i64, usize)> = BTreeMap::new();
    let mut regions: BTreeMap<&(u16, PendingKind, String), i64> = BTreeMap::new();
    for r in replications {
        for (key, seconds) in &r.held {
            let e = held.entry(key).or_default();
            e.0 += seconds;
            e.1 += 1;
        }
        for (key, seconds) in &r.regions {
            *regions.entry(key).or_default() += seconds;
        }
    }
    let mean = |seconds: i64| hours(seconds / n.max(1) as i64);
    let stage_name = |s: u16| setup.plan.stages[s as usize].name.clone();
    let mut waits: Vec<WaitFigure> = held
        .into_iter()
        .map(|((s, hold), (seconds, k))| {
            let (what, gate) = match hold {
                Hold::Upgrading => ("upgrading", None),
                Hold::Window => ("window", None),
                Hold::Availability => ("availability", None),
                Hold::Gate(name) => ("gate", Some(name.clone())),
                Hold::AfterStageWait => ("afterStageWait", None),
                Hold::Other => ("other", None),
            };
            WaitFigure { stage: stage_name(*s), what, gate, mean_hours: mean(seconds), replications: k }
        })
        .collect();
    waits.sort_by(|a, b| b.mean_hours.total_cmp(&a.mean_hours));
    let mut regions: Vec<RegionFigure> = regions
        .into_iter()
        .map(|((s, kind, region), seconds)| RegionFigure {
            stage: stage_name(*s),
            reason: match kind {
                PendingKind::Window => "window",
                PendingKind::Availability => "availability",
            },
            region: region.clone(),
            mean_hours: mean(seconds),
        })
        .collect();
    regions.sort_by(|a, b| b.mean_hours.total_cmp(&a.mean_hours));
    let tally = |items: Vec<String>| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for item in items {
            *counts.entry(item).or_default() += 1;
        }
        let mut out: Vec<Count> = counts.into_iter().map(|(what, replications)| Count { what, replications }).collect();
        out.sort_by_key(|c| std::cmp::Reverse(c.replications));
        out
    };
    let unfinished_why = tally(replications.iter().filter_map(|r| r.blocked.clone()).collect());
    let overdue = tally(
        replications
            .iter()
            .flat_map(|r| r.overdue.iter().map(|m| setup.scenario.fleet[m.index()].name.clone()))
            .collect(),
    );
    Forecast {
        run: setup.status.name.clone(),
        scenario: setup.scenario.name.clone(),
        seed: setup.scenario.seed,
        replications: n as u64,
        now: now.to_rfc3339(),
        now_from: if setup.now_from_status { "status" } else { "--now" },
        status: counts(setup),
        finish: Some(finish),
        finished: None,
        stages,
        waits,
        regions,
        unfinished: unfinished_why,
        overdue,
        members_done: fan_points(setup, replications),
    }
}

/// Members done (`Completed`, `Failed`, `Skipped`) on a grid from now to the last change of any
/// replication: p10, p50 and p90 over the replications at each point.
fn fan_points(setup: &Setup, replications: &[Replication]) -> Vec<FanPoint> {
    let now = setup.now;
    let facts = counts(setup);
    let at_now = (facts.completed + facts.failed + facts.skipped) as f64;
    let last = replications
        .iter()
        .flat_map(|r| r.done_changes.iter().map(|c| c.0).chain(r.finished))
        .max()
        .unwrap_or(now)
        .max(now + crate::engine::Duration::hours(1));
    let span = (last - now).as_seconds();
    (0..FAN_POINTS)
        .map(|i| {
            let t = now + crate::engine::Duration(span * i as i64 / (FAN_POINTS as i64 - 1));
            let mut values: Vec<f64> = replications
                .iter()
                .map(|r| at_now + r.done_changes.iter().filter(|c| c.0 <= t).map(|c| f64::from(c.1)).sum::<f64>())
                .collect();
            values.sort_by(f64::total_cmp);
            let q = |p| percentile(&values, p).unwrap_or(at_now);
            let round = |v: f64| (v * 100.0).round() / 100.0;
            FanPoint { time: t.to_rfc3339(), p10: round(q(10)), p50: round(q(50)), p90: round(q(90)) }
        })
        .collect()
}

/// `forecast.json` of a run whose status shows it finished.
pub fn finished(setup_name: &str, seed: u64, finished: &Finished) -> Forecast {
    let facts = FinishedFacts {
        state: finished.state.api_name(),
        start_time: finished.start.map(Time::to_rfc3339),
        completed_time: finished.completed.map(Time::to_rfc3339),
        hours: finished.start.zip(finished.completed).map(|(a, b)| hours((b - a).as_seconds())),
        members: finished.members,
        completed: finished.completed_members,
        failed: finished.failed_members,
        skipped: finished.skipped_members,
        failure_count: finished.failure_count,
        error: finished.error.clone(),
    };
    Forecast {
        run: finished.run.clone(),
        scenario: setup_name.to_string(),
        seed,
        replications: 0,
        now: finished.completed.or(finished.start).map(Time::to_rfc3339).unwrap_or_default(),
        now_from: "status",
        status: NowFacts {
            state: finished.state.api_name(),
            start_time: finished.start.map(Time::to_rfc3339),
            members: finished.members,
            completed: finished.completed_members,
            failed: finished.failed_members,
            skipped: finished.skipped_members,
            running: 0,
            pending: 0,
            not_started: finished.members
                - finished.completed_members
                - finished.failed_members
                - finished.skipped_members,
            failure_count: finished.failure_count,
        },
        finish: None,
        finished: Some(facts),
        stages: Vec::new(),
        waits: Vec::new(),
        regions: Vec::new(),
        unfinished: Vec::new(),
        overdue: Vec::new(),
        members_done: Vec::new(),
    }
}

fn when(time: &Option<String>, hours: Option<f64>) -> String {
    match (time, hours) {
        (Some(t), Some(h)) => format!("{t} (+{h:.1} h)"),
        (Some(t), None) => t.clone(),
        _ => NOT_DONE.to_string(),
    }
}

fn percent(p: f64) -> String {
    format!("{:.1} %", p * 100.0)
}

/// The forecast in a few lines, for the console and the top of `index.html`.
pub fn lines(f: &Forecast) -> Vec<String> {
    let s = &f.status;
    let done = s.completed + s.failed + s.skipped;
    let mut out = vec![format!(
        "forecast of run {} (scenario {}, seed {}): {} replications from {} ({})",
        f.run,
        f.scenario,
        f.seed,
        f.replications,
        f.now,
        if f.now_from == "status" { "the latest time in the status" } else { "--now" }
    )];
    out.push(format!(
        "  now: {}, {done}/{} members done ({} Completed, {} Failed, {} Skipped), {} Running, {} Pending, {} NotStarted, failureCount {}",
        s.state, s.members, s.completed, s.failed, s.skipped, s.running, s.pending, s.not_started, s.failure_count
    ));
    if let Some(done) = &f.finished {
        out.push(format!(
            "  already finished: {}{}; nothing left to forecast",
            done.state,
            done.completed_time.as_ref().map(|t| format!(" at {t}")).unwrap_or_default()
        ));
        return out;
    }
    let Some(finish) = &f.finish else { return out };
    out.push(format!(
        "  run completes: p10 {}, p50 {}, p90 {}",
        when(&finish.p10, finish.p10_hours),
        when(&finish.p50, finish.p50_hours),
        when(&finish.p90, finish.p90_hours)
    ));
    let mut odds = format!(
        "  P(the run fails before it finishes) {}: {} Completed, {} Failed",
        percent(finish.failure_probability),
        finish.completed,
        finish.failed
    );
    if finish.unfinished > 0 {
        odds.push_str(&format!(", {} not finished by the horizon {}", finish.unfinished, finish.horizon));
    }
    out.push(odds);
    for stage in f.stages.iter().filter(|s| s.completed_time.is_none()) {
        let failed = if stage.failure_probability > 0.0 {
            format!("; fails in {}", percent(stage.failure_probability))
        } else {
            String::new()
        };
        out.push(format!(
            "  stage {} ({} now): p10 {}, p50 {}, p90 {}{failed}",
            stage.name,
            stage.state_now,
            stage.p10.as_deref().unwrap_or(NOT_DONE),
            stage.p50.as_deref().unwrap_or(NOT_DONE),
            stage.p90.as_deref().unwrap_or(NOT_DONE),
        ));
    }
    if !f.waits.is_empty() {
        let parts: Vec<String> = f.waits.iter().take(WAITS_SHOWN).map(wait_text).collect();
        out.push(format!("  waits on (mean hours from now): {}", parts.join("; ")));
    }
    for r in f.regions.iter().take(3) {
        out.push(format!(
            "    region {}: {:.1} h of stage {} waiting for {}",
            r.region,
            r.mean_hours,
            r.stage,
            if r.reason == "window" { "maintenance windows" } else { "the release to reach it" }
        ));
    }
    for u in f.unfinished.iter().take(3) {
        out.push(format!("  unfinished in {} replications: {}", u.replications, u.what));
    }
    for o in &f.overdue {
        out.push(format!(
            "  note: member {} has been upgrading longer than its duration model practically allows; taken to finish at once ({} replications)",
            o.what, o.replications
        ));
    }
    out
}

/// What held a stage, in words ("gate \"prod sign-off\"", "maintenance windows").
fn wait_label(w: &WaitFigure) -> String {
    match (w.what, &w.gate) {
        ("gate", Some(g)) => format!("gate {g}"),
        ("afterStageWait", _) => "after-stage wait".to_string(),
        ("window", _) => "maintenance windows".to_string(),
        ("availability", _) => "release availability".to_string(),
        ("other", _) => "other (stopped, halted or queued)".to_string(),
        (what, _) => what.to_string(),
    }
}

fn wait_text(w: &WaitFigure) -> String {
    format!("stage {} {} {:.1} h", w.stage, wait_label(w), w.mean_hours)
}

/// The files of the forecast folder.
pub fn render(f: &Forecast) -> anyhow::Result<Vec<ReportFile>> {
    let mut files = vec![(PathBuf::from("forecast.json"), to_json(f)?)];
    let fan = Fan {
        title: format!("Members done over time: forecast of run {}", f.run),
        subtitle: format!("{} · {} replications from {}", f.scenario, f.replications, f.now),
        points: f
            .members_done
            .iter()
            .filter_map(|p| Time::parse_rfc3339(&p.time).ok().map(|t| (t.0, p.p10, p.p50, p.p90)))
            .collect(),
        total: f.status.members,
        now: Time::parse_rfc3339(&f.now).map_or(0, |t| t.0),
        guides: f
            .stages
            .iter()
            .filter_map(|s| Some((Time::parse_rfc3339(s.p50.as_ref()?).ok()?.0, format!("{} p50", s.name))))
            .chain(
                f.finish
                    .as_ref()
                    .and_then(|x| x.p50.as_ref())
                    .and_then(|t| Time::parse_rfc3339(t).ok())
                    .map(|t| (t.0, "run p50".to_string())),
            )
            .collect(),
    };
    let chart = (f.finished.is_none()).then(|| fan_chart(&fan)).transpose()?;
    if let Some(chart) = &chart {
        files.extend(chart.files("charts/fan"));
    }
    let intro: Vec<String> = lines(f).into_iter().map(|l| l.trim().to_string()).collect();
    let header: Vec<String> =
        ["stage", "state now", "completed", "p10", "p50", "p90", "P(Failed)"].iter().map(|s| s.to_string()).collect();
    let rows: Vec<Vec<String>> = f
        .stages
        .iter()
        .map(|s| {
            let cell = |v: &Option<String>| {
                v.clone().unwrap_or_else(|| if s.completed_time.is_some() { String::new() } else { NOT_DONE.into() })
            };
            vec![
                s.name.clone(),
                s.state_now.to_string(),
                s.completed_time.clone().unwrap_or_default(),
                cell(&s.p10),
                cell(&s.p50),
                cell(&s.p90),
                if s.completed_time.is_some() { String::new() } else { percent(s.failure_probability) },
            ]
        })
        .collect();
    let wait_header: Vec<String> =
        ["stage", "waits on", "mean hours", "replications"].iter().map(|s| s.to_string()).collect();
    let wait_rows: Vec<Vec<String>> = f
        .waits
        .iter()
        .map(|w| vec![w.stage.clone(), wait_label(w), format!("{:.2}", w.mean_hours), w.replications.to_string()])
        .chain(f.regions.iter().map(|r| {
            vec![
                r.stage.clone(),
                format!("{} in region {}", r.reason, r.region),
                format!("{:.2}", r.mean_hours),
                String::new(),
            ]
        }))
        .collect();
    let mut tables = vec![("Stages".to_string(), header, rows)];
    if !wait_rows.is_empty() {
        tables.push(("What it will wait on".to_string(), wait_header, wait_rows));
    }
    let caption = "Members Completed, Failed or Skipped over time from the status on: the band spans the 10th to the 90th percentile of the replications, the line is the median; dashed lines mark the status time and the median finish of each remaining stage and of the run.";
    let charts: Vec<(&str, &crate::report::charts::Chart, &str)> =
        chart.as_ref().map(|c| ("Members done over time", c, caption)).into_iter().collect();
    let title = format!("Forecast of run {}", f.run);
    files.push((PathBuf::from("index.html"), html::report_page(&title, &intro, &tables, &charts).into_bytes()));
    Ok(files)
}
