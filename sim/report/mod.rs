//! Report folders: CSV tables, API-shaped status JSON, the summary, charts and `index.html`.
//!
//! A folder is written whole or not at all: everything goes to a temporary sibling folder first, which
//! then replaces the target in one rename.

pub mod charts;
pub mod html;
pub mod profiles;
pub mod status;
pub mod summary;
pub mod tables;

use std::fs;
use std::path::{Path, PathBuf};

use crate::scenario::Scenario;
use crate::simulation::SimResult;

/// What every report writer reads.
pub struct ReportContext<'a> {
    pub scenario: &'a Scenario,
    pub result: &'a SimResult,
    /// The fleet name used in resource ids.
    pub fleet_name: String,
}

impl<'a> ReportContext<'a> {
    pub fn new(scenario: &'a Scenario, result: &'a SimResult) -> ReportContext<'a> {
        ReportContext { scenario, result, fleet_name: "fleet".to_string() }
    }
}

/// A file of the report: relative path and bytes.
pub type ReportFile = (PathBuf, Vec<u8>);

/// Renders every file of the report folder in memory.
pub fn render(ctx: &ReportContext) -> anyhow::Result<Vec<ReportFile>> {
    let mut files: Vec<ReportFile> = vec![
        ("members.csv".into(), tables::members_csv(ctx)?),
        ("timeline.csv".into(), tables::timeline_csv(ctx)?),
        ("summary.json".into(), to_json(&summary::summary(ctx))?),
    ];
    for (i, run) in ctx.result.runs.iter().enumerate() {
        files.push((Path::new("status").join(format!("{}.json", run.name)), to_json(&status::run_status(ctx, i))?));
    }
    files.push(("runs.csv".into(), profiles::runs_csv(ctx)?));
    files.push(("versions.csv".into(), profiles::versions_csv(ctx)?));
    let mut profile_charts = Vec::new();
    if !ctx.scenario.profiles.is_empty() {
        let fleet = profiles::fleet_days(ctx);
        files.push(("fleet-metrics.csv".into(), profiles::fleet_metrics_csv(ctx, &fleet)?));
        files.push(("kubernetes-versions.csv".into(), profiles::kubernetes_versions_csv(&fleet)?));
        files.push(("release-latency.csv".into(), profiles::release_latency_csv(ctx)?));
        profile_charts = charts::profiles::profile_charts(ctx, &fleet, &profiles::end_state(ctx))?;
    }
    let charts = charts::run::run_charts(ctx)?;
    for chart in charts.iter().chain(&profile_charts) {
        files.extend(chart.chart.files(&format!("charts/{}", chart.name)));
    }
    files.push(("index.html".into(), html::run_index(ctx, &charts, &profile_charts).into_bytes()));
    Ok(files)
}

pub fn to_json<T: serde::Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes files into `dir` whole or not at all: a temporary sibling folder is filled first and then
/// renamed over `dir` (an existing `dir` is replaced).
pub fn write_folder(dir: &Path, files: &[ReportFile]) -> anyhow::Result<()> {
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "report".to_string());
    let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    let written = (|| -> anyhow::Result<()> {
        fs::create_dir_all(&staging)?;
        for (path, bytes) in files {
            let target = staging.join(path);
            if let Some(p) = target.parent() {
                fs::create_dir_all(p)?;
            }
            fs::write(&target, bytes)?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if dir.exists() {
        fs::rename(dir, &old)?;
    }
    if let Err(e) = fs::rename(&staging, dir) {
        if old.exists() {
            let _ = fs::rename(&old, dir);
        }
        let _ = fs::remove_dir_all(&staging);
        return Err(e.into());
    }
    if old.exists() {
        fs::remove_dir_all(&old)?;
    }
    Ok(())
}
