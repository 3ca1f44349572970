//! One problem found in an input file, located by a JSON Pointer (RFC 6901).

use std::fmt;

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
        write!(f, "{path}: {}", self.message)
    }
}

/// Appends a reference token to a JSON Pointer, escaping `~` and `/` as RFC 6901 requires.
pub fn join(path: &str, token: impl fmt::Display) -> String {
    let token = token.to_string().replace('~', "~0").replace('/', "~1");
    format!("{path}/{token}")
}
