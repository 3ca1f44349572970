//! Sweep files → a validated [`SweepPlan`]: the base scenario, the points, and everything that decides
//! a sweep's results. Every point's scenario is validated here, through the normal scenario path.
//!
//! A point is applied by writing its values into the base scenario's JSON at their pointers, then
//! parsing and validating that JSON as if a user had written it: a value in a sweep is accepted exactly
//! when the same value typed into the scenario would be.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::engine::rng::mix64;
use crate::scenario::shape::{self, Shape};
use crate::scenario::{self, Problem, Scenario, problem};
use crate::text::{cut, echo, echo_value};

use super::dto::{ParameterDto, RangeDto, SampleDto, ScenarioSourceDto, SweepDto};
use super::metrics::Metric;
use super::sample;

/// Limits: a sweep is bounded in every dimension so that a typo cannot ask for a year of work.
pub const MAX_PARAMETERS: usize = 32;
pub const MAX_LEVELS: usize = 100_000;
/// Every point gets its scenario file (`points/<p>.json`), so points are bounded more tightly than jobs.
pub const MAX_POINTS: u64 = 100_000;
pub const MAX_REPLICATIONS: u64 = 1_000_000;
pub const MAX_JOBS: u64 = 100_000_000;
/// Point scenarios built while validating are kept for the run up to this many members in all
/// (roughly 50 MB), which spares a second build for the points of small grids; every other point
/// is built again when it runs, so memory does not grow with the number of points.
pub const BUILT_MEMBERS_KEPT: usize = 20_000;

/// Output columns a parameter may not be named after.
const RESERVED_COLUMNS: [&str; 5] = ["point", "replication", "seed", "run", "metric"];

/// A problem in a sweep, located in a file by a JSON Pointer: the sweep file itself or its base
/// scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepProblem {
    /// The file as the user named it (never made absolute, so messages stay short and portable).
    pub file: String,
    pub path: String,
    pub message: String,
}

impl SweepProblem {
    pub(crate) fn new(file: &str, path: impl Into<String>, message: impl Into<String>) -> SweepProblem {
        SweepProblem { file: file.to_string(), path: path.into(), message: message.into() }
    }
}

impl fmt::Display for SweepProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "{}: {}: {}", problem::clean(&self.file), problem::clean(path), problem::clean(&self.message))
    }
}

/// How parameter values combine into points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Every combination; the first parameter varies slowest (nested loops in file order).
    Cartesian,
    /// The i-th value of every parameter together; all parameters have the same number of values.
    Zip,
}

impl Combine {
    pub fn name(self) -> &'static str {
        match self {
            Combine::Cartesian => "cartesian",
            Combine::Zip => "zip",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleMethod {
    Random,
    LatinHypercube,
}

impl SampleMethod {
    pub fn name(self) -> &'static str {
        match self {
            SampleMethod::Random => "random",
            SampleMethod::LatinHypercube => "latinHypercube",
        }
    }
}

/// Sampling settings of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    pub method: SampleMethod,
    pub points: u64,
    pub seed: u64,
}

/// The values a parameter can take.
#[derive(Clone, Debug, PartialEq)]
pub enum Levels {
    /// Listed values, or a range with a step.
    Values(Vec<Value>),
    /// A range without a step (sampling only): integers when both ends are integers.
    Continuous { from: f64, to: f64, integer: bool },
}

/// One validated parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub pointer: String,
    pub levels: Levels,
    /// Given as a `range` (problems with its values are reported there).
    pub ranged: bool,
}

/// A validated sweep: everything needed to run it and to tell whether an output folder holds its
/// results.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    pub name: String,
    /// The sweep file's `description`, shown at the top of its page.
    pub description: Option<String>,
    /// The base scenario's `name`.
    pub scenario_name: String,
    /// The base scenario as JSON (keys in file order).
    pub base: Value,
    /// Where the base scenario is written: its file, and the JSON Pointer of the scenario in it
    /// (`/scenario` when inline in the sweep file, else empty).
    pub base_file: String,
    pub base_prefix: String,
    pub parameters: Vec<Parameter>,
    pub combine: Combine,
    pub sampling: Option<Sampling>,
    /// `points[p][i]`: the value of parameter `i` at point `p`.
    pub points: Vec<Vec<Value>>,
    /// The seed each point's simulation uses (the sweep's `seed`, else the point scenario's).
    pub point_seeds: Vec<u64>,
    /// Scenarios validated while loading, kept for the run when they are small enough together
    /// ([`BUILT_MEMBERS_KEPT`]); others are built again when their point runs.
    built: Vec<Option<Arc<Scenario>>>,
    pub replications: u64,
    /// The sweep's `seed`, which replaces the scenario seed of every point.
    pub seed_override: Option<u64>,
    /// The sweep's `seed`, or the base scenario's.
    pub root_seed: u64,
    /// Metrics in output order; always contains `runState`.
    pub metrics: Vec<Metric>,
    /// The point `paired.csv` compares every point with.
    pub reference: usize,
    /// sha256 of the base scenario's JSON (compact, keys in file order).
    pub scenario_hash: String,
    /// sha256 of everything that decides the results; an output folder belongs to one sweep hash.
    pub sweep_hash: String,
}

impl SweepPlan {
    pub fn jobs(&self) -> u64 {
        self.points.len() as u64 * self.replications
    }

    /// The same sweep with another replication count (and the identity hash that goes with it).
    pub fn with_replications(&self, replications: u64) -> SweepPlan {
        let mut plan = self.clone();
        plan.replications = replications;
        plan.sweep_hash = sweep_hash(&plan);
        plan
    }

    /// The scenario JSON of point `p`: the base with the point's values written at their pointers.
    pub fn point_value(&self, p: usize) -> Value {
        let mut doc = self.base.clone();
        for (parameter, value) in self.parameters.iter().zip(&self.points[p]) {
            set_pointer(&mut doc, &parameter.pointer, value.clone()).expect("pointers were checked when loading");
        }
        doc
    }

    /// The validated scenario of point `p`.
    pub fn build_point(&self, p: usize) -> Result<Arc<Scenario>, Vec<Problem>> {
        match self.built.get(p).and_then(Option::clone) {
            Some(s) => Ok(s),
            None => build_value(self.point_value(p), self.seed_override).map(Arc::new),
        }
    }

    /// The warnings of every point's scenario (`scenario::warnings`), each once, located in the base
    /// scenario's file; one that only some points have says which.
    pub fn warnings(&self) -> Vec<SweepProblem> {
        let per_point: Vec<Vec<Problem>> = (0..self.points.len())
            .into_par_iter()
            .map(|p| self.build_point(p).map(|s| scenario::warnings::warnings(&s)).unwrap_or_default())
            .collect();
        let mut found: Vec<(Problem, Vec<usize>)> = Vec::new();
        let mut index: std::collections::BTreeMap<Problem, usize> = std::collections::BTreeMap::new();
        for (p, warnings) in per_point.into_iter().enumerate() {
            for w in warnings {
                let i = *index.entry(w.clone()).or_insert_with(|| {
                    found.push((w, Vec::new()));
                    found.len() - 1
                });
                found[i].1.push(p);
            }
        }
        let n = self.points.len();
        found
            .into_iter()
            .map(|(w, points)| {
                let which = if points.len() == n {
                    String::new()
                } else {
                    let mut shown: Vec<String> = points.iter().take(5).map(|p| p.to_string()).collect();
                    if points.len() > 5 {
                        shown.push("…".into());
                    }
                    format!(" (at {} of {n} points: {})", points.len(), shown.join(", "))
                };
                SweepProblem::new(
                    &self.base_file,
                    format!("{}{}", self.base_prefix, w.path),
                    format!("{}{which}", w.message),
                )
            })
            .collect()
    }

    /// The reproduce command of one replication, run from the sweep folder.
    pub fn reproduce_command(&self, point: &str, seed: &str, replication: &str) -> String {
        format!("fleetsim run points/{point}.json --seed {seed} --replication {replication}")
    }
}

/// What kind of input file a text is, told by its top-level keys alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An object with `parameters` (and without `space`).
    Sweep,
    /// An object with `space`: a tune file.
    Tune,
    /// An object with `start` and without `parameters`.
    Scenario,
    /// Anything else (invalid as either).
    Unknown,
}

/// Tells a sweep from a scenario by the top-level keys. Values are skipped, not parsed (serde_json
/// skips them without recursion), so no value, however deeply nested or malformed, hides a key
/// written before it.
pub fn file_kind(text: &str) -> FileKind {
    use std::cell::Cell;

    struct Keys<'a> {
        parameters: &'a Cell<bool>,
        start: &'a Cell<bool>,
        space: &'a Cell<bool>,
    }
    impl<'de> serde::de::Visitor<'de> for Keys<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "parameters" => self.parameters.set(true),
                    "start" => self.start.set(true),
                    "space" => self.space.set(true),
                    _ => {}
                }
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let (parameters, start, space) = (Cell::new(false), Cell::new(false), Cell::new(false));
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // A syntax error after the keys that tell still leaves the kind known.
    let _ = serde::Deserializer::deserialize_map(
        &mut deserializer,
        Keys { parameters: &parameters, start: &start, space: &space },
    );
    FileKind::of_keys(parameters.get(), start.get(), space.get())
}

impl FileKind {
    /// The kind of a document with (or without) each of the keys that tell.
    fn of_keys(parameters: bool, start: bool, space: bool) -> FileKind {
        if space {
            return FileKind::Tune;
        }
        match (parameters, start) {
            (true, _) => FileKind::Sweep,
            (false, true) => FileKind::Scenario,
            (false, false) => FileKind::Unknown,
        }
    }

    /// The kind of a parsed document, as [`file_kind`] tells it from its text (without reading the
    /// text again: skipping a large fleet's members costs a tenth of loading them).
    pub fn of_value(value: &Value) -> FileKind {
        let has = |key: &str| value.as_object().is_some_and(|map| map.contains_key(key));
        FileKind::of_keys(has("parameters"), has("start"), has("space"))
    }
}

/// Whether a JSON text is a sweep file rather than a scenario: an object with `parameters`.
pub fn is_sweep_text(text: &str) -> bool {
    file_kind(text) == FileKind::Sweep
}

/// Whether a JSON text is a scenario file: an object with `start` and without `parameters`.
pub fn is_scenario_text(text: &str) -> bool {
    file_kind(text) == FileKind::Scenario
}

/// Reads, parses and validates a sweep file, including every point's scenario.
pub fn load(path: &Path) -> Result<SweepPlan, Vec<SweepProblem>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![SweepProblem::new(&file, "", format!("cannot read the sweep file: {e}"))])?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_text(&text, &file, &base_dir)
}

/// The shape of sweep files: the schema `fleetsim schema sweep` prints.
static SHAPE: LazyLock<Shape> = LazyLock::new(Shape::of::<SweepDto>);

/// Parses and validates sweep text. `file` names it in problems; a scenario path in it is relative to
/// `base_dir`.
pub fn from_text(text: &str, file: &str, base_dir: &Path) -> Result<SweepPlan, Vec<SweepProblem>> {
    let located = |p: Problem| SweepProblem::new(file, p.path, p.message);
    let value = scenario::parse_json(text).map_err(|p| vec![located(p)])?;
    let problems = SHAPE.check(&value);
    if !problems.is_empty() {
        return Err(collapse_sweep(problems.into_iter().map(located).collect()));
    }
    let dto: SweepDto = serde_path_to_error::deserialize(&value)
        .map_err(|e| vec![SweepProblem::new(file, scenario::pointer_of(e.path()), scenario::NOT_ACCEPTED)])?;
    Checker { file, problems: Vec::new() }.plan(&dto, base_dir).map_err(collapse_sweep)
}

/// Collapses repeated problems ("… and 99,999 more like this"), as for scenarios.
pub(crate) fn collapse_sweep(problems: Vec<SweepProblem>) -> Vec<SweepProblem> {
    problem::collapse(
        problems,
        |p| (p.path.as_str(), p.message.as_str()),
        |p, message| SweepProblem::new(&p.file, p.path.clone(), message),
    )
}

/// Writes `value` at `pointer`: the pointer names an existing value (replaced) or a new member of an
/// existing object (added). Arrays are never extended, so a point cannot silently add a stage.
pub fn set_pointer(doc: &mut Value, pointer: &str, value: Value) -> Result<(), String> {
    if !pointer.starts_with('/') {
        return Err(format!("{} is not a JSON Pointer: it must start with '/'", echo(pointer)));
    }
    if let Some(target) = doc.pointer_mut(pointer) {
        *target = value;
        return Ok(());
    }
    let (parent, last) = pointer.rsplit_once('/').expect("starts with '/'");
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(unescape(last), value);
            Ok(())
        }
        _ => Err(explain_missing(doc, pointer)),
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Why `pointer` cannot be written: the first step of it that leads nowhere.
fn explain_missing(doc: &Value, pointer: &str) -> String {
    let mut current = doc;
    let mut walked = String::new();
    for token in pointer.split('/').skip(1) {
        let next = match current {
            Value::Object(map) => map.get(&unescape(token)),
            Value::Array(list) => token.parse::<usize>().ok().and_then(|i| list.get(i)),
            _ => None,
        };
        let Some(next) = next else {
            return match current {
                Value::Object(_) => format!("{} has no member {}", display_pointer(&walked), echo(&unescape(token))),
                Value::Array(list) => format!(
                    "{pointer}: {} is not an index of the array at {} ({} items)",
                    echo(token),
                    display_pointer(&walked),
                    list.len()
                ),
                other => {
                    format!("{} is {}, not an object or array", display_pointer(&walked), crate::text::json_kind(other))
                }
            };
        };
        walked.push('/');
        walked.push_str(token);
        current = next;
    }
    format!("{pointer} cannot be written")
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "the scenario root" } else { pointer }
}

/// The text of a parameter value in CSV cells: strings bare, other values as compact JSON.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses and validates scenario JSON the way `fleetsim run` does with a file.
pub fn build_value(value: Value, seed_override: Option<u64>) -> Result<Scenario, Vec<Problem>> {
    scenario::from_owned(value, seed_override)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

pub(crate) struct Checker<'a> {
    pub(crate) file: &'a str,
    pub(crate) problems: Vec<SweepProblem>,
}

/// The base scenario and where its problems are reported.
pub(crate) struct Base {
    pub(crate) value: Value,
    /// The file problems of the base scenario are reported in, and the prefix of their paths.
    pub(crate) file: String,
    pub(crate) prefix: String,
}

impl Checker<'_> {
    pub(crate) fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(SweepProblem::new(self.file, path, message));
    }

    fn plan(mut self, dto: &SweepDto, base_dir: &Path) -> Result<SweepPlan, Vec<SweepProblem>> {
        self.check_name(&dto.name);
        let base = self.base(&dto.scenario, base_dir);
        let metrics = self.metrics(dto.metrics.as_deref());
        if !(1..=MAX_REPLICATIONS).contains(&dto.replications) {
            self.err("/replications", format!("{} replications: give 1–{MAX_REPLICATIONS}", dto.replications));
        }
        let combine = self.combine(dto);
        let base_scenario = base.as_ref().and_then(|b| self.base_scenario(b));
        let root_seed = dto.seed.unwrap_or_else(|| base_scenario.as_ref().map_or(0, |s| s.seed));
        let sampling = dto.sample.as_ref().and_then(|s| self.sampling(s, root_seed));
        let parameters = self.parameters(&dto.parameters, base.as_ref(), sampling.is_some());
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let base = base.expect("no problems, so the base scenario was read");
        let points = match sampling {
            Some(s) => sample::sample_points(&parameters, s),
            None => self.combine_points(&parameters, combine),
        };
        self.check_sizes(points.len() as u64, dto.replications);
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        // Every point as a whole first; only if some fail, each value alone, so that a bad value is
        // reported where it is written rather than as every point it takes part in.
        let (point_seeds, built, point_problems) = self.check_points(&parameters, &points, &base, dto.seed);
        if !point_problems.is_empty() {
            self.check_values(&parameters, &base, dto.seed);
            if self.problems.is_empty() {
                self.problems = point_problems;
            }
            return Err(self.problems);
        }
        let reference = self.reference(dto.reference.as_ref(), &parameters, &points);
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let scenario_hash = sha256_hex(&serde_json::to_vec(&base.value).expect("JSON values serialize"));
        let mut plan = SweepPlan {
            name: dto.name.clone(),
            description: dto.description.clone(),
            scenario_name: base_scenario.map(|s| s.name).unwrap_or_default(),
            base: base.value,
            base_file: base.file,
            base_prefix: base.prefix,
            parameters,
            combine,
            sampling,
            points,
            point_seeds,
            built,
            replications: dto.replications,
            seed_override: dto.seed,
            root_seed,
            metrics,
            reference,
            scenario_hash,
            sweep_hash: String::new(),
        };
        plan.sweep_hash = sweep_hash(&plan);
        Ok(plan)
    }

    /// The first point with the reference's values (every name a parameter's).
    fn reference(
        &mut self,
        reference: Option<&serde_json::Map<String, Value>>,
        parameters: &[Parameter],
        points: &[Vec<Value>],
    ) -> usize {
        let Some(reference) = reference else { return 0 };
        let mut wanted: Vec<(usize, &Value)> = Vec::new();
        for (name, value) in reference {
            match parameters.iter().position(|p| p.name == *name) {
                Some(i) => wanted.push((i, value)),
                None => {
                    let names: Vec<String> = parameters.iter().map(|p| echo(&p.name)).collect();
                    self.err(
                        format!("/reference/{}", name.replace('~', "~0").replace('/', "~1")),
                        format!(
                            "{} is not a parameter of this sweep (its parameters: {})",
                            echo(name),
                            names.join(", ")
                        ),
                    );
                }
            }
        }
        if !self.problems.is_empty() {
            return 0;
        }
        match points.iter().position(|point| wanted.iter().all(|(i, v)| point[*i] == **v)) {
            Some(p) => p,
            None => {
                self.err("/reference", "no point of the sweep has these values");
                0
            }
        }
    }

    pub(crate) fn check_name(&mut self, name: &str) {
        if let Some(problem) = scenario::build::folder_name_problem(name, "sweep", "an output folder") {
            self.err("/name", problem);
        }
    }

    pub(crate) fn base(&mut self, source: &ScenarioSourceDto, base_dir: &Path) -> Option<Base> {
        match source {
            ScenarioSourceDto::Inline(map) => Some(Base {
                value: Value::Object(map.clone()),
                file: self.file.to_string(),
                prefix: "/scenario".into(),
            }),
            ScenarioSourceDto::Path(relative) => {
                let path: PathBuf = base_dir.join(relative);
                let shown = path.display().to_string();
                let text = match std::fs::read_to_string(&path) {
                    Ok(t) => t,
                    Err(e) => {
                        self.err("/scenario", format!("cannot read the scenario file \"{shown}\": {e}"));
                        return None;
                    }
                };
                match scenario::parse_json(&text) {
                    Ok(value @ Value::Object(_)) => Some(Base { value, file: shown, prefix: String::new() }),
                    Ok(other) => {
                        let message = format!("a scenario must be a JSON object, not {}", shape::what_is(&other));
                        self.problems.push(SweepProblem::new(&shown, "", message));
                        None
                    }
                    Err(p) => {
                        self.problems.push(SweepProblem::new(&shown, p.path, p.message));
                        None
                    }
                }
            }
        }
    }

    /// Validates the base scenario itself; its problems name its own file.
    pub(crate) fn base_scenario(&mut self, base: &Base) -> Option<Scenario> {
        match build_value(base.value.clone(), None) {
            Ok(s) => Some(s),
            Err(problems) => {
                for p in problems {
                    self.problems.push(SweepProblem::new(&base.file, format!("{}{}", base.prefix, p.path), p.message));
                }
                None
            }
        }
    }

    fn metrics(&mut self, names: Option<&[String]>) -> Vec<Metric> {
        let Some(names) = names else {
            return Metric::ALL.to_vec();
        };
        if names.is_empty() {
            self.err("/metrics", "list at least one metric, or leave `metrics` out to collect all");
        }
        let mut chosen = vec![Metric::RunState];
        for (i, name) in names.iter().enumerate() {
            match Metric::from_name(name) {
                Some(m) if chosen.contains(&m) && m != Metric::RunState => {
                    self.err(format!("/metrics/{i}"), format!("{} is listed twice", echo(name)));
                }
                Some(m) => chosen.push(m),
                None => {
                    let known: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                    self.err(
                        format!("/metrics/{i}"),
                        format!("{} is not a metric; known: {}", echo(name), known.join(", ")),
                    );
                }
            }
        }
        chosen.sort_unstable();
        chosen.dedup();
        chosen
    }

    fn combine(&mut self, dto: &SweepDto) -> Combine {
        if dto.combine.is_some() && dto.sample.is_some() {
            self.err("/combine", "`combine` does not apply when `sample` draws the points: give one of them");
        }
        match dto.combine.as_deref() {
            None | Some("cartesian") => Combine::Cartesian,
            Some("zip") => Combine::Zip,
            Some(other) => {
                self.err("/combine", format!("{} is not one of \"cartesian\", \"zip\"", echo(other)));
                Combine::Cartesian
            }
        }
    }

    fn sampling(&mut self, dto: &SampleDto, root_seed: u64) -> Option<Sampling> {
        let method = match dto.method.as_str() {
            "random" => SampleMethod::Random,
            "latinHypercube" => SampleMethod::LatinHypercube,
            other => {
                self.err("/sample/method", format!("{} is not one of \"random\", \"latinHypercube\"", echo(other)));
                return None;
            }
        };
        if !(1..=MAX_POINTS).contains(&dto.points) {
            self.err("/sample/points", format!("{} points: give 1–{MAX_POINTS}", dto.points));
            return None;
        }
        Some(Sampling { method, points: dto.points, seed: dto.seed.unwrap_or(root_seed) })
    }

    fn parameters(&mut self, dtos: &[ParameterDto], base: Option<&Base>, sampled: bool) -> Vec<Parameter> {
        if dtos.is_empty() || dtos.len() > MAX_PARAMETERS {
            self.err("/parameters", format!("{} parameters: give 1–{MAX_PARAMETERS}", dtos.len()));
        }
        let mut out: Vec<Parameter> = Vec::new();
        for (i, dto) in dtos.iter().enumerate() {
            let path = format!("/parameters/{i}");
            let name = dto.name.clone().unwrap_or_else(|| dto.pointer.clone());
            self.check_column_name(&name, &path, &out);
            if out.iter().any(|p| p.pointer == dto.pointer) {
                self.err(format!("{path}/pointer"), format!("{} is varied by two parameters", dto.pointer));
            }
            if let Some(base) = base
                && let Err(e) = set_pointer(&mut base.value.clone(), &dto.pointer, Value::Null)
            {
                self.err(format!("{path}/pointer"), e);
            }
            let levels = match (&dto.values, &dto.range) {
                (Some(values), None) => {
                    if values.is_empty() || values.len() > MAX_LEVELS {
                        self.err(format!("{path}/values"), format!("{} values: give 1–{MAX_LEVELS}", values.len()));
                    }
                    Levels::Values(values.clone())
                }
                (None, Some(range)) => self.range(range, &format!("{path}/range"), sampled),
                _ => {
                    self.err(&path, "give either `values` or `range`");
                    Levels::Values(Vec::new())
                }
            };
            out.push(Parameter { name, pointer: dto.pointer.clone(), levels, ranged: dto.range.is_some() });
        }
        out
    }

    fn check_column_name(&mut self, name: &str, path: &str, earlier: &[Parameter]) {
        let field = format!("{path}/name");
        if name.trim().is_empty() {
            self.err(field, "a parameter name cannot be empty");
        } else if RESERVED_COLUMNS.contains(&name) || Metric::from_name(name).is_some() || name == "runFailed" {
            self.err(field, format!("{} is an output column already; choose another name", echo(name)));
        } else if earlier.iter().any(|p| p.name == name) {
            self.err(field, format!("two parameters are named {}", echo(name)));
        }
    }

    pub(crate) fn range(&mut self, range: &RangeDto, path: &str, sampled: bool) -> Levels {
        let integers = [Some(&range.from), Some(&range.to), range.step.as_ref()]
            .iter()
            .all(|n| n.is_none_or(|n| n.as_i64().is_some()));
        let (from, to) = (range.from.as_f64().unwrap_or(f64::NAN), range.to.as_f64().unwrap_or(f64::NAN));
        if !(from.is_finite() && to.is_finite()) || to < from {
            self.err(path, format!("from {from} to {to} is not a range: `to` must be at least `from`"));
            return Levels::Values(Vec::new());
        }
        let Some(step) = &range.step else {
            if !sampled {
                self.err(path, "a range needs a `step`, unless the sweep samples points (`sample`)");
            }
            return Levels::Continuous { from, to, integer: integers };
        };
        if integers {
            let (from, to, step) = (range.from.as_i64().unwrap(), range.to.as_i64().unwrap(), step.as_i64().unwrap());
            if step <= 0 {
                self.err(format!("{path}/step"), "the step must be positive");
                return Levels::Values(Vec::new());
            }
            let count = (to as i128 - from as i128) / step as i128 + 1;
            if count > MAX_LEVELS as i128 {
                self.err(path, format!("{count} values: a range gives at most {MAX_LEVELS}"));
                return Levels::Values(Vec::new());
            }
            return Levels::Values((0..count as i64).map(|i| Value::from(from + i * step)).collect());
        }
        let step = step.as_f64().unwrap_or(f64::NAN);
        if !(step.is_finite() && step > 0.0) {
            self.err(format!("{path}/step"), "the step must be positive");
            return Levels::Values(Vec::new());
        }
        // A little slack so that 0.1 to 0.5 by 0.1 includes 0.5 despite binary fractions.
        let count = ((to - from) / step + 1e-9).floor() + 1.0;
        if count > MAX_LEVELS as f64 {
            self.err(path, format!("{count} values: a range gives at most {MAX_LEVELS}"));
            return Levels::Values(Vec::new());
        }
        Levels::Values((0..count as u64).map(|i| sample::decimal_value(from + i as f64 * step)).collect())
    }

    fn combine_points(&mut self, parameters: &[Parameter], combine: Combine) -> Vec<Vec<Value>> {
        let lists: Vec<&Vec<Value>> = parameters
            .iter()
            .map(|p| match &p.levels {
                Levels::Values(v) => v,
                Levels::Continuous { .. } => unreachable!("continuous ranges were rejected without sampling"),
            })
            .collect();
        match combine {
            Combine::Zip => {
                let n = lists[0].len();
                for (i, list) in lists.iter().enumerate() {
                    if list.len() != n {
                        self.err(
                            format!("/parameters/{i}"),
                            format!("{} values, but parameter 0 has {n}: `zip` needs the same number", list.len()),
                        );
                    }
                }
                if !self.problems.is_empty() {
                    return Vec::new();
                }
                (0..n).map(|k| lists.iter().map(|l| l[k].clone()).collect()).collect()
            }
            Combine::Cartesian => {
                let total = lists.iter().try_fold(1u64, |acc, l| acc.checked_mul(l.len() as u64));
                if total.is_none_or(|t| t > MAX_POINTS) {
                    self.err("/parameters", format!("the combinations give more than {MAX_POINTS} points"));
                    return Vec::new();
                }
                let mut points: Vec<Vec<Value>> = vec![Vec::new()];
                for list in lists {
                    points = points
                        .into_iter()
                        .flat_map(|prefix| {
                            list.iter().map(move |v| {
                                let mut p = prefix.clone();
                                p.push(v.clone());
                                p
                            })
                        })
                        .collect();
                }
                points
            }
        }
    }

    fn check_sizes(&mut self, points: u64, replications: u64) {
        if points > MAX_POINTS {
            self.err("/parameters", format!("{points} points: a sweep has at most {MAX_POINTS}"));
        }
        if points.saturating_mul(replications) > MAX_JOBS {
            self.err(
                "/replications",
                format!("{points} points × {replications} replications is more than {MAX_JOBS} replications"),
            );
        }
    }

    /// Each listed value alone in the base scenario, so that a bad value is reported where it is
    /// written (`/parameters/0/values/3`), not as every point it takes part in.
    fn check_values(&mut self, parameters: &[Parameter], base: &Base, seed: Option<u64>) {
        let mut checks: Vec<(String, &Parameter, Value)> = Vec::new();
        for (i, p) in parameters.iter().enumerate() {
            match &p.levels {
                Levels::Values(values) => {
                    // Values of a range are reported at the range, listed ones where they are written.
                    let path = |j: usize| {
                        if p.ranged { format!("/parameters/{i}/range") } else { format!("/parameters/{i}/values/{j}") }
                    };
                    checks.extend(values.iter().enumerate().map(|(j, v)| (path(j), p, v.clone())));
                }
                Levels::Continuous { from, to, integer } => {
                    for (end, x) in [("from", from), ("to", to)] {
                        let v = if *integer { Value::from(*x as i64) } else { sample::decimal_value(*x) };
                        checks.push((format!("/parameters/{i}/range/{end}"), p, v));
                    }
                }
            }
        }
        let found: Vec<Vec<SweepProblem>> = checks
            .par_iter()
            .map(|(path, parameter, value)| {
                let mut doc = base.value.clone();
                set_pointer(&mut doc, &parameter.pointer, value.clone()).expect("pointer checked");
                match build_value(doc, seed) {
                    Ok(_) => Vec::new(),
                    Err(problems) => problems
                        .iter()
                        .map(|pr| {
                            let message = format!(
                                "value {} at {}: scenario {}: {}",
                                echo_value(value),
                                parameter.pointer,
                                if pr.path.is_empty() { "/" } else { &pr.path },
                                pr.message
                            );
                            SweepProblem::new(self.file, path.clone(), message)
                        })
                        .collect(),
                }
            })
            .collect();
        self.problems.extend(found.into_iter().flatten());
    }

    /// Every point's scenario, as a whole: values valid alone can still clash (a group's
    /// `maxConcurrency` above its stage's). Returns each point's seed, the scenarios worth keeping,
    /// and the problems.
    #[allow(clippy::type_complexity)]
    fn check_points(
        &self,
        parameters: &[Parameter],
        points: &[Vec<Value>],
        base: &Base,
        seed: Option<u64>,
    ) -> (Vec<u64>, Vec<Option<Arc<Scenario>>>, Vec<SweepProblem>) {
        // Each point's scenario is dropped as soon as it is checked unless it is among the first
        // points within BUILT_MEMBERS_KEPT (decided by index, so the result does not depend on
        // the order in which threads finish): only a few scenarios are in memory at once.
        type Checked = Result<(u64, Option<Arc<Scenario>>), Vec<SweepProblem>>;
        let results: Vec<Checked> = points
            .par_iter()
            .enumerate()
            .map(|(p, values)| {
                let mut doc = base.value.clone();
                for (parameter, value) in parameters.iter().zip(values) {
                    set_pointer(&mut doc, &parameter.pointer, value.clone()).expect("pointer checked");
                }
                build_value(doc, seed)
                    .map(|s| {
                        let keep = s.fleet.len().max(1).saturating_mul(p + 1) <= BUILT_MEMBERS_KEPT;
                        (s.seed, keep.then(|| Arc::new(s)))
                    })
                    .map_err(|problems| {
                        let described: Vec<String> = parameters
                            .iter()
                            .zip(values)
                            .map(|(pa, v)| format!("{}={}", cut(&pa.name), cut(&value_text(v))))
                            .collect();
                        problems
                            .iter()
                            .map(|pr| {
                                let message = format!(
                                    "point {p} ({}): scenario {}: {}",
                                    described.join(", "),
                                    if pr.path.is_empty() { "/" } else { &pr.path },
                                    pr.message
                                );
                                SweepProblem::new(self.file, "/parameters", message)
                            })
                            .collect()
                    })
            })
            .collect();
        let (mut seeds, mut built, mut problems) = (Vec::new(), Vec::new(), Vec::new());
        for result in results {
            match result {
                Ok((seed, scenario)) => {
                    seeds.push(seed);
                    built.push(scenario);
                }
                Err(mut found) => problems.append(&mut found),
            }
        }
        (seeds, built, problems)
    }
}

/// The identity of a sweep's results: the simulator version, the base scenario, every point, the
/// seeds, the replications and the metrics.
fn sweep_hash(plan: &SweepPlan) -> String {
    let identity = serde_json::json!({
        "fleetsim": env!("CARGO_PKG_VERSION"),
        "name": plan.name,
        "scenarioHash": plan.scenario_hash,
        "parameters": plan.parameters.iter().map(|p| serde_json::json!({"name": p.name, "pointer": p.pointer})).collect::<Vec<_>>(),
        "points": plan.points,
        "pointSeeds": plan.point_seeds,
        "seed": plan.seed_override,
        "replications": plan.replications,
        "metrics": plan.metrics.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "reference": plan.reference,
    });
    sha256_hex(&serde_json::to_vec(&identity).expect("JSON values serialize"))
}

/// Seeds a generator for the sweep's own draws (sampling), apart from every simulation stream.
pub(crate) fn sweep_rng(seed: u64) -> ChaCha8Rng {
    // "SWEEPSMP": a constant that keeps this stream apart from the simulation's seed tree.
    ChaCha8Rng::seed_from_u64(mix64(seed ^ 0x5357_4545_5053_4D50))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_replace_or_add_but_never_extend_arrays() {
        let mut doc = json!({"a": {"b": [1, 2]}, "c~/d": 1});
        set_pointer(&mut doc, "/a/b/1", json!(5)).unwrap();
        set_pointer(&mut doc, "/a/new", json!("x")).unwrap();
        set_pointer(&mut doc, "/c~0~1d", json!(2)).unwrap();
        assert_eq!(doc, json!({"a": {"b": [1, 5], "new": "x"}, "c~/d": 2}));
        assert_eq!(
            set_pointer(&mut doc, "/a/b/2", json!(1)).unwrap_err(),
            "/a/b/2: \"2\" is not an index of the array at /a/b (2 items)"
        );
        assert_eq!(set_pointer(&mut doc, "/x/y", json!(1)).unwrap_err(), "the scenario root has no member \"x\"");
        assert_eq!(
            set_pointer(&mut doc, "/a/new/z", json!(1)).unwrap_err(),
            "/a/new is a string, not an object or array"
        );
        assert!(set_pointer(&mut doc, "a", json!(1)).is_err());
    }

    #[test]
    fn value_text_is_bare_for_strings() {
        assert_eq!(value_text(&json!("5%")), "5%");
        assert_eq!(value_text(&json!(5)), "5");
        assert_eq!(value_text(&json!(0.25)), "0.25");
        assert_eq!(value_text(&json!({"a": 1})), "{\"a\":1}");
    }

    #[test]
    fn sweep_shape_is_recognised() {
        assert!(is_sweep_text(r#"{"name": "s", "parameters": []}"#));
        assert!(!is_sweep_text(r#"{"name": "s", "start": "2026-01-01T00:00:00Z"}"#));
        assert!(!is_sweep_text("not json"));
        assert!(is_scenario_text(r#"{"name": "s", "start": "2026-01-01T00:00:00Z"}"#));
        assert!(!is_scenario_text(r#"{"name": "s", "start": "x", "parameters": []}"#));
        // Neither a deeply nested value nor a syntax error after the keys hides them.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(is_sweep_text(&format!(r#"{{"deep": {deep}, "parameters": [], "name": "s"}}"#)));
        assert!(is_scenario_text(&format!(r#"{{"start": "x", "deep": {deep}, "members": [,]}}"#)));
        assert!(is_sweep_text(r#"{"parameters": [], "name": "#));
        assert_eq!(file_kind("[]"), FileKind::Unknown);
    }

    #[test]
    fn a_parsed_document_has_the_kind_its_text_has() {
        let texts = [
            r#"{"name": "s", "parameters": []}"#,
            r#"{"name": "s", "start": "2026-01-01T00:00:00Z"}"#,
            r#"{"name": "s", "start": "x", "parameters": []}"#,
            r#"{"name": "t", "space": {}, "parameters": [], "start": "x"}"#,
            r#"{"name": "t", "space": {}}"#,
            r#"{"name": "n", "members": [{"start": "x", "parameters": []}]}"#,
            r#"{}"#,
            "[]",
            "5",
        ];
        let mut kinds = Vec::new();
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(FileKind::of_value(&value), file_kind(text), "{text}");
            kinds.push(file_kind(text));
        }
        use FileKind::*;
        assert_eq!(kinds, [Sweep, Scenario, Sweep, Tune, Tune, Unknown, Unknown, Unknown, Unknown]);
    }
}
