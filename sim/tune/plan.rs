//! Tune files → a validated [`TunePlan`]: the base scenario, the worlds, the candidates and the
//! criteria. Every candidate's scenario in every world is validated here, through the normal
//! scenario path, so a search never starts on a strategy the simulator would refuse.

use std::path::Path;
use std::sync::LazyLock;

use rayon::prelude::*;
use serde_json::Value;

use crate::scenario::shape::Shape;
use crate::scenario::{self, Problem, Scenario};
use crate::sweep::plan::{Checker, Levels, Parameter, build_value, collapse_sweep, set_pointer, value_text};
use crate::sweep::{Metric, SweepProblem};
use crate::text::{cut, echo};

use super::dto::{ConstraintDto, CriterionDto, TuneDto, WorldDto};

pub const MAX_WORLDS: usize = 8;
pub const MAX_SPACE: usize = 16;
pub const MAX_CONSTRAINTS: usize = 16;
/// Candidates are every combination of the space; each is simulated in every world.
pub const MAX_CANDIDATES: usize = 4096;
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
    pub parameters: Vec<Parameter>,
    /// `candidates[c][i]`: the value of parameter `i` in candidate `c`. Candidate 0 is the
    /// baseline: the base scenario's own strategy, with the values the base has at the pointers
    /// (`null` where it has none), and it is never written over.
    pub candidates: Vec<Vec<Value>>,
    pub objective: Criterion,
    pub constraints: Vec<Constraint>,
    pub budget: Budget,
}

impl TunePlan {
    /// The scenario JSON of candidate `c` in world `w`: the world's overrides, then the candidate's
    /// values.
    pub fn scenario_value(&self, c: usize, w: usize) -> Value {
        let mut doc = self.base.clone();
        for (pointer, value) in &self.worlds[w].overrides {
            set_pointer(&mut doc, pointer, value.clone()).expect("pointers were checked when loading");
        }
        if c > 0 {
            for (parameter, value) in self.parameters.iter().zip(&self.candidates[c]) {
                set_pointer(&mut doc, &parameter.pointer, value.clone()).expect("pointers were checked when loading");
            }
        }
        doc
    }

    /// The validated scenario of candidate `c` in world `w`.
    pub fn build(&self, c: usize, w: usize) -> Scenario {
        build_value(&self.scenario_value(c, w), self.seed_override).expect("every candidate was validated when loading")
    }

    /// The tuned run's strategy in candidate `c`'s scenario (the same in every world).
    pub fn strategy(&self, c: usize) -> Value {
        let doc = self.scenario_value(c, 0);
        doc.pointer(&self.strategy_pointer).cloned().unwrap_or(Value::Null)
    }

    /// `name=value, …` of candidate `c`, or "the base strategy".
    pub fn describe(&self, c: usize) -> String {
        if c == 0 {
            return "the base strategy".into();
        }
        let parts: Vec<String> = self
            .parameters
            .iter()
            .zip(&self.candidates[c])
            .map(|(p, v)| match (v, &p.levels) {
                // A whole object (an alternative stage or strategy) by its place in the list.
                (Value::Object(_) | Value::Array(_), Levels::Values(values)) => {
                    let k = values.iter().position(|x| x == v).map_or(0, |k| k + 1);
                    format!("{} #{k} of {}", p.name, values.len())
                }
                _ => format!("{}={}", p.name, cut(&value_text(v))),
            })
            .collect();
        parts.join(", ")
    }

    pub fn world_index(&self, name: &str) -> Option<usize> {
        self.worlds.iter().position(|w| w.name == name)
    }

    pub fn criterion_name(&self, c: &Criterion) -> String {
        format!("{}.{}.{}", self.worlds[c.world].name, MEASURES[c.measure], c.statistic.name())
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
    let parameters = space(&mut ck, dto, base.as_ref().map(|b| &b.value));
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
    let mut candidates = vec![baseline_values(&base.value, &parameters)];
    for combination in combinations(&parameters) {
        // A combination equal to the base strategy is the baseline itself.
        if combination != candidates[0] {
            candidates.push(combination);
        }
    }
    if candidates.len() > MAX_CANDIDATES {
        ck.err("/space", format!("{} candidates: a search has at most {MAX_CANDIDATES}", candidates.len()));
        return Err(ck.problems);
    }
    let budget = budget.expect("no problems");
    let first_round = candidates.len() as u64 * dto.worlds.len() as u64 * budget.initial;
    if budget.total < first_round {
        ck.err(
            "/budget/replications",
            format!(
                "{} simulations cannot pay for the first round: {} candidates × {} worlds × {} replications = {first_round}",
                budget.total,
                candidates.len(),
                dto.worlds.len(),
                budget.initial
            ),
        );
        return Err(ck.problems);
    }
    let plan = TunePlan {
        name: dto.name.clone(),
        description: dto.description.clone(),
        base: base.value,
        scenario_name: base_scenario.map(|s| s.name).unwrap_or_default(),
        run: dto.run.clone(),
        strategy_pointer: strategy_pointer.expect("no problems, so the run was found"),
        seed_override: dto.seed,
        worlds,
        parameters,
        candidates,
        objective: objective.expect("no problems"),
        constraints: constraints.into_iter().map(|c| c.expect("no problems")).collect(),
        budget,
    };
    check_values(&mut ck, &plan);
    if !ck.problems.is_empty() {
        return Err(ck.problems);
    }
    check_candidates(&mut ck, &plan);
    if !ck.problems.is_empty() {
        return Err(ck.problems);
    }
    Ok(plan)
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

fn space(ck: &mut Checker, dto: &TuneDto, base: Option<&Value>) -> Vec<Parameter> {
    if dto.space.is_empty() || dto.space.len() > MAX_SPACE {
        ck.err("/space", format!("{} fields: give 1–{MAX_SPACE}", dto.space.len()));
    }
    let mut out: Vec<Parameter> = Vec::new();
    for (i, p) in dto.space.iter().enumerate() {
        let path = format!("/space/{i}");
        let name = p.name.clone().unwrap_or_else(|| p.pointer.clone());
        if name.trim().is_empty() || ["candidate", "status", "replications"].contains(&name.as_str()) {
            ck.err(format!("{path}/name"), format!("{} cannot name a field: choose another name", echo(&name)));
        } else if out.iter().any(|q| q.name == name) {
            ck.err(format!("{path}/name"), format!("two fields are named {}", echo(&name)));
        }
        if out.iter().any(|q| q.pointer == p.pointer) {
            ck.err(format!("{path}/pointer"), format!("{} is varied by two fields", p.pointer));
        }
        if let Some(base) = base
            && let Err(e) = set_pointer(&mut base.clone(), &p.pointer, Value::Null)
        {
            ck.err(format!("{path}/pointer"), e);
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
                ck.err(&path, "give either `values` or `range`");
                Levels::Values(Vec::new())
            }
        };
        out.push(Parameter { name, pointer: p.pointer.clone(), levels, ranged: p.range.is_some() });
    }
    let count = out
        .iter()
        .map(|p| match &p.levels {
            Levels::Values(v) => v.len() as u64,
            Levels::Continuous { .. } => 1,
        })
        .try_fold(1u64, |a, n| a.checked_mul(n));
    if count.is_none_or(|n| n > MAX_CANDIDATES as u64) {
        ck.err("/space", format!("the combinations give more than {MAX_CANDIDATES} candidates"));
    }
    out
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

fn budget(ck: &mut Checker, dto: &TuneDto) -> Option<Budget> {
    let b = &dto.budget;
    let initial = b.initial.unwrap_or(10);
    let max_per_candidate = b.max_per_candidate.unwrap_or(400);
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
    (ck.problems.len() == before).then_some(Budget { total: b.replications, initial, max_per_candidate })
}

/// The base scenario's values at the space's pointers (`null` where it has none).
fn baseline_values(base: &Value, parameters: &[Parameter]) -> Vec<Value> {
    parameters.iter().map(|p| base.pointer(&p.pointer).cloned().unwrap_or(Value::Null)).collect()
}

/// Every combination of the parameters' values, the last varying fastest.
fn combinations(parameters: &[Parameter]) -> Vec<Vec<Value>> {
    let mut points: Vec<Vec<Value>> = vec![Vec::new()];
    for p in parameters {
        let Levels::Values(values) = &p.levels else { unreachable!("ranges without a step were rejected") };
        points = points
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push(v.clone());
                    next
                })
            })
            .collect();
    }
    points
}

/// Each value alone in the first world, so that a bad value is reported where it is written.
fn check_values(ck: &mut Checker, plan: &TunePlan) {
    let mut checks: Vec<(String, usize, Value)> = Vec::new();
    for (i, p) in plan.parameters.iter().enumerate() {
        if let Levels::Values(values) = &p.levels {
            for (j, v) in values.iter().enumerate() {
                let path = if p.ranged { format!("/space/{i}/range") } else { format!("/space/{i}/values/{j}") };
                checks.push((path, i, v.clone()));
            }
        }
    }
    let found: Vec<Vec<SweepProblem>> = checks
        .par_iter()
        .map(|(path, i, value)| {
            let mut doc = plan.scenario_value(0, 0);
            let pointer = &plan.parameters[*i].pointer;
            set_pointer(&mut doc, pointer, value.clone()).expect("pointer checked");
            match build_value(&doc, plan.seed_override) {
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
        (0..plan.candidates.len()).flat_map(|c| (0..plan.worlds.len()).map(move |w| (c, w))).collect();
    let found: Vec<Vec<SweepProblem>> = pairs
        .par_iter()
        .map(|&(c, w)| match build_value(&plan.scenario_value(c, w), plan.seed_override) {
            Ok(_) => Vec::new(),
            Err(problems) => {
                let (path, what) = if c == 0 {
                    (format!("/worlds/{w}"), format!("world {}", plan.worlds[w].name))
                } else {
                    (
                        "/space".to_string(),
                        format!("candidate {c} ({}) in world {}", plan.describe(c), plan.worlds[w].name),
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
