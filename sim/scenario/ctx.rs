//! What every part of the build shares: [`Ctx`], the collector of problems and warnings with the
//! parsers of times, durations, distributions and probabilities that report into it; resource names;
//! option lists in messages. Depends on nothing else in `scenario` but `problem`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::{Duration, Time};
use crate::world::DurationDist;

use super::problem::{Problem, echo, join};

/// The longest duration or time offset a scenario may give.
const MAX_DURATION: Duration = Duration::days(36_525);

/// Collects problems while converting.
pub(crate) struct Ctx {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
    pub start: Time,
}

impl Ctx {
    /// A context with no problems yet, for a scenario starting at `start`.
    pub fn new(start: Time) -> Ctx {
        Ctx { problems: Vec::new(), warnings: Vec::new(), start }
    }

    pub fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem::new(path, message));
    }

    /// RFC 3339, or `+<duration>` / `-<duration>` after / before the scenario start.
    pub fn time(&mut self, text: &str, path: &str) -> Option<Time> {
        for (sign, factor) in [('+', 1), ('-', -1)] {
            if let Some(offset) = text.strip_prefix(sign) {
                return match Duration::parse(offset) {
                    Ok(d) if d <= MAX_DURATION => Some(self.start + Duration(factor * d.as_seconds())),
                    Ok(d) => {
                        self.err(path, format!("offset {d} is longer than 100 years"));
                        None
                    }
                    Err(e) => {
                        self.err(path, format!("{e} (after \"{sign}\", an offset from the scenario start)"));
                        None
                    }
                };
            }
        }
        match Time::parse_rfc3339(text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.err(
                    path,
                    format!("{e}; use an RFC 3339 time like \"2026-03-02T08:00:00Z\" or an offset like \"+2h\""),
                );
                None
            }
        }
    }

    /// A duration of at most 100 years: longer ones are mistakes, and they would overflow the
    /// simulated clock (every instant must stay printable as RFC 3339).
    pub fn duration(&mut self, text: &str, path: &str) -> Option<Duration> {
        match Duration::parse(text) {
            Ok(d) if d <= MAX_DURATION => Some(d),
            Ok(d) => {
                self.err(path, format!("{d} is longer than 100 years"));
                None
            }
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }

    /// `"20m"`, `{"median": "10m", "p90": "25m"}`, `{"min": "5m", "max": "15m"}` or `{"fixed": "20m"}`.
    pub fn dist(&mut self, value: &Value, path: &str) -> Option<DurationDist> {
        let help = "a duration (\"20m\") or a distribution {\"median\": \"10m\", \"p90\": \"25m\"} / {\"min\": \"5m\", \"max\": \"15m\"}";
        match value {
            Value::String(s) => self.duration(s, path).map(DurationDist::Fixed),
            Value::Object(map) => {
                let mut fields = BTreeMap::new();
                for (key, v) in map {
                    if !["fixed", "median", "p90", "min", "max"].contains(&key.as_str()) {
                        self.err(join(path, key), format!("unknown field {}; expected {help}", echo(key)));
                        continue;
                    }
                    match v.as_str() {
                        Some(s) => {
                            if let Some(d) = self.duration(s, &join(path, key)) {
                                fields.insert(key.as_str(), d);
                            }
                        }
                        None => self.err(join(path, key), format!("must be a duration string like \"10m\", not {v}")),
                    }
                }
                let keys: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
                let dist = match keys.as_slice() {
                    ["fixed"] => fields.get("fixed").map(|d| DurationDist::Fixed(*d)),
                    _ if keys.len() == 2 && map.contains_key("median") && map.contains_key("p90") => {
                        let (median, p90) = (fields.get("median")?, fields.get("p90")?);
                        if p90 < median {
                            self.err(join(path, "p90"), "p90 must be at least the median");
                            return None;
                        }
                        Some(DurationDist::log_normal(*median, *p90))
                    }
                    _ if keys.len() == 2 && map.contains_key("min") && map.contains_key("max") => {
                        let (min, max) = (fields.get("min")?, fields.get("max")?);
                        if max < min {
                            self.err(join(path, "max"), "max must be at least min");
                            return None;
                        }
                        Some(DurationDist::Uniform { min: *min, max: *max })
                    }
                    _ => {
                        self.err(path, format!("expected {help}"));
                        None
                    }
                };
                if let Some(DurationDist::LogNormal { median, .. } | DurationDist::Fixed(median)) = dist
                    && median < Duration(0)
                {
                    self.err(path, "durations cannot be negative");
                }
                dist
            }
            other => {
                self.err(path, format!("expected {help}, not {other}"));
                None
            }
        }
    }

    pub fn probability(&mut self, value: f64, path: &str) -> f64 {
        if !(0.0..=1.0).contains(&value) || value.is_nan() {
            self.err(path, format!("{value} is not a probability between 0 and 1"));
        }
        value.clamp(0.0, 1.0)
    }
}

/// Resource names: `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters (SEMANTICS §2).
pub(crate) fn check_name(ctx: &mut Ctx, name: &str, path: &str, what: &str) -> bool {
    let valid = is_resource_name(name);
    if !valid {
        ctx.err(
            path,
            format!("{what} {} is not a valid name: 1–50 lowercase letters, digits and '-', starting and ending with a letter or digit", echo(name)),
        );
    }
    valid
}

/// What [`check_name`] accepts (for callers that make the problem's path only when it is needed).
pub(crate) fn is_resource_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let ok_char = |b: u8| b.is_ascii_lowercase() | b.is_ascii_digit();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else { return false };
    bytes.len() <= 50 && ok_char(first) && ok_char(last) && all_bytes(bytes, |b| ok_char(b) | (b == b'-'))
}

/// An Azure region's name as the service writes it (`westeurope`): lowercase letters and digits.
pub(crate) fn is_region_name(name: &str) -> bool {
    !name.is_empty() && all_bytes(name.as_bytes(), |b| b.is_ascii_lowercase() | b.is_ascii_digit())
}

/// Whether every byte of `bytes` is `good`. Sixteen bytes at a time, each chunk's bytes checked
/// without stopping at a bad one (which the compiler does in a few vector instructions), the last
/// chunk overlapping the one before it, and a text shorter than sixteen bytes padded with its first
/// byte: names and regions are checked for every member of a fleet, and are nearly always good.
pub(crate) fn all_bytes(bytes: &[u8], good: impl Fn(u8) -> bool) -> bool {
    let all_good = |chunk: &[u8; 16]| chunk.iter().fold(true, |all, &b| all & good(b));
    let chunk = |bytes: &[u8]| -> [u8; 16] { bytes.try_into().expect("sixteen bytes") };
    match bytes.len() {
        0 => true,
        len @ 1..16 => {
            let mut padded = [bytes[0]; 16];
            padded[..len].copy_from_slice(bytes);
            all_good(&padded)
        }
        len => bytes.chunks_exact(16).all(|c| all_good(&chunk(c))) && all_good(&chunk(&bytes[len - 16..])),
    }
}

pub(crate) fn quoted(options: &[&str]) -> String {
    options.iter().map(|o| format!("\"{o}\"")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 bytes, a byte at a time.
    fn reference(name: &[u8]) -> bool {
        let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        !name.is_empty()
            && name.len() <= 50
            && ok(name[0])
            && ok(name[name.len() - 1])
            && name.iter().all(|&b| ok(b) || b == b'-')
    }

    #[test]
    fn a_resource_name_is_checked_as_byte_by_byte_at_every_length_and_place() {
        // Every length up to past the limit, each with every ASCII byte at every place (non-ASCII
        // text below).
        for len in 0..=52 {
            let mut good: Vec<u8> = (0..len).map(|i| b"a-0z9-"[i % 6]).collect();
            if let Some(last) = good.last_mut() {
                *last = b'x';
            }
            let name = String::from_utf8(good.clone()).unwrap();
            assert_eq!(is_resource_name(&name), reference(&good), "{name:?}");
            for place in 0..len {
                for byte in 0..=127u8 {
                    let mut bytes = good.clone();
                    bytes[place] = byte;
                    let name = String::from_utf8(bytes.clone()).unwrap();
                    assert_eq!(is_resource_name(&name), reference(&bytes), "{name:?}");
                }
            }
        }
        assert!(!is_resource_name("é"));
        assert!(!is_resource_name(&format!("{}é{}", "a".repeat(20), "b".repeat(5))));
    }

    #[test]
    fn all_bytes_reads_as_a_check_of_each_byte_at_every_length_and_place() {
        // A check the padding byte can fail: a text's first byte pads a short one.
        let good = |b: u8| b.is_ascii_lowercase() | b.is_ascii_digit();
        for len in 0..=70 {
            let text: Vec<u8> = (0..len).map(|i| b"westus3"[i % 7]).collect();
            assert!(all_bytes(&text, good), "{len}");
            for place in 0..len {
                for byte in 0..=255u8 {
                    let mut bytes = text.clone();
                    bytes[place] = byte;
                    assert_eq!(all_bytes(&bytes, good), bytes.iter().all(|&b| good(b)), "{len} {place} {byte}");
                }
            }
        }
    }
}
