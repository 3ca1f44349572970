//! The sweep file format: serde DTOs mirroring the JSON (README, "Sweeps").
//!
//! A sweep names a base scenario and the fields to vary in it by JSON Pointer. Values stay plain JSON
//! here: each one is written into the scenario text and then validated by the scenario's own rules,
//! so a value in a sweep is checked exactly like the same value typed into a scenario by hand.
//! Unknown fields are errors everywhere (`deny_unknown_fields`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::scenario::ScenarioDto;

/// A batch parameter sweep: one base scenario, the fields to vary, and how many replications each
/// variant (point) gets.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SweepDto {
    /// Editors may point at the schema printed by `fleetsim schema sweep`; ignored by the simulator.
    #[serde(default, rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Sweep name: the default output folder is `reports/<name>/`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The base scenario: a path relative to this file, or an inline scenario object.
    pub scenario: ScenarioSourceDto,
    /// The fields to vary (1–32).
    pub parameters: Vec<ParameterDto>,
    /// `cartesian` (default: every combination) or `zip` (the i-th value of every parameter together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["cartesian", "zip"]))]
    pub combine: Option<String>,
    /// Draw points instead of enumerating them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleDto>,
    /// Replications per point (1–1000000). Replication r of every point uses the same random streams.
    pub replications: u64,
    /// Root of the random streams of every point (replaces the scenario's `seed` for the simulation;
    /// member generators keep the scenario's seed, so every point has the same fleet). Default: the
    /// scenario's seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Metrics to collect (default: all). `runState` is always collected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = {"enum": [
        "hoursTo50PctUpgraded", "hoursTo90PctUpgraded", "hoursTo100PctUpgraded", "falseHalt", "blastRadius",
        "blastRadiusFraction", "detectionHours", "runState", "failedMembers", "makespanHours",
        "hoursTo50PctDone", "hoursTo90PctDone", "hoursTo100PctDone", "pendingWindowHours",
        "pendingAvailabilityHours", "pendingGateHours", "peakConcurrency"
    ]}))]
    pub metrics: Option<Vec<String>>,
    /// The point every other is compared with in `paired.csv`: parameter names and their values, e.g.
    /// `{"earlyConcurrency": 5}` (the first point that has them). Default: the first point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Map<String, Value>>,
}

/// A path to a scenario file (relative to the sweep file), or the scenario itself.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ScenarioSourceDto {
    Path(String),
    /// Kept as raw JSON: parameters edit it by JSON Pointer before it is validated.
    Inline(#[schemars(with = "ScenarioDto")] Map<String, Value>),
}

/// One field to vary: a JSON Pointer into the scenario and its values, listed or as a numeric range.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParameterDto {
    /// Column name in the outputs. Default: the pointer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// RFC 6901 JSON Pointer into the base scenario, e.g. `/updateStrategies/prod/stages/1/maxConcurrency`.
    /// It must name an existing value or a new member of an existing object.
    pub pointer: String,
    /// The values, each any JSON value the scenario accepts at the pointer (exclusive with `range`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Value>>,
    /// Numbers from `from` to `to` (inclusive) by `step` (exclusive with `values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeDto>,
}

/// `from`, `from + step`, … up to `to`. Integers when all three are integers. Without `step` the range
/// is continuous, which only a `sample` can use.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RangeDto {
    pub from: serde_json::Number,
    pub to: serde_json::Number,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<serde_json::Number>,
}

/// Draw `points` points instead of enumerating every combination.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SampleDto {
    /// `random` (each parameter drawn independently) or `latinHypercube` (each parameter's range split
    /// into `points` equal strata, one draw per stratum, strata paired at random).
    #[schemars(extend("enum" = ["random", "latinHypercube"]))]
    pub method: String,
    /// How many points (1–100000).
    pub points: u64,
    /// Seed of the draw. Default: the sweep's root seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}
