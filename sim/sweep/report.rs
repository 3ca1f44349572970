//! Chart data of a finished sweep: the summary statistics arranged for the sweep charts of
//! `report::charts` (`sweep_line`, `sweep_heatmap`, `pareto_scatter`, `sweep_index_html`).
//!
//! This layer only prepares data; it draws nothing. The calls into the chart functions are left to
//! where both halves meet (see [`ChartData`] for the argument each variant maps to, and
//! [`index_table`] for the summary table of `sweep_index_html(title, &header, &rows, &charts)`).
//!
//! Which charts: for every run and headline metric, a line with 95 % confidence band when one
//! parameter varies, a heatmap of the means when two vary on a grid; and, whatever the parameters, a
//! scatter of the points' mean makespan against mean blast radius and against the probability of a
//! `Failed` run, the trade-off a strategy choice is about.

use std::path::Path;

use super::SweepError;
use super::finish::{SummaryRow, read_summary};
use super::folder::{Manifest, PointTable, RUN_FAILED};
use super::plan::MAX_PARAMETERS;
use super::stats::Summary;

/// Metrics that get their own chart, in this order.
pub const HEADLINE_METRICS: [&str; 5] =
    ["makespanHours", "hoursTo90PctDone", "blastRadius", "failedMembers", RUN_FAILED];

/// Data for one chart, shaped like the arguments of the chart function it is for.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartData {
    /// `sweep_line(title, x_label, y_label, &points)`: (x, mean, ci_low, ci_high), x ascending.
    Line { title: String, x_label: String, y_label: String, points: Vec<(f64, f64, f64, f64)> },
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
    Ok(chart_specs(&manifest, &points, &read_summary(dir, &points)?))
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
            if let Some(data) = line(points, rows, run, metric, &title) {
                specs.push(ChartSpec { file_stem: stem, data });
            } else if let Some(data) = heatmap(manifest, points, &means, &title) {
                specs.push(ChartSpec { file_stem: stem, data });
            }
        }
        for (y_metric, stem) in [("blastRadius", "pareto-blast-radius"), (RUN_FAILED, "pareto-run-failed")] {
            let xs = point_means(rows, points.rows.len(), run, "makespanHours");
            let ys = point_means(rows, points.rows.len(), run, y_metric);
            let scatter: Vec<(String, f64, f64)> =
                (0..points.rows.len()).filter_map(|p| Some((point_label(points, p), xs[p]?, ys[p]?))).collect();
            if scatter.is_empty() {
                continue;
            }
            specs.push(ChartSpec {
                file_stem: format!("sweep-{stem}{stem_run}"),
                data: ChartData::Pareto {
                    title: format!("{} against {}{suffix}", label(y_metric), label("makespanHours")),
                    x_label: label("makespanHours"),
                    y_label: label(y_metric),
                    points: scatter,
                },
            });
        }
    }
    specs
}

/// The summary table of the sweep's index page: one row per point (and run, when the scenario has
/// several) with the headline figures, as `(header, rows)`.
pub fn index_table(points: &PointTable, rows: &[SummaryRow]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut runs: Vec<&str> = Vec::new();
    for row in rows {
        if !runs.contains(&row.run.as_str()) {
            runs.push(&row.run);
        }
    }
    let several_runs = runs.len() > 1;
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    if several_runs {
        header.push("run".into());
    }
    header.extend(
        [
            "makespan h, mean [95 % CI]",
            "hours to 90 % done, mean (runs)",
            "P(run Failed) [95 % CI]",
            "blast radius, mean (p90)",
            "failed members, mean",
        ]
        .map(String::from),
    );
    let find = |p: usize, run: &str, metric: &str| {
        rows.iter().find(|r| r.point == p && r.run == run && r.metric == metric).and_then(|r| r.summary)
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
            let t90 = find(p, run, "hoursTo90PctDone");
            let replications = find(p, run, RUN_FAILED).map_or(0, |s| s.n);
            cells.push(with_ci(find(p, run, "makespanHours"), 1));
            cells.push(t90.map_or("–".into(), |s| format!("{:.1} ({}/{replications})", s.mean, s.n)));
            cells.push(with_ci(find(p, run, RUN_FAILED), 3));
            cells.push(find(p, run, "blastRadius").map_or("–".into(), |s| format!("{:.1} ({:.0})", s.mean, s.p90)));
            cells.push(find(p, run, "failedMembers").map_or("–".into(), |s| format!("{:.1}", s.mean)));
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

/// One numeric parameter: mean and confidence band against its value.
fn line(points: &PointTable, rows: &[SummaryRow], run: &str, metric: &str, title: &str) -> Option<ChartData> {
    if points.parameters.len() != 1 {
        return None;
    }
    let mut series: Vec<(f64, f64, f64, f64)> = Vec::new();
    for row in rows.iter().filter(|r| r.run == run && r.metric == metric) {
        let x: f64 = points.rows[row.point].1[0].parse().ok()?;
        if let Some(s) = row.summary {
            let (low, high) = s.ci95.unwrap_or((s.mean, s.mean));
            series.push((x, s.mean, low, high));
        }
    }
    series.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(ChartData::Line {
        title: title.to_string(),
        x_label: points.parameters[0].clone(),
        y_label: format!("{} (mean, 95 % CI)", label(metric)),
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
    let specs = chart_specs(&manifest, &points, &rows);
    let draw = |spec: &ChartSpec| -> anyhow::Result<charts::Chart> {
        match &spec.data {
            ChartData::Line { title, x_label, y_label, points } => charts::sweep_line(title, x_label, y_label, points),
            ChartData::Heatmap { title, x_label, y_label, xs, ys, values } => {
                charts::sweep_heatmap(title, x_label, y_label, xs, ys, values)
            }
            ChartData::Pareto { title, x_label, y_label, points } => {
                charts::pareto_scatter(title, x_label, y_label, points)
            }
        }
    };
    let mut drawn = Vec::new();
    fs_err::create_dir_all(dir.join("charts"))?;
    for spec in &specs {
        let chart =
            draw(spec).map_err(|e| SweepError::Conflict(format!("cannot draw chart {}: {e:#}", spec.file_stem)))?;
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
    let (header, table) = index_table(&points, &rows);
    let named: Vec<(&str, &charts::Chart)> = drawn.iter().map(|(t, c)| (t.as_str(), c)).collect();
    let page = html::sweep_index_html(&format!("Sweep {}", manifest.sweep), &header, &table, &named);
    fs_err::write(dir.join("index.html"), page)?;
    Ok(())
}
