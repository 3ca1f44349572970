//! `fleetsim export`: a strategy of a scenario as `az fleet updatestrategy create --stages FILE` and
//! `az fleet updaterun create --stages FILE` take it: `{"stages": [...]}` with the API's field names
//! and types (limits as strings).

use crate::scenario::dto::{ScenarioDto, StrategyDto};
use crate::scenario::problem::echo;

/// The strategy `name` of a scenario: a named strategy of `updateStrategies`, else the inline
/// `strategy` of the run so named (a run naming a strategy exports that one).
pub fn strategy<'a>(scenario: &'a ScenarioDto, name: &str) -> Result<&'a StrategyDto, String> {
    if let Some(s) = scenario.update_strategies.get(name) {
        return Ok(s);
    }
    if let Some(run) = scenario.update_runs.iter().find(|r| r.name == name) {
        if let Some(s) = &run.strategy {
            return Ok(s);
        }
        if let Some(id) = &run.update_strategy_id
            && let Some(s) = scenario.update_strategies.get(crate::scenario::build::strategy_name_of(id))
        {
            return Ok(s);
        }
        return Err(format!("run {} has no strategy: it upgrades members one by one", echo(name)));
    }
    let mut known: Vec<String> = scenario.update_strategies.keys().map(|k| format!("\"{k}\"")).collect();
    known.extend(scenario.update_runs.iter().filter(|r| r.strategy.is_some()).map(|r| format!("run \"{}\"", r.name)));
    Err(format!(
        "no strategy {} in updateStrategies nor a run of that name (known: {})",
        echo(name),
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    ))
}

/// The `--stages` file's bytes: pretty JSON and a final newline.
pub fn stages_file(strategy: &StrategyDto) -> Vec<u8> {
    let value = serde_json::json!({ "stages": strategy.stages });
    let mut bytes = serde_json::to_vec_pretty(&value).expect("DTOs serialize");
    bytes.push(b'\n');
    bytes
}
