//! The AKS `maintenanceWindow` JSON shape, accepted verbatim (SEMANTICS §1; aks-models.md §1.2),
//! its validation with JSON Pointers (SEMANTICS §2), and its conversion into a calendar.
//!
//! Numbers, day names and times are kept as plain JSON types here so that a wrong value becomes
//! a [`Problem`] naming its field and the allowed values, not an opaque deserialization error.
//! Only unknown fields and wrong JSON types are left to serde.

use chrono::{NaiveDate, Weekday};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{Duration, Time};
use crate::fleet::window::{MaintenanceWindow, Recurrence, WeekIndex};
use crate::scenario::dto::ReadOnly;
use crate::scenario::problem::{Problem, join};

/// `properties.maintenanceWindow` of an AKS maintenance configuration (aks-models.md §1.2), e.g.
/// the value of a member's `aksManagedAutoUpgradeSchedule` or `aksManagedNodeOSUpgradeSchedule`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceWindowDto {
    /// Exactly one recurrence.
    pub schedule: ScheduleDto,
    /// Length of each occurrence in hours, 4–24.
    #[schemars(range(min = 4, max = 24))]
    pub duration_hours: i64,
    /// Local start time `HH:mm`, 00:00–23:59, in `utcOffset`.
    #[schemars(regex(pattern = r"^\d{2}:\d{2}$"))]
    pub start_time: String,
    /// Fixed offset `+HH:mm` / `-HH:mm` from UTC, −14:00…+14:00; default `+00:00`. No daylight saving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(-|\+)[0-9]{2}:[0-9]{2}$"))]
    pub utc_offset: Option<String>,
    /// `YYYY-MM-DD`: no occurrence before this local date, and intervals count from it. Default:
    /// the scenario start's local date (SEMANTICS §11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    /// Blackouts: inclusive local date ranges during which the window stays closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_allowed_dates: Option<Vec<DateSpanDto>>,
    /// The maintenance configuration's name (`az aks maintenanceconfiguration show`): the field
    /// this window is given as.
    #[serde(default, skip_serializing)]
    pub name: ReadOnly,
    /// Read-only fields of the maintenance configuration resource: accepted and ignored.
    #[serde(default, skip_serializing)]
    pub id: ReadOnly,
    #[serde(default, skip_serializing, rename = "type")]
    pub resource_type: ReadOnly,
    #[serde(default, skip_serializing)]
    pub system_data: ReadOnly,
    #[serde(default, skip_serializing)]
    pub resource_group: ReadOnly,
    // The other columns of an Azure Resource Graph row (`az graph query`), accepted and ignored.
    #[serde(default, skip_serializing)]
    pub tenant_id: ReadOnly,
    #[serde(default, skip_serializing)]
    pub kind: ReadOnly,
    #[serde(default, skip_serializing)]
    pub location: ReadOnly,
    #[serde(default, skip_serializing)]
    pub subscription_id: ReadOnly,
    #[serde(default, skip_serializing)]
    pub managed_by: ReadOnly,
    #[serde(default, skip_serializing)]
    pub sku: ReadOnly,
    #[serde(default, skip_serializing)]
    pub plan: ReadOnly,
    #[serde(default, skip_serializing)]
    pub extended_location: ReadOnly,
    #[serde(default, skip_serializing)]
    pub tags: ReadOnly,
    #[serde(default, skip_serializing)]
    pub identity: ReadOnly,
    #[serde(default, skip_serializing)]
    pub zones: ReadOnly,
    /// The legacy configuration's fields, `null` in the az CLI's output of the other two; a value
    /// is an error naming how to convert it.
    #[serde(default, skip_serializing)]
    pub time_in_week: ReadOnly,
    #[serde(default, skip_serializing)]
    pub not_allowed_time: ReadOnly,
    /// The configuration's `maintenanceWindow` / `properties`: lifted into this object before it is read.
    #[serde(default, skip_serializing)]
    pub maintenance_window: ReadOnly,
    #[serde(default, skip_serializing)]
    pub properties: crate::scenario::dto::Properties,
}

/// `schedule`: exactly one member set, the others absent or `null` (as AKS prints them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily: Option<DailyDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly: Option<WeeklyDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute_monthly: Option<AbsoluteMonthlyDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_monthly: Option<RelativeMonthlyDto>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailyDto {
    #[schemars(range(min = 1, max = 7))]
    pub interval_days: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WeeklyDto {
    #[schemars(range(min = 1, max = 4))]
    pub interval_weeks: i64,
    #[schemars(extend("enum" = DAY_NAMES))]
    pub day_of_week: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AbsoluteMonthlyDto {
    #[schemars(range(min = 1, max = 6))]
    pub interval_months: i64,
    #[schemars(range(min = 1, max = 31))]
    pub day_of_month: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelativeMonthlyDto {
    #[schemars(range(min = 1, max = 6))]
    pub interval_months: i64,
    #[schemars(extend("enum" = DAY_NAMES))]
    pub day_of_week: String,
    #[schemars(extend("enum" = WEEK_INDEX_NAMES))]
    pub week_index: String,
}

/// One `notAllowedDates` entry: `start` through `end`, both inclusive local dates `YYYY-MM-DD`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DateSpanDto {
    pub start: String,
    pub end: String,
}

const DAY_NAMES: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const WEEKDAYS: [Weekday; 7] =
    [Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri, Weekday::Sat, Weekday::Sun];
const WEEK_INDEX_NAMES: [&str; 5] = ["First", "Second", "Third", "Fourth", "Last"];
const WEEK_INDEXES: [WeekIndex; 5] =
    [WeekIndex::First, WeekIndex::Second, WeekIndex::Third, WeekIndex::Fourth, WeekIndex::Last];
const DEFAULT_UTC_OFFSET: &str = "+00:00";
/// SEMANTICS §2: offsets run from −14:00 to +14:00, the extremes of real time zones
/// (aks-models.md §1.2 gives only the `±HH:mm` format).
const MAX_UTC_OFFSET_MINUTES: i32 = 14 * 60;

impl MaintenanceWindowDto {
    /// Every problem, each with its JSON Pointer under `path` (e.g.
    /// `/members/3/aksManagedAutoUpgradeSchedule/durationHours`), checked against the AKS limits
    /// (aks-models.md §1.2, SEMANTICS §2).
    pub fn validate(&self, path: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let schedule_path = join(path, "schedule");
        self.schedule.validate(&schedule_path, &mut problems);
        let hours = self.duration_hours;
        check_range(&mut problems, path, "durationHours", hours, 4, 24);
        if parse_start_time(&self.start_time).is_none() {
            problems.push(Problem::new(
                join(path, "startTime"),
                format!("startTime must be a local time \"HH:mm\" from 00:00 to 23:59, not {:?}.", self.start_time),
            ));
        }
        if let Some(offset) = &self.utc_offset
            && parse_utc_offset(offset).is_none()
        {
            problems.push(Problem::new(
                join(path, "utcOffset"),
                format!("utcOffset must be \"+HH:mm\" or \"-HH:mm\" from -14:00 to +14:00, not {offset:?}."),
            ));
        }
        if let Some(date) = &self.start_date {
            check_date(&mut problems, path, "startDate", date);
        }
        for (i, span) in self.not_allowed_dates.iter().flatten().enumerate() {
            let span_path = join(&join(path, "notAllowedDates"), i);
            let start = check_date(&mut problems, &span_path, "start", &span.start);
            let end = check_date(&mut problems, &span_path, "end", &span.end);
            if let (Some(start), Some(end)) = (start, end)
                && end < start
            {
                problems.push(Problem::new(
                    join(&span_path, "end"),
                    format!(
                        "end {end} is before start {start}; a notAllowedDates range runs from \
                             start through end and must not end before it starts."
                    ),
                ));
            }
        }
        problems
    }

    /// The calendar. Without `startDate` the anchor is the local date, in this window's offset,
    /// of `scenario_start` (SEMANTICS §11).
    ///
    /// # Panics
    /// If [`validate`](Self::validate) would report a problem: call it first.
    pub fn compile(&self, scenario_start: Time) -> MaintenanceWindow {
        self.try_compile(scenario_start).expect("compile is called only after validate() reported no problems")
    }

    fn try_compile(&self, scenario_start: Time) -> Option<MaintenanceWindow> {
        let utc_offset_minutes = parse_utc_offset(self.utc_offset.as_deref().unwrap_or(DEFAULT_UTC_OFFSET))?;
        let anchor = match &self.start_date {
            Some(date) => parse_date(date)?,
            None => (scenario_start + Duration::minutes(i64::from(utc_offset_minutes))).to_datetime().date_naive(),
        };
        let not_allowed = self
            .not_allowed_dates
            .iter()
            .flatten()
            .map(|span| Some((parse_date(&span.start)?, parse_date(&span.end)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(MaintenanceWindow {
            recurrence: self.schedule.recurrence()?,
            duration: Duration::hours(self.duration_hours),
            start_time_minutes: parse_start_time(&self.start_time)?,
            utc_offset_minutes,
            anchor,
            runs_backwards: self.start_date.is_none(),
            not_allowed,
        })
    }
}

impl ScheduleDto {
    fn kinds_set(&self) -> Vec<&'static str> {
        [
            ("daily", self.daily.is_some()),
            ("weekly", self.weekly.is_some()),
            ("absoluteMonthly", self.absolute_monthly.is_some()),
            ("relativeMonthly", self.relative_monthly.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name)
        .collect()
    }

    fn validate(&self, path: &str, problems: &mut Vec<Problem>) {
        let kinds = self.kinds_set();
        if kinds.len() != 1 {
            let found = if kinds.is_empty() { "none".to_string() } else { kinds.join(" and ") };
            problems.push(Problem::new(
                path,
                format!(
                    "schedule must set exactly one of daily, weekly, absoluteMonthly or \
                     relativeMonthly, but sets {found}."
                ),
            ));
        }
        if let Some(daily) = &self.daily {
            let path = join(path, "daily");
            check_range(problems, &path, "intervalDays", daily.interval_days, 1, 7);
        }
        if let Some(weekly) = &self.weekly {
            let path = join(path, "weekly");
            check_range(problems, &path, "intervalWeeks", weekly.interval_weeks, 1, 4);
            check_day(problems, &path, &weekly.day_of_week);
        }
        if let Some(monthly) = &self.absolute_monthly {
            let path = join(path, "absoluteMonthly");
            let months = monthly.interval_months;
            check_range(problems, &path, "intervalMonths", months, 1, 6);
            check_range(problems, &path, "dayOfMonth", monthly.day_of_month, 1, 31);
        }
        if let Some(monthly) = &self.relative_monthly {
            let path = join(path, "relativeMonthly");
            let months = monthly.interval_months;
            check_range(problems, &path, "intervalMonths", months, 1, 6);
            check_day(problems, &path, &monthly.day_of_week);
            if parse_week_index(&monthly.week_index).is_none() {
                problems.push(Problem::new(
                    join(&path, "weekIndex"),
                    format!(
                        "weekIndex must be one of First, Second, Third, Fourth or Last, not {:?}.",
                        monthly.week_index
                    ),
                ));
            }
        }
    }

    fn recurrence(&self) -> Option<Recurrence> {
        let count = |n: i64| u32::try_from(n).ok();
        match (&self.daily, &self.weekly, &self.absolute_monthly, &self.relative_monthly) {
            (Some(daily), None, None, None) => Some(Recurrence::Daily { interval_days: count(daily.interval_days)? }),
            (None, Some(weekly), None, None) => Some(Recurrence::Weekly {
                interval_weeks: count(weekly.interval_weeks)?,
                day_of_week: parse_weekday(&weekly.day_of_week)?,
            }),
            (None, None, Some(monthly), None) => Some(Recurrence::AbsoluteMonthly {
                interval_months: count(monthly.interval_months)?,
                day_of_month: count(monthly.day_of_month)?,
            }),
            (None, None, None, Some(monthly)) => Some(Recurrence::RelativeMonthly {
                interval_months: count(monthly.interval_months)?,
                day_of_week: parse_weekday(&monthly.day_of_week)?,
                week_index: parse_week_index(&monthly.week_index)?,
            }),
            _ => None,
        }
    }
}

fn check_range(problems: &mut Vec<Problem>, path: &str, field: &str, value: i64, min: i64, max: i64) {
    if !(min..=max).contains(&value) {
        problems.push(Problem::new(
            join(path, field),
            format!("{field} must be an integer from {min} to {max}, not {value}."),
        ));
    }
}

fn check_day(problems: &mut Vec<Problem>, path: &str, day: &str) {
    if parse_weekday(day).is_none() {
        problems.push(Problem::new(
            join(path, "dayOfWeek"),
            format!(
                "dayOfWeek must be one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday \
                 or Sunday, not {day:?}."
            ),
        ));
    }
}

fn check_date(problems: &mut Vec<Problem>, path: &str, field: &str, text: &str) -> Option<NaiveDate> {
    let date = parse_date(text);
    if date.is_none() {
        problems.push(Problem::new(
            join(path, field),
            format!("{field} must be a calendar date \"YYYY-MM-DD\", not {text:?}."),
        ));
    }
    date
}

/// Day names as the AKS API spells them (case-sensitive).
fn parse_weekday(text: &str) -> Option<Weekday> {
    let i = DAY_NAMES.iter().position(|name| *name == text)?;
    Some(WEEKDAYS[i])
}

fn parse_week_index(text: &str) -> Option<WeekIndex> {
    let i = WEEK_INDEX_NAMES.iter().position(|name| *name == text)?;
    Some(WEEK_INDEXES[i])
}

/// `HH:mm` with exactly two digits each: `(hours, minutes)`, unchecked ranges.
fn parse_hh_mm(text: &str) -> Option<(u32, u32)> {
    if !has_shape(text, "00:00") {
        return None;
    }
    Some((text[..2].parse().ok()?, text[3..].parse().ok()?))
}

/// `startTime` in minutes after local midnight: 00:00–23:59.
fn parse_start_time(text: &str) -> Option<u32> {
    let (hours, minutes) = parse_hh_mm(text)?;
    (hours < 24 && minutes < 60).then_some(hours * 60 + minutes)
}

/// `utcOffset` in minutes east of UTC: `+HH:mm` or `-HH:mm` within ±14:00.
fn parse_utc_offset(text: &str) -> Option<i32> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = parse_hh_mm(&text[1..])?;
    let total = i32::try_from(hours * 60 + minutes).ok()?;
    (minutes < 60 && total <= MAX_UTC_OFFSET_MINUTES).then_some(sign * total)
}

/// `YYYY-MM-DD` with exactly those widths, and a real calendar date.
fn parse_date(text: &str) -> Option<NaiveDate> {
    if !has_shape(text, "0000-00-00") {
        return None;
    }
    NaiveDate::from_ymd_opt(text[..4].parse().ok()?, text[5..7].parse().ok()?, text[8..].parse().ok()?)
}

/// `text` matches `shape` byte for byte, where `0` in `shape` stands for any ASCII digit. Keeps
/// the string slicing in the parsers on ASCII boundaries.
fn has_shape(text: &str, shape: &str) -> bool {
    text.len() == shape.len()
        && text.bytes().zip(shape.bytes()).all(|(b, s)| match s {
            b'0' => b.is_ascii_digit(),
            _ => b == s,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fleet::window::WindowState;

    const PATH: &str = "/members/3/aksManagedAutoUpgradeSchedule";

    fn at(text: &str) -> Time {
        Time::parse_rfc3339(text).unwrap()
    }

    fn date(text: &str) -> NaiveDate {
        parse_date(text).unwrap()
    }

    fn dto(value: serde_json::Value) -> MaintenanceWindowDto {
        serde_json::from_value(value).unwrap()
    }

    /// The `maintenanceWindow` objects of aks-models.md §1.4, and the Fleet docs' weekly one
    /// (azure-fleet-semantics.md §6), compiled with a scenario start of 2026-03-01T00:00Z.
    #[test]
    fn aks_docs_examples_compile() {
        let start = at("2026-03-01T00:00:00Z");
        let cases = [
            (
                json!({"schedule":{"weekly":{"intervalWeeks":1,"dayOfWeek":"Tuesday"}},
                 "durationHours":4,"utcOffset":"+00:00","startTime":"01:00",
                 "notAllowedDates":[{"start":"2021-05-26","end":"2021-05-30"}]}),
                MaintenanceWindow {
                    recurrence: Recurrence::Weekly { interval_weeks: 1, day_of_week: Weekday::Tue },
                    duration: Duration::hours(4),
                    start_time_minutes: 60,
                    utc_offset_minutes: 0,
                    anchor: date("2026-03-01"),
                    runs_backwards: true,
                    not_allowed: vec![(date("2021-05-26"), date("2021-05-30"))],
                },
            ),
            (
                json!({"schedule":{"absoluteMonthly":{"intervalMonths":3,"dayOfMonth":1}},
                 "durationHours":4,"utcOffset":"-08:00","startTime":"09:00","startDate":"2023-01-20",
                 "notAllowedDates":[{"start":"2023-12-23","end":"2024-01-05"}]}),
                MaintenanceWindow {
                    recurrence: Recurrence::AbsoluteMonthly { interval_months: 3, day_of_month: 1 },
                    duration: Duration::hours(4),
                    start_time_minutes: 9 * 60,
                    utc_offset_minutes: -8 * 60,
                    anchor: date("2023-01-20"),
                    runs_backwards: false,
                    not_allowed: vec![(date("2023-12-23"), date("2024-01-05"))],
                },
            ),
            (
                json!({"schedule":{"daily":{"intervalDays":3}},"durationHours":6,"startTime":"22:00","utcOffset":"+01:00"}),
                MaintenanceWindow {
                    recurrence: Recurrence::Daily { interval_days: 3 },
                    duration: Duration::hours(6),
                    start_time_minutes: 22 * 60,
                    utc_offset_minutes: 60,
                    anchor: date("2026-03-01"),
                    runs_backwards: true,
                    not_allowed: vec![],
                },
            ),
            (
                json!({"schedule":{"relativeMonthly":{"intervalMonths":2,"dayOfWeek":"Monday","weekIndex":"Last"}},
                 "durationHours":8,"startTime":"00:00","utcOffset":"+05:30"}),
                MaintenanceWindow {
                    recurrence: Recurrence::RelativeMonthly {
                        interval_months: 2,
                        day_of_week: Weekday::Mon,
                        week_index: WeekIndex::Last,
                    },
                    duration: Duration::hours(8),
                    start_time_minutes: 0,
                    utc_offset_minutes: 5 * 60 + 30,
                    anchor: date("2026-03-01"),
                    runs_backwards: true,
                    not_allowed: vec![],
                },
            ),
            (
                json!({"schedule":{"weekly":{"intervalWeeks":3,"dayOfWeek":"Friday"}},"durationHours":8,
                 "utcOffset":"+05:30","startTime":"00:00"}),
                MaintenanceWindow {
                    recurrence: Recurrence::Weekly { interval_weeks: 3, day_of_week: Weekday::Fri },
                    duration: Duration::hours(8),
                    start_time_minutes: 0,
                    utc_offset_minutes: 5 * 60 + 30,
                    anchor: date("2026-03-01"),
                    runs_backwards: true,
                    not_allowed: vec![],
                },
            ),
        ];
        for (json, expected) in cases {
            let window = dto(json.clone());
            assert_eq!(window.validate(PATH), vec![], "{json}");
            assert_eq!(window.compile(start), expected, "{json}");
            // Writing it back gives the same JSON.
            assert_eq!(serde_json::to_value(&window).unwrap(), json);
        }
    }

    #[test]
    fn defaults_offset_and_anchor() {
        let without = |offset: Option<&str>| {
            let mut value = json!({"schedule":{"daily":{"intervalDays":2}},"durationHours":4,"startTime":"02:00"});
            if let Some(offset) = offset {
                value["utcOffset"] = json!(offset);
            }
            dto(value)
        };
        // (offset, scenario start, anchor = the start's local date in that offset)
        let cases = [
            (None, "2026-03-01T20:00:00Z", "2026-03-01"),
            (Some("+05:30"), "2026-03-01T20:00:00Z", "2026-03-02"),
            (Some("+05:30"), "2026-03-01T18:29:59Z", "2026-03-01"),
            (Some("-08:00"), "2026-03-01T20:00:00Z", "2026-03-01"),
            (Some("-08:00"), "2026-03-01T03:00:00Z", "2026-02-28"),
            (Some("+14:00"), "2026-12-31T10:00:00Z", "2027-01-01"),
        ];
        for (offset, start, anchor) in cases {
            let window = without(offset).compile(at(start));
            assert_eq!(window.anchor, date(anchor), "{offset:?} {start}");
        }
        assert_eq!(without(None).compile(at("2026-03-01T00:00:00Z")).utc_offset_minutes, 0);
        // Anchored at the scenario start's date: every other day from 2026-03-01.
        let window = without(None).compile(at("2026-03-01T07:00:00Z"));
        assert_eq!(
            window.state_at(at("2026-03-01T07:00:00Z")),
            WindowState::Closed { next_open: Some(at("2026-03-03T02:00:00Z")) }
        );
    }

    #[test]
    fn null_members_as_aks_prints_them() {
        let window = dto(json!({
            "schedule": {"daily": null, "weekly": {"intervalWeeks": 2, "dayOfWeek": "Sunday"},
                         "absoluteMonthly": null, "relativeMonthly": null},
            "durationHours": 24, "startTime": "23:59", "utcOffset": "-14:00",
            "startDate": null, "notAllowedDates": null
        }));
        assert_eq!(window.validate(PATH), vec![]);
        let compiled = window.compile(at("2026-03-01T00:00:00Z"));
        assert_eq!(compiled.utc_offset_minutes, -14 * 60);
        assert_eq!(compiled.start_time_minutes, 23 * 60 + 59);
    }

    #[test]
    fn serde_rejects_unknown_fields_and_wrong_types() {
        for bad in [
            json!({"schedule":{"daily":{"intervalDays":1}},"durationHour":4,"startTime":"01:00"}),
            json!({"schedule":{"daily":{"intervalDays":1,"dayOfWeek":"Monday"}},"durationHours":4,"startTime":"01:00"}),
            json!({"schedule":{"monthly":{"intervalMonths":1}},"durationHours":4,"startTime":"01:00"}),
            json!({"schedule":{"daily":{"intervalDays":"1"}},"durationHours":4,"startTime":"01:00"}),
            json!({"schedule":{"daily":{"intervalDays":1}},"startTime":"01:00"}),
        ] {
            assert!(serde_json::from_value::<MaintenanceWindowDto>(bad.clone()).is_err(), "{bad}");
        }
    }

    /// Each case: a change to a valid window, and the exact paths (under [`PATH`]) it must report.
    #[test]
    fn validation_rejections() {
        let cases: Vec<(serde_json::Value, Vec<&str>)> = vec![
            (json!({"schedule": {}}), vec!["/schedule"]),
            (
                json!({"schedule": {"daily": {"intervalDays": 1}, "weekly": {"intervalWeeks": 1, "dayOfWeek": "Monday"}}}),
                vec!["/schedule"],
            ),
            (json!({"schedule": {"daily": {"intervalDays": 0}}}), vec!["/schedule/daily/intervalDays"]),
            (json!({"schedule": {"daily": {"intervalDays": 8}}}), vec!["/schedule/daily/intervalDays"]),
            (
                json!({"schedule": {"weekly": {"intervalWeeks": 5, "dayOfWeek": "monday"}}}),
                vec!["/schedule/weekly/intervalWeeks", "/schedule/weekly/dayOfWeek"],
            ),
            (
                json!({"schedule": {"absoluteMonthly": {"intervalMonths": 7, "dayOfMonth": 32}}}),
                vec!["/schedule/absoluteMonthly/intervalMonths", "/schedule/absoluteMonthly/dayOfMonth"],
            ),
            (
                json!({"schedule": {"absoluteMonthly": {"intervalMonths": -1, "dayOfMonth": 0}}}),
                vec!["/schedule/absoluteMonthly/intervalMonths", "/schedule/absoluteMonthly/dayOfMonth"],
            ),
            (
                json!({"schedule": {"relativeMonthly": {"intervalMonths": 0, "dayOfWeek": "Mon", "weekIndex": "Fifth"}}}),
                vec![
                    "/schedule/relativeMonthly/intervalMonths",
                    "/schedule/relativeMonthly/dayOfWeek",
                    "/schedule/relativeMonthly/weekIndex",
                ],
            ),
            (json!({"durationHours": 3}), vec!["/durationHours"]),
            (json!({"durationHours": 25}), vec!["/durationHours"]),
            (json!({"startTime": "9:00"}), vec!["/startTime"]),
            (json!({"startTime": "24:00"}), vec!["/startTime"]),
            (json!({"startTime": "12:60"}), vec!["/startTime"]),
            (json!({"startTime": "12:00:00"}), vec!["/startTime"]),
            (json!({"startTime": "１2:00"}), vec!["/startTime"]),
            (json!({"utcOffset": "+15:00"}), vec!["/utcOffset"]),
            (json!({"utcOffset": "-14:01"}), vec!["/utcOffset"]),
            (json!({"utcOffset": "+05:60"}), vec!["/utcOffset"]),
            (json!({"utcOffset": "05:30"}), vec!["/utcOffset"]),
            (json!({"utcOffset": "+5:30"}), vec!["/utcOffset"]),
            (json!({"utcOffset": ""}), vec!["/utcOffset"]),
            (json!({"startDate": "2026-02-29"}), vec!["/startDate"]),
            (json!({"startDate": "2026/03/01"}), vec!["/startDate"]),
            (json!({"startDate": "26-03-01"}), vec!["/startDate"]),
            (
                json!({"notAllowedDates": [{"start": "2026-03-10", "end": "2026-03-10"},
                                           {"start": "2026-03-10", "end": "2026-03-01"}]}),
                vec!["/notAllowedDates/1/end"],
            ),
            (
                json!({"notAllowedDates": [{"start": "soon", "end": "2026-13-01"}]}),
                vec!["/notAllowedDates/0/start", "/notAllowedDates/0/end"],
            ),
            // Every problem at once, in field order.
            (
                json!({"schedule": {}, "durationHours": 0, "startTime": "", "utcOffset": "Z",
                       "startDate": "today", "notAllowedDates": [{"start": "2024-02-29", "end": "2023-02-29"}]}),
                vec!["/schedule", "/durationHours", "/startTime", "/utcOffset", "/startDate", "/notAllowedDates/0/end"],
            ),
        ];
        for (change, paths) in cases {
            let mut value = json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4,
                                   "startTime": "01:00"});
            for (key, field) in change.as_object().unwrap() {
                value[key] = field.clone();
            }
            let problems = dto(value).validate(PATH);
            let found: Vec<String> = problems.iter().map(|p| p.path.trim_start_matches(PATH).to_string()).collect();
            assert_eq!(found, paths, "{change}");
            for problem in &problems {
                assert!(problem.path.starts_with(PATH), "{problem}");
                assert!(problem.message.ends_with('.'), "{problem}");
            }
        }
    }

    #[test]
    fn messages_name_the_allowed_values() {
        let window = dto(json!({
            "schedule": {"relativeMonthly": {"intervalMonths": 9, "dayOfWeek": "Funday", "weekIndex": "Fifth"}},
            "durationHours": 2, "startTime": "25:00", "utcOffset": "+15:00",
            "notAllowedDates": [{"start": "2026-03-10", "end": "2026-03-01"}]
        }));
        let messages: Vec<String> = window.validate("").iter().map(|p| p.to_string()).collect();
        assert_eq!(
            messages,
            vec![
                "/schedule/relativeMonthly/intervalMonths: intervalMonths must be an integer from 1 to 6, not 9.",
                "/schedule/relativeMonthly/dayOfWeek: dayOfWeek must be one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday or Sunday, not \"Funday\".",
                "/schedule/relativeMonthly/weekIndex: weekIndex must be one of First, Second, Third, Fourth or Last, not \"Fifth\".",
                "/durationHours: durationHours must be an integer from 4 to 24, not 2.",
                "/startTime: startTime must be a local time \"HH:mm\" from 00:00 to 23:59, not \"25:00\".",
                "/utcOffset: utcOffset must be \"+HH:mm\" or \"-HH:mm\" from -14:00 to +14:00, not \"+15:00\".",
                "/notAllowedDates/0/end: end 2026-03-01 is before start 2026-03-10; a notAllowedDates range runs from start through end and must not end before it starts.",
            ]
        );
        let two = dto(
            json!({"schedule": {"daily": {"intervalDays": 1}, "absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 1}},
                             "durationHours": 4, "startTime": "01:00"}),
        );
        assert_eq!(
            two.validate("")[0].message,
            "schedule must set exactly one of daily, weekly, absoluteMonthly or relativeMonthly, \
             but sets daily and absoluteMonthly."
        );
    }

    #[test]
    fn json_schema_carries_the_limits() {
        let schema = serde_json::to_value(schemars::schema_for!(MaintenanceWindowDto)).unwrap();
        let text = schema.to_string();
        let properties = &schema["properties"];
        assert_eq!(properties["durationHours"]["minimum"], json!(4));
        assert_eq!(properties["durationHours"]["maximum"], json!(24));
        assert_eq!(schema["required"], json!(["schedule", "durationHours", "startTime"]));
        for needle in ["\"Sunday\"", "\"Last\"", "^\\\\d{2}:\\\\d{2}$", "intervalMonths"] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
    }
}
