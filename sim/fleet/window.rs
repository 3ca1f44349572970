//! AKS maintenance window calendars: when a member's window is open, and when it opens next
//! (SEMANTICS §11 "Window calendar", §5.4; aks-models.md §1).
//!
//! A window is a recurrence of local dates, each starting an occurrence at `startTime` that lasts
//! `durationHours`, minus inclusive blackout dates (`notAllowedDates`), all in one fixed `utcOffset`
//! (no daylight saving). Everything is computed directly from day numbers: a query touches only the
//! occurrences around the instant it asks about, never steps minute by minute, because the
//! scheduler asks at every decision and every poll.

use chrono::{Datelike, NaiveDate, Weekday};

use crate::engine::{Duration, Time};

/// Fleet ranks a closed window that opens within this lookahead ahead of other closed ones
/// (SEMANTICS §5.4, class 2; "within 4 h" includes exactly 4 h, SEMANTICS §11).
pub const OPENS_SOON_LOOKAHEAD: Duration = Duration::hours(4);

/// How far ahead a search for the next opening looks before it answers "never" (about ten years).
/// A limit on every search keeps a calendar that never opens (say, blacked out for good) from
/// looping; no scenario horizon comes near it.
pub const SEARCH_HORIZON: Duration = Duration::days(3_653);

const SECONDS_PER_DAY: i64 = 86_400;

/// `NaiveDate::num_days_from_ce` of 1970-01-01: turns dates into day numbers that line up with
/// `Time` (day 0 starts at `Time(0)` in UTC).
const UNIX_EPOCH_DAYS_FROM_CE: i64 = 719_163;

/// Instants further than this from the epoch (about 250,000 years, inside chrono's date range)
/// are treated as never open, so that no arithmetic below can overflow.
const MAX_ABS_SECONDS: i64 = 8_000_000_000_000;

/// Which local dates start an occurrence (aks-models.md §1.2 `schedule`). Intervals count from
/// the window's anchor (SEMANTICS §11); validation keeps them in the AKS ranges, and a zero
/// interval is read as 1 so that no arithmetic divides by zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recurrence {
    /// Every `interval_days` days from the anchor date.
    Daily { interval_days: u32 },
    /// On `day_of_week` in every `interval_weeks`-th Monday–Sunday week, the anchor's week being
    /// week 0.
    Weekly { interval_weeks: u32, day_of_week: Weekday },
    /// On day `day_of_month` of every `interval_months`-th month from the anchor's month;
    /// a month without that day is skipped.
    AbsoluteMonthly { interval_months: u32, day_of_month: u32 },
    /// On the `week_index` `day_of_week` of every `interval_months`-th month from the anchor's month.
    RelativeMonthly { interval_months: u32, day_of_week: Weekday, week_index: WeekIndex },
}

/// Which of a month's weekdays a relative-monthly window uses: `First`…`Fourth` are the ones on
/// days 1–7 … 22–28, `Last` the month's last one (the fourth or the fifth) (SEMANTICS §11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WeekIndex {
    First,
    Second,
    Third,
    Fourth,
    Last,
}

/// A compiled AKS `maintenanceWindow` (aks-models.md §1.2), plain data.
///
/// `not_allowed` may be in any order and may overlap; ranges with `start > end` block nothing.
/// A `duration` of zero or less never opens; durations are capped at [`SEARCH_HORIZON`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaintenanceWindow {
    pub recurrence: Recurrence,
    /// `durationHours`: how long each occurrence stays open.
    pub duration: Duration,
    /// `startTime` in minutes after local midnight.
    pub start_time_minutes: u32,
    /// `utcOffset` in minutes east of UTC; local time = UTC + offset.
    pub utc_offset_minutes: i32,
    /// Origin of interval counting: `startDate`, else the scenario start's local date (SEMANTICS §11).
    pub anchor: NaiveDate,
    /// Without `startDate` the configuration already existed, so the calendar also runs backwards
    /// from the anchor (an occurrence that began before the scenario start may be open at it);
    /// with `startDate` (`false`) no occurrence comes before the anchor (SEMANTICS §11 "Window
    /// calendar").
    pub runs_backwards: bool,
    /// `notAllowedDates`: inclusive local date ranges during which the window is closed.
    pub not_allowed: Vec<(NaiveDate, NaiveDate)>,
}

/// The window at one instant, with the instant its answer changes, so that callers can cache it
/// until then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowState {
    /// Open now and until `until` (excluded). For a calendar that stays open longer than
    /// [`SEARCH_HORIZON`], `until` is that far ahead; asking again then gives the next stretch.
    Open { until: Time },
    /// Closed now; opens at `next_open`, or `None` if it does not open within [`SEARCH_HORIZON`].
    Closed { next_open: Option<Time> },
}

/// The window classes that order a group's candidates (SEMANTICS §5.4), best first:
/// open now, opens within the lookahead, no window configured, closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WindowClass {
    OpenNow,
    OpensSoon,
    NoWindow,
    Closed,
}

/// The class of a member's window at `t`; a member without the consulted window is `NoWindow`
/// (SEMANTICS §5.4, §11).
pub fn class_of(window: Option<&MaintenanceWindow>, t: Time, lookahead: Duration) -> WindowClass {
    match window {
        None => WindowClass::NoWindow,
        Some(window) => window.class_at(t, lookahead),
    }
}

impl MaintenanceWindow {
    /// Whether the window is open at `t` and until when, or when it opens next.
    pub fn state_at(&self, t: Time) -> WindowState {
        if self.is_open(t) {
            WindowState::Open { until: Time(self.open_until(t.0)) }
        } else {
            WindowState::Closed { next_open: self.next_opening(t) }
        }
    }

    /// Open at `t`: some occurrence has started at or before `t` and not yet ended, and `t` is
    /// outside every blackout (SEMANTICS §11).
    pub fn is_open(&self, t: Time) -> bool {
        self.in_range(t.0) && !self.in_blackout(t.0) && self.occurrence_running(t.0)
    }

    /// The earliest instant at or after `t` at which the window is open (`t` itself if open), or
    /// `None` if nothing opens within [`SEARCH_HORIZON`] of `t`.
    ///
    /// Alternates two jumps: past the blackout stretch covering the candidate instant, and to the
    /// next occurrence start. So an occurrence still running when a blackout ends opens at the
    /// blackout's end (SEMANTICS §11), and the work is bounded by the blackouts and occurrences
    /// passed over.
    pub fn next_opening(&self, t: Time) -> Option<Time> {
        if !self.in_range(t.0) || self.duration_seconds() <= 0 {
            return None;
        }
        let limit = t.0 + SEARCH_HORIZON.0;
        let mut candidate = t.0;
        while candidate <= limit {
            if let Some(end) = self.blackout_end(candidate) {
                candidate = end;
                continue;
            }
            if self.occurrence_running(candidate) {
                return Some(Time(candidate));
            }
            // First occurrence starting strictly after `candidate` (none starts exactly there,
            // or it would be running, since durations are positive here).
            let from_day = self.first_day_starting_after(candidate);
            let day = self.first_occurrence_day(from_day, self.last_day_starting_by(limit))?;
            candidate = self.occurrence_start(day);
        }
        None
    }

    /// The SEMANTICS §5.4 class at `t`: `OpensSoon` iff closed now and the next opening is at most
    /// `lookahead` away (exactly `lookahead` counts, SEMANTICS §11).
    pub fn class_at(&self, t: Time, lookahead: Duration) -> WindowClass {
        if self.is_open(t) {
            return WindowClass::OpenNow;
        }
        match self.next_opening(t) {
            Some(open) if open.0 <= t.0.saturating_add(lookahead.0) => WindowClass::OpensSoon,
            _ => WindowClass::Closed,
        }
    }

    /// The open set between `from` and `to`, as sorted, disjoint, non-touching `[start, end)`
    /// intervals clipped to `[from, to)`: occurrences united where they overlap and cut by
    /// blackouts. For charts and tests; the work grows with the span asked for.
    pub fn occurrences_between(&self, from: Time, to: Time) -> Vec<(Time, Time)> {
        let duration = self.duration_seconds();
        if to <= from || duration <= 0 || !self.in_range(from.0) || !self.in_range(to.0) {
            return Vec::new();
        }
        let mut blackouts: Vec<(i64, i64)> = self.blackouts().filter(|(s, e)| s < e).collect();
        blackouts.sort_unstable();
        let mut pieces: Vec<(i64, i64)> = Vec::new();
        let last_day = self.last_day_starting_by(to.0 - 1);
        let mut day = self.first_occurrence_day(self.first_day_ending_after(from.0), last_day);
        while let Some(d) = day {
            let start = self.occurrence_start(d);
            let clipped = (start.max(from.0), (start + duration).min(to.0));
            pieces.extend(subtract(clipped, &blackouts));
            day = self.first_occurrence_day(d + 1, last_day);
        }
        pieces.sort_unstable();
        let mut open: Vec<(Time, Time)> = Vec::new();
        for (start, end) in pieces {
            match open.last_mut() {
                Some(last) if start <= last.1.0 => last.1 = last.1.max(Time(end)),
                _ => open.push((Time(start), Time(end))),
            }
        }
        open
    }

    // ---- occurrences -------------------------------------------------------------------------

    fn duration_seconds(&self) -> i64 {
        self.duration.0.min(SEARCH_HORIZON.0)
    }

    fn in_range(&self, t: i64) -> bool {
        t.unsigned_abs() <= MAX_ABS_SECONDS as u64
    }

    /// UTC seconds of local midnight at the start of local day `day`.
    fn local_midnight(&self, day: i64) -> i64 {
        day * SECONDS_PER_DAY - i64::from(self.utc_offset_minutes) * 60
    }

    /// UTC seconds at which the occurrence belonging to local day `day` starts.
    fn occurrence_start(&self, day: i64) -> i64 {
        self.local_midnight(day) + i64::from(self.start_time_minutes) * 60
    }

    /// The first local day whose occurrence would start strictly after `t`.
    fn first_day_starting_after(&self, t: i64) -> i64 {
        self.last_day_starting_by(t) + 1
    }

    /// The last local day whose occurrence would start at or before `t`.
    fn last_day_starting_by(&self, t: i64) -> i64 {
        (t - self.occurrence_start(0)).div_euclid(SECONDS_PER_DAY)
    }

    /// The first local day whose occurrence would still be running after `t` (end > `t`).
    fn first_day_ending_after(&self, t: i64) -> i64 {
        self.first_day_starting_after(t - self.duration_seconds())
    }

    /// Some occurrence covers `t` (ignoring blackouts): one starting in `(t - duration, t]`.
    fn occurrence_running(&self, t: i64) -> bool {
        let first = self.first_day_ending_after(t);
        let last = self.last_day_starting_by(t);
        self.first_occurrence_day(first, last).is_some()
    }

    /// Whether occurrences follow each other with no gap for good, once one has begun: a daily or
    /// weekly window at least as long as its period (e.g. daily, 24 h).
    fn is_continuous(&self) -> bool {
        let period_days = match self.recurrence {
            Recurrence::Daily { interval_days } => i64::from(interval_days.max(1)),
            Recurrence::Weekly { interval_weeks, .. } => 7 * i64::from(interval_weeks.max(1)),
            Recurrence::AbsoluteMonthly { .. } | Recurrence::RelativeMonthly { .. } => {
                return false;
            }
        };
        self.duration_seconds() >= period_days * SECONDS_PER_DAY
    }

    /// End of the open stretch containing `t` (which must be open): the union of chained
    /// occurrences, cut at the next blackout and at [`SEARCH_HORIZON`].
    fn open_until(&self, t: i64) -> i64 {
        let mut limit = t + SEARCH_HORIZON.0;
        if let Some(start) = self.next_blackout_start(t) {
            limit = limit.min(start);
        }
        if self.is_continuous() {
            return limit;
        }
        let duration = self.duration_seconds();
        let mut until = t;
        let mut day = self.first_occurrence_day(self.first_day_ending_after(t), self.last_day_starting_by(t));
        // Occurrences covering `t`, then each one starting before the stretch ends.
        while let Some(d) = day {
            until = until.max(self.occurrence_start(d) + duration);
            if until >= limit {
                break;
            }
            day = self.first_occurrence_day(d + 1, self.last_day_starting_by(until));
        }
        until.min(limit)
    }

    /// The first occurrence day in `[from_day, last_day]` (and not before the anchor unless the
    /// calendar runs backwards), if any (SEMANTICS §11). O(1) for daily and weekly windows;
    /// monthly ones look at a month or a few (skipped months).
    fn first_occurrence_day(&self, from_day: i64, last_day: i64) -> Option<i64> {
        let anchor = day_number(self.anchor);
        let from_day = if self.runs_backwards { from_day } else { from_day.max(anchor) };
        if from_day > last_day {
            return None;
        }
        let day = match self.recurrence {
            Recurrence::Daily { interval_days } => {
                let period = i64::from(interval_days.max(1));
                anchor + ceil_div(from_day - anchor, period) * period
            }
            Recurrence::Weekly { interval_weeks, day_of_week } => {
                // Week 0 is the Monday–Sunday week holding the anchor; its `day_of_week` may fall
                // before the anchor, which a bounded calendar rules out by `from_day >= anchor`.
                let week0_day = anchor - i64::from(self.anchor.weekday().num_days_from_monday())
                    + i64::from(day_of_week.num_days_from_monday());
                let period = 7 * i64::from(interval_weeks.max(1));
                week0_day + ceil_div(from_day - week0_day, period) * period
            }
            Recurrence::AbsoluteMonthly { interval_months, .. }
            | Recurrence::RelativeMonthly { interval_months, .. } => {
                return self.first_monthly_day(interval_months, from_day, last_day);
            }
        };
        (day <= last_day).then_some(day)
    }

    fn first_monthly_day(&self, interval_months: u32, from_day: i64, last_day: i64) -> Option<i64> {
        let period = i64::from(interval_months.max(1));
        let anchor_month = month_number(self.anchor);
        let from_month = month_number(date_of(from_day)?);
        let mut month = anchor_month + ceil_div(from_month - anchor_month, period) * period;
        loop {
            let first_of_month = day_number(month_start(month)?);
            if first_of_month > last_day {
                return None;
            }
            if let Some(day) = self.monthly_day(month)
                && day >= from_day
            {
                return (day <= last_day).then_some(day);
            }
            month += period;
        }
    }

    /// The occurrence day in month number `month`, or `None` if the month lacks it.
    fn monthly_day(&self, month: i64) -> Option<i64> {
        let first = month_start(month)?;
        match self.recurrence {
            Recurrence::AbsoluteMonthly { day_of_month, .. } => {
                let date = NaiveDate::from_ymd_opt(first.year(), first.month(), day_of_month)?;
                Some(day_number(date))
            }
            Recurrence::RelativeMonthly { day_of_week, week_index, .. } => {
                let target = i64::from(day_of_week.num_days_from_monday());
                let first_day = day_number(first);
                let weeks = match week_index {
                    WeekIndex::First => 0,
                    WeekIndex::Second => 1,
                    WeekIndex::Third => 2,
                    WeekIndex::Fourth => 3,
                    WeekIndex::Last => {
                        let last_day = day_number(month_start(month + 1)?) - 1;
                        let last_weekday = weekday_of(last_day);
                        return Some(last_day - (last_weekday - target).rem_euclid(7));
                    }
                };
                Some(first_day + (target - weekday_of(first_day)).rem_euclid(7) + 7 * weeks)
            }
            Recurrence::Daily { .. } | Recurrence::Weekly { .. } => None,
        }
    }

    // ---- blackouts ---------------------------------------------------------------------------

    /// `notAllowedDates` as UTC `[start, end)`: local midnight of the first date through local
    /// midnight after the last (aks-models.md §1.2: +02:00 and 2022-12-23..2023-01-03 block
    /// 2022-12-22T22:00Z to 2023-01-03T22:00Z).
    fn blackouts(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.not_allowed
            .iter()
            .map(|(start, end)| (self.local_midnight(day_number(*start)), self.local_midnight(day_number(*end) + 1)))
    }

    fn in_blackout(&self, t: i64) -> bool {
        self.blackouts().any(|(s, e)| s <= t && t < e)
    }

    /// If `t` is blacked out, the end of the blackout stretch holding it (following overlapping
    /// and touching blackouts). Each step passes one blackout's end, so it takes at most as many
    /// steps as there are blackouts.
    fn blackout_end(&self, t: i64) -> Option<i64> {
        let mut end = None;
        let mut at = t;
        while let Some(next) = self.blackouts().filter(|(s, e)| *s <= at && at < *e).map(|(_, e)| e).max() {
            end = Some(next);
            at = next;
        }
        end
    }

    fn next_blackout_start(&self, t: i64) -> Option<i64> {
        self.blackouts().filter(|(s, e)| *s > t && s < e).map(|(s, _)| s).min()
    }
}

/// Parts of `[start, end)` outside the sorted `blackouts`.
fn subtract((start, end): (i64, i64), blackouts: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut pieces = Vec::new();
    let mut at = start;
    for &(s, e) in blackouts {
        if e <= at {
            continue;
        }
        if s >= end {
            break;
        }
        if s > at {
            pieces.push((at, s));
        }
        at = at.max(e);
    }
    if at < end {
        pieces.push((at, end));
    }
    pieces
}

fn day_number(date: NaiveDate) -> i64 {
    i64::from(date.num_days_from_ce()) - UNIX_EPOCH_DAYS_FROM_CE
}

fn date_of(day: i64) -> Option<NaiveDate> {
    i32::try_from(day + UNIX_EPOCH_DAYS_FROM_CE).ok().and_then(NaiveDate::from_num_days_from_ce_opt)
}

/// Day of the week of day number `day`, 0 = Monday (1970-01-01 was a Thursday).
fn weekday_of(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

/// Months since year 0: `year * 12 + month0`.
fn month_number(date: NaiveDate) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month0())
}

fn month_start(month: i64) -> Option<NaiveDate> {
    let year = i32::try_from(month.div_euclid(12)).ok()?;
    let month0 = u32::try_from(month.rem_euclid(12)).ok()?;
    NaiveDate::from_ymd_opt(year, month0 + 1, 1)
}

/// `ceil(a / b)` for `b > 0`, rounding toward +infinity for negative `a` too.
fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Days};
    use proptest::prelude::*;

    use super::*;

    fn at(text: &str) -> Time {
        Time::parse_rfc3339(text).unwrap()
    }

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn daily(interval_days: u32) -> Recurrence {
        Recurrence::Daily { interval_days }
    }

    fn weekly(interval_weeks: u32, day_of_week: Weekday) -> Recurrence {
        Recurrence::Weekly { interval_weeks, day_of_week }
    }

    fn absolute(interval_months: u32, day_of_month: u32) -> Recurrence {
        Recurrence::AbsoluteMonthly { interval_months, day_of_month }
    }

    fn relative(interval_months: u32, day_of_week: Weekday, week_index: WeekIndex) -> Recurrence {
        Recurrence::RelativeMonthly { interval_months, day_of_week, week_index }
    }

    /// `start` is "HH:MM" local, `offset` "+HH:MM"/"-HH:MM"; blackouts are inclusive local dates.
    fn win(
        recurrence: Recurrence,
        hours: i64,
        start: &str,
        offset: &str,
        anchor: &str,
        blackouts: &[(&str, &str)],
    ) -> MaintenanceWindow {
        let minutes = |hh_mm: &str| -> i32 {
            let (h, m) = hh_mm.split_once(':').unwrap();
            h.parse::<i32>().unwrap() * 60 + m.parse::<i32>().unwrap()
        };
        let offset_minutes = match offset.strip_prefix('-') {
            Some(rest) => -minutes(rest),
            None => minutes(offset.trim_start_matches('+')),
        };
        MaintenanceWindow {
            recurrence,
            duration: Duration::hours(hours),
            start_time_minutes: minutes(start) as u32,
            utc_offset_minutes: offset_minutes,
            anchor: date(anchor),
            runs_backwards: false,
            not_allowed: blackouts.iter().map(|(s, e)| (date(s), date(e))).collect(),
        }
    }

    /// Start instants of the open intervals in `[from, to)`.
    fn starts(window: &MaintenanceWindow, from: &str, to: &str) -> Vec<String> {
        window.occurrences_between(at(from), at(to)).into_iter().map(|(s, _)| s.to_rfc3339()).collect()
    }

    // aks-models.md §1.4, example 1: every Tuesday 01:00–05:00 UTC, blackout 2021-05-26..30.
    fn aks_example_weekly() -> MaintenanceWindow {
        let b = [("2021-05-26", "2021-05-30")];
        win(weekly(1, Weekday::Tue), 4, "01:00", "+00:00", "2021-01-01", &b)
    }

    // aks-models.md §1.4, example 2: day 1 every 3 months, 09:00–13:00 −08:00, from 2023-01-20.
    fn aks_example_absolute() -> MaintenanceWindow {
        let b = [("2023-12-23", "2024-01-05")];
        win(absolute(3, 1), 4, "09:00", "-08:00", "2023-01-20", &b)
    }

    // aks-models.md §1.4, example 3: every three days, 22:00 +01:00 for 6 h.
    fn aks_example_daily() -> MaintenanceWindow {
        win(daily(3), 6, "22:00", "+01:00", "2026-03-01", &[])
    }

    // aks-models.md §1.4, example 4: last Monday every two months, 00:00 +05:30 for 8 h.
    fn aks_example_relative() -> MaintenanceWindow {
        let last_monday = relative(2, Weekday::Mon, WeekIndex::Last);
        win(last_monday, 8, "00:00", "+05:30", "2026-01-15", &[])
    }

    #[test]
    fn open_at_an_instant() {
        let crossing_utc = win(weekly(3, Weekday::Fri), 8, "00:00", "+05:30", "2026-04-01", &[]);
        let past_midnight = win(daily(1), 6, "22:00", "-08:00", "2026-01-01", &[]);
        let cases = [
            (aks_example_weekly(), "2021-05-04T00:59:59Z", false),
            (aks_example_weekly(), "2021-05-04T01:00:00Z", true),
            (aks_example_weekly(), "2021-05-04T04:59:59Z", true),
            (aks_example_weekly(), "2021-05-04T05:00:00Z", false),
            (aks_example_weekly(), "2021-05-05T02:00:00Z", false),
            // Friday 2026-04-03 local 00:00 +05:30 is Thursday 18:30 UTC.
            (crossing_utc.clone(), "2026-04-02T18:29:59Z", false),
            (crossing_utc.clone(), "2026-04-02T18:30:00Z", true),
            (crossing_utc.clone(), "2026-04-03T02:29:59Z", true),
            (crossing_utc.clone(), "2026-04-03T02:30:00Z", false),
            // Week 1 (2026-04-10) is skipped with intervalWeeks 3.
            (crossing_utc.clone(), "2026-04-09T20:00:00Z", false),
            (crossing_utc, "2026-04-23T20:00:00Z", true),
            // 22:00 −08:00 is 06:00 UTC the next day; the occurrence runs to 04:00 local.
            (past_midnight.clone(), "2026-01-06T05:59:59Z", false),
            (past_midnight.clone(), "2026-01-06T06:00:00Z", true),
            (past_midnight.clone(), "2026-01-06T11:59:59Z", true),
            (past_midnight.clone(), "2026-01-06T12:00:00Z", false),
            // The anchor's own date is the first occurrence: 2026-01-01 22:00 −08:00.
            (past_midnight.clone(), "2026-01-02T06:00:00Z", true),
            (past_midnight, "2026-01-01T08:00:00Z", false),
        ];
        for (window, instant, open) in cases {
            assert_eq!(window.is_open(at(instant)), open, "{instant} {window:?}");
        }
    }

    #[test]
    fn next_opening_and_state() {
        let erratum = win(weekly(1, Weekday::Fri), 4, "18:00", "-05:00", "2026-01-01", &[]);
        let cases = [
            // SEMANTICS §11 erratum: Friday 18:00 −05:00 from early that week.
            (erratum.clone(), "2026-03-30T00:00:00Z", Some("2026-04-03T23:00:00Z")),
            (erratum.clone(), "2026-04-03T23:00:00Z", Some("2026-04-03T23:00:00Z")),
            (erratum.clone(), "2026-04-04T01:00:00Z", Some("2026-04-04T01:00:00Z")),
            (erratum, "2026-04-04T03:00:00Z", Some("2026-04-10T23:00:00Z")),
            (aks_example_weekly(), "2021-05-26T00:00:00Z", Some("2021-06-01T01:00:00Z")),
            // 2023-01-01 is before startDate; then Apr 1, Jul 1, Oct 1 at 17:00 UTC.
            (aks_example_absolute(), "2023-01-01T00:00:00Z", Some("2023-04-01T17:00:00Z")),
            (aks_example_absolute(), "2023-04-01T21:00:00Z", Some("2023-07-01T17:00:00Z")),
            // 2024-01-01 is blacked out (2023-12-23..2024-01-05); the next is 2024-04-01.
            (aks_example_absolute(), "2023-10-02T00:00:00Z", Some("2024-04-01T17:00:00Z")),
            // Every 3 days from 2026-03-01 at 22:00 +01:00 = 21:00 UTC.
            (aks_example_daily(), "2026-03-02T00:00:00Z", Some("2026-03-02T00:00:00Z")),
            (aks_example_daily(), "2026-03-02T03:00:00Z", Some("2026-03-04T21:00:00Z")),
            (aks_example_daily(), "2026-03-05T02:59:59Z", Some("2026-03-05T02:59:59Z")),
            (aks_example_daily(), "2026-03-05T03:00:00Z", Some("2026-03-07T21:00:00Z")),
            // Jan, Mar, May... last Mondays: 2026-01-26, 03-30, 05-25; local 00:00 = 18:30 UTC before.
            (aks_example_relative(), "2026-01-01T00:00:00Z", Some("2026-01-25T18:30:00Z")),
            (aks_example_relative(), "2026-01-26T02:30:00Z", Some("2026-03-29T18:30:00Z")),
            (aks_example_relative(), "2026-04-01T00:00:00Z", Some("2026-05-24T18:30:00Z")),
        ];
        for (window, instant, expected) in cases {
            let t = at(instant);
            let expected = expected.map(at);
            assert_eq!(window.next_opening(t), expected, "{instant} {window:?}");
            let state = window.state_at(t);
            if expected == Some(t) {
                assert!(matches!(state, WindowState::Open { .. }), "{instant}");
            } else {
                assert_eq!(state, WindowState::Closed { next_open: expected }, "{instant}");
            }
        }
    }

    #[test]
    fn open_until_ends_at_the_occurrence_end_or_the_union() {
        let every_other_day = win(daily(2), 24, "10:00", "+00:00", "2026-03-01", &[]);
        let always = win(daily(1), 24, "00:00", "+00:00", "2026-03-01", &[]);
        // Outside AKS limits, to exercise chaining: a 30-day occurrence on every 1st overlaps
        // the next one only after a 28-day February.
        let mut chained = win(absolute(1, 1), 0, "00:00", "+00:00", "2026-01-01", &[]);
        chained.duration = Duration::days(30);
        let cases = [
            (aks_example_weekly(), "2021-05-04T02:00:00Z", "2021-05-04T05:00:00Z"),
            (every_other_day, "2026-03-02T09:59:59Z", "2026-03-02T10:00:00Z"),
            (chained.clone(), "2026-01-15T00:00:00Z", "2026-01-31T00:00:00Z"),
            (chained, "2026-02-10T00:00:00Z", "2026-03-31T00:00:00Z"),
        ];
        for (window, instant, until) in cases {
            let state = window.state_at(at(instant));
            assert_eq!(state, WindowState::Open { until: at(until) }, "{instant}");
        }
        let t = at("2026-05-01T00:00:00Z");
        assert_eq!(always.state_at(t), WindowState::Open { until: t + SEARCH_HORIZON });
    }

    #[test]
    fn window_classes() {
        let w = aks_example_weekly(); // Tuesdays 01:00–05:00 UTC
        let four_hours = OPENS_SOON_LOOKAHEAD;
        let cases = [
            (Some(&w), "2021-05-04T03:00:00Z", WindowClass::OpenNow),
            (Some(&w), "2021-05-03T21:00:00Z", WindowClass::OpensSoon), // exactly 4 h
            (Some(&w), "2021-05-04T00:59:59Z", WindowClass::OpensSoon),
            (Some(&w), "2021-05-03T20:59:59Z", WindowClass::Closed), // 4 h 1 s
            (Some(&w), "2021-05-04T05:00:00Z", WindowClass::Closed),
            (None, "2021-05-04T03:00:00Z", WindowClass::NoWindow),
        ];
        for (window, instant, class) in cases {
            assert_eq!(class_of(window, at(instant), four_hours), class, "{instant}");
        }
        assert!(WindowClass::OpenNow < WindowClass::OpensSoon);
        assert!(WindowClass::OpensSoon < WindowClass::NoWindow);
        assert!(WindowClass::NoWindow < WindowClass::Closed);
    }

    #[test]
    fn recurrences_anchored_at_start_date() {
        use WeekIndex::*;
        use Weekday::*;
        let at_two = |recurrence, anchor| win(recurrence, 4, "02:00", "+00:00", anchor, &[]);
        let cases: Vec<(MaintenanceWindow, &str, &str, Vec<&str>)> = vec![
            (
                at_two(daily(3), "2026-03-10"),
                "2026-03-01T00:00:00Z",
                "2026-03-20T00:00:00Z",
                vec!["2026-03-10", "2026-03-13", "2026-03-16", "2026-03-19"],
            ),
            // Anchor Wednesday 2026-03-11: week 0 is Mar 9–15, its Monday precedes the anchor.
            (
                at_two(weekly(2, Mon), "2026-03-11"),
                "2026-03-01T00:00:00Z",
                "2026-04-30T00:00:00Z",
                vec!["2026-03-23", "2026-04-06", "2026-04-20"],
            ),
            (
                at_two(weekly(3, Fri), "2026-03-11"),
                "2026-03-01T00:00:00Z",
                "2026-04-30T00:00:00Z",
                vec!["2026-03-13", "2026-04-03", "2026-04-24"],
            ),
            (
                at_two(weekly(2, Wed), "2026-03-11"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-11", "2026-03-25"],
            ),
            // Weeks keep counting across a year boundary: 2026-12-28 is week 0's Monday.
            (
                at_two(weekly(2, Sun), "2026-12-31"),
                "2026-12-01T00:00:00Z",
                "2027-02-01T00:00:00Z",
                vec!["2027-01-03", "2027-01-17", "2027-01-31"],
            ),
            // January 15 precedes the anchor; months 0, 2, 4… from January.
            (
                at_two(absolute(2, 15), "2026-01-20"),
                "2026-01-01T00:00:00Z",
                "2026-08-01T00:00:00Z",
                vec!["2026-03-15", "2026-05-15", "2026-07-15"],
            ),
            (
                at_two(absolute(3, 1), "2026-01-01"),
                "2026-01-01T00:00:00Z",
                "2027-01-02T00:00:00Z",
                vec!["2026-01-01", "2026-04-01", "2026-07-01", "2026-10-01", "2027-01-01"],
            ),
            // Day 31 skips the short months.
            (
                at_two(absolute(1, 31), "2026-01-01"),
                "2026-01-01T00:00:00Z",
                "2027-01-01T00:00:00Z",
                vec!["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31", "2026-08-31", "2026-10-31", "2026-12-31"],
            ),
            // Every 2 months from February: Feb, Apr, Jun lack a 31st.
            (
                at_two(absolute(2, 31), "2026-02-10"),
                "2026-01-01T00:00:00Z",
                "2027-01-01T00:00:00Z",
                vec!["2026-08-31", "2026-10-31", "2026-12-31"],
            ),
            // Day 29: February 2028 (leap) has it, February 2027 does not.
            (
                at_two(absolute(1, 29), "2027-12-01"),
                "2027-12-01T00:00:00Z",
                "2028-04-01T00:00:00Z",
                vec!["2027-12-29", "2028-01-29", "2028-02-29", "2028-03-29"],
            ),
            (
                at_two(absolute(1, 29), "2026-12-01"),
                "2026-12-01T00:00:00Z",
                "2027-04-01T00:00:00Z",
                vec!["2026-12-29", "2027-01-29", "2027-03-29"],
            ),
            // 2100 is not a leap year (century rule), 2000 was.
            (at_two(absolute(1, 29), "2100-01-30"), "2100-01-01T00:00:00Z", "2100-04-01T00:00:00Z", vec!["2100-03-29"]),
            (
                at_two(absolute(12, 29), "2000-02-01"),
                "2000-01-01T00:00:00Z",
                "2001-03-01T00:00:00Z",
                vec!["2000-02-29"],
            ),
            // A daily window steps over February 29.
            (
                at_two(daily(7), "2028-02-22"),
                "2028-02-20T00:00:00Z",
                "2028-03-10T00:00:00Z",
                vec!["2028-02-22", "2028-02-29", "2028-03-07"],
            ),
            // Last Friday; January and July 2026 have five Fridays.
            (
                at_two(relative(1, Fri, Last), "2026-01-01"),
                "2026-01-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-01-30", "2026-02-27", "2026-03-27"],
            ),
            (
                at_two(relative(1, Fri, Last), "2026-07-01"),
                "2026-07-01T00:00:00Z",
                "2026-08-01T00:00:00Z",
                vec!["2026-07-31"],
            ),
            (
                at_two(relative(1, Fri, Fourth), "2026-07-01"),
                "2026-07-01T00:00:00Z",
                "2026-08-01T00:00:00Z",
                vec!["2026-07-24"],
            ),
            // March 2026 Mondays: 2, 9, 16, 23, 30.
            (
                at_two(relative(1, Mon, First), "2026-03-01"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-02"],
            ),
            (
                at_two(relative(1, Mon, Second), "2026-03-01"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-09"],
            ),
            (
                at_two(relative(1, Mon, Third), "2026-03-01"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-16"],
            ),
            (
                at_two(relative(1, Mon, Fourth), "2026-03-01"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-23"],
            ),
            (
                at_two(relative(1, Mon, Last), "2026-03-01"),
                "2026-03-01T00:00:00Z",
                "2026-04-01T00:00:00Z",
                vec!["2026-03-30"],
            ),
            // Leap February: 2028-02-29 is the last Tuesday; in 2027 it is the 23rd.
            (
                at_two(relative(12, Tue, Last), "2028-02-01"),
                "2028-01-01T00:00:00Z",
                "2028-03-01T00:00:00Z",
                vec!["2028-02-29"],
            ),
            (
                at_two(relative(12, Tue, Last), "2027-02-01"),
                "2027-01-01T00:00:00Z",
                "2027-03-01T00:00:00Z",
                vec!["2027-02-23"],
            ),
            // First Friday every 3 months from April (its first Friday, the 3rd, is before the
            // anchor on the 10th): July, October.
            (
                at_two(relative(3, Fri, First), "2026-04-10"),
                "2026-04-01T00:00:00Z",
                "2027-01-01T00:00:00Z",
                vec!["2026-07-03", "2026-10-02"],
            ),
        ];
        for (window, from, to, dates) in cases {
            let expected: Vec<String> = dates.iter().map(|d| format!("{d}T02:00:00Z")).collect();
            assert_eq!(starts(&window, from, to), expected, "{window:?}");
        }
    }

    /// SEMANTICS §11 "Window calendar": without `startDate` the calendar also runs backwards from
    /// the anchor, with the interval phase kept (the anchor's week is week 0, so weeks −2, −4 …
    /// hold occurrences too); with `startDate` nothing comes before it.
    #[test]
    fn calendar_without_start_date_runs_backwards() {
        let backwards = |recurrence, hours, start: &str, anchor| MaintenanceWindow {
            runs_backwards: true,
            ..win(recurrence, hours, start, "+00:00", anchor, &[])
        };
        // Every 2 weeks on Monday, anchored Wednesday 2026-03-11: week 0 is Mar 9–15.
        let fortnightly = backwards(weekly(2, Weekday::Mon), 4, "02:00", "2026-03-11");
        assert_eq!(
            starts(&fortnightly, "2026-02-01T00:00:00Z", "2026-03-31T00:00:00Z"),
            ["2026-02-09T02:00:00Z", "2026-02-23T02:00:00Z", "2026-03-09T02:00:00Z", "2026-03-23T02:00:00Z"]
        );
        // Daily 22:00 for 6 h, anchored at a 02:00 start: the evening before is open at the start.
        let evening = backwards(daily(1), 6, "22:00", "2026-03-02");
        assert!(evening.is_open(at("2026-03-02T02:00:00Z")));
        assert_eq!(
            evening.state_at(at("2026-03-02T02:00:00Z")),
            WindowState::Open { until: at("2026-03-02T04:00:00Z") }
        );
        // Every 3 days: the phase is the anchor's, backwards as forwards.
        let every_third = backwards(daily(3), 4, "02:00", "2026-03-10");
        assert_eq!(
            starts(&every_third, "2026-03-01T00:00:00Z", "2026-03-14T00:00:00Z"),
            [
                "2026-03-01T02:00:00Z",
                "2026-03-04T02:00:00Z",
                "2026-03-07T02:00:00Z",
                "2026-03-10T02:00:00Z",
                "2026-03-13T02:00:00Z"
            ]
        );
        // Every 2 months on the 15th from March: January is month −2.
        let bimonthly = backwards(absolute(2, 15), 4, "02:00", "2026-03-20");
        assert_eq!(
            starts(&bimonthly, "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"),
            ["2026-01-15T02:00:00Z", "2026-03-15T02:00:00Z", "2026-05-15T02:00:00Z"]
        );
        // With `startDate`, the same evening window is closed until its first occurrence.
        let bounded = win(daily(1), 6, "22:00", "+00:00", "2026-03-02", &[]);
        assert!(!bounded.is_open(at("2026-03-02T02:00:00Z")));
        assert_eq!(bounded.next_opening(at("2026-03-02T02:00:00Z")), Some(at("2026-03-02T22:00:00Z")));
    }

    #[test]
    fn aks_docs_examples() {
        let cases = [
            (
                aks_example_weekly(),
                "2021-05-20T00:00:00Z",
                "2021-06-09T00:00:00Z",
                vec![
                    ("2021-05-25T01:00:00Z", "2021-05-25T05:00:00Z"),
                    ("2021-06-01T01:00:00Z", "2021-06-01T05:00:00Z"),
                    ("2021-06-08T01:00:00Z", "2021-06-08T05:00:00Z"),
                ],
            ),
            (
                aks_example_absolute(),
                "2023-01-01T00:00:00Z",
                "2024-07-01T00:00:00Z",
                vec![
                    ("2023-04-01T17:00:00Z", "2023-04-01T21:00:00Z"),
                    ("2023-07-01T17:00:00Z", "2023-07-01T21:00:00Z"),
                    ("2023-10-01T17:00:00Z", "2023-10-01T21:00:00Z"),
                    ("2024-04-01T17:00:00Z", "2024-04-01T21:00:00Z"),
                ],
            ),
            (
                aks_example_daily(),
                "2026-03-01T00:00:00Z",
                "2026-03-08T00:00:00Z",
                vec![
                    ("2026-03-01T21:00:00Z", "2026-03-02T03:00:00Z"),
                    ("2026-03-04T21:00:00Z", "2026-03-05T03:00:00Z"),
                    ("2026-03-07T21:00:00Z", "2026-03-08T00:00:00Z"), // clipped at `to`
                ],
            ),
            (
                aks_example_relative(),
                "2026-01-01T00:00:00Z",
                "2026-06-01T00:00:00Z",
                vec![
                    ("2026-01-25T18:30:00Z", "2026-01-26T02:30:00Z"),
                    ("2026-03-29T18:30:00Z", "2026-03-30T02:30:00Z"),
                    ("2026-05-24T18:30:00Z", "2026-05-25T02:30:00Z"),
                ],
            ),
        ];
        for (window, from, to, intervals) in cases {
            let expected: Vec<(Time, Time)> = intervals.iter().map(|(s, e)| (at(s), at(e))).collect();
            assert_eq!(window.occurrences_between(at(from), at(to)), expected, "{window:?}");
        }
    }

    #[test]
    fn blackout_across_a_year_boundary() {
        // aks-models.md §1.2: +02:00 and 2022-12-23..2023-01-03 block 2022-12-22T22:00Z to
        // 2023-01-03T22:00Z. An always-open window shows exactly the blackout.
        let b = [("2022-12-23", "2023-01-03")];
        let w = win(daily(1), 24, "00:00", "+02:00", "2022-12-01", &b);
        for (instant, open) in [
            ("2022-12-22T21:59:59Z", true),
            ("2022-12-22T22:00:00Z", false),
            ("2022-12-31T23:59:59Z", false),
            ("2023-01-01T00:00:00Z", false),
            ("2023-01-03T21:59:59Z", false),
            ("2023-01-03T22:00:00Z", true),
        ] {
            assert_eq!(w.is_open(at(instant)), open, "{instant}");
        }
        assert_eq!(w.state_at(at("2022-12-22T12:00:00Z")), WindowState::Open { until: at("2022-12-22T22:00:00Z") });
        assert_eq!(
            w.state_at(at("2022-12-25T00:00:00Z")),
            WindowState::Closed { next_open: Some(at("2023-01-03T22:00:00Z")) }
        );
        assert_eq!(
            w.occurrences_between(at("2022-12-20T00:00:00Z"), at("2023-01-06T00:00:00Z")),
            vec![
                (at("2022-12-20T00:00:00Z"), at("2022-12-22T22:00:00Z")),
                (at("2023-01-03T22:00:00Z"), at("2023-01-06T00:00:00Z")),
            ]
        );
    }

    #[test]
    fn occurrence_partly_inside_a_blackout() {
        // Daily 22:00–06:00 UTC, 2026-03-10 blacked out: the Mar 9 occurrence is cut at
        // midnight, the Mar 10 one opens when the blackout ends.
        let w = win(daily(1), 8, "22:00", "+00:00", "2026-03-01", &[("2026-03-10", "2026-03-10")]);
        assert_eq!(w.state_at(at("2026-03-09T23:00:00Z")), WindowState::Open { until: at("2026-03-10T00:00:00Z") });
        assert_eq!(
            w.state_at(at("2026-03-10T12:00:00Z")),
            WindowState::Closed { next_open: Some(at("2026-03-11T00:00:00Z")) }
        );
        assert_eq!(w.state_at(at("2026-03-11T00:00:00Z")), WindowState::Open { until: at("2026-03-11T06:00:00Z") });
        assert_eq!(
            w.occurrences_between(at("2026-03-09T12:00:00Z"), at("2026-03-11T12:00:00Z")),
            vec![
                (at("2026-03-09T22:00:00Z"), at("2026-03-10T00:00:00Z")),
                (at("2026-03-11T00:00:00Z"), at("2026-03-11T06:00:00Z")),
            ]
        );
        // Overlapping and touching blackouts are passed over as one stretch.
        let b = [("2026-03-12", "2026-03-14"), ("2026-03-10", "2026-03-12"), ("2026-03-15", "2026-03-15")];
        let w = win(daily(1), 24, "00:00", "+00:00", "2026-03-01", &b);
        assert_eq!(w.next_opening(at("2026-03-11T00:00:00Z")), Some(at("2026-03-16T00:00:00Z")));
    }

    #[test]
    fn never_opening_calendars_answer_none() {
        let blocked = win(daily(1), 4, "02:00", "+00:00", "2026-01-01", &[("2026-01-01", "2040-01-01")]);
        assert_eq!(blocked.next_opening(at("2026-01-01T00:00:00Z")), None);
        assert_eq!(blocked.class_at(at("2026-01-01T00:00:00Z"), OPENS_SOON_LOOKAHEAD), WindowClass::Closed);
        // Day 31 every 12 months from a 30-day month never occurs.
        let never = win(absolute(12, 31), 4, "02:00", "+00:00", "2026-04-01", &[]);
        assert_eq!(never.next_opening(at("2026-01-01T00:00:00Z")), None);
        let mut empty = win(daily(1), 4, "02:00", "+00:00", "2026-01-01", &[]);
        empty.duration = Duration::ZERO;
        assert_eq!(empty.state_at(at("2026-02-01T02:00:00Z")), WindowState::Closed { next_open: None });
        // Starting far in the future is beyond the search horizon.
        let late = win(daily(1), 4, "02:00", "+00:00", "2040-01-01", &[]);
        assert_eq!(late.next_opening(at("2026-01-01T00:00:00Z")), None);
        assert!(late.next_opening(at("2039-12-01T00:00:00Z")).is_some());
        assert_eq!(late.next_opening(Time(i64::MAX)), None);
        assert!(!late.is_open(Time(i64::MIN)));
    }

    #[test]
    fn the_interval_listing_is_empty_for_an_empty_span_window_or_an_out_of_range_bound() {
        let w = win(daily(1), 4, "02:00", "+00:00", "2026-01-01", &[]);
        let (from, to) = (at("2026-02-01T00:00:00Z"), at("2026-02-03T00:00:00Z"));
        assert_eq!(starts(&w, "2026-02-01T00:00:00Z", "2026-02-03T00:00:00Z").len(), 2);
        assert_eq!(w.occurrences_between(to, from), Vec::new());
        assert_eq!(w.occurrences_between(from, from), Vec::new());
        assert_eq!(w.occurrences_between(from, Time(i64::MAX)), Vec::new());
        assert_eq!(w.occurrences_between(Time(i64::MIN), to), Vec::new());
        let mut empty = w.clone();
        empty.duration = Duration::ZERO;
        assert_eq!(empty.occurrences_between(from, to), Vec::new());
        // Clipped to the span asked for, at both ends.
        assert_eq!(
            w.occurrences_between(at("2026-02-01T03:00:00Z"), at("2026-02-02T04:00:00Z")),
            vec![
                (at("2026-02-01T03:00:00Z"), at("2026-02-01T06:00:00Z")),
                (at("2026-02-02T02:00:00Z"), at("2026-02-02T04:00:00Z")),
            ]
        );
    }

    // ---- property test against a literal reading of SEMANTICS §11 --------------------------

    /// Whether local date `day` starts an occurrence, straight from the rule's wording.
    fn oracle_occurs(w: &MaintenanceWindow, day: NaiveDate) -> bool {
        if !w.runs_backwards && day < w.anchor {
            return false;
        }
        let monday = |d: NaiveDate| d - Days::new(u64::from(d.weekday().num_days_from_monday()));
        let months = (day.year() - w.anchor.year()) * 12 + day.month() as i32 - w.anchor.month() as i32;
        match w.recurrence {
            Recurrence::Daily { interval_days } => (day - w.anchor).num_days() % i64::from(interval_days) == 0,
            Recurrence::Weekly { interval_weeks, day_of_week } => {
                let weeks = (monday(day) - monday(w.anchor)).num_days() / 7;
                day.weekday() == day_of_week && weeks % i64::from(interval_weeks) == 0
            }
            Recurrence::AbsoluteMonthly { interval_months, day_of_month } => {
                day.day() == day_of_month && months % interval_months as i32 == 0
            }
            Recurrence::RelativeMonthly { interval_months, day_of_week, week_index } => {
                let in_week = match week_index {
                    WeekIndex::First => day.day() <= 7,
                    WeekIndex::Second => (8..=14).contains(&day.day()),
                    WeekIndex::Third => (15..=21).contains(&day.day()),
                    WeekIndex::Fourth => (22..=28).contains(&day.day()),
                    WeekIndex::Last => (day + Days::new(7)).month() != day.month(),
                };
                day.weekday() == day_of_week && in_week && months % interval_months as i32 == 0
            }
        }
    }

    fn oracle_open(w: &MaintenanceWindow, t: Time) -> bool {
        let offset = i64::from(w.utc_offset_minutes) * 60;
        let local = DateTime::from_timestamp(t.0 + offset, 0).unwrap().naive_utc();
        let today = local.date();
        if w.not_allowed.iter().any(|(s, e)| *s <= today && today <= *e) {
            return false;
        }
        let back_days = w.duration.0 / 86_400 + 2;
        (0..=back_days).any(|k| {
            let day = today - Days::new(k as u64);
            let midnight = day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp() - offset;
            let start = midnight + i64::from(w.start_time_minutes) * 60;
            oracle_occurs(w, day) && start <= t.0 && t.0 < start + w.duration.0
        })
    }

    fn arb_window() -> impl Strategy<Value = MaintenanceWindow> {
        let weekday = (0u8..7).prop_map(|i| Weekday::try_from(i).unwrap());
        let week_index = prop_oneof![
            Just(WeekIndex::First),
            Just(WeekIndex::Second),
            Just(WeekIndex::Third),
            Just(WeekIndex::Fourth),
            Just(WeekIndex::Last),
        ];
        let recurrence = prop_oneof![
            (1u32..=7).prop_map(daily),
            (1u32..=4, weekday.clone()).prop_map(|(n, d)| weekly(n, d)),
            (1u32..=6, 1u32..=31).prop_map(|(n, d)| absolute(n, d)),
            (1u32..=6, weekday, week_index).prop_map(|(n, d, i)| relative(n, d, i)),
        ];
        let blackout = (0i64..900, 0i64..30);
        (
            recurrence,
            // Beyond the AKS 4–24 h too, to cover overlapping occurrences.
            prop_oneof![4i64..=24, 1i64..=200],
            0u32..1440,
            -840i32..=840,
            0i64..1500,
            proptest::collection::vec(blackout, 0..4),
            any::<bool>(),
        )
            .prop_map(|(recurrence, hours, start, offset, anchor, blackouts, runs_backwards)| {
                let base = date("2025-01-01");
                let day = |d: i64| base + Days::new(d as u64);
                MaintenanceWindow {
                    recurrence,
                    duration: Duration::hours(hours),
                    start_time_minutes: start,
                    utc_offset_minutes: offset,
                    anchor: day(anchor),
                    runs_backwards,
                    not_allowed: blackouts.iter().map(|&(s, n)| (day(s), day(s + n))).collect(),
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn calendar_agrees_with_a_literal_reading(
            w in arb_window(),
            // 2024-12-01 .. about 2030, often before the anchor and inside blackouts.
            t in 1_733_011_200i64..1_900_000_000,
            probes in proptest::collection::vec(0.0f64..1.0, 8),
        ) {
            let t = Time(t);
            prop_assert_eq!(w.is_open(t), oracle_open(&w, t));
            match w.state_at(t) {
                WindowState::Open { until } => {
                    prop_assert!(oracle_open(&w, t));
                    prop_assert!(until > t);
                    prop_assert!(oracle_open(&w, Time(until.0 - 1)));
                    prop_assert!(until == t + SEARCH_HORIZON || !oracle_open(&w, until));
                    for p in &probes {
                        let probe = Time(t.0 + ((until.0 - t.0) as f64 * p) as i64);
                        prop_assert!(oracle_open(&w, probe), "closed at {} before {}", probe, until);
                    }
                    prop_assert_eq!(w.next_opening(t), Some(t));
                }
                WindowState::Closed { next_open } => {
                    prop_assert!(!oracle_open(&w, t));
                    prop_assert_eq!(next_open, w.next_opening(t));
                    let end = next_open.unwrap_or(t + Duration::days(400));
                    if let Some(open) = next_open {
                        prop_assert!(open > t);
                        prop_assert!(oracle_open(&w, open));
                        prop_assert!(!oracle_open(&w, Time(open.0 - 1)));
                    }
                    for p in &probes {
                        let probe = Time(t.0 + ((end.0 - t.0) as f64 * p) as i64);
                        prop_assert!(probe == end || !oracle_open(&w, probe), "open at {} before {:?}", probe, next_open);
                    }
                }
            }
            // The interval listing covers exactly the open instants.
            let to = t + Duration::days(40);
            let intervals = w.occurrences_between(t, to);
            for pair in intervals.windows(2) {
                prop_assert!(pair[0].1 < pair[1].0);
            }
            for (start, end) in &intervals {
                prop_assert!(oracle_open(&w, *start) && oracle_open(&w, Time(end.0 - 1)));
                prop_assert!(*end == to || !oracle_open(&w, *end));
            }
            for p in &probes {
                let probe = Time(t.0 + ((to.0 - t.0) as f64 * p) as i64);
                let listed = intervals.iter().any(|(s, e)| *s <= probe && probe < *e);
                prop_assert_eq!(listed, oracle_open(&w, probe), "{}", probe);
            }
        }
    }
}
