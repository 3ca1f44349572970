//! The tune file format: serde DTOs mirroring the JSON (README, "Tuning a strategy").
//!
//! A tune file names a base scenario and the update run whose strategy is tuned, the futures the
//! strategy is judged in (worlds: pointer overrides of the base scenario, as in sweep files), the
//! strategy fields to search (the space: sweep parameters), what to minimise, the limits a
//! recommendation must respect, and how many simulations the search may spend. Values stay plain
//! JSON: each is written into the scenario text and validated by the scenario's own rules.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sweep::dto::{RangeDto, ScenarioSourceDto};

/// A strategy search: the fastest strategy within a risk budget.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TuneDto {
    /// Editors may point at the schema printed by `fleetsim schema tune`; ignored by the simulator.
    #[serde(default, rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Tune name: the default output folder is `reports/<name>/`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The base scenario: a path relative to this file, or an inline scenario object.
    pub scenario: ScenarioSourceDto,
    /// The update run (by name) whose strategy is tuned; its figures are the ones judged.
    pub run: String,
    /// Root of the random streams (replaces the scenario's `seed` for the simulation; member
    /// generators keep the scenario's seed). Default: the scenario's seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The futures every candidate is judged in, with the same random streams in each (1–8). Two
    /// are required: `good` (no release marked bad) and `bad` (the target version in
    /// `models.badReleases`).
    pub worlds: Vec<WorldDto>,
    /// The strategy fields to search (1–16): a JSON Pointer into the base scenario and its values
    /// (numbers, limit strings, whole stage or strategy objects) or a numeric range, as in sweeps;
    /// or a member label the tuner assigns with alternative fraction sets. Candidates are every
    /// combination (or, above `budget.enumerate`, a Latin-hypercube sample refined around the
    /// best); the base scenario's own strategy is always a candidate too.
    pub space: Vec<FieldDto>,
    /// The figure to minimise.
    pub objective: CriterionDto,
    /// The limits a recommendation must respect (0–16).
    #[serde(default)]
    pub constraints: Vec<ConstraintDto>,
    pub budget: BudgetDto,
}

/// One field of the space: `pointer` with `values` or `range`, or `label` with `assign`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldDto {
    /// Column name in the outputs. Default: the pointer, or the label key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// RFC 6901 JSON Pointer into the base scenario, e.g. `/updateStrategies/prod/stages/1/maxConcurrency`
    /// (exclusive with `label`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The values, each any JSON value the scenario accepts at the pointer (exclusive with `range`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Value>>,
    /// Numbers from `from` to `to` (inclusive) by `step` (exclusive with `values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeDto>,
    /// A member label key the tuner assigns to every member, explicit and generated (exclusive
    /// with `pointer`); the strategy's stages select members by it (`"byLabel": "ring=canary"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The alternatives for `label`: each maps label values, in order, to the fraction of the fleet
    /// that gets them (0–1), or `"rest"` for the members left (last). Members are ranked by a hash
    /// of the label key and their name, so the same members get a value whatever else varies, and a
    /// 1 % first value is inside a 2 % one: `[{"canary": 0.01, "early": 0.2, "broad": "rest"}, …]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assign: Option<Vec<ShareSetDto>>,
}

/// Label value → fraction of the fleet (0–1) or `"rest"`, in order.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(extend("additionalProperties" = {"anyOf": [{"type": "number"}, {"type": "string", "enum": ["rest"]}]}))]
pub struct ShareSetDto(pub serde_json::Map<String, Value>);

/// One future: overrides of the base scenario.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldDto {
    /// `good`, `bad` or another name of lowercase letters, digits and `-` (a file name in the outputs).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values written into the base scenario, in order.
    #[serde(default)]
    pub overrides: Vec<OverrideDto>,
}

/// One value written at a JSON Pointer (an existing value, or a new member of an existing object).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverrideDto {
    pub pointer: String,
    pub value: Value,
}

/// A statistic of a metric of the tuned run over replications in one world.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CriterionDto {
    #[schemars(extend("enum" = [
        "hoursTo50PctUpgraded", "hoursTo90PctUpgraded", "hoursTo100PctUpgraded", "falseHalt",
        "blastRadius", "blastRadiusFraction", "detectionHours", "runFailed", "failedMembers"
    ]))]
    pub metric: String,
    /// `mean`, `p50`, `p90`, `p95` or `p99`.
    #[schemars(extend("enum" = ["mean", "p50", "p90", "p95", "p99"]))]
    pub statistic: String,
    /// The world's name.
    pub world: String,
}

/// A criterion and its largest acceptable value.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConstraintDto {
    #[schemars(extend("enum" = [
        "hoursTo50PctUpgraded", "hoursTo90PctUpgraded", "hoursTo100PctUpgraded", "falseHalt",
        "blastRadius", "blastRadiusFraction", "detectionHours", "runFailed", "failedMembers"
    ]))]
    pub metric: String,
    #[schemars(extend("enum" = ["mean", "p50", "p90", "p95", "p99"]))]
    pub statistic: String,
    pub world: String,
    /// The statistic must be at most this.
    pub max: f64,
}

/// How much the search may spend.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetDto {
    /// Simulations in all (candidate × world × replication), 1–100000000.
    pub replications: u64,
    /// Replications of every candidate in the first round (2–100000). Default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial: Option<u64>,
    /// Replications after which a candidate is not refined further (the precision target; at
    /// least `initial`, at most 100000). Default 400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_candidate: Option<u64>,
    /// Spaces of at most this many combinations are searched whole (1–4096). Default 1024.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enumerate: Option<u64>,
    /// Above `enumerate`, candidates drawn by Latin-hypercube sampling to start the race with
    /// (2–4096); the search then adds the neighbours of the best in every round. Default 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u64>,
}
