//! Tune files → a validated [`TunePlan`]: the base scenario, the worlds, the candidates and the
//! criteria. Every candidate's scenario in every world is validated here, through the normal
//! scenario path, so a search never starts on a strategy the simulator would refuse.

use std::path::Path;
use std::sync::LazyLock;

use rayon::prelude::*;
use serde_json::Value;

use crate::scenario::shape::Shape;
use crate::scenario::{self, Problem, Scenario};
use crate::sweep::plan::{
    Checker, Levels, Parameter, SampleMethod, Sampling, build_value, collapse_sweep, set_pointer, sha256_hex,
};
use crate::sweep::{Metric, SweepProblem};
use crate::text::{cut, echo};

use super::dto::{ConstraintDto, CriterionDto, FieldDto, TuneDto, WorldDto};
use super::labels::{self, LabelField, Share};

pub const MAX_WORLDS: usize = 8;
pub const MAX_SPACE: usize = 16;
pub const MAX_CONSTRAINTS: usize = 16;
/// Candidates enumerated or sampled to start a search with; each is simulated in every world.
pub const MAX_CANDIDATES: usize = 4096;
/// Spaces of at most this many combinations are enumerated, unless `budget.enumerate` says otherwise.
pub const DEFAULT_ENUMERATE: u64 = 1024;
/// Candidates a Latin-hypercube sample starts with, unless `budget.sample` says otherwise.
pub const DEFAULT_SAMPLE: u64 = 64;
pub const MAX_BUDGET: u64 = 100_000_000;
pub const MAX_PER_CANDIDATE: u64 = 100_000;

/// The figures the tuner reads from each replication of the tuned run, in output order.
pub const MEASURES: [&str; 9] = [
    "hoursTo50PctUpgraded",
    "hoursTo90PctUpgraded",
    "hoursTo100PctUpgraded",
    "falseHalt",
    "blastRadius",
    "blastRadiusFraction",
    "detectionHours",
    "runFailed",
    "failedMembers",
];

/// The sweep metrics collected for [`MEASURES`] (`runState` gives `runFailed`).
pub const COLLECTED: [Metric; 9] = [
    Metric::HoursTo50PctUpgraded,
    Metric::HoursTo90PctUpgraded,
    Metric::HoursTo100PctUpgraded,
    Metric::FalseHalt,
    Metric::BlastRadius,
    Metric::BlastRadiusFraction,
    Metric::DetectionHours,
    Metric::RunState,
    Metric::FailedMembers,
];

/// Index of a measure in [`MEASURES`].
pub fn measure_index(name: &str) -> Option<usize> {
    MEASURES.iter().position(|m| *m == name)
}

/// What a replication without a value of a measure counts as in the tuner's statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Hours to a share upgraded: a run that never got there is infinitely slow, so a strategy
    /// that halts is never fast.
    Infinite,
    /// Blast radius fraction with nothing at risk: nothing was reached.
    Zero,
    /// False halts in a future with a bad release, detection without a halt: not counted.
    Skipped,
}

pub fn missing_of(measure: usize) -> Missing {
    match measure {
        0..=2 => Missing::Infinite,
        5 => Missing::Zero,
        _ => Missing::Skipped,
    }
}

/// Whether a measure is 0 or 1 (its mean is a probability, with Wilson's interval).
pub fn is_indicator(measure: usize) -> bool {
    measure == 3 || measure == 7
}

/// A statistic over replications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    Mean,
    /// A percentile (50, 90, 95 or 99).
    Percentile(u32),
}

impl Statistic {
    pub fn name(self) -> String {
        match self {
            Statistic::Mean => "mean".into(),
            Statistic::Percentile(q) => format!("p{q}"),
        }
    }
}

/// A statistic of a measure in one world.
#[derive(Clone, Debug, PartialEq)]
pub struct Criterion {
    pub measure: usize,
    pub statistic: Statistic,
    pub world: usize,
}

/// A criterion that must stay at or below `max`.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    pub criterion: Criterion,
    pub max: f64,
}

/// One validated world.
#[derive(Clone, Debug)]
pub struct World {
    pub name: String,
    pub description: Option<String>,
    pub overrides: Vec<(String, Value)>,
}

/// Simulations the search may spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub total: u64,
    pub initial: u64,
    pub max_per_candidate: u64,
}

/// A candidate: a point of the space, as the index of its value in every field's list; `None` is
/// the baseline, the base scenario's own strategy.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Candidate {
    pub levels: Option<Vec<usize>>,
}

impl Candidate {
    pub const BASELINE: Candidate = Candidate { levels: None };

    pub fn at(levels: Vec<usize>) -> Candidate {
        Candidate { levels: Some(levels) }
    }

    /// The key of its simulations in a tune folder's journal: `base`, or the value indices joined
    /// by `.` (`0.2.1`).
    pub fn key(&self) -> String {
        match &self.levels {
            None => "base".into(),
            Some(levels) => levels.iter().map(usize::to_string).collect::<Vec<_>>().join("."),
        }
    }

    pub fn parse_key(key: &str, fields: usize) -> Option<Candidate> {
        if key == "base" {
            return Some(Candidate::BASELINE);
        }
        let levels: Option<Vec<usize>> = key.split('.').map(|x| x.parse().ok()).collect();
        levels.filter(|l| l.len() == fields).map(Candidate::at)
    }
}

/// A validated tune file.
#[derive(Clone, Debug)]
pub struct TunePlan {
    pub name: String,
    pub description: Option<String>,
    /// The base scenario as JSON (keys in file order).
    pub base: Value,
    pub scenario_name: String,
    pub run: String,
    /// Where the tuned run's strategy is in the scenario JSON.
    pub strategy_pointer: String,
    pub seed_override: Option<u64>,
    pub worlds: Vec<World>,
    /// The fields of the space, each with its list of values. A label field has an empty pointer
    /// and its alternatives (label value → share) as values; `labels[i]` says how to assign them.
    pub parameters: Vec<Parameter>,
    pub labels: Vec<Option<LabelField>>,
    /// The base scenario's values at the pointers (`null` where it has none, and for label fields).
    pub baseline_values: Vec<Value>,
    /// The candidates the search starts with: the baseline first, then every combination of the
    /// space, or a Latin-hypercube sample of it when `sampled`.
    pub initial: Vec<Candidate>,
    /// The space was too large to enumerate: the search refines around the best.
    pub sampled: bool,
    /// Combinations in the space (saturating).
    pub combinations: u64,
    pub objective: Criterion,
    pub constraints: Vec<Constraint>,
    pub budget: Budget,
    /// sha256 of what decides the figures of a simulation (candidate key, world, replication): a
    /// tune folder holds the simulations of one such identity.
    pub simulations_hash: String,
    /// sha256 of the whole tune: shards and merges of one search agree on it.
    pub tune_hash: String,
}

impl TunePlan {
    /// The values of candidate `c` in every field (the baseline's are the base scenario's own).
    pub fn values(&self, c: &Candidate) -> Vec<Value> {
        match &c.levels {
            None => self.baseline_values.clone(),
            Some(levels) => self
                .parameters
                .iter()
                .zip(levels)
                .map(|(p, l)| match &p.levels {
                    Levels::Values(values) => values[*l].clone(),
                    Levels::Continuous { .. } => unreachable!("ranges without a step were rejected"),
                })
                .collect(),
        }
    }

    /// The scenario JSON of candidate `c` in world `w`: the world's overrides, then the candidate's
    /// values, then the labels it assigns ([`labels`]).
    pub fn scenario_value(&self, c: &Candidate, w: usize) -> Value {
        let mut doc = self.base.clone();
        for (pointer, value) in &self.worlds[w].overrides {
            set_pointer(&mut doc, pointer, value.clone()).expect("pointers were checked when loading");
        }
        if let Some(levels) = &c.levels {
            let mut assignments: Vec<(&str, &[(String, Share)])> = Vec::new();
            for (i, (parameter, value)) in self.parameters.iter().zip(self.values(c)).enumerate() {
                match &self.labels[i] {
                    Some(field) => assignments.push((&field.key, &field.sets[levels[i]])),
                    None => {
                        set_pointer(&mut doc, &parameter.pointer, value).expect("pointers were checked when loading")
                    }
                }
            }
            labels::apply(&mut doc, &assignments, self.seed_override);
        }
        doc
    }

    /// The validated scenario of candidate `c` in world `w`.
    pub fn build(&self, c: &Candidate, w: usize) -> Scenario {
        build_value(self.scenario_value(c, w), self.seed_override).expect("every candidate was validated")
    }

    /// The tuned run's strategy in candidate `c`'s scenario (the same in every world).
    pub fn strategy(&self, c: &Candidate) -> Value {
        let doc = self.scenario_value(c, 0);
        doc.pointer(&self.strategy_pointer).cloned().unwrap_or(Value::Null)
    }

    /// `name=value, …` of candidate `c`, or "the base strategy".
    pub fn describe(&self, c: &Candidate) -> String {
        if c.levels.is_none() {
            return "the base strategy".into();
        }
        let parts: Vec<String> = self
            .parameters
            .iter()
            .zip(self.values(c))
            .map(|(p, v)| format!("{}={}", p.name, cut(&super::words::value_words(&v))))
            .collect();
        parts.join(", ")
    }

    pub fn world_index(&self, name: &str) -> Option<usize> {
        self.worlds.iter().position(|w| w.name == name)
    }

    pub fn criterion_name(&self, c: &Criterion) -> String {
        format!("{}.{}.{}", self.worlds[c.world].name, MEASURES[c.measure], c.statistic.name())
    }

    /// The neighbours of a candidate: one field at a time, the value before and after it in the
    /// field's list (fields in order). The baseline has neighbours when every base value is in its
    /// field's list.
    pub fn neighbours(&self, c: &Candidate) -> Vec<Candidate> {
        let levels = match &c.levels {
            Some(l) => l.clone(),
            None => match self.baseline_levels() {
                Some(l) => l,
                None => return Vec::new(),
            },
        };
        let mut out = Vec::new();
        for (i, p) in self.parameters.iter().enumerate() {
            let count = match &p.levels {
                Levels::Values(v) => v.len(),
                Levels::Continuous { .. } => 0,
            };
            for next in [levels[i].checked_sub(1), Some(levels[i] + 1)].into_iter().flatten() {
                if next < count {
                    let mut l = levels.clone();
                    l[i] = next;
                    out.push(Candidate::at(l));
                }
            }
        }
        out
    }

    /// The baseline as a point of the space, when every base value is in its field's list.
    fn baseline_levels(&self) -> Option<Vec<usize>> {
        self.parameters
            .iter()
            .zip(&self.baseline_values)
            .enumerate()
            .map(|(i, (p, v))| match (&p.levels, &self.labels[i]) {
                (Levels::Values(values), None) => values.iter().position(|x| x == v),
                _ => None,
            })
            .collect()
    }

    /// Whether a point of the space is the baseline itself (the same values at every pointer).
    pub fn is_baseline(&self, c: &Candidate) -> bool {
        c.levels.is_none() || (self.labels.iter().all(Option::is_none) && self.values(c) == self.baseline_values)
    }

    /// The problems of candidate `c` in every world (empty when it builds everywhere).
    pub fn problems(&self, c: &Candidate) -> Vec<(usize, Vec<Problem>)> {
        (0..self.worlds.len())
            .filter_map(|w| build_value(self.scenario_value(c, w), self.seed_override).err().map(|p| (w, p)))
            .collect()
    }
}

/// The shape of tune files: the schema `fleetsim schema tune` prints.
static SHAPE: LazyLock<Shape> = LazyLock::new(Shape::of::<TuneDto>);

/// Reads, parses and validates a tune file, including every candidate's scenario in every world.
pub fn load(path: &Path) -> Result<TunePlan, Vec<SweepProblem>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![SweepProblem::new(&file, "", format!("cannot read the tune file: {e}"))])?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_text(&text, &file, &base_dir)
}

/// Parses and validates tune text. `file` names it in problems; a scenario path in it is relative
/// to `base_dir`.
pub fn from_text(text: &str, file: &str, base_dir: &Path) -> Result<TunePlan, Vec<SweepProblem>> {
    let located = |p: Problem| SweepProblem::new(file, p.path, p.message);
    let value = scenario::parse_json(text).map_err(|p| vec![located(p)])?;
    let problems = SHAPE.check(&value);
    if !problems.is_empty() {
        return Err(collapse_sweep(problems.into_iter().map(located).collect()));
    }
    let dto: TuneDto = serde_path_to_error::deserialize(&value)
        .map_err(|e| vec![SweepProblem::new(file, scenario::pointer_of(e.path()), scenario::NOT_ACCEPTED)])?;
    plan(Checker { file, problems: Vec::new() }, &dto, base_dir).map_err(collapse_sweep)
}

fn plan(mut ck: Checker, dto: &TuneDto, base_dir: &Path) -> Result<TunePlan, Vec<SweepProblem>> {
    ck.check_name(&dto.name);
    let base = ck.base(&dto.scenario, base_dir);
    let base_scenario = base.as_ref().and_then(|b| ck.base_scenario(b));
    let strategy_pointer = base.as_ref().and_then(|b| run_strategy(&mut ck, &b.value, &dto.run));
    let worlds = worlds(&mut ck, &dto.worlds, base.as_ref().map(|b| &b.value));
    let (parameters, label_fields) = space(&mut ck, dto, base.as_ref().map(|b| &b.value));
    let world_names: Vec<&str> = dto.worlds.iter().map(|w| w.name.as_str()).collect();
    let objective = criterion(&mut ck, &dto.objective, "/objective", &world_names);
    if dto.constraints.len() > MAX_CONSTRAINTS {
        ck.err("/constraints", format!("{} constraints: give at most {MAX_CONSTRAINTS}", dto.constraints.len()));
    }
    let constraints: Vec<Option<Constraint>> =
        dto.constraints.iter().enumerate().map(|(i, c)| constraint(&mut ck, c, i, &world_names)).collect();
    let budget = budget(&mut ck, dto);
    if !ck.problems.is_empty() {
        return Err(ck.problems);
    }
    let base = base.expect("no problems, so the base was read");
    let (budget, enumerate, sample) = budget.expect("no problems");
    let combinations = parameters
        .iter()
        .map(|p| match &p.levels {
            Levels::Values(v) => v.len() as u64,
            Levels::Continuous { .. } => 1,
        })
        .fold(1u64, u64::saturating_mul);
    let sampled = combinations > enumerate;
    let baseline_values = baseline_values(&base.value, &parameters, &label_fields);
    let seed = dto.seed.unwrap_or_else(|| base.value.get("seed").and_then(Value::as_u64).unwrap_or(0));
    let points = if sampled { lhs(&parameters, sample, seed) } else { grid(&parameters) };
    let mut plan = TunePlan {
        name: dto.name.clone(),
        description: dto.description.clone(),
        base: base.value,
        scenario_name: base_scenario.map(|s| s.name).unwrap_or_default(),
        run: dto.run.clone(),
        strategy_pointer: strategy_pointer.expect("no problems, so the run was found"),
        seed_override: dto.seed,
        worlds,
        parameters,
        labels: label_fields,
        baseline_values,
        initial: vec![Candidate::BASELINE],
        sampled,
        combinations,
        objective: objective.expect("no problems"),
        constraints: constraints.into_iter().map(|c| c.expect("no problems")).collect(),
        budget,
        simulations_hash: String::new(),
        tune_hash: String::new(),
    };
    let mut seen = std::collections::HashSet::new();
    for levels in points {
        let c = Candidate::at(levels);
        // A combination equal to the base strategy is the baseline itself; a sample may repeat one.
        if !plan.is_baseline(&c) && seen.insert(c.clone()) {
            plan.initial.push(c);
        }
    }
    let first_round = plan.initial.len() as u64 * dto.worlds.len() as u64 * budget.initial;
    if budget.total < first_round {
        ck.err(
            "/budget/replications",
            format!(
                "{} simulations cannot pay for the first round: {} candidates × {} worlds × {} replications = {first_round}",
                budget.total,
                plan.initial.len(),
                dto.worlds.len(),
                budget.initial
            ),
        );
        return Err(ck.problems);
    }
    check_values(&mut ck, &plan);
    if !ck.problems.is_empty() {
        return Err(ck.problems);
    }
    check_candidates(&mut ck, &plan);
    if !ck.problems.is_empty() {
        return Err(ck.problems);
    }
    let (simulations_hash, tune_hash) = hashes(&plan, dto);
    plan.simulations_hash = simulations_hash;
    plan.tune_hash = tune_hash;
    Ok(plan)
}

/// The identity of the simulations (what decides the figures of candidate key × world ×
/// replication) and of the whole tune.
fn hashes(plan: &TunePlan, dto: &TuneDto) -> (String, String) {
    let simulations = serde_json::json!({
        "fleetsim": env!("CARGO_PKG_VERSION"),
        "base": plan.base,
        "run": plan.run,
        "seed": plan.seed_override,
        "worlds": plan.worlds.iter().map(|w| serde_json::json!({"name": w.name, "overrides": w.overrides.iter().map(|(p, v)| serde_json::json!([p, v])).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "space": plan.parameters.iter().zip(&plan.labels).map(|(p, l)| serde_json::json!({
            "pointer": p.pointer,
            "label": l.as_ref().map(|l| l.key.clone()),
            "values": match &p.levels { Levels::Values(v) => v.clone(), Levels::Continuous { .. } => Vec::new() },
        })).collect::<Vec<_>>(),
        "measures": MEASURES,
    });
    let simulations = sha256_hex(&serde_json::to_vec(&simulations).expect("JSON values serialize"));
    let mut whole = serde_json::to_value(dto).expect("tune files serialize");
    whole["scenario"] = plan.base.clone();
    whole["simulationsHash"] = Value::String(simulations.clone());
    let tune = sha256_hex(&serde_json::to_vec(&whole).expect("JSON values serialize"));
    (simulations, tune)
}

/// The JSON Pointer of the strategy of run `name` in the base scenario.
fn run_strategy(ck: &mut Checker, base: &Value, name: &str) -> Option<String> {
    let runs = base.get("updateRuns").and_then(Value::as_array).cloned().unwrap_or_default();
    let Some(i) = runs.iter().position(|r| r.get("name").and_then(Value::as_str) == Some(name)) else {
        let names: Vec<String> = runs.iter().filter_map(|r| r.get("name").and_then(Value::as_str)).map(echo).collect();
        ck.err("/run", format!("the base scenario has no update run {} (its runs: {})", echo(name), names.join(", ")));
        return None;
    };
    if runs[i].get("strategy").is_some() {
        return Some(format!("/updateRuns/{i}/strategy"));
    }
    let id = runs[i].get("updateStrategyId").and_then(Value::as_str).unwrap_or_default();
    let strategy = id.rsplit_once("/updateStrategies/").map_or(id, |(_, n)| n).trim_end_matches('/');
    let pointer = format!("/updateStrategies/{}", strategy.replace('~', "~0").replace('/', "~1"));
    if base.pointer(&pointer).is_none() {
        ck.err("/run", format!("run {} has no strategy in the base scenario to tune", echo(name)));
        return None;
    }
    Some(pointer)
}

fn worlds(ck: &mut Checker, dtos: &[WorldDto], base: Option<&Value>) -> Vec<World> {
    if dtos.len() > MAX_WORLDS {
        ck.err("/worlds", format!("{} worlds: give at most {MAX_WORLDS}", dtos.len()));
    }
    let mut out: Vec<World> = Vec::new();
    for (i, dto) in dtos.iter().enumerate() {
        let path = format!("/worlds/{i}");
        let valid_name = !dto.name.is_empty()
            && dto.name.len() <= 40
            && dto.name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
        if !valid_name {
            ck.err(
                format!("{path}/name"),
                format!("{} is not a world name: use 1–40 lowercase letters, digits and '-'", echo(&dto.name)),
            );
        } else if out.iter().any(|w| w.name == dto.name) {
            ck.err(format!("{path}/name"), format!("two worlds are named {}", echo(&dto.name)));
        }
        let mut doc = base.cloned();
        for (j, o) in dto.overrides.iter().enumerate() {
            if let Some(doc) = doc.as_mut()
                && let Err(e) = set_pointer(doc, &o.pointer, o.value.clone())
            {
                ck.err(format!("{path}/overrides/{j}/pointer"), e);
            }
        }
        if let Some(doc) = &doc {
            let bad = doc.pointer("/models/badReleases").and_then(Value::as_array).is_some_and(|l| !l.is_empty());
            if dto.name == "good" && bad {
                ck.err(&path, "the good world has a bad release (models.badReleases): override it with []");
            }
            if dto.name == "bad" && !bad {
                ck.err(&path, "the bad world has no bad release: add the target version to models.badReleases");
            }
        }
        out.push(World {
            name: dto.name.clone(),
            description: dto.description.clone(),
            overrides: dto.overrides.iter().map(|o| (o.pointer.clone(), o.value.clone())).collect(),
        });
    }
    for required in ["good", "bad"] {
        if !dtos.iter().any(|w| w.name == required) {
            ck.err("/worlds", format!("a world named \"{required}\" is required"));
        }
    }
    out
}

fn space(ck: &mut Checker, dto: &TuneDto, base: Option<&Value>) -> (Vec<Parameter>, Vec<Option<LabelField>>) {
    if dto.space.is_empty() || dto.space.len() > MAX_SPACE {
        ck.err("/space", format!("{} fields: give 1–{MAX_SPACE}", dto.space.len()));
    }
    let mut out: Vec<Parameter> = Vec::new();
    let mut label_fields: Vec<Option<LabelField>> = Vec::new();
    for (i, p) in dto.space.iter().enumerate() {
        let path = format!("/space/{i}");
        let (parameter, label) = match (&p.pointer, &p.label) {
            (Some(pointer), None) => (pointer_field(ck, p, pointer, &path, base, &out), None),
            (None, Some(key)) => label_field(ck, p, key, &path, &label_fields),
            (pointer, _) => {
                ck.err(
                    &path,
                    if pointer.is_some() {
                        "give either `pointer` (a field of the scenario) or `label` (a label the tuner assigns), not both"
                    } else {
                        "give `pointer` with `values` or `range`, or `label` with `assign`"
                    },
                );
                // Nothing usable: an unnamed parameter without levels, which the checks below skip.
                let nothing = Parameter {
                    name: String::new(),
                    pointer: String::new(),
                    levels: Levels::Values(Vec::new()),
                    ranged: false,
                };
                (nothing, None)
            }
        };
        let name = &parameter.name;
        if !name.is_empty() {
            if name.trim().is_empty() || ["candidate", "status", "replications"].contains(&name.as_str()) {
                ck.err(format!("{path}/name"), format!("{} cannot name a field: choose another name", echo(name)));
            } else if out.iter().any(|q| &q.name == name) {
                ck.err(format!("{path}/name"), format!("two fields are named {}", echo(name)));
            }
        }
        out.push(parameter);
        label_fields.push(label);
    }
    (out, label_fields)
}

fn pointer_field(
    ck: &mut Checker,
    p: &FieldDto,
    pointer: &str,
    path: &str,
    base: Option<&Value>,
    before: &[Parameter],
) -> Parameter {
    let name = p.name.clone().unwrap_or_else(|| pointer.to_string());
    if before.iter().any(|q| q.pointer == pointer) {
        ck.err(format!("{path}/pointer"), format!("{pointer} is varied by two fields"));
    }
    if let Some(base) = base
        && let Err(e) = set_pointer(&mut base.clone(), pointer, Value::Null)
    {
        ck.err(format!("{path}/pointer"), e);
    }
    if p.assign.is_some() {
        ck.err(format!("{path}/assign"), "`assign` goes with `label`, not with `pointer`");
    }
    let levels = match (&p.values, &p.range) {
        (Some(values), None) => {
            if values.is_empty() || values.len() > MAX_CANDIDATES {
                ck.err(format!("{path}/values"), format!("{} values: give 1–{MAX_CANDIDATES}", values.len()));
            }
            Levels::Values(values.clone())
        }
        (None, Some(range)) => ck.range(range, &format!("{path}/range"), false),
        _ => {
            ck.err(path, "give either `values` or `range`");
            Levels::Values(Vec::new())
        }
    };
    Parameter { name, pointer: pointer.to_string(), levels, ranged: p.range.is_some() }
}

fn label_field(
    ck: &mut Checker,
    p: &FieldDto,
    key: &str,
    path: &str,
    before: &[Option<LabelField>],
) -> (Parameter, Option<LabelField>) {
    let name = p.name.clone().unwrap_or_else(|| key.to_string());
    if let Err(e) = crate::fleet::selector::validate_label_key(key) {
        ck.err(format!("{path}/label"), format!("{} is not a label key: {e}", echo(key)));
    } else if before.iter().flatten().any(|l| l.key == key) {
        ck.err(format!("{path}/label"), format!("the label {} is assigned by two fields", echo(key)));
    }
    if p.values.is_some() || p.range.is_some() {
        ck.err(path, "a `label` field takes its alternatives in `assign`, not `values` or `range`");
    }
    let mut sets = Vec::new();
    let mut values = Vec::new();
    match &p.assign {
        None => ck.err(path, "a `label` field needs `assign`: alternative shares of the fleet, such as [{\"canary\": 0.02, \"broad\": \"rest\"}]"),
        Some(list) if list.is_empty() || list.len() > MAX_CANDIDATES => {
            ck.err(format!("{path}/assign"), format!("{} alternatives: give 1–{MAX_CANDIDATES}", list.len()))
        }
        Some(list) => {
            for (j, set) in list.iter().enumerate() {
                match labels::check_set(&set.0) {
                    Ok(shares) => sets.push(shares),
                    Err(problems) => {
                        for (at, message) in problems {
                            ck.err(format!("{path}/assign/{j}{at}"), message);
                        }
                    }
                }
                values.push(Value::Object(set.0.clone()));
            }
        }
    }
    let parameter = Parameter { name, pointer: String::new(), levels: Levels::Values(values), ranged: false };
    (parameter, Some(LabelField { key: key.to_string(), sets }))
}

fn criterion(ck: &mut Checker, dto: &CriterionDto, path: &str, worlds: &[&str]) -> Option<Criterion> {
    let measure = measure_index(&dto.metric);
    if measure.is_none() {
        ck.err(
            format!("{path}/metric"),
            format!("{} is not a metric the tuner reads; known: {}", echo(&dto.metric), MEASURES.join(", ")),
        );
    }
    let statistic = match dto.statistic.as_str() {
        "mean" => Some(Statistic::Mean),
        "p50" => Some(Statistic::Percentile(50)),
        "p90" => Some(Statistic::Percentile(90)),
        "p95" => Some(Statistic::Percentile(95)),
        "p99" => Some(Statistic::Percentile(99)),
        other => {
            ck.err(
                format!("{path}/statistic"),
                format!("{} is not one of \"mean\", \"p50\", \"p90\", \"p95\", \"p99\"", echo(other)),
            );
            None
        }
    };
    let world = worlds.iter().position(|w| *w == dto.world);
    if world.is_none() {
        let names: Vec<String> = worlds.iter().map(|w| echo(w)).collect();
        ck.err(
            format!("{path}/world"),
            format!("{} is not a world of this file (its worlds: {})", echo(&dto.world), names.join(", ")),
        );
    }
    Some(Criterion { measure: measure?, statistic: statistic?, world: world? })
}

fn constraint(ck: &mut Checker, dto: &ConstraintDto, i: usize, worlds: &[&str]) -> Option<Constraint> {
    let path = format!("/constraints/{i}");
    let as_criterion =
        CriterionDto { metric: dto.metric.clone(), statistic: dto.statistic.clone(), world: dto.world.clone() };
    let criterion = criterion(ck, &as_criterion, &path, worlds);
    if !dto.max.is_finite() {
        ck.err(format!("{path}/max"), "the limit must be a finite number");
    }
    Some(Constraint { criterion: criterion?, max: dto.max })
}

fn budget(ck: &mut Checker, dto: &TuneDto) -> Option<(Budget, u64, u64)> {
    let b = &dto.budget;
    let initial = b.initial.unwrap_or(10);
    let max_per_candidate = b.max_per_candidate.unwrap_or(400);
    let enumerate = b.enumerate.unwrap_or(DEFAULT_ENUMERATE);
    let sample = b.sample.unwrap_or(DEFAULT_SAMPLE);
    let before = ck.problems.len();
    if !(1..=MAX_BUDGET).contains(&b.replications) {
        ck.err("/budget/replications", format!("{} simulations: give 1–{MAX_BUDGET}", b.replications));
    }
    if !(2..=MAX_PER_CANDIDATE).contains(&initial) {
        ck.err(
            "/budget/initial",
            format!("{initial} replications: give 2–{MAX_PER_CANDIDATE} (an interval needs two)"),
        );
    }
    if !(initial..=MAX_PER_CANDIDATE).contains(&max_per_candidate) {
        ck.err(
            "/budget/maxPerCandidate",
            format!("{max_per_candidate} replications: give {initial}–{MAX_PER_CANDIDATE} (at least `initial`)"),
        );
    }
    if !(1..=MAX_CANDIDATES as u64).contains(&enumerate) {
        ck.err("/budget/enumerate", format!("{enumerate} combinations: give 1–{MAX_CANDIDATES}"));
    }
    if !(2..=MAX_CANDIDATES as u64).contains(&sample) {
        ck.err("/budget/sample", format!("{sample} candidates: give 2–{MAX_CANDIDATES}"));
    }
    (ck.problems.len() == before).then_some((
        Budget { total: b.replications, initial, max_per_candidate },
        enumerate,
        sample,
    ))
}

/// The base scenario's values at the space's pointers (`null` where it has none, and for labels).
fn baseline_values(base: &Value, parameters: &[Parameter], labels: &[Option<LabelField>]) -> Vec<Value> {
    parameters
        .iter()
        .zip(labels)
        .map(|(p, l)| if l.is_some() { Value::Null } else { base.pointer(&p.pointer).cloned().unwrap_or(Value::Null) })
        .collect()
}

fn level_count(p: &Parameter) -> usize {
    match &p.levels {
        Levels::Values(v) => v.len(),
        Levels::Continuous { .. } => unreachable!("ranges without a step were rejected"),
    }
}

/// Every combination of the fields' values, the last varying fastest.
fn grid(parameters: &[Parameter]) -> Vec<Vec<usize>> {
    let mut points: Vec<Vec<usize>> = vec![Vec::new()];
    for p in parameters {
        let count = level_count(p);
        points = points
            .into_iter()
            .flat_map(|prefix| {
                (0..count).map(move |l| {
                    let mut next = prefix.clone();
                    next.push(l);
                    next
                })
            })
            .collect();
    }
    points
}

/// `points` combinations by Latin-hypercube sampling of the value indices (the sweep's sampler:
/// every field's list is split into `points` strata, each covered once), seeded by the tune's seed.
fn lhs(parameters: &[Parameter], points: u64, seed: u64) -> Vec<Vec<usize>> {
    let indices: Vec<Parameter> = parameters
        .iter()
        .map(|p| Parameter {
            name: p.name.clone(),
            pointer: p.pointer.clone(),
            levels: Levels::Values((0..level_count(p)).map(Value::from).collect()),
            ranged: false,
        })
        .collect();
    let sampling = Sampling { method: SampleMethod::LatinHypercube, points, seed };
    crate::sweep::sample::sample_points(&indices, sampling)
        .into_iter()
        .map(|point| point.iter().map(|v| v.as_u64().expect("indices") as usize).collect())
        .collect()
}

/// Each value alone in the first world, so that a bad value is reported where it is written.
fn check_values(ck: &mut Checker, plan: &TunePlan) {
    let mut checks: Vec<(String, usize, usize)> = Vec::new();
    for (i, p) in plan.parameters.iter().enumerate() {
        if plan.labels[i].is_some() {
            continue; // a label alone is checked with the candidates
        }
        for j in 0..level_count(p) {
            let path = if p.ranged { format!("/space/{i}/range") } else { format!("/space/{i}/values/{j}") };
            checks.push((path, i, j));
        }
    }
    let found: Vec<Vec<SweepProblem>> = checks
        .par_iter()
        .map(|(path, i, j)| {
            let mut doc = plan.scenario_value(&Candidate::BASELINE, 0);
            let pointer = &plan.parameters[*i].pointer;
            let Levels::Values(values) = &plan.parameters[*i].levels else { unreachable!("checked") };
            let value = &values[*j];
            set_pointer(&mut doc, pointer, value.clone()).expect("pointer checked");
            match build_value(doc, plan.seed_override) {
                Ok(_) => Vec::new(),
                Err(problems) => problems
                    .iter()
                    .map(|pr| {
                        let at = if pr.path.is_empty() { "/" } else { &pr.path };
                        let message = format!(
                            "value {} at {pointer}: scenario {at}: {}",
                            crate::text::echo_value(value),
                            pr.message
                        );
                        SweepProblem::new(ck.file, path.clone(), message)
                    })
                    .collect(),
            }
        })
        .collect();
    ck.problems.extend(found.into_iter().flatten());
}

/// Every candidate in every world, as a whole: values valid alone can still clash.
fn check_candidates(ck: &mut Checker, plan: &TunePlan) {
    let pairs: Vec<(usize, usize)> =
        (0..plan.initial.len()).flat_map(|c| (0..plan.worlds.len()).map(move |w| (c, w))).collect();
    let found: Vec<Vec<SweepProblem>> = pairs
        .par_iter()
        .map(|&(c, w)| match build_value(plan.scenario_value(&plan.initial[c], w), plan.seed_override) {
            Ok(_) => Vec::new(),
            Err(problems) => {
                let (path, what) = if c == 0 {
                    (format!("/worlds/{w}"), format!("world {}", plan.worlds[w].name))
                } else {
                    (
                        "/space".to_string(),
                        format!("candidate {c} ({}) in world {}", plan.describe(&plan.initial[c]), plan.worlds[w].name),
                    )
                };
                problems
                    .iter()
                    .map(|pr| {
                        let at = if pr.path.is_empty() { "/" } else { &pr.path };
                        SweepProblem::new(ck.file, path.clone(), format!("{what}: scenario {at}: {}", pr.message))
                    })
                    .collect()
            }
        })
        .collect();
    ck.problems.extend(found.into_iter().flatten());
}
