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

use crate::sweep::dto::{ParameterDto, ScenarioSourceDto};

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
    /// The strategy fields to search (1–16), as sweep parameters: a JSON Pointer into the base
    /// scenario and its values (numbers, limit strings, whole strategy objects) or a numeric range.
    /// Candidates are every combination; the base scenario's own strategy is always a candidate too.
    pub space: Vec<ParameterDto>,
    /// The figure to minimise.
    pub objective: CriterionDto,
    /// The limits a recommendation must respect (0–16).
    #[serde(default)]
    pub constraints: Vec<ConstraintDto>,
    pub budget: BudgetDto,
}

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
}
