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

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::problem::{Problem, echo, echo_value, join};

/// A JSON Schema of one input format, ready to check documents against.
///
/// The schema is compiled once into places and rules, so that checking a document looks nothing up
/// by name but its fields: walking the schema's own JSON looked up `$ref`, `anyOf`, `type`,
/// `properties` and more by (SipHash-hashed) name at every value of the document, about a quarter
/// of loading a file of a thousand members and ten times what the compiled walk costs.
/// Problems are still worded from the schema's JSON (`root`), found again by the pointer a place
/// keeps, so a problem reads the same either way.
pub struct Shape {
    root: Value,
    places: Vec<Place>,
    rules: Vec<Rules>,
    /// The document's place.
    document: usize,
}

/// Where a schema is written (a property's, an array's items, a resolved alternative): what problems
/// of its values are worded from, and the rules it resolves to.
struct Place {
    /// The schema's pointer in `root`; `None` for an alternative whose reference leads nowhere (read
    /// as `true`, as a walk from it reads it).
    at: Option<String>,
    rules: usize,
}

/// What a schema checks, `$ref`s followed: compiled once for each schema a `$ref` names (shared by
/// every place that names it) and once for each schema written in place.
enum Rules {
    /// `false`: no value is allowed.
    Nothing,
    /// Not an object schema (`true`, a reference that leads nowhere): any value, not looked into.
    Anything,
    /// `anyOf` (or `oneOf`): the places of the alternatives, each resolved.
    AnyOf(Vec<usize>),
    Checked(Checked),
}

struct Checked {
    /// The resolved schema's pointer in `root`, for the names of its properties in problems.
    at: String,
    /// The JSON types it takes ([`kind_of`]).
    kinds: u8,
    /// The range of an integer `format`.
    integers: Option<(i128, i128)>,
    properties: FxHashMap<String, usize>,
    additional: Additional,
    required: Vec<String>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    items: Option<usize>,
}

/// `additionalProperties`.
enum Additional {
    /// Absent: other fields are not looked into.
    Ignored,
    /// `false`: another field is an unknown field.
    Refused,
    /// A schema the values of other fields are checked against.
    Checked(usize),
}

/// The schema that accepts anything (`true`).
static ANYTHING: Value = Value::Bool(true);

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const STRING: u8 = 16;
const NUMBER: u8 = 32;
const INTEGER: u8 = 64;
const ANY_KIND: u8 = 127;

/// The JSON Schema types a value is of. An integer is a number written without a fraction or
/// exponent, as serde reads it.
fn kind_of(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) if n.is_i64() || n.is_u64() => NUMBER | INTEGER,
        Value::Number(_) => NUMBER,
    }
}

/// The values a JSON Schema type name takes (an unknown name takes any value).
fn kinds_named(t: &str) -> u8 {
    match t {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "object" => OBJECT,
        "array" => ARRAY,
        "string" => STRING,
        "number" => NUMBER,
        "integer" => INTEGER,
        _ => ANY_KIND,
    }
}

/// Compiles a schema's JSON into places and rules.
struct Compiler<'a> {
    root: &'a Value,
    places: Vec<Place>,
    rules: Vec<Rules>,
    /// The rules of each schema a `$ref` names, compiled once (a schema may refer to itself).
    named: FxHashMap<&'a str, usize>,
    /// The rules of a reference that leads nowhere.
    nowhere: Option<usize>,
    /// The schemas `#/$defs/NAME` names, by pointer (the references schemars writes).
    definitions: FxHashMap<String, &'a Value>,
}

/// Where a schema's `$ref`s lead.
enum Resolved<'a> {
    /// It has no reference: its rules are its own.
    Itself,
    /// The schema the last reference names, and that reference's pointer.
    Named(&'a str, &'a Value),
    /// A reference that leads nowhere (read as `true`).
    Nowhere,
}

/// Follows `$ref`s (`#/$defs/...`) from `schema`, looking each one's pointer up with `find`: the
/// schema they lead to, with the pointer of the last reference (`None` when `schema` has none);
/// `None` when a reference leads nowhere.
fn follow<'a>(schema: &'a Value, find: impl Fn(&str) -> Option<&'a Value>) -> Option<(Option<&'a str>, &'a Value)> {
    let mut named = None;
    let mut schema = schema;
    // A bound on chains of references: schemars never nests them, a loop would be a bug.
    for _ in 0..16 {
        // Found by a scan of the schema's few keys rather than by hashing.
        let reference = match schema {
            Value::Object(map) => map.iter().find(|(key, _)| *key == "$ref").and_then(|(_, r)| r.as_str()),
            _ => None,
        };
        let Some(reference) = reference else { return Some((named, schema)) };
        let at = reference.strip_prefix('#')?;
        (named, schema) = (Some(at), find(at)?);
    }
    None
}

impl<'a> Compiler<'a> {
    /// Follows `$ref`s (`#/$defs/...`) from `schema` to the schema they name.
    fn resolve(&self, schema: &'a Value) -> Resolved<'a> {
        match follow(schema, |at| self.definitions.get(at).copied().or_else(|| self.root.pointer(at))) {
            Some((None, _)) => Resolved::Itself,
            Some((Some(at), schema)) => Resolved::Named(at, schema),
            None => Resolved::Nowhere,
        }
    }

    /// The place of `schema`, written at `at`.
    fn place(&mut self, at: String, schema: &'a Value) -> usize {
        let rules = match self.resolve(schema) {
            Resolved::Itself => self.compile(at.clone(), schema),
            Resolved::Named(name, schema) => self.named(name, schema),
            Resolved::Nowhere => self.nowhere(),
        };
        self.places.push(Place { at: Some(at), rules });
        self.places.len() - 1
    }

    /// The place of an alternative of `anyOf`, written at `at`: a walk goes on from it as resolved,
    /// so its problems are worded from where it resolves to.
    fn alternative(&mut self, at: String, schema: &'a Value) -> usize {
        let (at, rules) = match self.resolve(schema) {
            Resolved::Itself => (Some(at.clone()), self.compile(at, schema)),
            Resolved::Named(name, schema) => (Some(name.to_string()), self.named(name, schema)),
            Resolved::Nowhere => (None, self.nowhere()),
        };
        self.places.push(Place { at, rules });
        self.places.len() - 1
    }

    fn named(&mut self, name: &'a str, schema: &'a Value) -> usize {
        if let Some(&id) = self.named.get(name) {
            return id;
        }
        // Known before it is compiled, so that a schema referring to itself ends.
        let id = self.reserve();
        self.named.insert(name, id);
        self.compile_into(id, name.to_string(), schema);
        id
    }

    fn nowhere(&mut self) -> usize {
        match self.nowhere {
            Some(id) => id,
            None => {
                let id = self.reserve();
                *self.nowhere.insert(id)
            }
        }
    }

    /// The rules of `schema`, resolved and written at `at`.
    fn compile(&mut self, at: String, schema: &'a Value) -> usize {
        let id = self.reserve();
        self.compile_into(id, at, schema);
        id
    }

    /// A place in `rules` for rules compiled next.
    fn reserve(&mut self) -> usize {
        self.rules.push(Rules::Anything);
        self.rules.len() - 1
    }

    /// Compiles the rules of `schema`, resolved and written at `at`, into their reserved place `id`.
    fn compile_into(&mut self, id: usize, at: String, schema: &'a Value) {
        let Value::Object(rules) = schema else {
            if schema == &Value::Bool(false) {
                self.rules[id] = Rules::Nothing;
            }
            return;
        };
        let fields = Fields::of(rules);
        let alternatives = match (fields.any_of, fields.one_of) {
            (Some(list), _) => Some(("anyOf", list.as_array())),
            (None, Some(list)) => Some(("oneOf", list.as_array())),
            (None, None) => None,
        };
        if let Some((key, Some(alternatives))) = alternatives {
            let here = join(&at, key);
            let places =
                alternatives.iter().enumerate().map(|(i, schema)| self.alternative(join(&here, i), schema)).collect();
            self.rules[id] = Rules::AnyOf(places);
            return;
        }
        let kinds = match fields.kind {
            Some(Value::String(t)) => kinds_named(t),
            Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).fold(0, |k, t| k | kinds_named(t)),
            _ => ANY_KIND,
        };
        let mut properties = FxHashMap::default();
        if let Some(written) = fields.properties.and_then(Value::as_object) {
            let here = join(&at, "properties");
            properties.reserve(written.len());
            for (key, schema) in written {
                let place = self.place(join(&here, key), schema);
                properties.insert(key.clone(), place);
            }
        }
        let additional = match fields.additional {
            None => Additional::Ignored,
            Some(Value::Bool(false)) => Additional::Refused,
            Some(schema) => Additional::Checked(self.place(join(&at, "additionalProperties"), schema)),
        };
        let required = names(fields.required);
        let items = fields.items.map(|schema| self.place(join(&at, "items"), schema));
        self.rules[id] = Rules::Checked(Checked {
            kinds,
            integers: fields.format.and_then(Value::as_str).and_then(integer_range),
            properties,
            additional,
            required,
            min_items: fields.min_items.and_then(Value::as_u64),
            max_items: fields.max_items.and_then(Value::as_u64),
            items,
            at,
        });
    }
}

/// The names a `required` keyword lists.
fn names(required: Option<&Value>) -> Vec<String> {
    required.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

/// The keywords of an object schema a walk uses, found in one pass over its few fields (the map's
/// lookups hash every key, most of compiling a schema).
#[derive(Default)]
struct Fields<'a> {
    any_of: Option<&'a Value>,
    one_of: Option<&'a Value>,
    kind: Option<&'a Value>,
    properties: Option<&'a Value>,
    additional: Option<&'a Value>,
    required: Option<&'a Value>,
    items: Option<&'a Value>,
    format: Option<&'a Value>,
    min_items: Option<&'a Value>,
    max_items: Option<&'a Value>,
}

impl<'a> Fields<'a> {
    fn of(rules: &'a Map<String, Value>) -> Fields<'a> {
        let mut fields = Fields::default();
        for (key, value) in rules {
            let slot = match key.as_str() {
                "anyOf" => &mut fields.any_of,
                "oneOf" => &mut fields.one_of,
                "type" => &mut fields.kind,
                "properties" => &mut fields.properties,
                "additionalProperties" => &mut fields.additional,
                "required" => &mut fields.required,
                "items" => &mut fields.items,
                "format" => &mut fields.format,
                "minItems" => &mut fields.min_items,
                "maxItems" => &mut fields.max_items,
                _ => continue,
            };
            *slot = Some(value);
        }
        fields
    }
}

impl Shape {
    /// The shape of `T` from its derived schema.
    pub fn of<T: schemars::JsonSchema>() -> Shape {
        Shape::from_schema(schemars::schema_for!(T).to_value())
    }

    /// The shape a JSON Schema describes.
    fn from_schema(root: Value) -> Shape {
        let definitions = match root.get("$defs") {
            Some(Value::Object(defs)) => defs.iter().map(|(name, schema)| (join("/$defs", name), schema)).collect(),
            _ => FxHashMap::default(),
        };
        let mut compiler = Compiler {
            root: &root,
            places: Vec::new(),
            rules: Vec::new(),
            named: FxHashMap::default(),
            nowhere: None,
            definitions,
        };
        let document = compiler.place(String::new(), &root);
        let Compiler { places, rules, .. } = compiler;
        Shape { root, places, rules, document }
    }

    /// Every problem of shape in `value`, in document order.
    pub fn check(&self, value: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        self.walk(self.document, value, &At::Root, None, &mut out);
        out
    }

    /// Follows `$ref`s (`#/$defs/...`) to the schema they name (`true` where one leads nowhere).
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        follow(schema, |at| self.root.pointer(at)).map_or(&ANYTHING, |(_, schema)| schema)
    }

    /// The schema written at `place`, as problems word it.
    fn declared(&self, place: usize) -> &Value {
        self.at(self.places[place].at.as_deref())
    }

    fn at(&self, pointer: Option<&str>) -> &Value {
        pointer.and_then(|p| self.root.pointer(p)).unwrap_or(&ANYTHING)
    }

    fn walk(&self, place: usize, value: &Value, path: &At<'_>, field: Option<&str>, out: &mut Vec<Problem>) {
        let rules = match &self.rules[self.places[place].rules] {
            Rules::Nothing => return out.push(Problem::new(path.pointer(), "no value is allowed here")),
            Rules::Anything => return,
            Rules::AnyOf(alternatives) => return self.any_of(place, alternatives, value, path, field, out),
            Rules::Checked(rules) => rules,
        };
        if rules.kinds & kind_of(value) == 0 {
            out.push(self.wrong_type(place, value, path, field));
            return;
        }
        if let Some((min, max)) = rules.integers
            && let Some(n) = value.as_number()
            && (n.is_i64() || n.is_u64())
        {
            let inside = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => i as i128 >= min && i as i128 <= max,
                (None, Some(u)) => u as i128 <= max,
                (None, None) => false,
            };
            if !inside {
                out.push(self.wrong_type(place, value, path, field));
                return;
            }
        }
        match value {
            Value::Object(map) => self.object(rules, map, path, out),
            Value::Array(items) => self.array(place, rules, items, path, field, out),
            _ => {}
        }
    }

    fn object(&self, rules: &Checked, map: &Map<String, Value>, path: &At<'_>, out: &mut Vec<Problem>) {
        for (key, value) in map {
            let here = At::Key(path, key);
            match (rules.properties.get(key.as_str()), &rules.additional) {
                (Some(&place), _) => self.walk(place, value, &here, Some(key), out),
                (None, Additional::Refused) => out.push(unknown_field(key, self.properties(rules), &here.pointer())),
                (None, Additional::Checked(place)) => self.walk(*place, value, &here, None, out),
                (None, Additional::Ignored) => {}
            }
        }
        for name in &rules.required {
            if !map.contains_key(name) {
                let schema = self.properties(rules).and_then(|p| p.get(name)).unwrap_or(&ANYTHING);
                out.push(Problem::new(
                    join(&path.pointer(), name),
                    format!("missing; this field is required: {}", self.describe(schema, Some(name))),
                ));
            }
        }
    }

    /// The `properties` of an object schema, as written.
    fn properties(&self, rules: &Checked) -> Option<&Map<String, Value>> {
        self.at(Some(&rules.at)).get("properties").and_then(Value::as_object)
    }

    fn array(
        &self,
        place: usize,
        rules: &Checked,
        items: &[Value],
        path: &At<'_>,
        field: Option<&str>,
        out: &mut Vec<Problem>,
    ) {
        let count = items.len() as u64;
        if rules.min_items.is_some_and(|m| count < m) || rules.max_items.is_some_and(|m| count > m) {
            out.push(Problem::new(
                path.pointer(),
                format!(
                    "must be {}, not {}",
                    self.describe(self.declared(place), field),
                    what_is(&Value::Array(items.to_vec()))
                ),
            ));
            return;
        }
        if let Some(schema) = rules.items {
            for (i, item) in items.iter().enumerate() {
                self.walk(schema, item, &At::Index(path, i), None, out);
            }
        }
    }

    /// An untagged enum or an optional value: valid if one alternative accepts it; otherwise the
    /// problems of the alternative the value most looks like, or one line naming them all.
    fn any_of(
        &self,
        place: usize,
        alternatives: &[usize],
        value: &Value,
        path: &At<'_>,
        field: Option<&str>,
        out: &mut Vec<Problem>,
    ) {
        let kind = kind_of(value);
        let mut candidates = alternatives.iter().copied().filter(|&a| self.accepts_kind(self.places[a].rules, kind));
        let (Some(first), second) = (candidates.next(), candidates.next()) else {
            return out.push(self.wrong_type(place, value, path, field));
        };
        let Some(second) = second else {
            return self.walk(first, value, path, field, out);
        };
        let mut best: Option<(usize, Vec<Problem>)> = None;
        for candidate in [first, second].into_iter().chain(candidates) {
            let mut found = Vec::new();
            self.walk(candidate, value, path, field, &mut found);
            if found.is_empty() {
                return;
            }
            let overlap = shared_keys(self.declared(candidate), value);
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

    /// Whether a value of `kind` is of a JSON type the rules allow (its details aside).
    fn accepts_kind(&self, rules: usize, kind: u8) -> bool {
        match &self.rules[rules] {
            Rules::Nothing => false,
            Rules::Anything => true,
            Rules::AnyOf(alternatives) => alternatives.iter().any(|&a| self.accepts_kind(self.places[a].rules, kind)),
            Rules::Checked(rules) => rules.kinds & kind != 0,
        }
    }

    fn wrong_type(&self, place: usize, value: &Value, path: &At<'_>, field: Option<&str>) -> Problem {
        let schema = self.declared(place);
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
        let required = names(rules.get("required"));
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

/// The range an integer `format` allows (what the Rust type can hold).
fn integer_range(format: &str) -> Option<(i128, i128)> {
    let range = match format {
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

    /// What the compiled walk must keep from the schema's JSON: references followed (to a schema
    /// that refers to itself, or nowhere), `false`, items given as a list, and the problems of fields
    /// whose names need escaping in a pointer worded from the schema they are written with.
    #[test]
    fn a_compiled_schema_checks_as_its_json_reads() {
        let shape = Shape::from_schema(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "a/b": {"type": "integer"},
                "t~x": {"type": "string", "examples": ["yes"]},
                "node": {"$ref": "#/$defs/Node"},
                "lost": {"$ref": "#/$defs/Missing"},
                "never": false,
                "maybe": {"anyOf": [false, {"type": "string"}]},
                "tuple": {"type": "array", "items": [{"type": "string"}]},
                "pick": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "object", "required": ["w"],
                    "properties": {"w": {"type": "string"}}}]}
            },
            "$defs": {"Node": {"type": "object", "additionalProperties": false,
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer", "format": "uint8"}}}}
        }));
        let lines = |value: Value| shape.check(&value).iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            lines(json!({"a/b": "x", "t~x": 1, "node": {"next": {"next": {"v": 300, "u": 1}}}, "lost": [1],
                "never": null, "tuple": [1, 2], "colour": 1})),
            [
                "/a~1b: must be a whole number, not the string \"x\"",
                "/t~0x: must be a string, such as \"yes\", not the number 1",
                "/node/next/next/v: must be a whole number ≥ 0, not the number 300",
                "/node/next/next/u: unknown field \"u\"; the fields here are next, v",
                "/never: no value is allowed here",
                "/colour: unknown field \"colour\"; the fields here are a/b, t~x, node, lost, never, maybe, tuple, pick",
            ]
        );
        // Both alternatives take an object: the problems are those of the one the value looks like.
        assert_eq!(lines(json!({"pick": {"w": 1}})), ["/pick/w: must be a string, not the number 1"]);
        assert_eq!(lines(json!({"pick": {"v": -1}})), ["/pick/v: must be a whole number ≥ 0, not the number -1"]);
        assert_eq!(lines(json!({"pick": {"next": {}}})), Vec::<String>::new());
        // `false` takes no kind of value, even among alternatives.
        assert_eq!(lines(json!({"maybe": 1})), ["/maybe: must be any value or a string, not the number 1"]);
        assert_eq!(lines(json!({"pick": 2})), ["/pick: must be an object or an object with w, not the number 2"]);
    }

    #[test]
    fn integers_keep_to_their_type_s_range() {
        let found =
            lines(json!({"name": "x", "start": "s", "seed": -1, "settings": {"limits": {"stageMaxConcurrency": 1.5}}}));
        assert_eq!(found[0], "/seed: must be a whole number ≥ 0, not the number -1");
        assert!(found[1].contains("must be a whole number, not the number 1.5"), "{found:#?}");
    }
}
