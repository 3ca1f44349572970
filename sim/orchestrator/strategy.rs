//! Validated update strategies: stages, groups, limits and gates (SEMANTICS §1, §2, §4, §7).
//!
//! These are the orchestrator's own types. The scenario layer parses the API's JSON shape, validates it
//! and builds these; nothing here can be invalid.

use chrono::{Datelike, Duration as ChronoDuration, NaiveTime, Timelike, Weekday};

use crate::engine::{Duration, Time};
use crate::fleet::selector::Selector;
use crate::text::echo;

/// A `maxConcurrency` or `maxAllowedFailures` value as written: a count or a percentage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Count(u32),
    Percent(u32),
}

impl Limit {
    /// `maxConcurrency`: `^(?:([1-9]\d*)|([1-9]\d?|100)%)$` (SEMANTICS §2).
    pub fn parse_max_concurrency(text: &str) -> Result<Limit, String> {
        let rule = "must be a whole number of at least 1 (\"3\") or a percentage from 1% to 100% (\"25%\")";
        match parse_limit(text) {
            Some(Limit::Count(n)) if n >= 1 && !text.starts_with('0') => Ok(Limit::Count(n)),
            Some(Limit::Percent(p)) if (1..=100).contains(&p) && !text.starts_with('0') => Ok(Limit::Percent(p)),
            _ => Err(format!("maxConcurrency {} {rule}", echo(text))),
        }
    }

    /// `maxAllowedFailures`: `^(?:0|[1-9]\d*|(?:0|[1-9]\d?|100)%)$` (SEMANTICS §2).
    pub fn parse_max_allowed_failures(text: &str) -> Result<Limit, String> {
        let rule = "must be a whole number of at least 0 (\"2\") or a percentage from 0% to 100% (\"10%\")";
        let leading_zero = text.len() > 1 && text.starts_with('0') && text != "0%";
        match parse_limit(text) {
            Some(limit @ Limit::Count(_)) if !leading_zero => Ok(limit),
            Some(Limit::Percent(p)) if p <= 100 && !leading_zero => Ok(Limit::Percent(p)),
            _ => Err(format!("maxAllowedFailures {} {rule}", echo(text))),
        }
    }

    /// SEMANTICS §4: a percentage resolves to `max(1, floor(p × N / 100))`.
    pub fn resolve_concurrency(self, members: u32) -> u32 {
        match self {
            Limit::Count(n) => n,
            Limit::Percent(p) => ((u64::from(p) * u64::from(members)) / 100).max(1) as u32,
        }
    }

    /// SEMANTICS §4: a percentage resolves to `ceil(p × N / 100)`.
    pub fn resolve_failures(self, members: u32) -> u32 {
        match self {
            Limit::Count(n) => n,
            Limit::Percent(p) => (u64::from(p) * u64::from(members)).div_ceil(100) as u32,
        }
    }
}

/// Digits, optionally followed by `%`; `None` for anything else (including values beyond `u32`).
fn parse_limit(text: &str) -> Option<Limit> {
    let (digits, percent) = match text.strip_suffix('%') {
        Some(d) => (d, true),
        None => (text, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u32 = digits.parse().ok()?;
    Some(if percent { Limit::Percent(value) } else { Limit::Count(value) })
}

/// `scheduledStartConfiguration` of a ScheduledStart gate (SEMANTICS §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledStart {
    pub start_day: Weekday,
    /// Local time of day, minutes after midnight in `utc_offset_minutes`.
    pub start_minute: u32,
    pub utc_offset_minutes: i32,
}

impl ScheduledStart {
    /// The next occurrence of `startDay startTime` at `utcOffset` at or after `reached` (or strictly
    /// after when `exact_instant_counts` is false): SEMANTICS §7 and the §11 source erratum.
    pub fn next_occurrence(&self, reached: Time, exact_instant_counts: bool) -> Time {
        let offset = i64::from(self.utc_offset_minutes) * 60;
        let local = (reached + Duration(offset)).to_datetime().naive_utc();
        let time_of_day =
            NaiveTime::from_hms_opt(self.start_minute / 60, self.start_minute % 60, 0).expect("validated HH:mm");
        let days_ahead =
            (7 + self.start_day.num_days_from_monday() as i64 - local.weekday().num_days_from_monday() as i64) % 7;
        let mut candidate = (local.date() + ChronoDuration::days(days_ahead)).and_time(time_of_day);
        let reached_local = local.with_nanosecond(0).expect("zero nanoseconds is valid");
        if candidate < reached_local || (candidate == reached_local && !exact_instant_counts) {
            candidate += ChronoDuration::days(7);
        }
        Time(candidate.and_utc().timestamp() - offset)
    }
}

/// `GateConfiguration.type` (SEMANTICS §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateKind {
    Approval,
    ScheduledStart(ScheduledStart),
}

/// `GateConfiguration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateConfig {
    pub display_name: Option<String>,
    pub kind: GateKind,
}

/// Where a gate sits relative to its stage or group (the API's `timing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timing {
    Before,
    After,
}

impl Timing {
    pub fn api_name(self) -> &'static str {
        match self {
            Timing::Before => "Before",
            Timing::After => "After",
        }
    }
}

/// `UpdateGroup`.
#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub member_selector: Option<Selector>,
    pub max_concurrency: Option<Limit>,
    pub max_allowed_failures: Option<Limit>,
    pub before_gates: Vec<GateConfig>,
    pub after_gates: Vec<GateConfig>,
}

/// `UpdateStage`.
#[derive(Clone, Debug)]
pub struct Stage {
    pub name: String,
    pub groups: Vec<Group>,
    pub member_selector: Option<Selector>,
    pub after_stage_wait: Duration,
    pub max_concurrency: Option<Limit>,
    pub max_allowed_failures: Option<Limit>,
    pub before_gates: Vec<GateConfig>,
    pub after_gates: Vec<GateConfig>,
}

/// `UpdateRunStrategy`.
#[derive(Clone, Debug)]
pub struct Strategy {
    pub stages: Vec<Stage>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_patterns_follow_the_api() {
        for ok in ["1", "3", "50", "1%", "25%", "99%", "100%"] {
            assert!(Limit::parse_max_concurrency(ok).is_ok(), "{ok}");
        }
        for bad in ["0", "0%", "101%", "01", "05%", "-1", "1.5", "", "%", "abc", "99999999999"] {
            assert!(Limit::parse_max_concurrency(bad).is_err(), "{bad}");
        }
        for ok in ["0", "2", "0%", "10%", "100%"] {
            assert!(Limit::parse_max_allowed_failures(ok).is_ok(), "{ok}");
        }
        for bad in ["01", "00%", "101%", "-1", "", "1.0"] {
            assert!(Limit::parse_max_allowed_failures(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percentages_resolve_as_semantics_section_4_says() {
        // Concurrency example 3: stage of 20, groups of 8 and 12: 25% / 50% / 25% → 5 / 4 / 3.
        assert_eq!(Limit::Percent(25).resolve_concurrency(20), 5);
        assert_eq!(Limit::Percent(50).resolve_concurrency(8), 4);
        assert_eq!(Limit::Percent(25).resolve_concurrency(12), 3);
        // Failure example 2: 19 members, groups of 7 and 12, all 25% → 5 / 2 / 3.
        assert_eq!(Limit::Percent(25).resolve_failures(19), 5);
        assert_eq!(Limit::Percent(25).resolve_failures(7), 2);
        assert_eq!(Limit::Percent(25).resolve_failures(12), 3);
        // Floors at 1 for concurrency, not for failures.
        assert_eq!(Limit::Percent(10).resolve_concurrency(1), 1);
        assert_eq!(Limit::Percent(0).resolve_failures(7), 0);
        assert_eq!(Limit::Percent(25).resolve_failures(5), 2);
    }

    #[test]
    fn scheduled_start_next_occurrence() {
        let at = |s| Time::parse_rfc3339(s).unwrap();
        let gate =
            |day, minute, offset| ScheduledStart { start_day: day, start_minute: minute, utc_offset_minutes: offset };
        // Docs: Wednesday 02:00 UTC reached Monday → that Wednesday; reached Wednesday 03:00 → next week.
        let wed = gate(Weekday::Wed, 120, 0);
        assert_eq!(wed.next_occurrence(at("2026-03-02T10:00:00Z"), true), at("2026-03-04T02:00:00Z"));
        assert_eq!(wed.next_occurrence(at("2026-03-04T03:00:00Z"), true), at("2026-03-11T02:00:00Z"));
        // Exactly at the instant: counts as reached by default, else a week later.
        assert_eq!(wed.next_occurrence(at("2026-03-04T02:00:00Z"), true), at("2026-03-04T02:00:00Z"));
        assert_eq!(wed.next_occurrence(at("2026-03-04T02:00:00Z"), false), at("2026-03-11T02:00:00Z"));
        // SEMANTICS §11 erratum: Friday 18:00 −05:00 from early that week is 2026-04-03T23:00:00Z.
        let fri = gate(Weekday::Fri, 18 * 60, -300);
        assert_eq!(fri.next_occurrence(at("2026-03-30T12:00:00Z"), true), at("2026-04-03T23:00:00Z"));
        // The local date differs from the UTC date: Saturday 01:00 +09:00 is Friday 16:00 UTC.
        let sat = gate(Weekday::Sat, 60, 540);
        assert_eq!(sat.next_occurrence(at("2026-04-03T15:59:00Z"), true), at("2026-04-03T16:00:00Z"));
        assert_eq!(sat.next_occurrence(at("2026-04-03T16:00:30Z"), true), at("2026-04-10T16:00:00Z"));
    }
}
