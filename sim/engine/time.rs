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
        self.to_datetime().to_rfc3339_opts(SecondsFormat::Secs, true)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
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
    fn rfc3339_round_trip_in_utc() {
        let t = Time::parse_rfc3339("2026-04-03T18:00:00-05:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-03T23:00:00Z");
        assert!(Time::parse_rfc3339("2026-04-03 18:00").is_err());
    }
}
