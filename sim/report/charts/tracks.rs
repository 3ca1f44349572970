//! Member state histories for the run charts, derived from the timeline rows (SEMANTICS §11
//! "Timeline rows") and, where a member has none, from its final state.

use std::collections::BTreeSet;

use crate::engine::Time;
use crate::orchestrator::{Entity, PendingKind, Slot, UpdateRun, UpdateState};
use crate::simulation::SimResult;

/// A member's state changes in time order: from each change's time on, the member is in that
/// state. Before the first change it is `NotStarted`.
pub type Changes = Vec<(Time, UpdateState)>;

/// The state histories of one run's members, by stage, group and member index.
#[derive(Clone, Debug)]
pub struct RunTracks {
    pub members: Vec<Vec<Vec<Changes>>>,
    /// `Pending` spells that began because the release had not reached the member's region, by
    /// (slot, start); every other `Pending` spell waits for a maintenance window.
    pub availability: BTreeSet<(Slot, Time)>,
    /// Where open spans end: the run's completion if it finished (a `Failed` run moves no member
    /// after it stops), else the end of the simulation.
    pub until: Time,
}

/// A stretch of time a member spent in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub from: Time,
    pub to: Time,
    pub state: UpdateState,
    /// The state that followed, `None` when the span was still open at `until`.
    pub next: Option<UpdateState>,
}

/// Member histories of every run of a result.
pub fn run_tracks(result: &SimResult) -> Vec<RunTracks> {
    let mut tracks: Vec<RunTracks> = result
        .runs
        .iter()
        .map(|run| RunTracks {
            members: run
                .stages
                .iter()
                .map(|s| s.groups.iter().map(|g| vec![Vec::new(); g.members.len()]).collect())
                .collect(),
            until: run_until(result, run),
            availability: Default::default(),
        })
        .collect();
    for row in &result.timeline {
        let Entity::Member(slot) = row.transition.entity else {
            continue;
        };
        let member = tracks
            .get_mut(row.run as usize)
            .and_then(|t| t.members.get_mut(slot.stage as usize))
            .and_then(|s| s.get_mut(slot.group as usize))
            .and_then(|g| g.get_mut(slot.index as usize));
        if let Some(changes) = member {
            changes.push((row.time, row.transition.to));
            if row.transition.to == UpdateState::Pending
                && crate::report::critical::pending_kind(&row.transition) == PendingKind::Availability
                && let Some(t) = tracks.get_mut(row.run as usize)
            {
                t.availability.insert((slot, row.time));
            }
        }
    }
    for (run, track) in result.runs.iter().zip(&mut tracks) {
        for (stage, stage_tracks) in run.stages.iter().zip(&mut track.members) {
            for (group, group_tracks) in stage.groups.iter().zip(stage_tracks) {
                for (member, changes) in group.members.iter().zip(group_tracks) {
                    if changes.is_empty() {
                        *changes = from_final_state(member.state, member.start_time(), member.end_time());
                    }
                }
            }
        }
        let last = track.members.iter().flatten().flatten().filter_map(|c| c.last()).map(|c| c.0).max();
        track.until = track.until.max(last.unwrap_or(track.until));
    }
    tracks
}

fn run_until(result: &SimResult, run: &UpdateRun) -> Time {
    if run.state.is_finished() { run.completed_time.unwrap_or(result.end) } else { result.end }
}

/// A history for a member the timeline does not mention (a result simulated without a timeline):
/// the latest attempt from its status times.
fn from_final_state(state: UpdateState, start: Option<Time>, end: Option<Time>) -> Changes {
    match (state, start) {
        (UpdateState::NotStarted, _) => Vec::new(),
        (UpdateState::Running, Some(s)) => vec![(s, UpdateState::Running)],
        (UpdateState::Completed | UpdateState::Failed, Some(s)) => {
            vec![(s, UpdateState::Running), (end.unwrap_or(s), state)]
        }
        // Pending and Skipped members carry no time in status: nothing to draw.
        _ => Vec::new(),
    }
}

/// The spans of a history up to `until`, leaving out the initial `NotStarted`.
pub fn spans(changes: &[(Time, UpdateState)], until: Time) -> Vec<Span> {
    let mut out = Vec::with_capacity(changes.len());
    for (i, &(from, state)) in changes.iter().enumerate() {
        let (to, next) = match changes.get(i + 1) {
            Some(&(t, s)) => (t, Some(s)),
            None => (until.max(from), None),
        };
        out.push(Span { from, to, state, next });
    }
    out
}

/// How many members satisfy `pred` over time: `(time, count)` at every time the count changes,
/// in time order.
pub fn count_series(track: &RunTracks, pred: impl Fn(UpdateState) -> bool) -> Vec<(i64, i64)> {
    // Every change as (time, ±1), sorted by time and summed per instant (a flat list sorts faster
    // than a map of a million times fills).
    let mut deltas: Vec<(i64, i64)> = Vec::new();
    for changes in track.members.iter().flatten().flatten() {
        let mut was = pred(UpdateState::NotStarted);
        for &(t, state) in changes {
            let is = pred(state);
            if is != was {
                deltas.push((t.0, if is { 1 } else { -1 }));
            }
            was = is;
        }
    }
    deltas.sort_unstable_by_key(|&(t, _)| t);
    let mut count = 0;
    let mut out = Vec::new();
    for same in deltas.chunk_by(|a, b| a.0 == b.0) {
        let delta: i64 = same.iter().map(|d| d.1).sum();
        if delta != 0 {
            count += delta;
            out.push((same[0].0, count));
        }
    }
    out
}

/// What a member is doing in an aggregated Gantt row: its state, with `Pending` split by reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Completed,
    Failed,
    Skipped,
    Running,
    /// `Pending` for a closed maintenance window (every `Pending` spell not for availability).
    PendingWindow,
    /// `Pending` because the release had not reached the member's region.
    PendingAvailability,
    NotStarted,
}

/// The categories of the aggregated Gantt rows, stacked bottom to top.
pub const CATEGORIES: [Category; 7] = [
    Category::Completed,
    Category::Failed,
    Category::Skipped,
    Category::Running,
    Category::PendingWindow,
    Category::PendingAvailability,
    Category::NotStarted,
];

/// Number of [`CATEGORIES`]: the width of an [`occupancy`] bin.
pub const CATEGORY_COUNT: usize = CATEGORIES.len();

/// The category of a member that entered `state` at `since`; `availability` says whether a
/// `Pending` spell that began then waited for the release.
fn category(state: UpdateState, since: Time, availability: &impl Fn(Time) -> bool) -> usize {
    let category = match state {
        UpdateState::Completed => Category::Completed,
        UpdateState::Failed => Category::Failed,
        UpdateState::Skipped => Category::Skipped,
        UpdateState::Running => Category::Running,
        UpdateState::Pending if availability(since) => Category::PendingAvailability,
        UpdateState::Pending => Category::PendingWindow,
        _ => Category::NotStarted,
    };
    CATEGORIES.iter().position(|c| *c == category).unwrap_or(CATEGORY_COUNT - 1)
}

/// Time-weighted average number of members in each of [`CATEGORIES`] per time bin over
/// `[start, end)`; histories count from `start` and stop at `until` (later time is left empty).
/// Each history comes with its member's slot, to tell availability `Pending` spells
/// ([`RunTracks::availability`]) from window ones.
pub fn occupancy<'a>(
    histories: impl Iterator<Item = (Slot, &'a Changes)>,
    availability: &BTreeSet<(Slot, Time)>,
    until: Time,
    start: i64,
    end: i64,
    bins: usize,
) -> Vec<[f64; CATEGORY_COUNT]> {
    let bins = bins.max(1);
    let mut out = vec![[0.0; CATEGORY_COUNT]; bins];
    // Bins a span covers whole count 1 each: kept as +1/−1 steps and summed once at the end, so a
    // span costs the same whatever its length (a member done early stays done for the whole chart).
    let mut whole = vec![[0i64; CATEGORY_COUNT]; bins + 1];
    let width = (end - start).max(1) as f64 / bins as f64;
    let stop = until.0.min(end);
    let mut add = |a: i64, b: i64, cat: usize| {
        let (a, b) = (a.max(start), b.min(stop));
        if b <= a {
            return;
        }
        let (fa, fb) = ((a - start) as f64, (b - start) as f64);
        let first = ((fa / width) as usize).min(bins - 1);
        let last = ((fb / width) as usize).min(bins - 1);
        let mut part = |k: usize| {
            let lo = fa.max(k as f64 * width);
            let hi = fb.min((k + 1) as f64 * width);
            if hi > lo {
                out[k][cat] += (hi - lo) / width;
            }
        };
        part(first);
        if last > first {
            part(last);
            whole[first + 1][cat] += 1;
            whole[last][cat] -= 1;
        }
    };
    for (slot, changes) in histories {
        let is_availability = |t: Time| availability.contains(&(slot, t));
        let mut from = start;
        let mut state = UpdateState::NotStarted;
        let mut since = Time(start);
        for &(t, next) in changes {
            add(from, t.0, category(state, since, &is_availability));
            from = t.0.max(from);
            state = next;
            since = t;
        }
        add(from, stop, category(state, since, &is_availability));
    }
    let mut covered = [0i64; CATEGORY_COUNT];
    for (bin, step) in out.iter_mut().zip(&whole) {
        for ((value, count), step) in bin.iter_mut().zip(&mut covered).zip(step) {
            *count += step;
            *value += *count as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use UpdateState::*;

    fn track(histories: Vec<Changes>, until: i64) -> RunTracks {
        RunTracks { members: vec![vec![histories]], until: Time(until), availability: Default::default() }
    }

    #[test]
    fn spans_end_at_the_next_change_or_until() {
        let changes = vec![(Time(10), Pending), (Time(20), Running), (Time(30), Failed)];
        let s = spans(&changes, Time(50));
        assert_eq!(s.len(), 3);
        assert_eq!(s[1], Span { from: Time(20), to: Time(30), state: Running, next: Some(Failed) });
        assert_eq!(s[2], Span { from: Time(30), to: Time(50), state: Failed, next: None });
    }

    #[test]
    fn counts_follow_retries_back_out_of_terminal_states() {
        let t = track(
            vec![
                vec![
                    (Time(0), Running),
                    (Time(10), Failed),
                    (Time(20), NotStarted),
                    (Time(30), Running),
                    (Time(40), Completed),
                ],
                vec![(Time(0), Running), (Time(10), Completed)],
            ],
            50,
        );
        assert_eq!(count_series(&t, |s| s.is_member_terminal()), vec![(10, 2), (20, 1), (40, 2)]);
        assert_eq!(count_series(&t, |s| s == Running), vec![(0, 2), (10, 0), (30, 1), (40, 0)]);
    }

    fn cat(c: Category) -> usize {
        CATEGORIES.iter().position(|k| *k == c).unwrap()
    }

    fn slot(index: u32) -> Slot {
        Slot { stage: 0, group: 0, index }
    }

    #[test]
    fn occupancy_averages_members_per_bin() {
        let histories = [vec![(Time(50), Running), (Time(100), Completed)], vec![]];
        let none = BTreeSet::new();
        let with_slots = || histories.iter().enumerate().map(|(i, h)| (slot(i as u32), h));
        let bins = occupancy(with_slots(), &none, Time(200), 0, 200, 4);
        assert_eq!(bins[0][cat(Category::NotStarted)], 2.0);
        assert_eq!(bins[1][cat(Category::Running)], 1.0);
        assert_eq!(bins[3][cat(Category::Completed)], 1.0);
        for bin in &bins {
            assert!((bin.iter().sum::<f64>() - 2.0).abs() < 1e-9);
        }
        let cut = occupancy(with_slots(), &none, Time(100), 0, 200, 4);
        assert_eq!(cut[3].iter().sum::<f64>(), 0.0, "nothing is drawn after the run's end");
    }

    #[test]
    fn bins_a_span_covers_whole_count_exactly_one_and_its_ends_their_share() {
        // Bins of width 10/3, which float sums of bin edges do not give back exactly: the member
        // runs from 1 to 16 (bins 0 to 4) and is done from then on.
        let histories = [vec![(Time(1), Running), (Time(16), Completed)]];
        let none = BTreeSet::new();
        let bins = occupancy(histories.iter().map(|h| (slot(0), h)), &none, Time(100), 0, 100, 30);
        let running: Vec<f64> = bins.iter().map(|b| b[cat(Category::Running)]).collect();
        assert_eq!(running[1..4], [1.0; 3], "whole bins count one, exactly");
        assert!((running[0] - 0.7).abs() < 1e-12 && (running[4] - 0.8).abs() < 1e-12, "{running:?}");
        assert!(running[5..].iter().all(|r| *r == 0.0));
        assert!(bins[5..29].iter().all(|b| b[cat(Category::Completed)] == 1.0), "done from then on, exactly");
        assert!((bins[29][cat(Category::Completed)] - 1.0).abs() < 1e-12, "the last bin ends the span");
    }

    #[test]
    fn occupancy_tells_availability_pending_from_window_pending() {
        // Member 0 waits for the release from 0, then for a window from 100; member 1 for a window.
        let histories =
            [vec![(Time(0), Pending), (Time(50), NotStarted), (Time(100), Pending)], vec![(Time(0), Pending)]];
        let availability = BTreeSet::from([(slot(0), Time(0))]);
        let bins = occupancy(
            histories.iter().enumerate().map(|(i, h)| (slot(i as u32), h)),
            &availability,
            Time(200),
            0,
            200,
            2,
        );
        assert_eq!(bins[0][cat(Category::PendingAvailability)], 0.5);
        assert_eq!(bins[0][cat(Category::PendingWindow)], 1.0);
        assert_eq!(bins[1][cat(Category::PendingAvailability)], 0.0);
        assert_eq!(bins[1][cat(Category::PendingWindow)], 2.0);
    }
}
