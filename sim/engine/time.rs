//! Simulated time: integer seconds since the Unix epoch, always UTC.
//!
//! Why integers: float clocks need epsilon fudges for ties and are not portable bit-for-bit
//! (des-anchors §0.2). One second is finer than anything the service reports.

use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};

/// An instant of simulated time, in whole seconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub i64);

/// A span of simulated time in whole seconds (never negative in valid scenarios).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn seconds(s: i64) -> Duration {
        Duration(s)
    }
    pub const fn minutes(m: i64) -> Duration {
        Duration(m * 60)
    }
    pub const fn hours(h: i64) -> Duration {
        Duration(h * 3600)
    }
    pub const fn days(d: i64) -> Duration {
        Duration(d * 86_400)
    }
    pub const fn as_seconds(self) -> i64 {
        self.0
    }
    pub fn as_hours_f64(self) -> f64 {
        self.0 as f64 / 3600.0
    }

    /// Parses `"1h30m"`, `"45s"`, `"2d"`, `"90m"`, `"0s"`: one or more `<integer><unit>` parts with
    /// units `d`, `h`, `m`, `s`, each unit at most once and in that order.
    pub fn parse(text: &str) -> Result<Duration, String> {
        let bad = || format!("\"{text}\" is not a duration like \"90m\", \"1h30m\", \"2d\" or \"45s\"");
        if text.is_empty() {
            return Err(bad());
        }
        let units = ['d', 'h', 'm', 's'];
        let mut next_unit = 0usize;
        let mut total: i64 = 0;
        let mut digits = String::new();
        for c in text.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let position = units.iter().position(|u| *u == c).ok_or_else(bad)?;
            if digits.is_empty() || position < next_unit {
                return Err(bad());
            }
            let value: i64 = digits.parse().map_err(|_| bad())?;
            let scale = [86_400, 3_600, 60, 1][position];
            total = value.checked_mul(scale).and_then(|v| total.checked_add(v)).ok_or_else(bad)?;
            digits.clear();
            next_unit = position + 1;
        }
        if !digits.is_empty() {
            return Err(bad());
        }
        Ok(Duration(total))
    }
}

impl fmt::Display for Duration {
    /// Formats in the same grammar `parse` accepts (`"1h30m"`, `"0s"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        if rest < 0 {
            write!(f, "-")?;
            rest = -rest;
        }
        if rest == 0 {
            return write!(f, "0s");
        }
        for (unit, scale) in [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)] {
            if rest >= scale {
                write!(f, "{}{}", rest / scale, unit)?;
                rest %= scale;
            }
        }
        Ok(())
    }
}

impl std::ops::Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0 + d.0)
    }
}

impl std::ops::Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, d: Duration) -> Time {
        Time(self.0 - d.0)
    }
}

impl std::ops::Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, other: Time) -> Duration {
        Duration(self.0 - other.0)
    }
}

impl std::ops::Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0 - d.0)
    }
}

impl std::ops::Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}

impl Time {
    /// Parses an RFC 3339 timestamp with any offset; sub-second parts are truncated.
    pub fn parse_rfc3339(text: &str) -> Result<Time, String> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| Time(t.timestamp()))
            .map_err(|e| format!("\"{text}\" is not an RFC 3339 time ({e})"))
    }

    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(self.0, 0).expect("simulated time within chrono's range")
    }

    /// RFC 3339 in UTC with a `Z` suffix and whole seconds, the form every output uses.
    pub fn to_rfc3339(self) -> String {
        self.rfc3339().to_string()
    }

    /// [`to_rfc3339`](Self::to_rfc3339)'s text without allocating: reports write a few of these per
    /// member. Years 0000–9999 are formatted here, two digits at a time; others by `chrono`. (The
    /// one-year example's report formats 160,000 times: 17.5 M instructions, against 38 M with the
    /// digits one at a time and the usual days-to-date conversion.)
    pub fn rfc3339(self) -> Rfc3339 {
        let (days, seconds) = (self.0.div_euclid(86_400), self.0.rem_euclid(86_400) as u32);
        // Days of years 0000–9999 (1970-01-01 is day 0).
        if !(-719_528..2_932_897).contains(&days) {
            return Rfc3339(Text::Other(self.to_datetime().to_rfc3339_opts(SecondsFormat::Secs, true)));
        }
        let (year, month, day) = civil_from_days(days as i32);
        let mut text = *b"0000-00-00T00:00:00Z";
        let mut put = |at: usize, value: u32| {
            let at_pair = 2 * value as usize;
            text[at..at + 2].copy_from_slice(&DIGIT_PAIRS[at_pair..at_pair + 2]);
        };
        put(0, year / 100);
        put(2, year % 100);
        put(5, month);
        put(8, day);
        put(11, seconds / 3600);
        put(14, seconds / 60 % 60);
        put(17, seconds % 60);
        debug_assert!(text.is_ascii());
        Rfc3339(Text::Short(text))
    }
}

/// "00", "01", … "99", one after the other.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// (year, month, day) of the day `days` after 1970-01-01 in the proleptic Gregorian calendar, for
/// years 0000–9999: Neri and Schneider's algorithm ("Euclidean affine functions and their
/// application to calendar algorithms", Software: Practice and Experience 53, 2023), in unsigned
/// 32-bit arithmetic whose divisions by constants are multiplications and shifts, in fewer steps
/// than Hinnant's `civil_from_days`. Its days are counted from a year far enough before 0000 to be
/// positive.
fn civil_from_days(days: i32) -> (u32, u32, u32) {
    // 1970-01-01 is day 719,468 from 0000-03-01, moved on by 400 × 82 years to keep it positive.
    const SHIFT_YEARS: u32 = 400 * 82;
    const SHIFT_DAYS: u32 = 719_468 + 146_097 * 82;
    let n = (days + SHIFT_DAYS as i32) as u32;
    // The century and the day in it.
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let of_century = n1 % 146_097 / 4;
    // The year in the century and the day in the year (which starts on 1 March).
    let n2 = 4 * of_century + 3;
    let p2 = 2_939_745 * u64::from(n2);
    let year_of_century = (p2 >> 32) as u32;
    let of_year = (p2 as u32) / 2_939_745 / 4;
    let january_or_february = of_year >= 306;
    // The month (3 to 14) and the day in it.
    let n3 = 2_141 * of_year + 197_913;
    let month = n3 >> 16;
    let day = (n3 & 0xffff) / 2_141 + 1;
    let year = 100 * century + year_of_century + u32::from(january_or_february) - SHIFT_YEARS;
    (year, if january_or_february { month - 12 } else { month }, day)
}

/// A time's RFC 3339 text, made without allocating in the years outputs use.
#[derive(Clone, Debug)]
pub struct Rfc3339(Text);

#[derive(Clone, Debug)]
enum Text {
    /// Made by [`Time::rfc3339`] only, of ASCII digits, `-`, `T`, `:` and `Z`.
    Short([u8; 20]),
    Other(String),
}

impl Rfc3339 {
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // SAFETY: the bytes are ASCII (`Text::Short`), hence UTF-8. Checking them again costs as
            // much as making them, and reports write a few hundred thousand.
            Text::Short(bytes) => unsafe { std::str::from_utf8_unchecked(bytes) },
            Text::Other(text) => text,
        }
    }
}

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rfc3339().as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print() {
        for (text, seconds) in
            [("0s", 0), ("45s", 45), ("90m", 5400), ("1h30m", 5400), ("2d", 172_800), ("1d2h3m4s", 93_784)]
        {
            assert_eq!(Duration::parse(text), Ok(Duration(seconds)), "{text}");
        }
        assert_eq!(Duration(5400).to_string(), "1h30m");
        assert_eq!(Duration(93_784).to_string(), "1d2h3m4s");
        for bad in ["", "5", "m", "1m1h", "1h1h", "1.5h", "-1h", "1 h", "1w"] {
            assert!(Duration::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rfc3339_text_is_chrono_s_in_every_year() {
        let chrono = |t: Time| t.to_datetime().to_rfc3339_opts(SecondsFormat::Secs, true);
        // Day boundaries, leap days and centuries, years 0 and 9999 and beyond, and a spread of
        // seconds between.
        let mut times = vec![0, -1, 86_399, 86_400, 951_782_400, 4_107_542_399, 253_402_300_799, 253_402_300_800];
        times.extend([-62_167_219_200, -62_167_219_201, 1_772_409_600, 1_709_164_800, 4_102_444_800]);
        let mut t: i64 = -62_167_219_200;
        while t < 253_402_300_799 {
            times.push(t);
            t += 8_380_801; // 97 days and 1 s: every time of day and every month over the years
        }
        for t in times {
            assert_eq!(Time(t).to_rfc3339(), chrono(Time(t)), "{t}");
        }
    }

    #[test]
    fn every_day_of_the_years_0000_to_9999_is_chrono_s() {
        use chrono::Datelike;
        let mut date = chrono::NaiveDate::from_ymd_opt(0, 1, 1).expect("a date");
        for days in -719_528..2_932_897 {
            assert_eq!(civil_from_days(days), (date.year() as u32, date.month(), date.day()), "day {days}");
            date = date.succ_opt().expect("a next day");
        }
        assert_eq!(date, chrono::NaiveDate::from_ymd_opt(10_000, 1, 1).expect("a date"));
    }

    #[test]
    fn rfc3339_round_trip_in_utc() {
        let t = Time::parse_rfc3339("2026-04-03T18:00:00-05:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-03T23:00:00Z");
        assert!(Time::parse_rfc3339("2026-04-03 18:00").is_err());
    }
}
