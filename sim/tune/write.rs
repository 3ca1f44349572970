//! The files of a tune folder, rendered in memory and written whole ([`crate::report::write_folder`]):
//! `recommendation.json`, `recommended/<world>.json`, `baseline/<world>.json`, `candidates.csv`,
//! `pareto.csv` and `index.html`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::report::ReportFile;
use crate::sweep::plan::value_text;
use crate::sweep::stats::summarize;

use super::plan::{Candidate, Criterion, MEASURES, Missing, Statistic, TunePlan, missing_of};
use super::search::{Estimate, Evaluation, SearchResult, Status, feasible, violation};

/// Candidates shown as the closest ones when none meets the constraints.
const CLOSEST: usize = 5;
/// Statistics of every measure in `recommendation.json`.
const REPORTED: [Statistic; 3] = [Statistic::Mean, Statistic::Percentile(90), Statistic::Percentile(95)];

/// Every file of the tune folder.
pub fn render(plan: &TunePlan, result: &SearchResult) -> anyhow::Result<Vec<ReportFile>> {
    let mut files: Vec<ReportFile> = Vec::new();
    let recommendation = recommendation(plan, result);
    files.push(("recommendation.json".into(), pretty(&recommendation)?));
    for (w, world) in plan.worlds.iter().enumerate() {
        if let Some(c) = result.recommended {
            files.push((
                Path::new("recommended").join(format!("{}.json", world.name)),
                pretty(&plan.scenario_value(&result.candidates[c], w))?,
            ));
        }
        files.push((
            Path::new("baseline").join(format!("{}.json", world.name)),
            pretty(&plan.scenario_value(&Candidate::BASELINE, w))?,
        ));
    }
    files.push(("candidates.csv".into(), candidates_csv(plan, result, |_| true)?));
    files.push((
        "pareto.csv".into(),
        candidates_csv(plan, result, |s| matches!(s, Status::Recommended | Status::Pareto))?,
    ));
    files.push((PathBuf::from("index.html"), index_html(plan, result, &recommendation).into_bytes()));
    Ok(files)
}

fn pretty(value: &Value) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A number with four decimals; `null` when infinite (never reached).
fn number(x: f64) -> Value {
    if x.is_finite() { json!((x * 10_000.0).round() / 10_000.0) } else { Value::Null }
}

/// A number as text with four decimals at most; `never` when infinite.
fn text(x: f64) -> String {
    if x.is_finite() {
        let rounded = (x * 10_000.0).round() / 10_000.0;
        format!("{rounded}")
    } else {
        "never".into()
    }
}

fn estimate_json(e: Option<Estimate>) -> Value {
    match e {
        Some(e) => {
            json!({"value": number(e.value), "ci95": [number(e.low), number(e.high)], "n": e.n, "reached": number(e.reached)})
        }
        None => Value::Null,
    }
}

/// The tuned run's strategy as the API shows an `UpdateRunStrategy`: limits as strings.
pub fn api_strategy(strategy: &Value) -> Value {
    let mut strategy = strategy.clone();
    let stringify = |object: &mut Map<String, Value>| {
        for key in ["maxConcurrency", "maxAllowedFailures"] {
            if let Some(v @ Value::Number(_)) = object.get_mut(key) {
                *v = Value::String(v.to_string());
            }
        }
    };
    if let Some(stages) = strategy.get_mut("stages").and_then(Value::as_array_mut) {
        for stage in stages.iter_mut().filter_map(Value::as_object_mut) {
            stringify(stage);
            if let Some(groups) = stage.get_mut("groups").and_then(Value::as_array_mut) {
                for group in groups.iter_mut().filter_map(Value::as_object_mut) {
                    stringify(group);
                }
            }
        }
    }
    strategy
}

/// The figures of one candidate in every world.
fn worlds_json(plan: &TunePlan, e: &Evaluation) -> Value {
    let mut worlds = Map::new();
    for (w, world) in plan.worlds.iter().enumerate() {
        let mut measures = Map::new();
        for (m, name) in MEASURES.iter().enumerate() {
            let mut stats = Map::new();
            for s in REPORTED {
                stats.insert(s.name(), estimate_json(e.estimate(&Criterion { measure: m, statistic: s, world: w })));
            }
            measures.insert(name.to_string(), Value::Object(stats));
        }
        worlds.insert(world.name.clone(), Value::Object(measures));
    }
    Value::Object(worlds)
}

/// The paired difference (candidate − baseline) of one measure in one world, over the replications
/// in which both have a finite value: mean with Student's t interval, and the share in which the
/// candidate is strictly lower.
pub fn paired(plan: &TunePlan, a: &Evaluation, b: &Evaluation, w: usize, m: usize) -> Value {
    let _ = plan;
    let value = |x: Option<f64>| match (x, missing_of(m)) {
        (Some(x), _) => Some(x),
        (None, Missing::Zero) => Some(0.0),
        _ => None,
    };
    let diffs: Vec<f64> =
        a.samples[w][m].iter().zip(&b.samples[w][m]).filter_map(|(x, y)| Some(value(*x)? - value(*y)?)).collect();
    match summarize(&diffs) {
        None => json!({"n": 0}),
        Some(s) => {
            let (low, high) = s.ci95.unwrap_or((s.mean, s.mean));
            let better = diffs.iter().filter(|d| **d < 0.0).count() as f64 / diffs.len() as f64;
            json!({"n": s.n, "meanDiff": number(s.mean), "ci95": [number(low), number(high)], "pBetter": number(better)})
        }
    }
}

fn criterion_json(plan: &TunePlan, c: &Criterion) -> Value {
    json!({"metric": MEASURES[c.measure], "statistic": c.statistic.name(), "world": plan.worlds[c.world].name})
}

fn constraints_json(plan: &TunePlan, e: &Evaluation) -> Vec<Value> {
    plan.constraints
        .iter()
        .map(|k| {
            let x = e.estimate(&k.criterion);
            let mut v = criterion_json(plan, &k.criterion);
            v["max"] = json!(k.max);
            v["estimate"] = estimate_json(x);
            v["holds"] = json!(x.is_some_and(|x| x.value <= k.max));
            v
        })
        .collect()
}

fn candidate_json(plan: &TunePlan, result: &SearchResult, c: usize) -> Value {
    let e = &result.evaluations[c];
    let candidate = &result.candidates[c];
    let values: Map<String, Value> =
        plan.parameters.iter().zip(plan.values(candidate)).map(|(p, v)| (p.name.clone(), v)).collect();
    json!({
        "candidate": c,
        "key": candidate.key(),
        "description": plan.describe(candidate),
        "values": values,
        "status": result.status[c].name(),
        "replications": e.replications(),
        "objective": estimate_json(e.estimate(&plan.objective)),
        "constraints": constraints_json(plan, e),
        "violation": number(violation(plan, e)),
    })
}

/// The closest candidates to meeting the constraints (least violation, then best objective).
fn closest(plan: &TunePlan, result: &SearchResult) -> Vec<usize> {
    let mut order: Vec<usize> = (0..result.candidates.len()).collect();
    let key = |c: usize| {
        let e = &result.evaluations[c];
        (violation(plan, e), e.estimate(&plan.objective).map_or(f64::INFINITY, |x| x.value))
    };
    order.sort_by(|a, b| {
        let (ka, kb) = (key(*a), key(*b));
        ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(a.cmp(b))
    });
    order.truncate(CLOSEST);
    order
}

fn recommendation(plan: &TunePlan, result: &SearchResult) -> Value {
    let base = &result.evaluations[0];
    let seed = plan.seed_override.map(|s| format!(" --seed {s}")).unwrap_or_default();
    let mut out = json!({
        "tune": plan.name,
        "scenario": plan.scenario_name,
        "run": plan.run,
        "objective": {"minimize": criterion_json(plan, &plan.objective)},
        "summary": summary_words(plan, result),
    });
    match result.recommended {
        Some(c) => {
            let e = &result.evaluations[c];
            let mut paired_worlds = Map::new();
            for (w, world) in plan.worlds.iter().enumerate() {
                let measures: Map<String, Value> = MEASURES
                    .iter()
                    .enumerate()
                    .map(|(m, name)| (name.to_string(), paired(plan, e, base, w, m)))
                    .collect();
                paired_worlds.insert(world.name.clone(), Value::Object(measures));
            }
            let candidate = &result.candidates[c];
            out["recommended"] = json!({
                "candidate": c,
                "key": candidate.key(),
                "description": plan.describe(candidate),
                "inWords": super::words::strategy_words(plan, candidate),
                "values": plan.parameters.iter().zip(plan.values(candidate)).map(|(p, v)| (p.name.clone(), v)).collect::<Map<_, _>>(),
                "strategy": api_strategy(&plan.strategy(candidate)),
                "replications": e.replications(),
                "objective": estimate_json(e.estimate(&plan.objective)),
                "constraints": constraints_json(plan, e),
                "worlds": worlds_json(plan, e),
                "pairedVsBaseline": Value::Object(paired_worlds),
                "reproduce": format!("fleetsim run recommended/<world>.json{seed} --replication <r>, r from 0 to {}", e.replications() - 1),
            });
        }
        None => {
            out["recommended"] = Value::Null;
            out["closest"] =
                Value::Array(closest(plan, result).into_iter().map(|c| candidate_json(plan, result, c)).collect());
        }
    }
    out["baseline"] = json!({
        "inWords": super::words::strategy_words(plan, &Candidate::BASELINE),
        "strategy": api_strategy(&plan.strategy(&Candidate::BASELINE)),
        "replications": base.replications(),
        "objective": estimate_json(base.estimate(&plan.objective)),
        "constraints": constraints_json(plan, base),
        "worlds": worlds_json(plan, base),
    });
    out["search"] = json!({
        "candidates": result.candidates.len(),
        "combinations": plan.combinations,
        "sampled": plan.sampled,
        "worlds": plan.worlds.iter().map(|w| w.name.clone()).collect::<Vec<_>>(),
        "simulations": result.spent,
        "budget": plan.budget.total,
        "rounds": result.rounds.iter().map(|r| json!({
            "replications": r.replications,
            "racing": r.racing,
            "alive": r.alive,
            "simulations": r.spent,
            "roundSimulations": r.simulations,
            "added": r.added,
            "best": r.best.map(|(c, v)| json!({"candidate": c, "objective": number(v)})),
        })).collect::<Vec<_>>(),
    });
    out
}

fn criterion_words(plan: &TunePlan, c: &Criterion) -> String {
    format!("{} {} in {}", c.statistic.name(), MEASURES[c.measure], plan.worlds[c.world].name)
}

/// The recommendation in words: the strategy stage by stage, then what it achieves against the
/// base strategy ("the whole fleet in 40 h (p90 in good) instead of 89 h; …").
pub fn summary_words(plan: &TunePlan, result: &SearchResult) -> String {
    let base = &result.evaluations[0];
    let value = |e: &Evaluation, c: &Criterion| e.estimate(c).map(|x| x.value);
    match result.recommended {
        None => {
            let names: Vec<String> = closest(plan, result)
                .iter()
                .take(3)
                .map(|c| format!("{} ({})", c, plan.describe(&result.candidates[*c])))
                .collect();
            format!(
                "No candidate meets the constraints: of {} candidates, none has every constraint within its limit after {} simulations. The closest: {}.",
                result.candidates.len(),
                result.spent,
                names.join("; ")
            )
        }
        Some(c) => {
            let e = &result.evaluations[c];
            let strategy = super::words::strategy_words(plan, &result.candidates[c]);
            let mut s = if c == 0 {
                format!("Keep the base strategy, {strategy}: no candidate beats it within the constraints; ")
            } else {
                format!("Use {strategy}: ")
            };
            let base_of = |k: &Criterion| if c == 0 { None } else { value(base, k) };
            let mut objective = super::words::criterion_words(
                plan,
                &plan.objective,
                value(e, &plan.objective),
                None,
                base_of(&plan.objective),
            );
            if c != 0 {
                objective.push_str(" with the base strategy");
            }
            let mut parts = vec![objective];
            for k in &plan.constraints {
                parts.push(super::words::criterion_words(
                    plan,
                    &k.criterion,
                    value(e, &k.criterion),
                    Some(k.max),
                    base_of(&k.criterion),
                ));
            }
            s.push_str(&parts.join("; "));
            s.push('.');
            s
        }
    }
}

fn csv_cell(x: Option<f64>) -> String {
    x.map(text).unwrap_or_default()
}

fn candidates_csv(plan: &TunePlan, result: &SearchResult, keep: impl Fn(Status) -> bool) -> anyhow::Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let criteria: Vec<&Criterion> =
        std::iter::once(&plan.objective).chain(plan.constraints.iter().map(|k| &k.criterion)).collect();
    let mut header: Vec<String> = vec!["candidate".into()];
    header.extend(plan.parameters.iter().map(|p| p.name.clone()));
    header.extend(["status", "replications", "leftInRound", "feasible"].map(String::from));
    for c in &criteria {
        let name = plan.criterion_name(c);
        header.extend([name.clone(), format!("{name}.low"), format!("{name}.high")]);
    }
    for w in &plan.worlds {
        header.push(format!("{}.runFailed.mean", w.name));
    }
    writer.write_record(&header)?;
    for c in 0..result.candidates.len() {
        if !keep(result.status[c]) {
            continue;
        }
        let e = &result.evaluations[c];
        let mut row: Vec<String> = vec![c.to_string()];
        row.extend(plan.values(&result.candidates[c]).iter().map(value_text));
        row.push(result.status[c].name().into());
        row.push(e.replications().to_string());
        row.push(result.left_in_round[c].map(|r| r.to_string()).unwrap_or_default());
        row.push(feasible(plan, e).to_string());
        for k in &criteria {
            let x = e.estimate(k);
            row.extend([csv_cell(x.map(|x| x.value)), csv_cell(x.map(|x| x.low)), csv_cell(x.map(|x| x.high))]);
        }
        for w in 0..plan.worlds.len() {
            let x = e.estimate(&Criterion { measure: 7, statistic: Statistic::Mean, world: w });
            row.push(csv_cell(x.map(|x| x.value)));
        }
        writer.write_record(&row)?;
    }
    Ok(writer.into_inner()?)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Speed (the objective) against the first constraint: every candidate evaluated to the end as a
/// dot, the front in blue, the baseline as a square and the recommendation as a ring. Named in the
/// legend, never beside the dots, so labels cannot overlap.
fn scatter_svg(plan: &TunePlan, result: &SearchResult) -> String {
    let Some(k) = plan.constraints.first() else { return String::new() };
    let points: Vec<(usize, f64, f64)> = (0..result.candidates.len())
        .filter_map(|c| {
            let e = &result.evaluations[c];
            let x = e.estimate(&plan.objective)?.value;
            let y = e.estimate(&k.criterion)?.value;
            (x.is_finite() && y.is_finite()).then_some((c, x, y))
        })
        .collect();
    if points.is_empty() {
        return "<p>No candidate has a finite objective and constraint to chart.</p>".into();
    }
    let (w, h, m) = (640.0, 400.0, 56.0);
    let (xmin, xmax) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (ymin, ymax) = points.iter().fold((k.max.min(f64::INFINITY), k.max), |(a, b), p| (a.min(p.2), b.max(p.2)));
    let span = |a: f64, b: f64| if b > a { b - a } else { 1.0 };
    let sx = |x: f64| m + (x - xmin) / span(xmin, xmax) * (w - 2.0 * m);
    let sy = |y: f64| h - m - (y - ymin) / span(ymin, ymax) * (h - 2.0 * m);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{}" viewBox="0 0 {w} {}" font-family="sans-serif" font-size="12">"#,
        h + 40.0,
        h + 40.0
    );
    let _ = write!(
        s,
        r##"<rect x="{m}" y="{m}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        w - 2.0 * m,
        h - 2.0 * m
    );
    let _ = write!(
        s,
        r##"<line x1="{m}" x2="{}" y1="{y}" y2="{y}" stroke="#c33" stroke-dasharray="4 3"/>"##,
        w - m,
        y = sy(k.max)
    );
    let _ = write!(
        s,
        r#"<text x="{m}" y="{}">{}</text>"#,
        h - m + 18.0,
        escape(&format!("{} … {}", text(xmin), text(xmax)))
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        w / 2.0,
        h - m + 34.0,
        escape(&criterion_words(plan, &plan.objective))
    );
    let _ = write!(
        s,
        r#"<text x="{m}" y="{}">{}</text>"#,
        m - 8.0,
        escape(&format!("{} ({} … {}), limit dashed", criterion_words(plan, &k.criterion), text(ymin), text(ymax)))
    );
    for &(c, x, y) in &points {
        let (px, py) = (sx(x), sy(y));
        match result.status[c] {
            _ if c == 0 => {
                let _ = write!(s, r##"<rect x="{}" y="{}" width="10" height="10" fill="#333"/>"##, px - 5.0, py - 5.0);
            }
            Status::Recommended => {
                let _ =
                    write!(s, r##"<circle cx="{px}" cy="{py}" r="8" fill="none" stroke="#080" stroke-width="3"/>"##);
            }
            Status::Pareto => {
                let _ = write!(s, r##"<circle cx="{px}" cy="{py}" r="4" fill="#36c"/>"##);
            }
            _ => {
                let _ = write!(s, r##"<circle cx="{px}" cy="{py}" r="3" fill="#bbb"/>"##);
            }
        }
    }
    let legend = [
        ("#333", "base strategy (square)"),
        ("#080", "recommended (ring)"),
        ("#36c", "Pareto front"),
        ("#bbb", "other candidates"),
    ];
    // Each entry after the one before it, by the width of its words (about 7 px a character).
    let mut x = m;
    for (colour, label) in legend {
        let _ = write!(
            s,
            r#"<circle cx="{x}" cy="{}" r="4" fill="{colour}"/><text x="{}" y="{}">{label}</text>"#,
            h + 30.0,
            x + 8.0,
            h + 34.0
        );
        x += 24.0 + label.chars().count() as f64 * 7.0;
    }
    s.push_str("</svg>");
    s
}

fn index_html(plan: &TunePlan, result: &SearchResult, recommendation: &Value) -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    s.push_str(&escape(&plan.name));
    s.push_str("</title><style>body{font-family:sans-serif;max-width:960px;margin:2em auto;line-height:1.4}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:nth-child(2){text-align:left}th{background:#f4f4f4}.words{font-size:1.15em}</style></head><body>\n");
    let _ = writeln!(s, "<h1>{}</h1>", escape(&plan.name));
    let _ = writeln!(
        s,
        "<p class=\"words\" id=\"recommendation\">{}</p>",
        escape(recommendation["summary"].as_str().unwrap_or_default())
    );
    let _ = writeln!(
        s,
        "<p id=\"baseline\">The base strategy: {}.</p>",
        escape(&super::words::strategy_words(plan, &Candidate::BASELINE))
    );
    if let Some(c) = result.recommended {
        let strategy = serde_json::to_string_pretty(&recommendation["recommended"]["strategy"]).unwrap_or_default();
        let _ = writeln!(
            s,
            "<h2>The recommended strategy</h2><p>Candidate {c}: {}.</p><pre>{}</pre>",
            escape(&plan.describe(&result.candidates[c])),
            escape(&strategy)
        );
        let _ = writeln!(
            s,
            "<p>Check it: <code>fleetsim run recommended/{}.json --replication 0</code> and the same with <code>baseline/</code>.</p>",
            escape(&plan.worlds[0].name)
        );
    } else {
        let _ = writeln!(s, "<h2>The closest candidates</h2>");
        s.push_str(&candidate_table(plan, result, &closest(plan, result)));
    }
    let _ = writeln!(s, "<h2>Speed against risk</h2>{}", scatter_svg(plan, result));
    let front: Vec<usize> = (0..result.candidates.len())
        .filter(|c| matches!(result.status[*c], Status::Recommended | Status::Pareto) || *c == 0)
        .collect();
    let _ = writeln!(s, "<h2>The front and the base strategy</h2>");
    s.push_str(&candidate_table(plan, result, &front));
    let _ = writeln!(
        s,
        "<h2>How the search converged</h2><table><tr><th>round</th><th>replications each</th><th>racing</th><th>still in the race</th><th>simulations so far</th><th>best so far</th></tr>"
    );
    for (i, r) in result.rounds.iter().enumerate() {
        let best = r.best.map_or("none feasible".to_string(), |(c, v)| format!("{c}: {}", text(v)));
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            r.replications,
            r.racing,
            r.alive,
            r.spent,
            escape(&best)
        );
    }
    let _ = writeln!(
        s,
        "</table><p>{} candidates, {} worlds ({}), {} of {} simulations spent. Every candidate: <a href=\"candidates.csv\">candidates.csv</a>; the front: <a href=\"pareto.csv\">pareto.csv</a>; figures with intervals and paired differences: <a href=\"recommendation.json\">recommendation.json</a>.</p>",
        result.candidates.len(),
        plan.worlds.len(),
        escape(&plan.worlds.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ")),
        result.spent,
        plan.budget.total
    );
    s.push_str("</body></html>\n");
    s
}

fn candidate_table(plan: &TunePlan, result: &SearchResult, which: &[usize]) -> String {
    let criteria: Vec<&Criterion> =
        std::iter::once(&plan.objective).chain(plan.constraints.iter().map(|k| &k.criterion)).collect();
    let mut s = String::from("<table><tr><th>candidate</th><th>values</th><th>status</th><th>replications</th>");
    for c in &criteria {
        let _ = write!(s, "<th>{} [95 % CI]</th>", escape(&criterion_words(plan, c)));
    }
    s.push_str("</tr>\n");
    for &c in which {
        let e = &result.evaluations[c];
        let _ = write!(
            s,
            "<tr><td>{c}</td><td>{}</td><td>{}</td><td>{}</td>",
            escape(&plan.describe(&result.candidates[c])),
            result.status[c].name(),
            e.replications()
        );
        for k in &criteria {
            let cell = e
                .estimate(k)
                .map_or("–".to_string(), |x| format!("{} [{}, {}]", text(x.value), text(x.low), text(x.high)));
            let _ = write!(s, "<td>{}</td>", escape(&cell));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}
