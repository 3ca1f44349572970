//! Users' text echoed in messages: escaped so that a problem stays one line and nothing reaches
//! the terminal raw, and cut so that a pasted megabyte does not become a megabyte of error.

use serde_json::Value;

/// How many characters of a value a message echoes.
pub const ECHO_CHARS: usize = 80;

/// A user's text echoed in a message: quoted, with control and invisible characters escaped (so a
/// problem stays one line and nothing reaches the terminal raw), cut to about 80 characters.
pub fn echo(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(ECHO_CHARS).collect();
    let cut = chars.next().is_some();
    let mut out = format!("{head:?}");
    if cut {
        out.pop();
        out.push_str("…\"");
    }
    out
}

/// A user's text shown bare (a name in a list): escaped like [`echo`] and cut, without quotes.
pub fn cut(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(ECHO_CHARS).collect();
    let tail = if chars.next().is_some() { "…" } else { "" };
    format!("{}{tail}", clean(&head))
}

/// A JSON value echoed in a message: compact JSON, escaped and cut like [`echo`].
pub fn echo_value(value: &Value) -> String {
    match value {
        Value::String(s) => echo(s),
        other => cut(&other.to_string()),
    }
}

/// Escapes control and invisible characters (newlines, escape sequences, bidirectional overrides)
/// and leaves everything else as it is: the last guard that keeps a problem on one line.
pub fn clean(text: &str) -> String {
    if text.chars().all(|c| !needs_escape(c)) {
        return text.to_string();
    }
    text.chars().map(|c| if needs_escape(c) { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

fn needs_escape(c: char) -> bool {
    // `escape_debug` leaves printable characters alone, except quotes and backslashes, which need no
    // escaping here.
    !matches!(c, '"' | '\'' | '\\') && c.escape_debug().len() > 1
}

/// The JSON type of a value in the words of a message ("must be an object, not a string").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
