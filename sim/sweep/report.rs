//! Chart data of a finished sweep: the summary statistics arranged for the sweep charts of
//! `report::charts` (`sweep_line`, `sweep_heatmap`, `pareto_scatter`, `sweep_index_html`).
//!
//! This layer only prepares data; it draws nothing. The calls into the chart functions are left to
//! where both halves meet (see [`ChartData`] for the argument each variant maps to, and
//! [`index_table`] for the summary table of `sweep_index_html(title, &header, &rows, &charts)`).
//!
//! Which charts: for every run and headline metric, a line with 95 % confidence band when one
//! parameter varies (text values, such as strategy names or whole strategies, are placed in order
//! and named), a heatmap of the means when two vary on a grid; the same for the paired difference
//! of each point from the reference point (`paired.csv`); and, whatever the parameters, a scatter
//! of the points' mean hours to 90 % upgraded against mean blast radius and against the
//! probability of a `Failed` run, the trade-off a strategy choice is about. Makespan is never an
//! axis: a run that fails early has a short one.

use std::path::Path;

use rayon::prelude::*;

use super::SweepError;
use super::finish::{PairedRow, SummaryRow, read_paired, read_summary};
use super::folder::{Manifest, PointTable, RUN_FAILED};
use super::plan::MAX_PARAMETERS;
use super::stats::Summary;

/// Metrics that get their own chart, in this order.
pub const HEADLINE_METRICS: [&str; 6] =
    ["hoursTo90PctUpgraded", "hoursTo100PctUpgraded", "blastRadius", "falseHalt", RUN_FAILED, "detectionHours"];

/// The speed axis of the Pareto scatters.
pub const SPEED_METRIC: &str = "hoursTo90PctUpgraded";

/// Data for one chart, shaped like the arguments of the chart function it is for.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartData {
    /// `sweep_line(title, x_label, y_label, &points)`: (x, mean, ci_low, ci_high), x ascending; with
    /// `categories`, `sweep_line_categories` (x is the index of the text value).
    Line {
        title: String,
        x_label: String,
        y_label: String,
        categories: Option<Vec<String>>,
        points: Vec<(f64, f64, f64, f64)>,
    },
    /// `sweep_heatmap(title, x_label, y_label, &xs, &ys, &values)`: `values[y][x]` is the mean at the
    /// x-th value of the first parameter and the y-th of the second; `None` where no replication had
    /// a value.
    Heatmap {
        title: String,
        x_label: String,
        y_label: String,
        xs: Vec<String>,
        ys: Vec<String>,
        values: Vec<Vec<Option<f64>>>,
    },
    /// `pareto_scatter(title, x_label, y_label, &points)`: (point label, x, y) per point.
    Pareto { title: String, x_label: String, y_label: String, points: Vec<(String, f64, f64)> },
}

/// A chart to draw: a file stem for its SVG/PNG (unique in the sweep) and its data.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSpec {
    pub file_stem: String,
    pub data: ChartData,
}

/// Reads a finished sweep folder and returns its charts' data.
pub fn charts_of_folder(dir: &Path) -> Result<Vec<ChartSpec>, SweepError> {
    let manifest = Manifest::read(dir)?;
    let points = PointTable::read(dir, &manifest)?;
    let mut specs = chart_specs(&manifest, &points, &read_summary(dir, &points)?);
    specs.extend(paired_chart_specs(&manifest, &points, &read_paired(dir, &points)?));
    Ok(specs)
}

/// The paired rows as summary rows (mean: the mean difference), for the same chart builders.
fn paired_as_summary(rows: &[PairedRow]) -> Vec<SummaryRow> {
    rows.iter()
        .map(|r| SummaryRow {
            point: r.point,
            run: r.run.clone(),
            metric: r.metric.clone(),
            reached: 1.0,
            summary: r.paired.map(|p| Summary {
                n: p.n,
                mean: p.mean_diff,
                sd: None,
                ci95: p.ci95,
                p50: p.mean_diff,
                p90: p.mean_diff,
                p95: p.mean_diff,
                p99: p.mean_diff,
                quantile_ci: [(p.mean_diff, p.mean_diff); 4],
            }),
        })
        .collect()
}

/// Charts of the paired differences from the reference point, one per run and headline metric.
pub fn paired_chart_specs(manifest: &Manifest, points: &PointTable, rows: &[PairedRow]) -> Vec<ChartSpec> {
    let Some(reference) = rows.first().map(|r| r.reference) else {
        return Vec::new();
    };
    let as_summary = paired_as_summary(rows);
    let runs = runs_of(&as_summary);
    let several_runs = runs.len() > 1;
    let mut specs = Vec::new();
    for run in runs {
        let suffix = if several_runs { format!(" — run {run}") } else { String::new() };
        let stem_run = if several_runs { format!("-{run}") } else { String::new() };
        for metric in HEADLINE_METRICS {
            let means = point_means(&as_summary, points.rows.len(), run, metric);
            if means.iter().all(Option::is_none) {
                continue;
            }
            let title = format!(
                "{} minus point {reference} ({}), paired, by {}{suffix}",
                label(metric),
                point_label(points, reference),
                parameter_names(points)
            );
            let stem = format!("paired-{metric}{stem_run}");
            let y = format!("difference in {} (mean, 95 % CI)", label(metric));
            if let Some(data) = line(points, &as_summary, run, metric, &title, &y) {
                specs.push(ChartSpec { file_stem: stem, data });
            } else if let Some(data) = heatmap(manifest, points, &means, &title) {
                specs.push(ChartSpec { file_stem: stem, data });
            }
        }
    }
    specs
}

fn runs_of(rows: &[SummaryRow]) -> Vec<&str> {
    let mut runs: Vec<&str> = Vec::new();
    for row in rows {
        if !runs.contains(&row.run.as_str()) {
            runs.push(&row.run);
        }
    }
    runs
}

/// The charts of a sweep from its summary rows.
pub fn chart_specs(manifest: &Manifest, points: &PointTable, rows: &[SummaryRow]) -> Vec<ChartSpec> {
    debug_assert!(points.parameters.len() <= MAX_PARAMETERS);
    let mut runs: Vec<&str> = Vec::new();
    for row in rows {
        if !runs.contains(&row.run.as_str()) {
            runs.push(&row.run);
        }
    }
    let several_runs = runs.len() > 1;
    let mut specs = Vec::new();
    for run in runs {
        let suffix = if several_runs { format!(" — run {run}") } else { String::new() };
        let stem_run = if several_runs { format!("-{run}") } else { String::new() };
        for metric in HEADLINE_METRICS {
            let means = point_means(rows, points.rows.len(), run, metric);
            if means.iter().all(Option::is_none) {
                continue;
            }
            let title = format!("{} by {}{suffix}", label(metric), parameter_names(points));
            let stem = format!("sweep-{metric}{stem_run}");
            let y = format!("{} (mean, 95 % CI)", label(metric));
            if let Some(data) = line(points, rows, run, metric, &title, &y) {
                specs.push(ChartSpec { file_stem: stem, data });
            } else if let Some(data) = heatmap(manifest, points, &means, &title) {
                specs.push(ChartSpec { file_stem: stem, data });
            }
        }
        for (y_metric, stem) in [("blastRadius", "pareto-blast-radius"), (RUN_FAILED, "pareto-run-failed")] {
            let xs = point_means(rows, points.rows.len(), run, SPEED_METRIC);
            let ys = point_means(rows, points.rows.len(), run, y_metric);
            let scatter: Vec<(String, f64, f64)> =
                (0..points.rows.len()).filter_map(|p| Some((point_label(points, p), xs[p]?, ys[p]?))).collect();
            if scatter.is_empty() {
                continue;
            }
            specs.push(ChartSpec {
                file_stem: format!("sweep-{stem}{stem_run}"),
                data: ChartData::Pareto {
                    title: format!("{} against {}{suffix}", label(y_metric), label(SPEED_METRIC)),
                    x_label: label(SPEED_METRIC),
                    y_label: label(y_metric),
                    points: scatter,
                },
            });
        }
    }
    specs
}

/// The summary table of the sweep's index page: one row per point (and run, when the scenario has
/// several) with the headline figures and their paired differences from the reference point, as
/// `(header, rows)`.
pub fn index_table(points: &PointTable, rows: &[SummaryRow], paired: &[PairedRow]) -> (Vec<String>, Vec<Vec<String>>) {
    let runs = runs_of(rows);
    let several_runs = runs.len() > 1;
    let reference = paired.first().map(|r| r.reference);
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    if several_runs {
        header.push("run".into());
    }
    header.extend(
        [
            "hours to 90 % upgraded, mean [95 % CI] (runs)",
            "hours to 100 % upgraded, p90 [95 % CI] (runs)",
            "P(run Failed) [95 % CI]",
            "P(false halt) [95 % CI]",
            "blast radius, mean (p95)",
            "detection h, mean",
        ]
        .map(String::from),
    );
    if let Some(reference) = reference {
        header.extend([
            format!("Δ hours to 90 % upgraded vs point {reference} [95 % CI], P(better)"),
            format!("Δ blast radius vs point {reference} [95 % CI], P(better)"),
        ]);
    }
    let find = |p: usize, run: &str, metric: &str| {
        rows.iter().find(|r| r.point == p && r.run == run && r.metric == metric).and_then(|r| r.summary)
    };
    let find_paired = |p: usize, run: &str, metric: &str| {
        paired.iter().find(|r| r.point == p && r.run == run && r.metric == metric).and_then(|r| r.paired)
    };
    let with_ci = |s: Option<Summary>, decimals: usize| match s {
        None => "–".to_string(),
        Some(s) => match s.ci95 {
            Some((l, h)) => format!("{:.d$} [{:.d$}, {:.d$}]", s.mean, l, h, d = decimals),
            None => format!("{:.d$}", s.mean, d = decimals),
        },
    };
    let mut table = Vec::new();
    for p in 0..points.rows.len() {
        for run in &runs {
            if !rows.iter().any(|r| r.point == p && r.run == *run) {
                continue;
            }
            let mut cells = vec![p.to_string()];
            cells.extend(points.rows[p].1.iter().cloned());
            if several_runs {
                cells.push(run.to_string());
            }
            let replications = find(p, run, RUN_FAILED).map_or(0, |s| s.n);
            let t90 = find(p, run, "hoursTo90PctUpgraded");
            cells.push(t90.map_or(format!("– (0/{replications})"), |s| {
                format!("{} ({}/{replications})", with_ci(Some(s), 1), s.n)
            }));
            let t100 = find(p, run, "hoursTo100PctUpgraded");
            cells.push(t100.map_or(format!("– (0/{replications})"), |s| {
                let (l, h) = s.quantile_ci[1];
                format!("{:.1} [{l:.1}, {h:.1}] ({}/{replications})", s.p90, s.n)
            }));
            cells.push(with_ci(find(p, run, RUN_FAILED), 3));
            cells.push(with_ci(find(p, run, "falseHalt"), 3));
            cells.push(find(p, run, "blastRadius").map_or("–".into(), |s| format!("{:.1} ({:.0})", s.mean, s.p95)));
            cells.push(find(p, run, "detectionHours").map_or("–".into(), |s| format!("{:.1}", s.mean)));
            if reference.is_some() {
                for metric in ["hoursTo90PctUpgraded", "blastRadius"] {
                    cells.push(find_paired(p, run, metric).map_or("–".into(), |d| {
                        let ci = d.ci95.map_or(String::new(), |(l, h)| format!(" [{l:+.1}, {h:+.1}]"));
                        let better = d.p_better.map_or(String::new(), |b| format!(", {b:.2}"));
                        format!("{:+.1}{ci}{better}", d.mean_diff)
                    }));
                }
            }
            table.push(cells);
        }
    }
    (header, table)
}

/// Mean of `metric` for `run` at every point (`None` where it had no value).
fn point_means(rows: &[SummaryRow], points: usize, run: &str, metric: &str) -> Vec<Option<f64>> {
    let mut means = vec![None; points];
    for row in rows.iter().filter(|r| r.run == run && r.metric == metric) {
        means[row.point] = row.summary.map(|s| s.mean);
    }
    means
}

/// One parameter: mean and confidence band against its value; text values (strategy names, whole
/// strategies) are placed in point order and named.
fn line(
    points: &PointTable,
    rows: &[SummaryRow],
    run: &str,
    metric: &str,
    title: &str,
    y_label: &str,
) -> Option<ChartData> {
    if points.parameters.len() != 1 {
        return None;
    }
    let numeric = points.rows.iter().all(|(_, v)| v[0].parse::<f64>().is_ok_and(f64::is_finite));
    let mut categories: Vec<String> = Vec::new();
    if !numeric {
        for (_, values) in &points.rows {
            if !categories.contains(&values[0]) {
                categories.push(values[0].clone());
            }
        }
    }
    let mut series: Vec<(f64, f64, f64, f64)> = Vec::new();
    for row in rows.iter().filter(|r| r.run == run && r.metric == metric) {
        let value = &points.rows[row.point].1[0];
        let x = match numeric {
            true => value.parse().ok()?,
            false => categories.iter().position(|c| c == value)? as f64,
        };
        if let Some(s) = row.summary {
            let (low, high) = s.ci95.unwrap_or((s.mean, s.mean));
            series.push((x, s.mean, low, high));
        }
    }
    series.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(ChartData::Line {
        title: title.to_string(),
        x_label: points.parameters[0].clone(),
        y_label: y_label.to_string(),
        categories: (!numeric).then_some(categories),
        points: series,
    })
}

/// Two parameters on a full grid: mean per cell.
fn heatmap(manifest: &Manifest, points: &PointTable, means: &[Option<f64>], title: &str) -> Option<ChartData> {
    if points.parameters.len() != 2 || manifest.combine != "cartesian" {
        return None;
    }
    let mut xs: Vec<String> = Vec::new();
    let mut ys: Vec<String> = Vec::new();
    for (_, values) in &points.rows {
        if !xs.contains(&values[0]) {
            xs.push(values[0].clone());
        }
        if !ys.contains(&values[1]) {
            ys.push(values[1].clone());
        }
    }
    let mut grid = vec![vec![None; xs.len()]; ys.len()];
    for (p, (_, values)) in points.rows.iter().enumerate() {
        let x = xs.iter().position(|v| *v == values[0])?;
        let y = ys.iter().position(|v| *v == values[1])?;
        grid[y][x] = means[p];
    }
    Some(ChartData::Heatmap {
        title: title.to_string(),
        x_label: points.parameters[0].clone(),
        y_label: points.parameters[1].clone(),
        xs,
        ys,
        values: grid,
    })
}

fn parameter_names(points: &PointTable) -> String {
    points.parameters.join(" × ")
}

/// `stageConcurrency=10, maxFailures=2`.
pub fn point_label(points: &PointTable, p: usize) -> String {
    points.parameters.iter().zip(&points.rows[p].1).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", ")
}

/// Axis labels for metrics.
pub fn label(metric: &str) -> String {
    match metric {
        "makespanHours" => "makespan (hours)".into(),
        "hoursTo50PctDone" => "hours to 50 % done".into(),
        "hoursTo90PctDone" => "hours to 90 % done".into(),
        "hoursTo100PctDone" => "hours to 100 % done".into(),
        "hoursTo50PctUpgraded" => "hours to 50 % upgraded".into(),
        "hoursTo90PctUpgraded" => "hours to 90 % upgraded".into(),
        "hoursTo100PctUpgraded" => "hours to 100 % upgraded".into(),
        "falseHalt" => "probability of a false halt".into(),
        "blastRadiusFraction" => "blast radius (share of at-risk members)".into(),
        "detectionHours" => "hours from first bad failure to halt".into(),
        "failedMembers" => "failed members".into(),
        "blastRadius" => "blast radius (members)".into(),
        "pendingWindowHours" => "member-hours pending for windows".into(),
        "pendingAvailabilityHours" => "member-hours pending for availability".into(),
        "pendingGateHours" => "gate-hours pending".into(),
        "peakConcurrency" => "peak concurrency".into(),
        RUN_FAILED => "probability the run failed".into(),
        other => other.into(),
    }
}

/// Draws the charts of a finished sweep folder into `charts/` and writes its `index.html`
/// (self-contained: the summary table and the charts inline).
pub fn write_charts(dir: &Path) -> Result<(), SweepError> {
    use crate::report::{charts, html};
    let manifest = Manifest::read(dir)?;
    let points = PointTable::read(dir, &manifest)?;
    let rows = read_summary(dir, &points)?;
    let paired = read_paired(dir, &points)?;
    let mut specs = chart_specs(&manifest, &points, &rows);
    specs.extend(paired_chart_specs(&manifest, &points, &paired));
    let draw = |spec: &ChartSpec| -> anyhow::Result<charts::Chart> {
        match &spec.data {
            ChartData::Line { title, x_label, y_label, categories: None, points } => {
                charts::sweep_line(title, x_label, y_label, points)
            }
            ChartData::Line { title, x_label, y_label, categories: Some(categories), points } => {
                charts::sweep_line_categories(title, x_label, y_label, categories, points)
            }
            ChartData::Heatmap { title, x_label, y_label, xs, ys, values } => {
                charts::sweep_heatmap(title, x_label, y_label, xs, ys, values)
            }
            ChartData::Pareto { title, x_label, y_label, points } => {
                charts::pareto_scatter(title, x_label, y_label, points)
            }
        }
    };
    // Drawn at once on the pool's threads (a chart is mostly its PNG's encoding, one thread's work),
    // then written in order.
    let charts: Vec<anyhow::Result<charts::Chart>> = specs.par_iter().map(draw).collect();
    let mut drawn = Vec::new();
    fs_err::create_dir_all(dir.join("charts"))?;
    for (spec, chart) in specs.iter().zip(charts) {
        let chart = chart.map_err(|e| SweepError::Conflict(format!("cannot draw chart {}: {e:#}", spec.file_stem)))?;
        for (path, bytes) in chart.files(&spec.file_stem) {
            fs_err::write(dir.join("charts").join(path), bytes)?;
        }
        let title = match &spec.data {
            ChartData::Line { title, .. } | ChartData::Heatmap { title, .. } | ChartData::Pareto { title, .. } => {
                title.clone()
            }
        };
        drawn.push((title, chart));
    }
    let (header, table) = index_table(&points, &rows, &paired);
    let named: Vec<(&str, &charts::Chart)> = drawn.iter().map(|(t, c)| (t.as_str(), c)).collect();
    let page = html::sweep_page(
        &format!("Sweep {}", manifest.sweep),
        &what_was_swept(&manifest, &points),
        &header,
        &table,
        &named,
    );
    fs_err::write(dir.join("index.html"), page)?;
    Ok(())
}

/// What the page is about, from the folder's manifest: the description, the base scenario, the
/// parameters and how they were combined, replications, seed, reference point and metrics.
fn what_was_swept(manifest: &Manifest, points: &PointTable) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(description) = &manifest.description {
        out.push(description.clone());
    }
    let parameters: Vec<String> = manifest.parameters.iter().map(|p| format!("{} ({})", p.name, p.pointer)).collect();
    let combine = match &manifest.sample {
        Some(s) => format!("{} points sampled by {} (seed {})", s.points, s.method, s.seed),
        None => format!("{} points, {}", manifest.points, manifest.combine),
    };
    out.push(format!(
        "Base scenario \"{}\", parameters {}: {combine}; {} replications per point ({} in all), root seed {}; replication r of every point shares its random streams.",
        manifest.scenario,
        parameters.join(", "),
        manifest.replications,
        manifest.jobs,
        manifest.root_seed
    ));
    if let Some((seed, values)) = points.rows.get(manifest.reference as usize) {
        out.push(format!(
            "Differences (Δ) are paired against point {} ({}, seed {seed}); metrics: {}.",
            manifest.reference,
            points.parameters.iter().zip(values).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", "),
            manifest.metrics.join(", ")
        ));
    }
    out
}
