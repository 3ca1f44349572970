//! The recommendation in words a platform engineer reads: each stage from the strategy itself (its
//! name, the share of the fleet it selects, its groups, `maxConcurrency` and `maxAllowedFailures`,
//! gates and wait), and each figure as what it means ("the whole fleet in 40 h (p90 in good)").

use serde_json::Value;

use crate::orchestrator::plan::StagePlan;
use crate::sweep::plan::value_text;

use super::plan::{Candidate, Criterion, MEASURES, Statistic, TunePlan};

/// A number as people write it: whole above 10, one decimal below (never `-0`).
pub fn short(x: f64) -> String {
    if !x.is_finite() {
        return "never".into();
    }
    let rounded = if x.abs() >= 10.0 { x.round() } else { (x * 10.0).round() / 10.0 };
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    format!("{rounded}")
}

/// A share (0–1) as a percentage: `2 %`, `0.5 %`.
pub fn percent(x: f64) -> String {
    if !x.is_finite() {
        return "never".into();
    }
    let p = x * 100.0;
    let rounded = if p.abs() >= 10.0 || p == p.round() { p.round() } else { (p * 10.0).round() / 10.0 };
    format!("{rounded} %")
}

/// Seconds as `1 h`, `30 min`, `1 h 30 min`, `2 d`.
pub fn duration(seconds: i64) -> String {
    let (d, h, m) = (seconds / 86_400, seconds % 86_400 / 3600, seconds % 3600 / 60);
    let mut parts = Vec::new();
    if d > 0 {
        parts.push(format!("{d} d"));
    }
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 || parts.is_empty() {
        parts.push(format!("{m} min"));
    }
    parts.join(" ")
}

fn limit_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// `5 at a time`, `25 % at a time`, `all at once`.
fn concurrency_words(written: Option<&Value>, resolved: u32, members: usize) -> String {
    match limit_text(written) {
        Some(t) if t.ends_with('%') => format!("{} % at a time", t.trim_end_matches('%')),
        Some(t) => format!("{t} at a time"),
        None if resolved as usize >= members => "all at once".into(),
        None => format!("{resolved} at a time"),
    }
}

/// `no failure allowed`, `1 failure allowed`, `5 % failures allowed`.
fn failure_words(written: Option<&Value>, resolved: u32) -> String {
    let text = limit_text(written).unwrap_or_else(|| resolved.to_string());
    match text.as_str() {
        "0" | "0%" => "no failure allowed".into(),
        "1" => "1 failure allowed".into(),
        t if t.ends_with('%') => format!("{} % failures allowed", t.trim_end_matches('%')),
        t => format!("{t} failures allowed"),
    }
}

fn gate_words(gates: Option<&Value>, before: bool) -> Vec<String> {
    let Some(list) = gates.and_then(Value::as_array) else { return Vec::new() };
    list.iter()
        .map(|g| {
            let what = match g.get("type").and_then(Value::as_str) {
                Some("ScheduledStart") => {
                    let c = g.get("scheduledStartConfiguration");
                    let field = |k: &str| c.and_then(|c| c.get(k)).and_then(Value::as_str).unwrap_or("?");
                    format!(
                        "a scheduled start ({} {} UTC{})",
                        field("startDay"),
                        field("startTime"),
                        field("utcOffset")
                    )
                }
                _ => "an approval".into(),
            };
            if before { format!("after {what}") } else { format!("then {what}") }
        })
        .collect()
}

fn clusters(n: usize) -> String {
    if n == 1 { "1 cluster".into() } else { format!("{n} clusters") }
}

/// One stage in words, from its JSON and its resolved plan.
fn stage_words(json: &Value, plan: &StagePlan, fleet: usize, first: bool) -> String {
    let members = plan.member_count();
    let share = if fleet > 0 { members as f64 / fleet as f64 } else { 0.0 };
    let name = json.get("name").and_then(Value::as_str).unwrap_or(&plan.name);
    let of = if first { " of the fleet" } else { "" };
    let mut parts = vec![format!("{name} with {}{of} ({})", percent(share), clusters(members))];
    parts.extend(gate_words(json.get("beforeGates"), true));
    let groups = json.get("groups").and_then(Value::as_array);
    match groups {
        Some(groups) if !groups.is_empty() => {
            let described: Vec<String> = groups
                .iter()
                .zip(&plan.groups)
                .take(4)
                .map(|(g, gp)| {
                    let gname = g.get("name").and_then(Value::as_str).unwrap_or(&gp.name);
                    let mut words = vec![
                        clusters(gp.members.len()),
                        concurrency_words(g.get("maxConcurrency"), gp.max_concurrency, gp.members.len()),
                        failure_words(g.get("maxAllowedFailures"), gp.max_allowed_failures),
                    ];
                    words.extend(gate_words(g.get("beforeGates"), true));
                    words.extend(gate_words(g.get("afterGates"), false));
                    format!("{gname} ({})", words.join(", "))
                })
                .collect();
            let more = if groups.len() > 4 { format!(" and {} more", groups.len() - 4) } else { String::new() };
            parts.push(format!("in {} groups: {}{more}", groups.len(), described.join("; ")));
            if json.get("maxConcurrency").is_some() {
                parts.push(format!(
                    "the stage {}",
                    concurrency_words(json.get("maxConcurrency"), plan.max_concurrency, members)
                ));
            }
            if json.get("maxAllowedFailures").is_some() {
                parts.push(format!(
                    "the stage with {}",
                    failure_words(json.get("maxAllowedFailures"), plan.max_allowed_failures)
                ));
            }
        }
        _ => {
            parts.push(concurrency_words(json.get("maxConcurrency"), plan.max_concurrency, members));
            parts.push(failure_words(json.get("maxAllowedFailures"), plan.max_allowed_failures));
        }
    }
    parts.extend(gate_words(json.get("afterGates"), false));
    if let Some(wait) = json.get("afterStageWaitInSeconds").and_then(Value::as_i64).filter(|w| *w > 0) {
        parts.push(format!("then wait {}", duration(wait)));
    }
    parts.join(", ")
}

/// Candidate `c`'s strategy for the tuned run in words, stage by stage ("canary with 2 % of the
/// fleet (20 clusters), 5 at a time, no failure allowed, then wait 1 h; then early with …").
pub fn strategy_words(plan: &TunePlan, c: &Candidate) -> String {
    let world = plan.objective.world;
    let scenario = plan.build(c, world);
    let Some(run) = scenario.runs.iter().find(|r| r.name == plan.run) else { return String::new() };
    let strategy = plan.strategy(c);
    let stages = strategy.get("stages").and_then(Value::as_array).cloned().unwrap_or_default();
    let fleet = scenario.fleet.len();
    if run.plan.stages.is_empty() {
        return "no stage".into();
    }
    let described: Vec<String> = run
        .plan
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| stage_words(stages.get(i).unwrap_or(&Value::Null), s, fleet, i == 0))
        .collect();
    let mut text = described.join("; then ");
    if !run.plan.not_selected.is_empty() {
        text.push_str(&format!("; {} of the fleet are in no stage", clusters(run.plan.not_selected.len())));
    }
    text
}

/// A field's value in a candidate description: numbers and strings as written, a stage or a
/// strategy in words, label shares as percentages, other objects as compact JSON.
pub fn value_words(v: &Value) -> String {
    match v {
        Value::Object(o) if o.contains_key("stages") => {
            let names: Vec<String> = o["stages"]
                .as_array()
                .map(|s| s.iter().filter_map(|x| x.get("name").and_then(Value::as_str).map(str::to_string)).collect())
                .unwrap_or_default();
            format!("strategy {}", names.join(" → "))
        }
        Value::Object(o) if o.contains_key("name") => {
            let name = o["name"].as_str().unwrap_or("?");
            let mut words = vec![format!("stage {name}")];
            if let Some(c) = limit_text(o.get("maxConcurrency")) {
                words.push(format!("{c} at a time"));
            }
            if o.get("maxAllowedFailures").is_some() {
                words.push(failure_words(o.get("maxAllowedFailures"), 0));
            }
            if let Some(w) = o.get("afterStageWaitInSeconds").and_then(Value::as_i64).filter(|w| *w > 0) {
                words.push(format!("wait {}", duration(w)));
            }
            words.join(" ")
        }
        Value::Object(o) if o.values().all(|x| x.is_number() || x == "rest") && !o.is_empty() => {
            let fractions = o.values().all(|x| x.as_f64().is_none_or(|f| f <= 1.0));
            o.iter()
                .map(|(k, x)| match x.as_f64() {
                    Some(f) if fractions => format!("{k} {}", percent(f)),
                    Some(f) => format!("{k} {f}"),
                    None => format!("{k} the rest"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        other => value_text(other),
    }
}

/// A figure in words: `the whole fleet in 40 h`, `a bad release reaches at most 13 clusters`.
fn figure(measure: usize, statistic: Statistic, x: f64) -> String {
    let hours = |x: f64| if x.is_finite() { format!("{} h", short(x)) } else { "never".into() };
    let bound = match statistic {
        Statistic::Mean => "on average ",
        Statistic::Percentile(_) => "at most ",
    };
    match MEASURES[measure] {
        "hoursTo100PctUpgraded" => format!("the whole fleet in {}", hours(x)),
        "hoursTo90PctUpgraded" => format!("90 % of the fleet in {}", hours(x)),
        "hoursTo50PctUpgraded" => format!("half the fleet in {}", hours(x)),
        "blastRadius" => format!("a bad release reaches {bound}{}", clusters_f(x)),
        "blastRadiusFraction" => format!("a bad release reaches {bound}{} of the clusters it breaks", percent(x)),
        "detectionHours" => format!("a bad release is stopped {bound}{} after its first failure", hours(x)),
        "falseHalt" => format!("it halts for nothing (random failures only) in {} of the futures", percent(x)),
        "runFailed" => format!("the run fails in {} of the futures", percent(x)),
        "failedMembers" => format!("{bound}{} fail", clusters_f(x)),
        other => format!("{other} {}", short(x)),
    }
}

fn clusters_f(x: f64) -> String {
    if x == 1.0 { "1 cluster".into() } else { format!("{} clusters", short(x)) }
}

/// The same figure as a bare value (for "instead of …" and limits).
fn bare(measure: usize, x: f64) -> String {
    match MEASURES[measure] {
        m if m.starts_with("hours") || m == "detectionHours" => {
            if x.is_finite() {
                format!("{} h", short(x))
            } else {
                "never".into()
            }
        }
        "blastRadiusFraction" | "falseHalt" | "runFailed" => percent(x),
        _ => short(x),
    }
}

/// A criterion's figure with its statistic, world, limit and the baseline's figure.
pub fn criterion_words(
    plan: &TunePlan,
    c: &Criterion,
    value: Option<f64>,
    limit: Option<f64>,
    base: Option<f64>,
) -> String {
    let Some(x) = value else {
        return format!("no {} in {}", MEASURES[c.measure], plan.worlds[c.world].name);
    };
    let mut s = figure(c.measure, c.statistic, x);
    let limit = limit.map(|l| format!(", limit {}", bare(c.measure, l))).unwrap_or_default();
    s.push_str(&format!(" ({} in {}{limit})", c.statistic.name(), plan.worlds[c.world].name));
    if let Some(b) = base {
        s.push_str(&format!(" instead of {}", bare(c.measure, b)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_durations_and_shares_read_as_people_write_them() {
        assert_eq!(short(40.2718), "40");
        assert_eq!(short(9.46), "9.5");
        assert_eq!(short(-0.01), "0");
        assert_eq!(percent(0.02), "2 %");
        assert_eq!(percent(0.005), "0.5 %");
        assert_eq!(percent(0.1484), "15 %");
        assert_eq!(duration(3600), "1 h");
        assert_eq!(duration(1800), "30 min");
        assert_eq!(duration(5400), "1 h 30 min");
        assert_eq!(concurrency_words(Some(&Value::from("25%")), 0, 10), "25 % at a time");
        assert_eq!(failure_words(Some(&Value::from(0)), 0), "no failure allowed");
        assert_eq!(failure_words(Some(&Value::from("5%")), 0), "5 % failures allowed");
        assert_eq!(failure_words(None, 2), "2 failures allowed");
    }

    #[test]
    fn values_are_described_without_list_positions() {
        let stage = serde_json::json!({"name": "canary", "memberSelector": {"byLabel": "ring=canary"},
            "maxConcurrency": 10, "maxAllowedFailures": 1, "afterStageWaitInSeconds": 1800});
        assert_eq!(value_words(&stage), "stage canary 10 at a time 1 failure allowed wait 30 min");
        let shares = serde_json::json!({"canary": 0.02, "early": 0.2, "broad": "rest"});
        assert_eq!(value_words(&shares), "canary 2 % early 20 % broad the rest");
        assert_eq!(value_words(&serde_json::json!({"canary": 2, "broad": 98})), "canary 2 broad 98");
        assert_eq!(value_words(&Value::from("25%")), "25%");
    }
}
