//! One problem found in an input file, located by a JSON Pointer (RFC 6901), and the helpers that
//! keep problem lines readable: echoed values escaped and cut, repeats collapsed.

use std::collections::BTreeMap;
use std::fmt;

pub use crate::text::{ECHO_CHARS, clean, echo, echo_value};

/// A validation problem: where (a JSON Pointer such as `/updateRuns/0/strategy/stages/1/name`) and what.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "{}: {}", clean(path), clean(&self.message))
    }
}

/// Appends a reference token to a JSON Pointer, escaping `~` and `/` as RFC 6901 requires.
pub fn join(path: &str, token: impl fmt::Display) -> String {
    use fmt::Write;
    let mut joined = String::with_capacity(path.len() + 16);
    joined.push_str(path);
    joined.push('/');
    // Loading makes one of these per checked field of every member: one allocation, and no copies
    // when nothing is escaped, which is almost always.
    write!(joined, "{token}").expect("writing to a String");
    if joined[path.len() + 1..].contains(['~', '/']) {
        let token = joined.split_off(path.len() + 1);
        for c in token.chars() {
            match c {
                '~' => joined.push_str("~0"),
                '/' => joined.push_str("~1"),
                c => joined.push(c),
            }
        }
    }
    joined
}

/// Whether `text` is a JSON Pointer as RFC 6901 writes them: empty, or `/`-separated tokens in
/// which `~` is only ever `~0` or `~1`.
pub fn is_pointer(text: &str) -> bool {
    (text.is_empty() || text.starts_with('/')) && {
        let mut chars = text.chars();
        let mut ok = true;
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                ok = false;
                break;
            }
        }
        ok
    }
}

/// More problems than this of one kind are shown as the first and a count.
pub const REPEATS_SHOWN: usize = 3;

/// Collapses repeats: when more than [`REPEATS_SHOWN`] problems are alike (same pointer and message
/// once numbers and quoted values are set aside, as one duplicated generator gives for each of its
/// members), the first is kept and followed by "… and N more like this" at the same pointer.
pub fn collapse<T>(items: Vec<T>, text: impl Fn(&T) -> (&str, &str), more: impl Fn(&T, String) -> T) -> Vec<T> {
    let keys: Vec<String> = items.iter().map(|i| likeness(text(i))).collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for key in &keys {
        *counts.entry(key.as_str()).or_default() += 1;
    }
    if counts.values().all(|n| *n <= REPEATS_SHOWN) {
        return items;
    }
    let mut shown: BTreeMap<&str, bool> = BTreeMap::new();
    let mut out = Vec::new();
    for (item, key) in items.into_iter().zip(&keys) {
        let count = counts[key.as_str()];
        if count <= REPEATS_SHOWN {
            out.push(item);
        } else if !shown.contains_key(key.as_str()) {
            shown.insert(key, true);
            let summary = more(&item, format!("… and {} more like this", thousands(count - 1)));
            out.push(item);
            out.push(summary);
        }
    }
    out
}

/// Collapses repeated scenario problems (see [`collapse`]).
pub fn collapse_problems(problems: Vec<Problem>) -> Vec<Problem> {
    collapse(problems, |p| (p.path.as_str(), p.message.as_str()), |p, m| Problem::new(p.path.clone(), m))
}

/// The kind of a problem: its pointer and message with digits and quoted text set aside.
fn likeness((path, message): (&str, &str)) -> String {
    let mut out = String::with_capacity(path.len() + message.len() + 1);
    for part in [path, message] {
        let mut quoted = false;
        let mut last_digit = false;
        for c in part.chars() {
            if c == '"' {
                quoted = !quoted;
                out.push('"');
            } else if quoted {
                continue;
            } else if c.is_ascii_digit() {
                if !last_digit {
                    out.push('0');
                }
            } else {
                out.push(c);
            }
            last_digit = c.is_ascii_digit();
        }
        out.push('\u{0}');
    }
    out
}

/// 199999 → "199,999".
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_are_escaped_and_cut() {
        assert_eq!(echo("a\nb\u{1b}[31m"), r#""a\nb\u{1b}[31m""#);
        assert_eq!(echo("x\u{202e}y"), r#""x\u{202e}y""#);
        let long = "é".repeat(200);
        let shown = echo(&long);
        assert_eq!(shown.chars().count(), ECHO_CHARS + 3);
        assert!(shown.ends_with("…\""));
        assert_eq!(echo_value(&serde_json::json!(["a\u{7}", 1])), r#"["a\u0007",1]"#);
        assert_eq!(clean("tab\there \"quoted\" \\"), "tab\\there \"quoted\" \\");
    }

    #[test]
    fn pointers_follow_rfc_6901() {
        assert!(is_pointer(""));
        assert!(is_pointer("/a~0b/c~1d/0"));
        assert!(!is_pointer("a/b"));
        assert!(!is_pointer("/a~2"));
        assert!(!is_pointer("/a~"));
        assert_eq!(join("/labels", "fleet.azure.com/location"), "/labels/fleet.azure.com~1location");
        assert_eq!(join("", "a~/b~1"), "/a~0~1b~01");
        assert_eq!(join("/members", 3), "/members/3");
        assert_eq!(join("/x", ""), "/x/");
        assert!(is_pointer(&join("/p", "~/~")));
    }

    #[test]
    fn repeats_collapse_after_the_first() {
        let mut problems: Vec<Problem> = (0..200_000)
            .map(|i| Problem::new("/memberGenerators/1".to_string(), format!("member \"m-{i}\" is defined twice")))
            .collect();
        problems.insert(0, Problem::new("/name", "the scenario needs a name"));
        let shown: Vec<String> = collapse_problems(problems).iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "/name: the scenario needs a name",
                "/memberGenerators/1: member \"m-0\" is defined twice",
                "/memberGenerators/1: … and 199,999 more like this",
            ]
        );
        let few = vec![Problem::new("/a/0", "x \"1\""), Problem::new("/a/1", "x \"2\"")];
        assert_eq!(collapse_problems(few.clone()), few);
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
