//! The shape of an input file: its JSON checked against the JSON Schema that `schemars` derives from
//! the DTOs (the schema `fleetsim schema` prints), before serde sees it.
//!
//! serde stops at the first unknown field or wrong type and words it in Rust's terms ("expected
//! u64", "untagged enum PoolsDto"). This pass walks the whole document instead and reports every
//! problem of shape (unknown fields, wrong types, missing fields, arrays where objects belong) with
//! its JSON Pointer, in the API's terms: what the field takes ("a string or a whole number, such as
//! \"25%\" or \"3\""), never a type name. Deserializing a document this pass accepts cannot fail,
//! so the DTOs stay the single source of the format.
//!
//! The check covers exactly what serde would reject: types (with the integer ranges of `format`),
//! `properties` / `required` / `additionalProperties`, `items` with `minItems` / `maxItems`, and
//! `anyOf` (untagged enums, optional references). Rules of values (`enum`, `pattern`, `minimum`
//! beyond an integer's range) stay with `build`, which words them for each field.

use serde_json::{Map, Value};

use super::problem::{Problem, echo, echo_value, join};

/// A JSON Schema of one input format, ready to check documents against.
pub struct Shape {
    root: Value,
}

/// The schema that accepts anything (`true`).
static ANYTHING: Value = Value::Bool(true);

impl Shape {
    /// The shape of `T` from its derived schema.
    pub fn of<T: schemars::JsonSchema>() -> Shape {
        Shape { root: schemars::schema_for!(T).to_value() }
    }

    /// Every problem of shape in `value`, in document order.
    pub fn check(&self, value: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        self.walk(&self.root, value, &At::Root, None, &mut out);
        out
    }

    /// Follows `$ref`s (`#/$defs/...`) to the schema they name.
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        // A bound on chains of references: schemars never nests them, a loop would be a bug.
        for _ in 0..16 {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { return schema };
            schema = reference.strip_prefix('#').and_then(|p| self.root.pointer(p)).unwrap_or(&ANYTHING);
        }
        &ANYTHING
    }

    fn walk(&self, schema: &Value, value: &Value, path: &At<'_>, field: Option<&str>, out: &mut Vec<Problem>) {
        let declared = schema;
        let schema = self.resolve(schema);
        let Value::Object(rules) = schema else {
            if schema == &Value::Bool(false) {
                out.push(Problem::new(path.pointer(), "no value is allowed here"));
            }
            return;
        };
        if let Some(alternatives) = rules.get("anyOf").or_else(|| rules.get("oneOf")).and_then(Value::as_array) {
            self.any_of(declared, alternatives, value, path, field, out);
            return;
        }
        if !self.accepts_kind(schema, value) {
            out.push(self.wrong_type(declared, value, path, field));
            return;
        }
        if let Some(n) = value.as_number()
            && (n.is_i64() || n.is_u64())
            && let Some((min, max)) = integer_range(rules)
        {
            let inside = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => i as i128 >= min && i as i128 <= max,
                (None, Some(u)) => u as i128 <= max,
                (None, None) => false,
            };
            if !inside {
                out.push(self.wrong_type(declared, value, path, field));
                return;
            }
        }
        match value {
            Value::Object(map) => self.object(rules, map, path, out),
            Value::Array(items) => self.array(declared, rules, items, path, field, out),
            _ => {}
        }
    }

    fn object(&self, rules: &Map<String, Value>, map: &Map<String, Value>, path: &At<'_>, out: &mut Vec<Problem>) {
        let properties = rules.get("properties").and_then(Value::as_object);
        let additional = rules.get("additionalProperties");
        for (key, value) in map {
            let here = At::Key(path, key);
            match (properties.and_then(|p| p.get(key)), additional) {
                (Some(schema), _) => self.walk(schema, value, &here, Some(key), out),
                (None, Some(Value::Bool(false))) => out.push(unknown_field(key, properties, &here.pointer())),
                (None, Some(schema)) => self.walk(schema, value, &here, None, out),
                (None, None) => {}
            }
        }
        for name in rules.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                let schema = properties.and_then(|p| p.get(name)).unwrap_or(&ANYTHING);
                out.push(Problem::new(
                    join(&path.pointer(), name),
                    format!("missing; this field is required: {}", self.describe(schema, Some(name))),
                ));
            }
        }
    }

    fn array(
        &self,
        declared: &Value,
        rules: &Map<String, Value>,
        items: &[Value],
        path: &At<'_>,
        field: Option<&str>,
        out: &mut Vec<Problem>,
    ) {
        let min = rules.get("minItems").and_then(Value::as_u64);
        let max = rules.get("maxItems").and_then(Value::as_u64);
        let count = items.len() as u64;
        if min.is_some_and(|m| count < m) || max.is_some_and(|m| count > m) {
            out.push(Problem::new(
                path.pointer(),
                format!("must be {}, not {}", self.describe(declared, field), what_is(&Value::Array(items.to_vec()))),
            ));
            return;
        }
        if let Some(schema) = rules.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.walk(schema, item, &At::Index(path, i), None, out);
            }
        }
    }

    /// An untagged enum or an optional value: valid if one alternative accepts it; otherwise the
    /// problems of the alternative the value most looks like, or one line naming them all.
    fn any_of(
        &self,
        declared: &Value,
        alternatives: &[Value],
        value: &Value,
        path: &At<'_>,
        field: Option<&str>,
        out: &mut Vec<Problem>,
    ) {
        let candidates: Vec<&Value> =
            alternatives.iter().map(|a| self.resolve(a)).filter(|a| self.accepts_kind(a, value)).collect();
        match candidates.as_slice() {
            [] => out.push(self.wrong_type(declared, value, path, field)),
            [only] => self.walk(only, value, path, field, out),
            several => {
                let mut best: Option<(usize, Vec<Problem>)> = None;
                for candidate in several {
                    let mut found = Vec::new();
                    self.walk(candidate, value, path, field, &mut found);
                    if found.is_empty() {
                        return;
                    }
                    let overlap = shared_keys(candidate, value);
                    let better = match &best {
                        None => true,
                        Some((o, p)) => overlap > *o || (overlap == *o && found.len() < p.len()),
                    };
                    if better {
                        best = Some((overlap, found));
                    }
                }
                out.extend(best.map(|(_, p)| p).unwrap_or_default());
            }
        }
    }

    /// Whether `value` is of a JSON type the schema allows (its details aside).
    fn accepts_kind(&self, schema: &Value, value: &Value) -> bool {
        let schema = self.resolve(schema);
        if let Some(alternatives) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
            return alternatives.iter().any(|a| self.accepts_kind(a, value));
        }
        match schema.get("type") {
            Some(Value::String(t)) => fits(t, value),
            Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(|t| fits(t, value)),
            _ => schema != &Value::Bool(false),
        }
    }

    fn wrong_type(&self, schema: &Value, value: &Value, path: &At<'_>, field: Option<&str>) -> Problem {
        Problem::new(path.pointer(), format!("must be {}, not {}", self.describe(schema, field), what_is(value)))
    }

    /// What a schema takes, in the API's words: "a whole number of seconds", "an object with byLabel",
    /// "a string or a whole number, such as \"25%\" or \"3\"".
    pub fn describe(&self, schema: &Value, field: Option<&str>) -> String {
        let kinds = or_list(&self.kinds(schema, field, false));
        match self.examples(schema) {
            Some(list) if !list.is_empty() => {
                let shown: Vec<String> = list.iter().map(echo_value).collect();
                format!("{kinds}, such as {}", or_list(&shown))
            }
            _ => kinds,
        }
    }

    /// The schema's `examples`, or those of the one value an optional value stands for.
    fn examples<'a>(&'a self, schema: &'a Value) -> Option<&'a Vec<Value>> {
        let resolved = self.resolve(schema);
        if let Some(list) = schema.get("examples").or_else(|| resolved.get("examples")).and_then(Value::as_array) {
            return Some(list);
        }
        let alternatives = resolved.get("anyOf").and_then(Value::as_array)?;
        let mut values = alternatives.iter().filter(|a| a.get("type").and_then(Value::as_str) != Some("null"));
        match (values.next(), values.next()) {
            (Some(only), None) => self.examples(only),
            _ => None,
        }
    }

    /// Noun phrases for each kind of value a schema takes (null left out: it means "absent").
    fn kinds(&self, schema: &Value, field: Option<&str>, plural: bool) -> Vec<String> {
        let schema = self.resolve(schema);
        let Value::Object(rules) = schema else {
            return vec![if plural { "values" } else { "any value" }.to_string()];
        };
        let mut out: Vec<String> = Vec::new();
        if let Some(alternatives) = rules.get("anyOf").or_else(|| rules.get("oneOf")).and_then(Value::as_array) {
            for alternative in alternatives {
                for kind in self.kinds(alternative, field, plural) {
                    if !out.contains(&kind) {
                        out.push(kind);
                    }
                }
            }
            return out;
        }
        if let Some(options) = rules.get("enum").and_then(Value::as_array) {
            let shown: Vec<String> = options.iter().filter(|o| !o.is_null()).map(echo_value).collect();
            return vec![format!("one of {}", or_list(&shown))];
        }
        let types: Vec<&str> = match rules.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => return vec![if plural { "values" } else { "any value" }.to_string()],
        };
        for t in types {
            let kind = match t {
                "null" => continue,
                "string" => if plural { "strings" } else { "a string" }.to_string(),
                "boolean" => if plural { "true/false values" } else { "true or false" }.to_string(),
                "number" => if plural { "numbers" } else { "a number" }.to_string(),
                "integer" => whole_number(rules, field, plural),
                "object" => self.object_kind(rules, plural),
                "array" => self.array_kind(rules, plural),
                other => other.to_string(),
            };
            out.push(kind);
        }
        out
    }

    fn object_kind(&self, rules: &Map<String, Value>, plural: bool) -> String {
        let noun = if plural { "objects" } else { "an object" };
        let required: Vec<String> = rules
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if !required.is_empty() {
            return format!("{noun} with {}", and_list(&required));
        }
        match rules.get("additionalProperties") {
            Some(values @ Value::Object(_)) if rules.get("properties").is_none() => {
                format!("{noun} of {}", or_list(&self.kinds(values, None, true)))
            }
            _ => noun.to_string(),
        }
    }

    fn array_kind(&self, rules: &Map<String, Value>, plural: bool) -> String {
        let noun = if plural { "arrays" } else { "an array" };
        let items = rules.get("items").map(|i| or_list(&self.kinds(i, None, true)));
        let count = match (rules.get("minItems").and_then(Value::as_u64), rules.get("maxItems").and_then(Value::as_u64))
        {
            (Some(a), Some(b)) if a == b => format!(" of exactly {a}"),
            (Some(a), _) if a > 0 => format!(" of at least {a}"),
            (_, Some(b)) => format!(" of at most {b}"),
            _ => String::new(),
        };
        match items {
            Some(items) if count.is_empty() => format!("{noun} of {items}"),
            Some(items) => format!("{noun}{count} {items}"),
            None => format!("{noun}{count}"),
        }
    }
}

/// Where the walk is, as a chain of steps: the pointer is written only for a problem, so a valid
/// document costs no strings.
enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn pointer(&self) -> String {
        match self {
            At::Root => String::new(),
            At::Key(parent, key) => join(&parent.pointer(), key),
            At::Index(parent, i) => join(&parent.pointer(), i),
        }
    }
}

/// Whether a value is of JSON Schema type `t`. An integer is a number written without a fraction
/// or exponent, as serde reads it.
fn fits(t: &str, value: &Value) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    }
}

/// The range an integer `format` allows (what the Rust type can hold).
fn integer_range(rules: &Map<String, Value>) -> Option<(i128, i128)> {
    let range = match rules.get("format").and_then(Value::as_str)? {
        "uint8" => (0, u8::MAX as i128),
        "uint16" => (0, u16::MAX as i128),
        "uint32" => (0, u32::MAX as i128),
        "uint64" | "uint" => (0, u64::MAX as i128),
        "int8" => (i8::MIN as i128, i8::MAX as i128),
        "int16" => (i16::MIN as i128, i16::MAX as i128),
        "int32" => (i32::MIN as i128, i32::MAX as i128),
        "int64" | "int" => (i64::MIN as i128, i64::MAX as i128),
        _ => return None,
    };
    Some(range)
}

/// "a whole number of seconds ≥ 0", "a whole number from 4 to 24": the unit from the field's name,
/// the bounds from the schema (or the type's sign).
fn whole_number(rules: &Map<String, Value>, field: Option<&str>, plural: bool) -> String {
    let mut text = if plural { "whole numbers" } else { "a whole number" }.to_string();
    let units = [("Seconds", "seconds"), ("Minutes", "minutes"), ("Hours", "hours"), ("Days", "days")];
    let more = [("Weeks", "weeks"), ("Months", "months")];
    if let Some((_, unit)) = units.iter().chain(&more).find(|(suffix, _)| field.is_some_and(|f| f.ends_with(suffix))) {
        text.push_str(" of ");
        text.push_str(unit);
    }
    let unsigned = rules.get("format").and_then(Value::as_str).is_some_and(|f| f.starts_with("uint"));
    let min = rules.get("minimum").and_then(Value::as_i64).or(unsigned.then_some(0));
    match (min, rules.get("maximum").and_then(Value::as_i64)) {
        (Some(a), Some(b)) => text.push_str(&format!(" from {a} to {b}")),
        (Some(a), None) => text.push_str(&format!(" ≥ {a}")),
        (None, Some(b)) => text.push_str(&format!(" ≤ {b}")),
        (None, None) => {}
    }
    text
}

/// How many of an object value's keys an object schema names (to tell which alternative of an
/// untagged enum the user meant).
fn shared_keys(schema: &Value, value: &Value) -> usize {
    match (schema.get("properties").and_then(Value::as_object), value.as_object()) {
        (Some(properties), Some(map)) => map.keys().filter(|k| properties.contains_key(*k)).count(),
        _ => 0,
    }
}

fn unknown_field(key: &str, properties: Option<&Map<String, Value>>, path: &str) -> Problem {
    // Fields only read from pasted Azure objects and ignored (`writeOnly` in the schema: never
    // written back) are accepted but not offered: the list stays the scenario's own fields.
    let known: Vec<&str> = properties
        .map(|p| {
            p.iter()
                .filter(|(_, schema)| schema.get("writeOnly") != Some(&Value::Bool(true)))
                .map(|(k, _)| k.as_str())
                .collect()
        })
        .unwrap_or_default();
    let closest = known
        .iter()
        .map(|k| (strsim::jaro_winkler(&key.to_lowercase(), &k.to_lowercase()), *k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let message = match closest {
        Some((_, k)) => format!("unknown field {}; did you mean \"{k}\"?", echo(key)),
        None if known.is_empty() => format!("unknown field {}; this object takes no fields", echo(key)),
        None => format!("unknown field {}; the fields here are {}", echo(key), known.join(", ")),
    };
    Problem::new(path, message)
}

/// What a value is, for "must be …, not …": "the string \"seven\"", "an array [\"10m\"]".
pub fn what_is(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {}", echo_value(&Value::Number(n.clone()))),
        Value::String(s) => format!("the string {}", echo(s)),
        Value::Array(a) if a.is_empty() => "an empty array".to_string(),
        Value::Array(_) => format!("an array {}", echo_value(value)),
        Value::Object(o) if o.is_empty() => "an empty object".to_string(),
        Value::Object(_) => format!("an object {}", echo_value(value)),
    }
}

/// "a, b or c".
fn or_list(items: &[String]) -> String {
    joined(items, "or")
}

/// "a, b and c".
fn and_list(items: &[String]) -> String {
    joined(items, "and")
}

fn joined(items: &[String], word: &str) -> String {
    match items {
        [] => "nothing".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioDto;
    use serde_json::json;

    fn lines(value: Value) -> Vec<String> {
        Shape::of::<ScenarioDto>().check(&value).iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn every_problem_is_reported_in_one_pass() {
        let found = lines(json!({
            "name": "x", "start": "s", "colour": "red",
            "members": [{"name": "m", "region": "r", "kubernetesVersion": "1.32.4", "sise": 3}],
            "settings": ["10m"]
        }));
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].starts_with("/colour: unknown field \"colour\"; the fields here are $schema, name"));
        assert!(found[1].starts_with("/members/0/sise: unknown field \"sise\""), "{found:#?}");
        assert_eq!(found[2], "/settings: must be an object, not an array [\"10m\"]");
    }

    #[test]
    fn types_are_named_in_the_api_s_terms() {
        let found = lines(json!({
            "name": "x", "start": "s", "seed": "seven",
            "updateStrategies": {"s": {"stages": [{"name": "a", "afterStageWaitInSeconds": "1h",
                "maxConcurrency": {"x": 1}, "memberSelector": "env=prod"}]}}
        }));
        assert_eq!(
            found,
            [
                "/seed: must be a whole number ≥ 0, not the string \"seven\"",
                "/updateStrategies/s/stages/0/afterStageWaitInSeconds: must be a whole number of seconds, not the string \"1h\"",
                "/updateStrategies/s/stages/0/maxConcurrency: must be a string or a whole number, such as \"25%\" or \"3\", not an object {\"x\":1}",
                "/updateStrategies/s/stages/0/memberSelector: must be an object with byLabel, not the string \"env=prod\"",
            ]
        );
    }

    #[test]
    fn untagged_alternatives_report_the_one_meant() {
        let found = lines(json!({"name": "x", "start": "s", "memberGenerators": [
            {"count": 2, "kubernetesVersions": {"1.32.4": 1}, "nodePools": {"count": {"min": 1, "max": "3"}}},
            {"count": 2, "kubernetesVersions": {"1.32.4": 1}, "nodePools": [{"nmae": "a"}]}
        ]}));
        assert_eq!(found[0], "/memberGenerators/0/nodePools/count/max: must be a whole number, not the string \"3\"");
        assert!(
            found[1]
                .starts_with("/memberGenerators/1/nodePools/0/nmae: unknown field \"nmae\"; did you mean \"name\"?")
        );
        assert!(
            found[2].starts_with("/memberGenerators/1/nodePools/0/name: missing; this field is required: a string")
        );
    }

    #[test]
    fn the_top_level_must_be_an_object() {
        assert_eq!(lines(json!([])), ["/: must be an object with name and start, not an empty array"]);
    }

    #[test]
    fn integers_keep_to_their_type_s_range() {
        let found =
            lines(json!({"name": "x", "start": "s", "seed": -1, "settings": {"limits": {"stageMaxConcurrency": 1.5}}}));
        assert_eq!(found[0], "/seed: must be a whole number ≥ 0, not the number -1");
        assert!(found[1].contains("must be a whole number, not the number 1.5"), "{found:#?}");
    }
}
