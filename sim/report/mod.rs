//! Report folders: CSV tables, API-shaped status JSON, the summary, charts and `index.html`.
//!
//! A folder is written whole or not at all: everything goes to a staging folder beside it first,
//! which then replaces the target in one rename ([`crate::output`]); only an empty folder or one with
//! the report [`MARKER`] is replaced, unless the caller says otherwise.

pub mod charts;
pub mod critical;
pub mod html;
pub mod outcome;
pub mod profiles;
pub mod status;
pub mod summary;
pub mod tables;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::output::{self, Existing, OutputError, Staging};

use crate::scenario::{Problem, Scenario};
use crate::simulation::SimResult;

/// What every report writer reads.
pub struct ReportContext<'a> {
    pub scenario: &'a Scenario,
    pub result: &'a SimResult,
    /// The fleet name used in resource ids.
    pub fleet_name: String,
    /// Warnings about the scenario and its simulation (`summary.json` `warnings`, top of `index.html`).
    pub warnings: Vec<Problem>,
    /// Made once for `members.csv` and `index.html` (see [`member_rows`](Self::member_rows)).
    member_rows: OnceLock<Vec<tables::MemberRow>>,
    /// Made once for `summary.json` and `index.html`, after `warnings` are final.
    summary: OnceLock<summary::Summary>,
}

impl<'a> ReportContext<'a> {
    pub fn new(scenario: &'a Scenario, result: &'a SimResult) -> ReportContext<'a> {
        ReportContext {
            scenario,
            result,
            fleet_name: "fleet".to_string(),
            warnings: Vec::new(),
            member_rows: OnceLock::new(),
            summary: OnceLock::new(),
        }
    }

    /// The rows of `members.csv`, made on first use and shared by the files that show them.
    pub fn member_rows(&self) -> &[tables::MemberRow] {
        self.member_rows.get_or_init(|| tables::member_rows(self))
    }

    /// The summary of `summary.json`, made on first use (so after `warnings` are set) and shared.
    pub fn summary(&self) -> &summary::Summary {
        self.summary.get_or_init(|| summary::summary(self))
    }
}

/// A file of the report: relative path and bytes.
pub type ReportFile = (PathBuf, Vec<u8>);

/// Renders every file of the report folder in memory.
pub fn render(ctx: &ReportContext) -> anyhow::Result<Vec<ReportFile>> {
    // The tables and the charts read the same result and nothing else: built on two threads (the
    // charts split further), assembled in one fixed order, so the files do not depend on the threads.
    let fleet = (!ctx.scenario.profiles.is_empty()).then(|| profiles::fleet_days(ctx));
    let (tables, charts) = rayon::join(|| data_files(ctx, fleet.as_ref()), || all_charts(ctx, fleet.as_ref()));
    let mut files = tables?;
    let (charts, profile_charts) = charts?;
    for chart in charts.iter().chain(&profile_charts) {
        files.extend(chart.chart.files(&format!("charts/{}", chart.name)));
    }
    files.push(("index.html".into(), html::run_index(ctx, &charts, &profile_charts).into_bytes()));
    Ok(files)
}

/// The CSV and JSON files of a report folder, in their order.
fn data_files(ctx: &ReportContext, fleet: Option<&profiles::FleetDays>) -> anyhow::Result<Vec<ReportFile>> {
    let mut files: Vec<ReportFile> = vec![
        ("members.csv".into(), tables::members_csv(ctx)?),
        ("timeline.csv".into(), tables::timeline_csv(ctx)?),
        ("summary.json".into(), to_json(ctx.summary())?),
    ];
    for (i, run) in ctx.result.runs.iter().enumerate() {
        files.push((Path::new("status").join(format!("{}.json", run.name)), to_json(&status::run_resource(ctx, i))?));
    }
    files.push(("runs.csv".into(), profiles::runs_csv(ctx)?));
    files.push(("versions.csv".into(), profiles::versions_csv(ctx)?));
    if let Some(fleet) = fleet {
        files.push(("fleet-metrics.csv".into(), profiles::fleet_metrics_csv(ctx, fleet)?));
        files.push(("kubernetes-versions.csv".into(), profiles::kubernetes_versions_csv(fleet)?));
        files.push(("release-latency.csv".into(), profiles::release_latency_csv(ctx)?));
    }
    Ok(files)
}

/// The run charts and the auto-upgrade charts (none without profiles).
fn all_charts(
    ctx: &ReportContext,
    fleet: Option<&profiles::FleetDays>,
) -> anyhow::Result<(Vec<charts::run::RunChart>, Vec<charts::run::RunChart>)> {
    let (run, profile) = rayon::join(
        || charts::run::run_charts(ctx),
        || match fleet {
            Some(fleet) => charts::profiles::profile_charts(ctx, fleet, &profiles::end_state(ctx)),
            None => Ok(Vec::new()),
        },
    );
    Ok((run?, profile?))
}

pub fn to_json<T: serde::Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The file every report folder holds, so that a later `fleetsim run --out` into the same folder
/// knows it may replace it (README, "Outputs").
pub const MARKER: &str = ".fleetsim-report";

const MARKER_TEXT: &str = "This folder is a fleetsim report: `fleetsim run --out` into it replaces the whole folder.\n";

/// Which existing folder `write_folder` may replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replace {
    /// Only an empty folder or a report folder (one with the [`MARKER`]).
    Reports,
    /// Any folder (`--force`).
    AnyFolder,
}

/// Checks that `dir` may receive a report folder, without writing anything; returns the folder to
/// write (symbolic links followed).
pub fn check_folder(dir: &Path, replace: Replace) -> Result<PathBuf, OutputError> {
    let target = output::folder_target(dir)?;
    if target.existing == Existing::NotEmpty && replace == Replace::Reports && !target.path.join(MARKER).is_file() {
        return Err(OutputError::Refused(format!(
            "{}: the folder is not empty and is not a fleetsim report folder (it has no {MARKER}); choose another --out, or add --force to replace the folder and everything in it",
            dir.display()
        )));
    }
    Ok(target.path)
}

/// Writes files into `dir` whole or not at all: a staging folder beside it is filled first, with the
/// [`MARKER`], and then renamed over `dir`. Refuses a `dir` that is not fleetsim's to replace
/// ([`check_folder`]).
pub fn write_folder(dir: &Path, files: &[ReportFile], replace: Replace) -> Result<(), OutputError> {
    let target = check_folder(dir, replace)?;
    let staging = Staging::beside(&target, "partial")?;
    staging.write(Path::new(MARKER), MARKER_TEXT.as_bytes())?;
    // Files are independent: written on the pool's threads (copying tens of megabytes into the page
    // cache is most of a large report's writing); the first failure in file order is the one told.
    let written: Vec<Result<(), OutputError>> =
        files.par_iter().map(|(path, bytes)| staging.write(path, bytes)).collect();
    written.into_iter().collect::<Result<(), OutputError>>()?;
    staging.commit()
}
