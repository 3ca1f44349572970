//! Kubernetes label selectors (kubefleet-updaterun.md §5), parsed and matched exactly as
//! apimachinery `pkg/labels/selector.go` does.
//!
//! Why a port rather than a friendlier grammar: users copy selector strings between scenario files
//! and real clusters, so a string must select here exactly the members it selects in Kubernetes,
//! quirks included. §5.2 lists 46 cases; the tests below check every one of them.
//!
//! Details worth knowing:
//! - `x in (a,,)` (two commas before `)`) is accepted, as in apimachinery after kubernetes PR
//!   #133419; older releases rejected it. The reference (§5.2 L19) follows the fixed behaviour.
//! - Like Go's lexer, which reads byte 0 as "end of input", a NUL byte where a token would start
//!   ends the selector, and a NUL right after a token is skipped.
//! - Requirements are sorted by key with a stable sort. Go's `sort.Sort` is stable only up to 12
//!   elements, so for longer selectors with repeated keys the `String()` order of requirements
//!   sharing a key may differ from Go's. Matching is unaffected.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use super::member::same_text;

/// How a requirement relates a label key to its values (apimachinery `selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operator {
    Exists,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

impl Operator {
    /// In the order apimachinery lists them in its "supported values" error.
    const ALL: [Operator; 9] = [
        Operator::In,
        Operator::NotIn,
        Operator::Equals,
        Operator::DoubleEquals,
        Operator::NotEquals,
        Operator::GreaterThan,
        Operator::LessThan,
        Operator::Exists,
        Operator::DoesNotExist,
    ];

    /// The `selection.Operator` spelling, so requirements built from API objects use the same names.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }

    /// What `String()` writes between a key and its value(s).
    fn symbol(self) -> &'static str {
        match self {
            Operator::Exists | Operator::DoesNotExist => "",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        }
    }
}

impl FromStr for Operator {
    type Err = String;

    /// Accepts the `selection.Operator` spellings (see [`Operator::as_str`]).
    fn from_str(text: &str) -> Result<Operator, String> {
        Operator::ALL.into_iter().find(|op| op.as_str() == text).ok_or_else(|| {
            let names: Vec<String> = Operator::ALL.iter().map(|op| format!("{:?}", op.as_str())).collect();
            format!("unsupported operator {}; the supported ones are {}", shown(text), names.join(", "))
        })
    }
}

/// One condition on one label key; a selector ANDs its requirements (§5.1 "Result").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    /// A set, because apimachinery collapses duplicate values and prints them sorted.
    pub values: BTreeSet<String>,
}

impl Requirement {
    /// Validates like apimachinery `NewRequirement` (§5.1 "Validation"): the key must be a label
    /// key, the number of values must suit the operator (`in`/`notin` at least one, `=` `==` `!=`
    /// `gt` `lt` exactly one, `exists`/`!` none), `gt`/`lt` values must be 64-bit integers, and
    /// every value must be a label value. `values` is a slice, not a set, so that duplicates count
    /// towards the number of values as they do in Go.
    pub fn new(key: &str, operator: Operator, values: &[&str]) -> Result<Requirement, String> {
        validate_label_key(key)?;
        check_value_count(operator, values.len())?;
        for value in values {
            check_value(operator, value)?;
        }
        let values = values.iter().map(|value| value.to_string()).collect();
        Ok(Requirement { key: key.to_string(), operator, values })
    }

    /// A requirement without values (`Exists`, `DoesNotExist`).
    fn bare(key: &str, operator: Operator) -> Requirement {
        Requirement { key: key.to_string(), operator, values: BTreeSet::new() }
    }

    /// apimachinery `Requirement.Matches` (§5.1 "Matching"): `notin` and `!=` also match members
    /// without the key, `>`/`<` never match a value that is not an integer.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        let label = labels.label(&self.key);
        match self.operator {
            Operator::Exists => label.is_some(),
            Operator::DoesNotExist => label.is_none(),
            Operator::In | Operator::Equals | Operator::DoubleEquals => label.is_some_and(|value| self.has(value)),
            Operator::NotIn | Operator::NotEquals => label.is_none_or(|value| !self.has(value)),
            Operator::GreaterThan | Operator::LessThan => self.compares(label),
        }
    }

    /// Whether `value` is one of the values. A set of one (every `=`, `==` and `!=`, and an `in` or
    /// `notin` of one value) is compared with at once: a run's plan asks this of every member for
    /// every stage.
    #[inline]
    fn has(&self, value: &str) -> bool {
        match self.values.len() {
            1 => self.values.first().is_some_and(|only| same_text(only, value)),
            _ => self.values.contains(value),
        }
    }

    /// Go uses `strconv.ParseInt(s, 10, 64)` on both sides; Rust's `i64` parser accepts the same
    /// strings (optional sign, decimal digits, no `_`, in range).
    fn compares(&self, label: Option<&str>) -> bool {
        let Some(label) = label.and_then(|value| value.parse::<i64>().ok()) else {
            return false;
        };
        let mut values = self.values.iter();
        let (Some(bound), None) = (values.next(), values.next()) else {
            return false;
        };
        let Ok(bound) = bound.parse::<i64>() else {
            return false;
        };
        match self.operator {
            Operator::GreaterThan => label > bound,
            _ => label < bound,
        }
    }
}

impl fmt::Display for Requirement {
    /// apimachinery `Requirement.String()`: `!k`, `k`, `k=v`, `k==v`, `k!=v`, `k>n`, `k<n`,
    /// `k in (a,b)` with the values sorted; the empty value prints as nothing (`k=`, `k in ()`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operator {
            Operator::Exists => return write!(f, "{}", self.key),
            Operator::DoesNotExist => return write!(f, "!{}", self.key),
            _ => {}
        }
        let values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        let values = values.join(",");
        match self.operator {
            Operator::In | Operator::NotIn => {
                write!(f, "{}{}({values})", self.key, self.operator.symbol())
            }
            _ => write!(f, "{}{}{values}", self.key, self.operator.symbol()),
        }
    }
}

/// Anything with labels a selector can read: a plain map, or a member with the labels Fleet
/// Manager adds to it.
pub trait Labels {
    fn label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A parsed label selector: the AND of its requirements, sorted by key like apimachinery's
/// `parse` so that equal selectors print the same (§5.2 L32).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// apimachinery `labels.Parse` (§5.1 grammar and lexer). The error is one sentence that names
    /// the offending token and its 1-based character position.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let requirements = Parser::new(text).selector()?;
        Ok(Selector::new(requirements))
    }

    /// Builds a selector from requirements made elsewhere (for example from a structured
    /// `LabelSelector`), sorting them by key as apimachinery's `Add` does.
    pub fn new(mut requirements: Vec<Requirement>) -> Selector {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Selector { requirements }
    }

    /// The selector of the empty string: no requirements, matches every member.
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// True when the selector does not restrict anything (apimachinery `Empty()`).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// True when every requirement matches the labels.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }
}

impl FromStr for Selector {
    type Err = String;

    fn from_str(text: &str) -> Result<Selector, String> {
        Selector::parse(text)
    }
}

impl fmt::Display for Selector {
    /// apimachinery `String()`: the requirements joined by `,` without spaces; `""` for everything.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Key and value rules (§5.1 "Key rules", "Value rules"): apimachinery IsLabelKey / IsLabelValue.
// ---------------------------------------------------------------------------------------------

/// Longest label name and label value (apimachinery `LabelValueMaxLength`).
const NAME_MAX_LEN: usize = 63;
/// Longest key prefix (apimachinery `DNS1123SubdomainMaxLength`).
const PREFIX_MAX_LEN: usize = 253;

/// apimachinery `IsLabelKey`: `[prefix/]name`. The name has 1-63 letters, digits, `-`, `_`, `.`,
/// starting and ending with a letter or digit (upper case allowed). The optional prefix is a
/// lowercase DNS-1123 subdomain of at most 253 characters. The message states the broken rule.
pub fn validate_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if name.contains('/') {
        return Err(format!(
            "label key {} has more than one \"/\"; a key is a name with an optional DNS subdomain \
             prefix and \"/\", like \"example.com/my-name\"",
            shown(key)
        ));
    }
    if let Some(prefix) = prefix {
        validate_key_prefix(key, prefix)?;
    }
    validate_key_name(key, name)
}

fn validate_key_prefix(key: &str, prefix: &str) -> Result<(), String> {
    if prefix.is_empty() {
        return Err(format!(
            "label key {} has an empty prefix before \"/\"; drop the \"/\" or put a DNS subdomain \
             such as \"example.com\" before it",
            shown(key)
        ));
    }
    if !is_dns1123_subdomain(prefix) {
        return Err(format!(
            "the prefix {} of label key {} must be a lowercase DNS subdomain: parts of a-z, 0-9 \
             and \"-\", each starting and ending with a letter or digit, joined by \".\"",
            shown(prefix),
            shown(key)
        ));
    }
    if prefix.len() > PREFIX_MAX_LEN {
        return Err(format!(
            "the prefix of label key {} has {} characters; a prefix may have at most {PREFIX_MAX_LEN}",
            shown(key),
            prefix.len()
        ));
    }
    Ok(())
}

fn validate_key_name(key: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!(
            "label key {} has an empty name; the name (the part after any \"/\") must have 1 to \
             {NAME_MAX_LEN} characters",
            shown(key)
        ));
    }
    if !is_label_name(name) {
        return Err(format!(
            "the name {} of label key {} must consist of letters, digits, \"-\", \"_\" and \".\", \
             and start and end with a letter or digit",
            shown(name),
            shown(key)
        ));
    }
    if name.len() > NAME_MAX_LEN {
        return Err(format!(
            "the name of label key {} has {} characters; a name may have at most {NAME_MAX_LEN}",
            shown(key),
            name.len()
        ));
    }
    Ok(())
}

/// apimachinery `IsLabelValue`: empty, or at most 63 letters, digits, `-`, `_`, `.`, starting and
/// ending with a letter or digit (so no `/`, no spaces). The message states the broken rule.
pub fn validate_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if !is_label_name(value) {
        return Err(format!(
            "label value {} must be empty or consist of letters, digits, \"-\", \"_\" and \".\", \
             and start and end with a letter or digit",
            shown(value)
        ));
    }
    if value.len() > NAME_MAX_LEN {
        return Err(format!(
            "label value {} has {} characters; a label value may have at most {NAME_MAX_LEN}",
            shown(value),
            value.len()
        ));
    }
    Ok(())
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, written by hand because `regex` is not a dependency.
fn is_label_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`. Like apimachinery, no limit
/// on the length of each dot-separated part, only on the whole prefix.
fn is_dns1123_subdomain(text: &str) -> bool {
    text.split('.').all(is_dns1123_label)
}

fn is_dns1123_label(text: &str) -> bool {
    let lower_alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = text.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    lower_alnum(first) && lower_alnum(last) && bytes.iter().all(|&b| lower_alnum(b) || b == b'-')
}

/// `NewRequirement`'s rule on how many values each operator takes.
fn check_value_count(operator: Operator, count: usize) -> Result<(), String> {
    let (ok, need) = match operator {
        Operator::In | Operator::NotIn => (count >= 1, "at least one value"),
        Operator::Exists | Operator::DoesNotExist => (count == 0, "no values"),
        _ => (count == 1, "exactly one value"),
    };
    if ok {
        return Ok(());
    }
    Err(format!("operator {:?} takes {need}, but got {count}", operator.as_str()))
}

/// `NewRequirement`'s rules for one value: `>`/`<` compare 64-bit integers, and every value, those
/// included, must still be a label value (so `x>-1` is invalid, §5.2 L43).
fn check_value(operator: Operator, value: &str) -> Result<(), String> {
    let compares = matches!(operator, Operator::GreaterThan | Operator::LessThan);
    if compares && value.parse::<i64>().is_err() {
        return Err(format!(
            "value {} is not a base-10 integer that fits in 64 bits, which \">\" and \"<\" need",
            shown(value)
        ));
    }
    validate_label_value(value)
}

/// Quotes user text for a message, cutting very long text so that the message stays readable.
fn shown(text: &str) -> String {
    const KEEP: usize = 40;
    let count = text.chars().count();
    if count <= 2 * KEEP {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(KEEP).collect();
    format!("{head:?}… ({count} characters)")
}

// ---------------------------------------------------------------------------------------------
// Lexer (§5.1 "Tokens"; apimachinery `Lexer`).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    End,
    Identifier,
    In,
    NotIn,
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    OpenPar,
    ClosePar,
    Comma,
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
    /// Byte offset into the selector, for error positions.
    at: usize,
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the whole selector up front, as apimachinery's `scan` does, ending with one `End`.
fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut pos = 0;
    loop {
        let token = next_token(text, &mut pos);
        tokens.push(token);
        if token.kind == Kind::End {
            return tokens;
        }
    }
}

fn next_token<'a>(text: &'a str, pos: &mut usize) -> Token<'a> {
    let bytes = text.as_bytes();
    while bytes.get(*pos).copied().is_some_and(is_whitespace) {
        *pos += 1;
    }
    let at = *pos;
    let end = match bytes.get(at) {
        // Go's `read` returns 0 both at the end and for a NUL byte.
        None | Some(0) => {
            return Token { kind: Kind::End, text: "", at };
        }
        Some(&b) if is_special(b) => at + special_len(bytes, at),
        Some(_) => identifier_end(bytes, at),
    };
    // Go's scanners stop on a 0 they have already consumed, so a NUL right after a token vanishes.
    *pos = if bytes.get(end) == Some(&0) { end + 1 } else { end };
    // Tokens start and end next to ASCII bytes, so these are char boundaries; `get` keeps it total.
    let text = text.get(at..end).unwrap_or_default();
    Token { kind: kind_of(text), text, at }
}

/// The longest special token: `==` and `!=` are the only two-character ones.
fn special_len(bytes: &[u8], at: usize) -> usize {
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'=' | b'!'), Some(b'=')) => 2,
        _ => 1,
    }
}

fn identifier_end(bytes: &[u8], at: usize) -> usize {
    let mut end = at;
    while let Some(&b) = bytes.get(end) {
        if b == 0 || is_special(b) || is_whitespace(b) {
            break;
        }
        end += 1;
    }
    end
}

/// Identifiers never contain special characters, so the text alone decides the kind.
fn kind_of(text: &str) -> Kind {
    match text {
        ")" => Kind::ClosePar,
        "," => Kind::Comma,
        "!" => Kind::Not,
        "==" => Kind::DoubleEquals,
        "=" => Kind::Equals,
        ">" => Kind::GreaterThan,
        "<" => Kind::LessThan,
        "!=" => Kind::NotEquals,
        "(" => Kind::OpenPar,
        "in" => Kind::In,
        "notin" => Kind::NotIn,
        _ => Kind::Identifier,
    }
}

fn operator_of(kind: Kind) -> Option<Operator> {
    Some(match kind {
        Kind::In => Operator::In,
        Kind::NotIn => Operator::NotIn,
        Kind::Equals => Operator::Equals,
        Kind::DoubleEquals => Operator::DoubleEquals,
        Kind::NotEquals => Operator::NotEquals,
        Kind::GreaterThan => Operator::GreaterThan,
        Kind::LessThan => Operator::LessThan,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Parser (§5.1 grammar; apimachinery `Parser`).
// ---------------------------------------------------------------------------------------------

/// A value as written, with its byte offset for error positions.
type Value<'a> = (&'a str, usize);

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token<'a>>,
    next: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser { text, tokens: tokenize(text), next: 0 }
    }

    /// The next token read where a key or value may stand: there `in` and `notin` are plain
    /// identifiers (§5.2 L28, L31), as in apimachinery's `Values` context.
    fn peek(&self) -> Token<'a> {
        let mut token = self.peek_operator();
        if matches!(token.kind, Kind::In | Kind::NotIn) {
            token.kind = Kind::Identifier;
        }
        token
    }

    /// The next token read in operator position, where `in` and `notin` are keywords.
    fn peek_operator(&self) -> Token<'a> {
        let last = Token { kind: Kind::End, text: "", at: self.text.len() };
        self.tokens.get(self.next).copied().unwrap_or(last)
    }

    fn advance(&mut self) -> Token<'a> {
        let token = self.peek();
        self.next += 1;
        token
    }

    fn advance_operator(&mut self) -> Token<'a> {
        let token = self.peek_operator();
        self.next += 1;
        token
    }

    /// `<selector-syntax> ::= <requirement> | <requirement> "," <selector-syntax>`, or nothing.
    fn selector(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        if self.peek().kind == Kind::End {
            return Ok(requirements);
        }
        loop {
            let first = self.peek();
            if !matches!(first.kind, Kind::Identifier | Kind::Not) {
                let what =
                    if requirements.is_empty() { "a label key or \"!\"" } else { "a label key or \"!\" after \",\"" };
                return Err(self.expected(what, first));
            }
            let requirement = self.requirement()?;
            let after = self.advance();
            match after.kind {
                Kind::Comma => requirements.push(requirement),
                Kind::End => {
                    requirements.push(requirement);
                    return Ok(requirements);
                }
                _ => return Err(self.unexpected_after(&requirement, after)),
            }
        }
    }

    /// `<requirement> ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]`.
    /// A bare key means Exists only when `,` or the end follows it.
    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut key = self.advance();
        let negated = key.kind == Kind::Not;
        if negated {
            key = self.advance();
            if key.kind != Kind::Identifier {
                return Err(self.expected("a label key after \"!\"", key));
            }
        }
        validate_label_key(key.text)
            .map_err(|e| format!("invalid label key at character {}: {e}", self.char_at(key.at)))?;
        if negated {
            return Ok(Requirement::bare(key.text, Operator::DoesNotExist));
        }
        if matches!(self.peek().kind, Kind::End | Kind::Comma) {
            return Ok(Requirement::bare(key.text, Operator::Exists));
        }
        let op_token = self.advance_operator();
        let Some(operator) = operator_of(op_token.kind) else {
            let what = format!("an operator (=, ==, !=, in, notin, >, <) after the key {}", shown(key.text));
            return Err(self.expected(&what, op_token));
        };
        let values = match operator {
            Operator::In | Operator::NotIn => self.value_set(op_token)?,
            _ => self.exact_value(op_token)?,
        };
        self.build(key.text, operator, values)
    }

    /// `"(" <values> ")"`; `()` means the one empty value.
    fn value_set(&mut self, op_token: Token<'a>) -> Result<Vec<Value<'a>>, String> {
        let open = self.advance();
        if open.kind != Kind::OpenPar {
            let what = format!("\"(\" after {}", shown(op_token.text));
            return Err(self.expected(&what, open));
        }
        let first = self.peek();
        match first.kind {
            Kind::ClosePar => {
                self.advance();
                Ok(vec![("", first.at)])
            }
            Kind::Identifier | Kind::Comma => self.value_list(),
            _ => Err(self.expected("a value, \",\" or \")\" after \"(\"", first)),
        }
    }

    /// Comma-separated values up to and including `)`. An empty place (`(,`, `,,`, `,)`) is the
    /// empty value; this is apimachinery's `parseIdentifiersList` with the #133419 fix.
    fn value_list(&mut self) -> Result<Vec<Value<'a>>, String> {
        let mut values = Vec::new();
        loop {
            let token = self.advance();
            match token.kind {
                Kind::Identifier => {
                    values.push((token.text, token.at));
                    let next = self.peek();
                    match next.kind {
                        Kind::Comma => {}
                        Kind::ClosePar => {
                            self.advance();
                            return Ok(values);
                        }
                        _ => {
                            let what = format!("\",\" or \")\" after the value {}", shown(token.text));
                            return Err(self.expected(&what, next));
                        }
                    }
                }
                Kind::Comma => {
                    if values.is_empty() {
                        values.push(("", token.at));
                    }
                    let next = self.peek();
                    if matches!(next.kind, Kind::Comma | Kind::ClosePar) {
                        values.push(("", next.at));
                    }
                    if next.kind == Kind::ClosePar {
                        self.advance();
                        return Ok(values);
                    }
                }
                _ => return Err(self.expected("a value, \",\" or \")\" after \",\"", token)),
            }
        }
    }

    /// `["=" | "==" | "!=" | ">" | "<"] VALUE`; nothing before `,` or the end is the empty value.
    fn exact_value(&mut self, op_token: Token<'a>) -> Result<Vec<Value<'a>>, String> {
        let next = self.peek();
        if matches!(next.kind, Kind::End | Kind::Comma) {
            return Ok(vec![("", next.at)]);
        }
        let value = self.advance();
        if value.kind != Kind::Identifier {
            let what = format!("a value after {}", shown(op_token.text));
            return Err(self.expected(&what, value));
        }
        Ok(vec![(value.text, value.at)])
    }

    /// Checks the values once the requirement is complete, as `NewRequirement` does after parsing.
    fn build(&self, key: &str, operator: Operator, values: Vec<Value<'a>>) -> Result<Requirement, String> {
        for &(value, at) in &values {
            check_value(operator, value).map_err(|e| {
                let place = self.char_at(at);
                format!("invalid value of {} at character {place}: {e}", shown(key))
            })?;
        }
        Ok(Requirement {
            key: key.to_string(),
            operator,
            values: values.iter().map(|&(value, _)| value.to_string()).collect(),
        })
    }

    fn expected(&self, what: &str, found: Token<'a>) -> String {
        let place = self.char_at(found.at);
        format!("expected {what}, found {} at character {place}", self.describe(found))
    }

    fn unexpected_after(&self, requirement: &Requirement, found: Token<'a>) -> String {
        let key = shown(&requirement.key);
        let (subject, hint) = match requirement.operator {
            Operator::DoesNotExist => {
                (shown(&format!("!{}", requirement.key)), " (\"!\" takes a bare key, without operator or value)")
            }
            Operator::Exists => (format!("the key {key}"), ""),
            Operator::In | Operator::NotIn => (format!("the values of {key}"), ""),
            _ => (format!("the value of {key}"), ""),
        };
        let place = self.char_at(found.at);
        let found = self.describe(found);
        format!("unexpected {found} after {subject} at character {place}{hint}")
    }

    fn describe(&self, token: Token<'a>) -> String {
        if token.kind != Kind::End {
            return shown(token.text);
        }
        if self.text.as_bytes().get(token.at) == Some(&0) {
            "a NUL byte, which ends the selector".to_string()
        } else {
            "the end of the selector".to_string()
        }
    }

    /// 1-based character (not byte) position, as a user counts it.
    fn char_at(&self, at: usize) -> usize {
        self.text.get(..at).map_or(at, |before| before.chars().count()) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `(case, input, Ok(normalized String()) | Err(part of the message))`, kubefleet-updaterun.md
    /// §5.2. Cases with several inputs have one row per input.
    const PARSE_CASES: &[(&str, &str, Result<&str, &str>)] = &[
        ("L1", "", Ok("")),
        ("L2", "x=a,y=b,z=c", Ok("x=a,y=b,z=c")),
        ("L3", "x!=a,y=b", Ok("x!=a,y=b")),
        ("L4", "x=", Ok("x=")),
        ("L4", "x= ", Ok("x=")),
        ("L5", "x=,z= ", Ok("x=,z=")),
        ("L5", "x= ,z= ", Ok("x=,z=")),
        ("L6", "!x", Ok("!x")),
        ("L7", "x>1", Ok("x>1")),
        ("L7", "x>1,z<5", Ok("x>1,z<5")),
        ("L8", "x=a||y=b", Err(r#"invalid value of "x" at character 3: label value "a||y" must be empty or"#)),
        ("L9", "x==a==b", Err(r#"unexpected "==" after the value of "x" at character 5"#)),
        ("L10", "!x=a", Err(r#"unexpected "=" after "!x" at character 3 ("!" takes a bare key"#)),
        ("L11", "x<a", Err(r#"invalid value of "x" at character 3: value "a" is not a base-10 integer"#)),
        ("L12", "\rx", Ok("x")),
        ("L13", "this-is-a-dns.domain.com/key-with-dash", Ok("this-is-a-dns.domain.com/key-with-dash")),
        (
            "L14",
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            Ok("0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"),
        ),
        ("L15", "foo  in\t (abc)", Ok("foo in (abc)")),
        ("L15", "x notin\n (abc)", Ok("x notin (abc)")),
        ("L16", "x in (abc,)", Ok("x in (,abc)")),
        ("L17", "x in (abc,abc)", Ok("x in (abc)")),
        ("L18", "x in ()", Ok("x in ()")),
        ("L18", "x notin ( )", Ok("x notin ()")),
        ("L19", "x in (a,,)", Ok("x in (,a)")),
        ("L19", "x in (a,,,,,,)", Ok("x in (,a)")),
        ("L19", "x in (a,,a,,a,,a,,)", Ok("x in (,a)")),
        ("L20", "x notin (abc,,def),bar,z in (),w", Ok("bar,w,x notin (,abc,def),z in ()")),
        ("L21", "x,y in (a)", Ok("x,y in (a)")),
        ("L22", "x,,y", Err(r#"expected a label key or "!" after ",", found "," at character 3"#)),
        ("L22", ",x,y", Err(r#"expected a label key or "!", found "," at character 1"#)),
        ("L23", "x nott in (y)", Err(r#"after the key "x", found "nott" at character 3"#)),
        ("L24", "x notin (, a)", Ok("x notin (,a)")),
        ("L25", "a in (xyz),", Err(r#"after ",", found the end of the selector at character 12"#)),
        ("L26", "a in (xyz)b notin ()", Err(r#"unexpected "b" after the values of "a" at character 11"#)),
        ("L27", "a ", Ok("a")),
        ("L28", "a in (x,y,notin, z,in)", Ok("a in (in,notin,x,y,z)")),
        ("L29", "a in (xyz abc)", Err(r#"expected "," or ")" after the value "xyz", found "abc" at character 11"#)),
        (
            "L30",
            "a notin(",
            Err(r#"expected a value, "," or ")" after "(", found the end of the selector at character 9"#),
        ),
        ("L30", "a (", Err(r#"found "(" at character 3"#)),
        ("L30", "(", Err(r#"expected a label key or "!", found "(" at character 1"#)),
        ("L31", "notin=in", Ok("notin=in")),
        ("L32", "x=a,a=x", Ok("a=x,x=a")),
        ("L32", "a=x,x=a", Ok("a=x,x=a")),
        ("L33", "x", Ok("x")),
        ("L34", "x!=y,z!=w", Ok("x!=y,z!=w")),
        ("L35", "x notin ()", Ok("x notin ()")),
        ("L36", "x in ()", Ok("x in ()")),
        ("L37", "z>1", Ok("z>1")),
        // L38 through the parser where the string form can express it; the rest in `l38_...`.
        ("L38", "foo>bar", Err(r#"value "bar" is not a base-10 integer"#)),
        ("L38", "barz<blah", Err(r#"value "blah" is not a base-10 integer"#)),
        ("L38", "x>", Err(r#"value "" is not a base-10 integer"#)),
        ("L38", "y>1", Ok("y>1")),
        ("L38", "z<6", Ok("z<6")),
        ("L38", "1foo in (bar)", Ok("1foo in (bar)")),
        ("L38", "1234 in (bar)", Ok("1234 in (bar)")),
        ("L38", "x in (a b)", Err(r#"found "b" at character 9"#)),
        ("L39", "x == a", Ok("x==a")),
        ("L39", "x in(a)", Ok("x in (a)")),
        ("L40", "! x", Ok("!x")),
        (
            "L41",
            "x IN (a)",
            Err(r#"expected an operator (=, ==, !=, in, notin, >, <) after the key "x", found "IN" at character 3"#),
        ),
        ("L42", "x=a b", Err(r#"unexpected "b" after the value of "x" at character 5"#)),
        ("L43", "x=a/b", Err(r#"label value "a/b" must be empty or"#)),
        ("L43", "x=-a", Err(r#"label value "-a" must be empty or"#)),
        ("L43", "x>-1", Err(r#"label value "-1" must be empty or"#)),
        (
            "L44",
            "Example.com/x",
            Err(r#"the prefix "Example.com" of label key "Example.com/x" must be a lowercase DNS subdomain"#),
        ),
        ("L44", "/x", Err(r#"label key "/x" has an empty prefix"#)),
        ("L44", "x/", Err(r#"label key "x/" has an empty name"#)),
        ("L44", "a/b/c", Err(r#"label key "a/b/c" has more than one "/""#)),
        ("L45", "X_y.Z=1", Ok("X_y.Z=1")),
        ("L46", "x=a,x=b", Ok("x=a,x=b")),
    ];

    /// `(case, selector, labels, matches)`.
    type MatchCase = (&'static str, &'static str, &'static [(&'static str, &'static str)], bool);

    /// §5.2 L31, L33-L37, L46 and the matches of apimachinery's `TestSelectorMatches`.
    const MATCH_CASES: &[MatchCase] = &[
        ("L1", "", &[("x", "y")], true),
        ("L1", "", &[], true),
        ("L31", "notin=in", &[("notin", "in")], true),
        ("L33", "x", &[("x", "z")], true),
        ("L33", "x", &[("y", "z")], false),
        ("L34", "x!=y,z!=w", &[("x", "z"), ("z", "a")], true),
        ("L34", "x!=y,z!=w", &[("x", "z"), ("z", "w")], false),
        ("L35", "x notin ()", &[("y", "")], true),
        ("L35", "x notin (),y", &[("y", "")], true),
        ("L35", "x notin (),!y", &[("y", "")], false),
        ("L36", "x in ()", &[("y", "baz")], false),
        ("L36", "x in ()", &[("x", "")], true),
        ("L37", "z>1", &[("z", "2")], true),
        ("L37", "z>1", &[("z", "v2")], false),
        ("L37", "z>1", &[("z", "1")], false),
        ("L37", "x<1", &[("x", "0")], true),
        ("L37", "x<1", &[("x", "2")], false),
        ("L37", "x<1", &[], false),
        ("L46", "x=a,x=b", &[("x", "a")], false),
        ("L46", "x=a,x=b", &[("x", "b")], false),
        ("L46", "x=a,x!=b", &[("x", "a")], true),
        ("L2", "x=y,z=w", &[("x", "y"), ("z", "w")], true),
        ("L2", "x=y,z=w", &[("x", "w"), ("z", "w")], false),
        ("L6", "!x", &[("y", "z")], true),
        ("L6", "!x", &[("x", "z")], false),
        ("L3", "x=z", &[], false),
        ("L3", "x!=z", &[], true),
        ("L2", "foo=bar,foobar=bar,baz=blah", &[("foo", "bar"), ("baz", "blah")], false),
        ("L14", "k in (a,b)", &[("k", "b")], true),
        ("L14", "k in (a,b)", &[("k", "c")], false),
        ("L14", "k notin (a,b)", &[("k", "c")], true),
        ("L14", "k notin (a,b)", &[("k", "a")], false),
        // Go's ParseInt accepts a sign on the label side and rejects overflow.
        ("L37", "x>1", &[("x", "+5")], true),
        ("L37", "x<1", &[("x", "-5")], true),
        ("L37", "x>1", &[("x", "99999999999999999999")], false),
        // Prefixed keys (DNS-subdomain prefix): existence, absence and values, with and without
        // the label.
        ("L6", "example.com/ring", &[("example.com/ring", "canary")], true),
        ("L6", "example.com/ring", &[("ring", "canary")], false),
        ("L6", "!example.com/ring", &[("ring", "canary")], true),
        ("L6", "!example.com/ring", &[("example.com/ring", "")], false),
        ("L14", "example.com/ring in (canary)", &[("example.com/ring", "canary")], true),
        ("L14", "example.com/ring notin (canary)", &[], true),
        ("L3", "example.com/ring!=canary", &[("example.com/ring", "canary")], false),
        ("L37", "x>1", &[("x", "")], false),
    ];

    fn check(case: &str, input: &str, expected: Result<&str, &str>) {
        match (Selector::parse(input), expected) {
            (Ok(selector), Ok(normalized)) => {
                assert_eq!(selector.to_string(), normalized, "{case}: {input:?}");
            }
            (Err(message), Err(part)) => {
                assert!(message.contains(part), "{case}: {input:?}: error {message:?} should contain {part:?}");
            }
            (got, _) => panic!("{case}: {input:?}: got {got:?}, expected {expected:?}"),
        }
    }

    fn check_match(case: &str, selector: &str, labels: &[(&str, &str)], expected: bool) {
        let parsed = Selector::parse(selector).unwrap_or_else(|e| panic!("{case}: {selector:?} should parse: {e}"));
        let labels: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(parsed.matches(&labels), expected, "{case}: {selector:?} on {labels:?}");
    }

    #[test]
    fn parse_cases() {
        for &(case, input, expected) in PARSE_CASES {
            check(case, input, expected);
        }
    }

    #[test]
    fn every_reference_case_has_a_row() {
        for n in 1..=46 {
            let case = format!("L{n}");
            let in_table = PARSE_CASES.iter().any(|row| row.0 == case);
            assert!(in_table, "{case} is missing from PARSE_CASES");
        }
    }

    #[test]
    fn match_cases() {
        for &(case, selector, labels, expected) in MATCH_CASES {
            check_match(case, selector, labels, expected);
        }
    }

    #[test]
    fn l35_l36_constructed_requirements() {
        let not_in = Requirement::new("x", Operator::NotIn, &[""]).unwrap();
        let in_empty = Requirement::new("x", Operator::In, &[""]).unwrap();
        let y_empty = BTreeMap::from([("y".to_string(), String::new())]);
        let y_baz = BTreeMap::from([("y".to_string(), "baz".to_string())]);
        assert!(Selector::new(vec![not_in]).matches(&y_empty));
        assert!(!Selector::new(vec![in_empty]).matches(&y_baz));
    }

    #[test]
    fn l38_requirement_constructor() {
        use Operator::*;
        let long_key = "a".repeat(254);
        let long_value = "a".repeat(254);
        let rows: &[(&str, Operator, &[&str], bool)] = &[
            ("x", In, &[], false),
            ("x", NotIn, &[], false),
            ("x", In, &["foo"], true),
            ("x", NotIn, &["foo"], true),
            ("x", Exists, &[], true),
            ("x", DoesNotExist, &[], true),
            ("1foo", In, &["bar"], true),
            ("1234", In, &["bar"], true),
            ("y", GreaterThan, &["1"], true),
            ("z", LessThan, &["6"], true),
            ("foo", GreaterThan, &["bar"], false),
            ("barz", LessThan, &["blah"], false),
            ("x", GreaterThan, &[], false),
            ("x", Equals, &["a", "b"], false),
            ("x", Equals, &["a", "a"], false),
            ("x", Exists, &["a"], false),
            ("x", DoesNotExist, &["a"], false),
            (&long_key, Exists, &[], false),
            ("x", In, &[&long_value], false),
            ("x", In, &["a b"], false),
        ];
        for &(key, operator, values, ok) in rows {
            let got = Requirement::new(key, operator, values);
            assert_eq!(got.is_ok(), ok, "L38: {key:?} {operator:?} {values:?}: {got:?}");
        }
        let unsupported = "unsupportedOp".parse::<Operator>().unwrap_err();
        assert!(unsupported.contains(r#"unsupported operator "unsupportedOp""#));
        for operator in Operator::ALL {
            assert_eq!(operator.as_str().parse::<Operator>(), Ok(operator));
        }
    }

    #[test]
    fn everything_is_empty_and_matches_all() {
        let everything = Selector::everything();
        assert!(everything.is_empty());
        assert_eq!(everything, Selector::parse(" \t").unwrap());
        assert_eq!(everything.to_string(), "");
        assert!(everything.matches(&BTreeMap::from([("x".into(), "y".into())])));
    }

    #[test]
    fn keywords_are_keys_and_values_outside_operator_position() {
        check("kw", "in in (in)", Ok("in in (in)"));
        check("kw", "notin notin (notin,in)", Ok("notin notin (in,notin)"));
        check("kw", "x=notin,!in", Ok("!in,x=notin"));
        check("kw", "x in", Err(r#"expected "(" after "in", found the end"#));
    }

    #[test]
    fn integer_bounds_follow_int64() {
        check("int", "x>9223372036854775807", Ok("x>9223372036854775807"));
        check("int", "x<007", Ok("x<007"));
        check("int", "x>9223372036854775808", Err("fits in 64 bits"));
        check("int", "x>+1", Err(r#"label value "+1" must be empty or"#));
    }

    #[test]
    fn nul_byte_acts_as_in_go() {
        check("nul", "\0x", Ok(""));
        check("nul", "x \0y=z", Ok("x"));
        check("nul", "x=\0,y", Ok("x=,y"));
        check("nul", "x, \0y", Err("found a NUL byte, which ends the selector"));
        // A NUL right after a token is consumed with it, so here the end comes after the NUL.
        check("nul", "x,\0", Err("found the end of the selector at character 4"));
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        check("pos", "x in (ñ ñ)", Err(r#"found "ñ" at character 9"#));
        check("pos", "x=a,ñ", Err("invalid label key at character 5"));
    }

    #[test]
    fn requirements_keep_input_order_within_a_key() {
        let selector = Selector::parse("b,a!=1,a=2,a").unwrap();
        assert_eq!(selector.to_string(), "a!=1,a=2,a,b");
        assert_eq!(selector.requirements().len(), 4);
        assert_eq!(selector.requirements()[0].operator, Operator::NotEquals);
    }

    #[test]
    fn label_keys() {
        let max_name = "a".repeat(63);
        let max_prefix = format!("{}/x", "a".repeat(253));
        let long_parts = format!("{}.{}/x", "a".repeat(100), "b".repeat(100));
        let valid = ["a", "A", "a.b-c_d", "example.com/MyName", "0.1.2.domain/99", &max_name, &max_prefix, &long_parts];
        for key in valid {
            assert_eq!(validate_label_key(key), Ok(()), "{key:?}");
        }
        let too_long_name = "a".repeat(64);
        let too_long_prefix = format!("{}/x", "a".repeat(254));
        let invalid = [
            ("", "has an empty name"),
            ("a/b/c", "more than one \"/\""),
            ("/x", "empty prefix"),
            ("x/", "has an empty name"),
            ("Example.com/x", "lowercase DNS subdomain"),
            ("a..b/x", "lowercase DNS subdomain"),
            ("-a/x", "lowercase DNS subdomain"),
            ("a_b/x", "lowercase DNS subdomain"),
            ("-x", "start and end with a letter or digit"),
            ("x_", "start and end with a letter or digit"),
            ("a b", "start and end with a letter or digit"),
            ("é", "start and end with a letter or digit"),
            (&too_long_name, "has 64 characters; a name may have at most 63"),
            (&too_long_prefix, "has 254 characters; a prefix may have at most 253"),
        ];
        for (key, part) in invalid {
            let message = validate_label_key(key).unwrap_err();
            assert!(message.contains(part), "{key:?}: {message:?} lacks {part:?}");
        }
    }

    #[test]
    fn label_values() {
        let max = "a".repeat(63);
        for value in ["", "a", "A-b_c.d", "0", &max] {
            assert_eq!(validate_label_value(value), Ok(()), "{value:?}");
        }
        let too_long = "a".repeat(64);
        let message = validate_label_value(&too_long).unwrap_err();
        assert!(message.contains("has 64 characters; a label value may have at most 63"));
        assert!(message.contains("(64 characters)") || message.contains(&too_long));
        for value in ["-a", "a-", ".a", "a/b", "a b", "é", "a,b"] {
            let message = validate_label_value(value).unwrap_err();
            assert!(message.contains("must be empty or consist of letters, digits"));
        }
    }

    #[test]
    fn long_text_is_cut_in_messages() {
        let message = validate_label_key(&"a".repeat(254)).unwrap_err();
        assert!(message.contains("… (254 characters)"), "{message}");
        assert!(message.len() < 200, "{message}");
        // Up to twice the kept length is shown whole.
        assert_eq!(shown(&"b".repeat(80)), format!("{:?}", "b".repeat(80)));
        assert_eq!(shown(&"b".repeat(81)), format!("{:?}… (81 characters)", "b".repeat(40)));
    }

    /// Pieces that often form valid selectors, so the round-trip property sees many of them.
    fn selector_piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "x", "y", "a.b/c", "in", "notin", "1", "-", "=", "==", "!=", "!", ">", "<", "(", ")", ",", " ", "\t", "\0",
            "é", "/", "A_b",
        ])
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            match Selector::parse(&text) {
                // What parses prints as a selector that parses to the same thing.
                Ok(selector) => prop_assert_eq!(Selector::parse(&selector.to_string()), Ok(selector)),
                // A refusal is one sentence on one line.
                Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n'), "{:?}", e),
            }
            if validate_label_key(&text).is_ok() {
                // A valid key has a name part of at most 63 characters and no blanks.
                let name = text.rsplit('/').next().unwrap_or_default();
                prop_assert!(!name.is_empty() && name.len() <= 63 && !text.chars().any(char::is_whitespace), "{:?}", text);
            }
            if validate_label_value(&text).is_ok() {
                prop_assert!(text.len() <= 63 && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)), "{:?}", text);
            }
            if let Ok(operator) = text.parse::<Operator>() {
                prop_assert!(Operator::ALL.contains(&operator));
            }
        }

        #[test]
        fn parsed_selectors_round_trip(pieces in prop::collection::vec(selector_piece(), 0..14)) {
            let text = pieces.concat();
            if let Ok(selector) = Selector::parse(&text) {
                let printed = selector.to_string();
                let reparsed = Selector::parse(&printed);
                prop_assert_eq!(reparsed.as_ref(), Ok(&selector), "{:?} printed as {:?}", text, printed);
                for requirement in selector.requirements() {
                    prop_assert!(validate_label_key(&requirement.key).is_ok());
                }
            }
        }

        #[test]
        fn matching_never_panics(
            pieces in prop::collection::vec(selector_piece(), 0..10),
            labels in prop::collection::btree_map(prop_oneof!["[a-z]{1,2}", Just("a.b/c".to_string())], "[-+0-9a-z]{0,3}", 0..4),
        ) {
            if let Ok(selector) = Selector::parse(&pieces.concat()) {
                // Against a literal reading of apimachinery's `Requirement.Matches`.
                let oracle = selector.requirements().iter().all(|r| {
                    let label = labels.get(&r.key);
                    let int = |v: &str| v.parse::<i64>().ok();
                    match r.operator {
                        Operator::Exists => label.is_some(),
                        Operator::DoesNotExist => label.is_none(),
                        Operator::In | Operator::Equals | Operator::DoubleEquals => label.is_some_and(|v| r.values.contains(v)),
                        Operator::NotIn | Operator::NotEquals => !label.is_some_and(|v| r.values.contains(v)),
                        Operator::GreaterThan | Operator::LessThan => {
                            let bound = (r.values.len() == 1).then(|| r.values.iter().next().and_then(|b| int(b))).flatten();
                            match (label.and_then(|v| int(v)), bound) {
                                (Some(v), Some(b)) => if r.operator == Operator::GreaterThan { v > b } else { v < b },
                                _ => false,
                            }
                        }
                    }
                });
                prop_assert_eq!(selector.matches(&labels), oracle, "{:?} on {:?}", selector.to_string(), labels);
            }
        }
    }
}
