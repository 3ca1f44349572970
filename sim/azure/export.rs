//! `fleetsim export`: a strategy of a scenario as `az fleet updatestrategy create --stages FILE` and
//! `az fleet updaterun create --stages FILE` take it: `{"stages": [...]}` with the API's field names
//! and types (limits as strings). The strategy comes from a scenario (a named strategy or a run's)
//! or from a `fleetsim tune` folder's `recommendation.json`.

use serde_json::{Value, json};

use crate::scenario::Problem;
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

/// Whether `value` is a `fleetsim tune` folder's `recommendation.json` (its `tune`, `recommended`
/// and `baseline` fields), not a scenario.
pub fn is_recommendation(value: &Value) -> bool {
    value.get("tune").is_some_and(Value::is_string)
        && value.get("recommended").is_some()
        && value.get("baseline").is_some_and(Value::is_object)
}

/// The strategy a tune's `recommendation.json` recommends (`which` `None` or `"recommended"`), or
/// its baseline (`"baseline"`), checked as a scenario's strategy is: problems point into the
/// recommendation (`/recommended/strategy/stages/0/...`). Each problem is one line without the
/// file's name.
pub fn recommended_strategy(value: &Value, which: Option<&str>) -> Result<StrategyDto, Vec<String>> {
    let key = match which {
        None | Some("recommended") => "recommended",
        Some("baseline") => "baseline",
        Some(other) => {
            return Err(vec![format!(
                "--strategy {}: a tune's recommendation has the strategies \"recommended\" (the default) and \"baseline\"",
                echo(other)
            )]);
        }
    };
    let Some(strategy) = value.get(key).and_then(|r| r.get("strategy")) else {
        let message = if key == "recommended" {
            "the tune recommends no strategy: no candidate met every constraint (the closest ones are under /closest); `--strategy baseline` exports the baseline".to_string()
        } else {
            "the baseline has no strategy".to_string()
        };
        return Err(vec![Problem::new(format!("/{key}"), message).to_string()]);
    };
    // Checked through the scenario path: a scenario holding only this strategy.
    const NAME: &str = "recommended";
    let scenario = json!({
        "name": "recommendation",
        "start": "2026-01-01T00:00:00Z",
        "updateStrategies": { NAME: strategy },
    });
    let at = format!("/updateStrategies/{NAME}");
    let relocate = |problems: Vec<Problem>| -> Vec<String> {
        problems
            .into_iter()
            .map(|p| Problem { path: p.path.replacen(&at, &format!("/{key}/strategy"), 1), ..p }.to_string())
            .collect()
    };
    let (dto, moves) = crate::scenario::dto_from_owned(scenario).map_err(relocate)?;
    crate::scenario::build::build(&dto, None).map_err(|p| relocate(moves.locate(p)))?;
    Ok(dto.update_strategies.get(NAME).cloned().expect("the strategy was given under this name"))
}
