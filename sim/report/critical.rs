//! The critical path of a run: where its time went, stage by stage, and which members held it.
//!
//! Computed from the result alone (the timeline and the final run state), never by the orchestrator.
//! Each stage's time from reached to done is split into disjoint parts, so the parts add up to the
//! stage's duration exactly. At every instant the stage is charged to the one thing that holds it, in
//! this order:
//!
//! 1. **upgrading**: some member of the stage is `Running`;
//! 2. **window** / **availability**: no member runs and some are `Pending` (the reason with more
//!    members; a tie goes to windows);
//! 3. **gate** / **after-stage wait**: nothing of the members is left and a gate is `Pending` or the
//!    wait runs; when several overlap, the one that finishes last holds the stage;
//! 4. **other**: the stage is stopped, or halted with nothing to wait for.
//!
//! A member's `Pending` reason is the one it had when it became `Pending` (the timeline has one row per
//! state change, not per change of reason).

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::engine::Time;
use crate::orchestrator::{Entity, GateRef, PendingKind, Slot, Transition, UpdateRun, UpdateState};
use crate::scenario::Scenario;
use crate::simulation::{SimResult, TimelineRow};

use super::summary::{blocked, gate_description, hours};

/// Seconds, written as hours with four decimals (like every other `…Hours` field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub i64);

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(hours(self.0))
    }
}

/// `criticalPath` of a run in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriticalPath {
    /// Why the run ended where it did.
    pub ended: Ended,
    pub skipped: usize,
    pub not_selected: usize,
    /// Members that received a release marked bad; only when the scenario models one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blast_radius: Option<usize>,
    pub stages: Vec<StagePath>,
    /// Time the run spent `Stopping`: a stage had failed or a stop was asked, and members already
    /// upgrading finished.
    #[serde(rename = "stoppingHours")]
    pub stopping: Seconds,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ended {
    /// `Completed`, `Failed`, `Stopped`, `horizon` (cut by the end of the simulation) or `blocked`.
    pub reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    pub text: String,
}

/// One stage from reached to done (or to the end of the simulation).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StagePath {
    pub name: String,
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    #[serde(rename = "hours")]
    pub total: Seconds,
    #[serde(rename = "upgradingHours")]
    pub upgrading: Seconds,
    #[serde(rename = "windowHours")]
    pub window: Seconds,
    #[serde(rename = "availabilityHours")]
    pub availability: Seconds,
    #[serde(rename = "afterStageWaitHours")]
    pub after_stage_wait: Seconds,
    /// Stopped, or halted with nothing left to wait for.
    #[serde(rename = "otherHours")]
    pub other: Seconds,
    pub gates: Vec<GateWait>,
    /// Members whose closed windows held the stage (Pending while nothing else was left).
    pub held_by_windows: Held,
    /// Members whose regions did not yet have the release while nothing else was left.
    pub held_by_availability: Held,
    /// The members that finished last, latest first.
    pub last_to_finish: Vec<LastMember>,
    /// The stage in one line, as the console prints it.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateWait {
    pub gate: String,
    pub hours: Seconds,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Held {
    pub members: usize,
    /// Regions of those members, most members first.
    pub regions: Vec<RegionCount>,
    /// When the last of them started upgrading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_start: Option<String>,
    #[serde(skip)]
    last_start_time: Option<Time>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionCount {
    pub region: String,
    pub members: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastMember {
    pub member: String,
    pub region: String,
    pub state: &'static str,
    pub start: String,
    pub end: String,
    /// From the stage being reached to this member's start.
    #[serde(rename = "startedAfterHours")]
    pub started_after: Seconds,
    /// Why it started late: `window`, `availability`, `queued` (behind concurrency limits or group
    /// gates) or `none`.
    pub reason: &'static str,
    /// Of `startedAfter`, the time it was Pending.
    #[serde(rename = "pendingHours")]
    pub pending: Seconds,
}

/// Members listed in `lastToFinish`.
const LAST_SHOWN: usize = 3;
/// Regions named in a stage's line.
const REGIONS_NAMED: usize = 3;

/// The critical path of every run of `result`, in run order.
pub fn critical_paths(scenario: &Scenario, result: &SimResult) -> Vec<CriticalPath> {
    let mut rows: Vec<Vec<&TimelineRow>> = vec![Vec::new(); result.runs.len()];
    for row in &result.timeline {
        if let Some(v) = rows.get_mut(row.run as usize) {
            v.push(row);
        }
    }
    result.runs.iter().enumerate().map(|(r, run)| critical_path(scenario, result, r, run, &rows[r])).collect()
}

/// Why a member became `Pending` in a timeline row (the orchestrator records it; a row written
/// without it counts as a release not yet in the member's region, the other reason there is).
pub(crate) fn pending_kind(transition: &Transition) -> PendingKind {
    transition.pending.unwrap_or(PendingKind::Availability)
}

/// What holds a stage during an interval.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holder {
    Upgrading,
    Pending(PendingKind),
    Gate(usize),
    Wait,
    Other,
}

#[derive(Default)]
struct StageTrack {
    state: Option<UpdateState>,
    reached: Option<Time>,
    done: Option<Time>,
    running: u32,
    /// `Pending` members: since when, and why.
    pending: BTreeMap<Slot, (Time, PendingKind)>,
    pending_by_kind: [u32; 2],
    gates: Vec<usize>,
    wait_running: bool,
    upgrading: i64,
    window: i64,
    availability: i64,
    wait: i64,
    other: i64,
    gate_seconds: BTreeMap<usize, i64>,
    /// Intervals charged to windows / availability, in time order.
    held_intervals: [Vec<(Time, Time)>; 2],
    /// Members whose `Pending` spell overlapped an interval charged to its reason.
    held: [Vec<Slot>; 2],
}

fn kind_index(kind: PendingKind) -> usize {
    match kind {
        PendingKind::Window => 0,
        PendingKind::Availability => 1,
    }
}

impl StageTrack {
    fn active(&self) -> bool {
        matches!(
            self.state,
            Some(UpdateState::Running | UpdateState::Pending | UpdateState::Stopping | UpdateState::Stopped)
        )
    }

    fn holder(&self, run: &UpdateRun, gate_refs: &[GateRef], s: usize) -> Holder {
        if self.running > 0 {
            return Holder::Upgrading;
        }
        if self.state == Some(UpdateState::Stopped) {
            return Holder::Other;
        }
        let [w, a] = self.pending_by_kind;
        if w > 0 || a > 0 {
            return Holder::Pending(if w >= a { PendingKind::Window } else { PendingKind::Availability });
        }
        // The gate or wait that finishes last holds the stage; one never finished holds it longest.
        let finish = |t: Option<Time>| t.map_or(i64::MAX, |t| t.0);
        let mut best: Option<(i64, Holder)> = None;
        for &g in &self.gates {
            let f = finish(run.gate(gate_refs[g]).completed_time);
            if best.is_none_or(|(b, _)| f > b) {
                best = Some((f, Holder::Gate(g)));
            }
        }
        if self.wait_running {
            let f = finish(run.stages[s].wait.as_ref().and_then(|w| w.completed_time));
            if best.is_none_or(|(b, _)| f > b) {
                best = Some((f, Holder::Wait));
            }
        }
        best.map_or(Holder::Other, |(_, h)| h)
    }

    fn charge(&mut self, holder: Holder, from: Time, to: Time) {
        let dt = (to - from).as_seconds();
        match holder {
            Holder::Upgrading => self.upgrading += dt,
            Holder::Pending(kind) => {
                match kind {
                    PendingKind::Window => self.window += dt,
                    PendingKind::Availability => self.availability += dt,
                }
                let intervals = &mut self.held_intervals[kind_index(kind)];
                match intervals.last_mut() {
                    Some(last) if last.1 == from => last.1 = to,
                    _ => intervals.push((from, to)),
                }
            }
            Holder::Gate(g) => *self.gate_seconds.entry(g).or_insert(0) += dt,
            Holder::Wait => self.wait += dt,
            Holder::Other => self.other += dt,
        }
    }

    /// A `Pending` spell ended (or the simulation did): did it hold the stage?
    fn end_spell(&mut self, slot: Slot, since: Time, until: Time, kind: PendingKind) {
        let k = kind_index(kind);
        let intervals = &self.held_intervals[k];
        // Intervals are disjoint and sorted: the first one ending after `since` is the only candidate
        // that can start before `until` without all later ones doing so too.
        let i = intervals.partition_point(|&(_, end)| end <= since);
        if intervals.get(i).is_some_and(|&(start, _)| start < until) {
            self.held[k].push(slot);
        }
    }
}

fn critical_path(
    scenario: &Scenario,
    result: &SimResult,
    r: usize,
    run: &UpdateRun,
    rows: &[&TimelineRow],
) -> CriticalPath {
    let gate_refs = run.gate_refs();
    let limit = run.completed_time.unwrap_or(result.end);
    let mut stages: Vec<StageTrack> = (0..run.stages.len()).map(|_| StageTrack::default()).collect();
    // Per member: time Pending before its latest start, and the reason of its longest spell.
    let mut waited: BTreeMap<Slot, (i64, PendingKind, i64)> = BTreeMap::new();
    let mut now: Option<Time> = None;
    let mut run_state = UpdateState::NotStarted;
    let mut stopping = 0i64;
    let mut advance = |stages: &mut Vec<StageTrack>, run_state: UpdateState, from: Time, to: Time| {
        let to = to.min(limit);
        if to <= from {
            return;
        }
        if run_state == UpdateState::Stopping {
            // Stopping time is its own part (after a failure or a user stop), never a stage's too.
            stopping += (to - from).as_seconds();
            return;
        }
        for (s, track) in stages.iter_mut().enumerate() {
            if track.active() {
                let holder = track.holder(run, &gate_refs, s);
                track.charge(holder, from, to);
            }
        }
    };
    for row in rows {
        if let Some(t) = now
            && t != row.time
        {
            advance(&mut stages, run_state, t, row.time);
        }
        now = Some(row.time);
        let (from, to, time) = (row.transition.from, row.transition.to, row.time);
        match row.transition.entity {
            Entity::Stage(s) => {
                let track = &mut stages[s as usize];
                if from == UpdateState::NotStarted && track.reached.is_none() {
                    track.reached = Some(time);
                }
                if matches!(to, UpdateState::Completed | UpdateState::Failed | UpdateState::Skipped) {
                    track.done = Some(time);
                }
                track.state = Some(to);
            }
            Entity::Member(slot) => {
                let track = &mut stages[slot.stage as usize];
                if to == UpdateState::Running {
                    track.running += 1;
                }
                if from == UpdateState::Running {
                    track.running = track.running.saturating_sub(1);
                }
                if from == UpdateState::Pending
                    && let Some((since, kind)) = track.pending.remove(&slot)
                {
                    track.pending_by_kind[kind_index(kind)] -= 1;
                    track.end_spell(slot, since, time, kind);
                    let entry = waited.entry(slot).or_insert((0, kind, 0));
                    let spell = (time - since).as_seconds();
                    entry.0 += spell;
                    if spell > entry.2 {
                        (entry.1, entry.2) = (kind, spell);
                    }
                }
                if to == UpdateState::Pending {
                    let kind = pending_kind(&row.transition);
                    track.pending.insert(slot, (time, kind));
                    track.pending_by_kind[kind_index(kind)] += 1;
                }
            }
            Entity::Gate(g) => {
                let Some(i) = gate_refs.iter().position(|&x| x == g) else { continue };
                let track = &mut stages[g.stage as usize];
                if to == UpdateState::Pending {
                    track.gates.push(i);
                }
                if from == UpdateState::Pending {
                    track.gates.retain(|&x| x != i);
                }
            }
            Entity::Wait(s) => stages[s as usize].wait_running = to == UpdateState::Running,
            Entity::Run => run_state = to,
            Entity::Group(..) => {}
        }
    }
    if let Some(t) = now {
        advance(&mut stages, run_state, t, result.end);
    }
    for track in &mut stages {
        let open: Vec<(Slot, (Time, PendingKind))> = track.pending.iter().map(|(k, v)| (*k, *v)).collect();
        for (slot, (since, kind)) in open {
            track.end_spell(slot, since, limit, kind);
        }
    }

    let paths: Vec<StagePath> = stages
        .iter()
        .enumerate()
        .filter(|(_, t)| t.reached.is_some())
        .map(|(s, t)| stage_path(scenario, run, &gate_refs, s, t, &waited))
        .collect();
    let skipped = super::tables::count_state(run, UpdateState::Skipped);
    let blast_radius = (!scenario.models.bad_releases.is_empty()).then(|| result.bad_release_members[r].len());
    CriticalPath {
        ended: ended(run, result, r),
        skipped,
        not_selected: run.not_selected.len(),
        blast_radius,
        stages: paths,
        stopping: Seconds(stopping),
    }
}

fn ended(run: &UpdateRun, result: &SimResult, r: usize) -> Ended {
    let block = blocked(run, &result.specs[r]);
    if let Some(b) = &block
        && matches!(b.reason, "start" | "gate")
    {
        return Ended { reason: "blocked", at: b.since.clone(), text: b.text.clone() };
    }
    if run.is_open() && result.horizon_reached {
        let text = format!("cut by the horizon at {}", result.end);
        return Ended { reason: "horizon", at: Some(result.end.to_rfc3339()), text };
    }
    let at = run.completed_time.map(|t| t.to_rfc3339());
    let text = match &at {
        Some(t) => format!("{} at {t}", run.state),
        None => run.state.to_string(),
    };
    Ended { reason: run.state.api_name(), at, text }
}

fn held(scenario: &Scenario, run: &UpdateRun, slots: &[Slot]) -> Held {
    let mut regions: BTreeMap<&str, usize> = BTreeMap::new();
    let mut last_start: Option<Time> = None;
    for &slot in slots {
        let member = run.member(slot);
        *regions.entry(scenario.fleet[member.id.index()].region.as_str()).or_insert(0) += 1;
        if member.start_time() > last_start {
            last_start = member.start_time();
        }
    }
    let mut regions: Vec<RegionCount> =
        regions.into_iter().map(|(region, members)| RegionCount { region: region.to_string(), members }).collect();
    regions.sort_by(|a, b| b.members.cmp(&a.members).then_with(|| a.region.cmp(&b.region)));
    Held { members: slots.len(), regions, last_start: last_start.map(|t| t.to_rfc3339()), last_start_time: last_start }
}

fn stage_path(
    scenario: &Scenario,
    run: &UpdateRun,
    gate_refs: &[GateRef],
    s: usize,
    t: &StageTrack,
    waited: &BTreeMap<Slot, (i64, PendingKind, i64)>,
) -> StagePath {
    let stage = &run.stages[s];
    let reached = t.reached.unwrap_or_default();
    let gates: Vec<GateWait> = t
        .gate_seconds
        .iter()
        .map(|(&g, &secs)| GateWait { gate: gate_description(run, gate_refs[g]), hours: Seconds(secs) })
        .collect();
    let mut finished: Vec<(Time, Slot)> = Vec::new();
    for (g, group) in stage.groups.iter().enumerate() {
        for (i, m) in group.members.iter().enumerate() {
            if let (Some(end), Some(_)) = (m.end_time(), m.start_time()) {
                finished.push((end, Slot { stage: s as u16, group: g as u16, index: i as u32 }));
            }
        }
    }
    finished.sort_by(|a, b| b.cmp(a));
    let last_to_finish = finished
        .iter()
        .take(LAST_SHOWN)
        .map(|&(end, slot)| {
            let m = run.member(slot);
            let start = m.start_time().unwrap_or(reached);
            let started_after = (start - reached).as_seconds().max(0);
            let (pending, reason) = match waited.get(&slot) {
                Some(&(secs, kind, _)) if secs > 0 => (secs, kind_name(kind)),
                _ if started_after > 0 => (0, "queued"),
                _ => (0, "none"),
            };
            LastMember {
                member: scenario.fleet[m.id.index()].name.clone(),
                region: scenario.fleet[m.id.index()].region.clone(),
                state: m.state.api_name(),
                start: start.to_rfc3339(),
                end: end.to_rfc3339(),
                started_after: Seconds(started_after),
                reason,
                pending: Seconds(pending),
            }
        })
        .collect();
    let total = t.upgrading + t.window + t.availability + t.wait + t.other + t.gate_seconds.values().sum::<i64>();
    let mut path = StagePath {
        name: stage.name.clone(),
        state: t.state.unwrap_or(stage.state).api_name(),
        reached: t.reached.map(|x| x.to_rfc3339()),
        done: t.done.map(|x| x.to_rfc3339()),
        total: Seconds(total),
        upgrading: Seconds(t.upgrading),
        window: Seconds(t.window),
        availability: Seconds(t.availability),
        after_stage_wait: Seconds(t.wait),
        other: Seconds(t.other),
        gates,
        held_by_windows: held(scenario, run, &t.held[0]),
        held_by_availability: held(scenario, run, &t.held[1]),
        last_to_finish,
        text: String::new(),
    };
    path.text = stage_text(&path);
    path
}

fn kind_name(kind: PendingKind) -> &'static str {
    match kind {
        PendingKind::Window => "window",
        PendingKind::Availability => "availability",
    }
}

/// A duration as people read it: minutes below an hour, hours below two days, else days.
pub fn span(seconds: i64) -> String {
    if seconds < 3600 {
        format!("{} min", (seconds + 30) / 60)
    } else if seconds < 48 * 3600 {
        format!("{:.1} h", seconds as f64 / 3600.0)
    } else {
        format!("{:.1} d", seconds as f64 / 86_400.0)
    }
}

/// A time with its weekday, for "the last started Sat 2026-03-07 22:00".
pub fn weekday_time(t: Time) -> String {
    t.to_datetime().format("%a %Y-%m-%d %H:%M").to_string()
}

fn regions_text(held: &Held) -> String {
    let mut names: Vec<&str> = held.regions.iter().take(REGIONS_NAMED).map(|r| r.region.as_str()).collect();
    let more = held.regions.len().saturating_sub(REGIONS_NAMED);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    if names.is_empty() {
        return String::new();
    }
    let last = names.pop().unwrap_or_default();
    let list = if names.is_empty() { last.to_string() } else { format!("{}, {last}", names.join(", ")) };
    format!(" ({list}{more})")
}

fn members_phrase(n: usize) -> String {
    if n == 1 { "1 member's".to_string() } else { format!("{n} members'") }
}

/// "dev 5.2 d: 4.1 d waiting for 55 members' maintenance windows (westeurope, eastus), 1.1 d
/// upgrading — the last started Sat 2026-03-07 22:00".
fn stage_text(p: &StagePath) -> String {
    let mut parts: Vec<(i64, String, Option<Time>)> = Vec::new();
    if p.window.0 > 0 {
        let w = &p.held_by_windows;
        parts.push((
            p.window.0,
            format!(
                "{} waiting for {} maintenance windows{}",
                span(p.window.0),
                members_phrase(w.members),
                regions_text(w)
            ),
            w.last_start_time,
        ));
    }
    if p.availability.0 > 0 {
        let a = &p.held_by_availability;
        parts.push((
            p.availability.0,
            format!(
                "{} waiting for the release to reach {} regions{}",
                span(p.availability.0),
                members_phrase(a.members),
                regions_text(a)
            ),
            a.last_start_time,
        ));
    }
    if p.upgrading.0 > 0 {
        parts.push((p.upgrading.0, format!("{} upgrading", span(p.upgrading.0)), None));
    }
    for g in &p.gates {
        parts.push((g.hours.0, format!("{} on gate {}", span(g.hours.0), g.gate), None));
    }
    if p.after_stage_wait.0 > 0 {
        parts.push((p.after_stage_wait.0, format!("{} after-stage wait", span(p.after_stage_wait.0)), None));
    }
    if p.other.0 > 0 {
        parts.push((p.other.0, format!("{} stopped or halted", span(p.other.0)), None));
    }
    // Largest first; equal parts keep the order above.
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    let mut text = format!("{} {}", p.name, span(p.total.0));
    if p.done.is_none() {
        text.push_str(" (not done)");
    }
    if parts.is_empty() {
        return text;
    }
    text.push_str(": ");
    text.push_str(&parts.iter().map(|(_, s, _)| s.as_str()).collect::<Vec<_>>().join(", "));
    if let Some((_, _, Some(last))) = parts.first() {
        text.push_str(&format!(" — the last started {}", weekday_time(*last)));
    } else if let Some(m) = p.last_to_finish.first()
        && m.reason != "none"
        && m.reason != "queued"
    {
        text.push_str(&format!(
            " — the last to finish, {}, waited {} for its {}",
            m.member,
            span(m.pending.0),
            if m.reason == "window" { "window" } else { "release" }
        ));
    }
    text
}

impl CriticalPath {
    /// The lines `fleetsim run` prints under a run (without indentation). The blocked line is
    /// printed by the caller from `blockedOn`, so it is not repeated here.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut counts = Vec::new();
        if self.skipped > 0 {
            counts.push(format!("{} Skipped", self.skipped));
        }
        if self.not_selected > 0 {
            counts.push(format!("{} not selected", self.not_selected));
        }
        if let Some(b) = self.blast_radius {
            counts.push(format!("blast radius {b} (members that received the bad release)"));
        }
        if !counts.is_empty() {
            lines.push(counts.join(", "));
        }
        lines.extend(self.stages.iter().map(|s| s.text.clone()));
        if self.stopping.0 > 0 {
            lines.push(format!("then {} Stopping while members already upgrading finished", span(self.stopping.0)));
        }
        if self.ended.reason == "horizon" {
            lines.push(self.ended.text.clone());
        }
        lines
    }
}
