//! Report folders: CSV tables, API-shaped status JSON, the summary, charts and `index.html`.
//!
//! A folder is written whole or not at all: everything goes to a staging folder beside it first,
//! which then replaces the target in one rename ([`crate::output`]); only an empty folder or one with
//! the report [`MARKER`] is replaced, unless the caller says otherwise.

pub mod charts;
pub mod critical;
pub mod html;
pub mod outcome;
pub mod pretty;
pub mod profiles;
pub mod rows;
mod scan;
pub mod status;
pub mod summary;
pub mod tables;

use std::io::Write;
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
    /// Made once for `summary.json` and `index.html`, after `warnings` are final.
    summary: OnceLock<summary::Summary>,
    /// The members' cluster ids as JSON strings, made once when several runs' status files list them.
    cluster_ids: OnceLock<Vec<Box<serde_json::value::RawValue>>>,
}

impl<'a> ReportContext<'a> {
    pub fn new(scenario: &'a Scenario, result: &'a SimResult) -> ReportContext<'a> {
        ReportContext {
            scenario,
            result,
            fleet_name: "fleet".to_string(),
            warnings: Vec::new(),
            summary: OnceLock::new(),
            cluster_ids: OnceLock::new(),
        }
    }

    /// The summary of `summary.json`, made on first use (so after `warnings` are set) and shared.
    pub fn summary(&self) -> &summary::Summary {
        self.summary.get_or_init(|| summary::summary(self))
    }

    /// Every member's `clusterResourceId` as a JSON string, by member index, when the result has
    /// several runs: each run's status file lists every member it updates, and making and escaping
    /// an id was over a third of writing those files for the one-year example. With one run there is
    /// nothing to share and each id is written as it is made.
    pub fn cluster_ids(&self) -> Option<&[Box<serde_json::value::RawValue>]> {
        if self.result.runs.len() < 2 {
            return None;
        }
        let ids = self.cluster_ids.get_or_init(|| {
            let escaped = |m| serde_json::value::to_raw_value(&status::ClusterResourceId(m, None).to_string());
            self.scenario.fleet.iter().map(|m| escaped(m).expect("a string serializes")).collect()
        });
        Some(ids)
    }
}

/// A file of the report: relative path and bytes.
pub type ReportFile = (PathBuf, Vec<u8>);

/// A file written as it is made: the big tables and status resources of a large fleet are hundreds
/// of megabytes each, and `fleetsim run` streams them into the report folder instead of holding them.
pub struct StreamedFile<'a> {
    pub path: PathBuf,
    write: WriteFn<'a>,
}

type WriteFn<'a> = Box<dyn Fn(&mut dyn Write) -> anyhow::Result<()> + Send + Sync + 'a>;

impl<'a> StreamedFile<'a> {
    fn new(path: impl Into<PathBuf>, write: impl Fn(&mut dyn Write) -> anyhow::Result<()> + Send + Sync + 'a) -> Self {
        StreamedFile { path: path.into(), write: Box::new(write) }
    }

    /// Writes the file's bytes to `out`.
    pub fn write_to(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        (self.write)(out)
    }

    pub fn to_bytes(&self) -> anyhow::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes)?;
        Ok(bytes)
    }
}

/// One file of the data part of a report, in folder order.
enum Part<'a> {
    Bytes(ReportFile),
    Streamed(StreamedFile<'a>),
}

/// A data file once `emit` has handled it (made into bytes, or written to the folder).
enum Emitted<R> {
    Bytes(ReportFile),
    Streamed(PathBuf, R),
}

/// Renders every file of the report folder in memory, in folder order (the tests read reports this
/// way; `fleetsim run` uses [`write_report`], which streams the big files and writes the same bytes).
pub fn render(ctx: &ReportContext) -> anyhow::Result<Vec<ReportFile>> {
    let assembled = assemble(ctx, StreamedFile::to_bytes)?;
    let index = assembled.index(ctx);
    let mut files = Vec::new();
    for file in assembled.data {
        files.push(match file {
            Emitted::Bytes(file) => file,
            Emitted::Streamed(path, bytes) => (path, bytes?),
        });
    }
    for chart in assembled.charts.into_iter().chain(assembled.profile_charts) {
        let stem = chart_stem(&chart);
        files.extend(chart.chart.into_files(&stem));
    }
    files.push(index);
    Ok(files)
}

/// Writes the report folder of `ctx` into `dir` whole or not at all, as [`write_folder`] does, with
/// the big files written as they are made (while the charts render) rather than held in memory.
pub fn write_report(ctx: &ReportContext, dir: &Path, replace: Replace) -> anyhow::Result<()> {
    let target = check_folder(dir, replace)?;
    let staging = Staging::beside(&target, "partial")?;
    staging.write(Path::new(MARKER), MARKER_TEXT.as_bytes())?;
    let assembled = assemble(ctx, |file| staging.write_with(&file.path, |out| file.write_to(out)))?;
    // The chart files are written while the page that inlines their SVG is made.
    let (index, charts_written) = rayon::join(
        || assembled.index(ctx),
        || -> Vec<Result<(), OutputError>> {
            let files: Vec<(PathBuf, &[u8])> = assembled
                .charts
                .iter()
                .chain(&assembled.profile_charts)
                .flat_map(|chart| chart.chart.borrowed_files(&chart_stem(chart)))
                .collect();
            files.par_iter().map(|(path, bytes)| staging.write(path, bytes)).collect()
        },
    );
    // The first failure in file order is the one told: the streamed files', then the other data
    // files', the charts', the page's.
    let mut files = Vec::new();
    for file in assembled.data {
        match file {
            Emitted::Bytes(file) => files.push(file),
            Emitted::Streamed(_, written) => written?,
        }
    }
    write_staged(&staging, &files)?;
    charts_written.into_iter().collect::<Result<(), OutputError>>()?;
    write_staged(&staging, &[index])?;
    staging.commit()?;
    Ok(())
}

/// What a report folder is made of before its page: the data files, the charts and the page's
/// member sections.
struct Assembled<R> {
    data: Vec<Emitted<R>>,
    charts: Vec<charts::run::RunChart>,
    profile_charts: Vec<charts::run::RunChart>,
    member_sections: String,
}

impl<R> Assembled<R> {
    /// `index.html`, which inlines the charts' SVG.
    fn index(&self, ctx: &ReportContext) -> ReportFile {
        let page = html::run_index(ctx, &self.charts, &self.profile_charts, &self.member_sections);
        ("index.html".into(), page.into_bytes())
    }
}

/// A chart's files under `charts/`, without their extension.
fn chart_stem(chart: &charts::run::RunChart) -> String {
    format!("charts/{}", chart.name)
}

/// The data files (each handed to `emit` when it is streamed: on the pool's threads, while the
/// charts render), the charts and the page's member sections; the folder lists the data files,
/// then the chart files, then `index.html`.
fn assemble<'a, 'c, R: Send>(
    ctx: &'a ReportContext<'c>,
    emit: impl Fn(&StreamedFile<'a>) -> R + Sync,
) -> anyhow::Result<Assembled<R>> {
    // The tables and the charts read the same result and nothing else: built on two threads (the
    // charts split further), assembled in one fixed order, so the files do not depend on the threads.
    let ((data, member_sections), charts) = rayon::join(
        || {
            rayon::join(
                || -> anyhow::Result<Vec<Emitted<R>>> {
                    let parts = data_parts(ctx)?;
                    Ok(parts
                        .into_par_iter()
                        .map(|part| match part {
                            Part::Bytes(file) => Emitted::Bytes(file),
                            Part::Streamed(file) => {
                                let emitted = emit(&file);
                                Emitted::Streamed(file.path, emitted)
                            }
                        })
                        .collect())
                },
                || html::member_sections(ctx),
            )
        },
        || all_charts(ctx),
    );
    let mut data = data?;
    let (charts, profile_charts, fleet_files) = charts?;
    data.extend(fleet_files.into_iter().map(Emitted::Bytes));
    Ok(Assembled { data, charts, profile_charts, member_sections })
}

/// The CSV and JSON files of a report folder, in their order; the ones that grow with the fleet
/// or the timeline are streamed.
fn data_parts<'a, 'c>(ctx: &'a ReportContext<'c>) -> anyhow::Result<Vec<Part<'a>>> {
    let mut parts = vec![
        Part::Streamed(StreamedFile::new("members.csv", |out| Ok(tables::write_members_csv(ctx, out)?))),
        Part::Streamed(StreamedFile::new("timeline.csv", |out| Ok(tables::write_timeline_csv(ctx, out)?))),
        Part::Bytes(("summary.json".into(), to_json(ctx.summary())?)),
    ];
    for (i, run) in ctx.result.runs.iter().enumerate() {
        let path = Path::new("status").join(format!("{}.json", run.name));
        parts.push(Part::Streamed(StreamedFile::new(path, move |out| status::write_run_resource(ctx, i, out))));
    }
    parts.push(Part::Bytes(("runs.csv".into(), profiles::runs_csv(ctx)?)));
    parts.push(Part::Streamed(StreamedFile::new("versions.csv", |out| Ok(profiles::write_versions_csv(ctx, out)?))));
    Ok(parts)
}

/// The files of a scenario with auto-upgrade profiles, after the [`data_parts`]: made from the
/// fleet's days (replayed while the run charts render) beside the auto-upgrade charts drawn from
/// the same days.
fn fleet_parts(ctx: &ReportContext, fleet: &profiles::FleetDays) -> anyhow::Result<Vec<ReportFile>> {
    Ok(vec![
        ("fleet-metrics.csv".into(), profiles::fleet_metrics_csv(ctx, fleet)?),
        ("kubernetes-versions.csv".into(), profiles::kubernetes_versions_csv(fleet)?),
        ("release-latency.csv".into(), profiles::release_latency_csv(ctx)?),
    ])
}

/// The run charts and the auto-upgrade charts, with the [`fleet_parts`] made from the fleet's days
/// those are drawn from (none without profiles).
type AllCharts = (Vec<charts::run::RunChart>, Vec<charts::run::RunChart>, Vec<ReportFile>);

fn all_charts(ctx: &ReportContext) -> anyhow::Result<AllCharts> {
    let (run, (profile, fleet_files)) = rayon::join(
        || charts::run::run_charts(ctx),
        || {
            if ctx.scenario.profiles.is_empty() {
                return (Ok(Vec::new()), Ok(Vec::new()));
            }
            let fleet = profiles::fleet_days(ctx);
            rayon::join(
                || charts::profiles::profile_charts(ctx, &fleet, &profiles::end_state(ctx)),
                || fleet_parts(ctx, &fleet),
            )
        },
    );
    // The first failure told is the auto-upgrade charts', then the run charts', then the files'.
    let profile = profile?;
    let run = run?;
    Ok((run, profile, fleet_files?))
}

pub fn to_json<T: serde::Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_json(&mut bytes, value)?;
    Ok(bytes)
}

/// Pretty JSON and a final newline, as every JSON file of a report has.
///
/// The serializer writes many short pieces (a key, its quotes, each line's indentation): they go
/// through a buffer of a type the compiler sees, not one call through `dyn Write` each.
fn write_json<T: serde::Serialize>(out: &mut dyn Write, value: &T) -> anyhow::Result<()> {
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
    pretty::to_writer(&mut buffered, value)?;
    buffered.write_all(b"\n")?;
    buffered.flush()?;
    Ok(())
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
    write_staged(&staging, files)?;
    staging.commit()
}

/// Files are independent: written on the pool's threads (copying tens of megabytes into the page
/// cache is most of a large report's writing); the first failure in file order is the one told.
fn write_staged(staging: &Staging, files: &[ReportFile]) -> Result<(), OutputError> {
    let written: Vec<Result<(), OutputError>> =
        files.par_iter().map(|(path, bytes)| staging.write(path, bytes)).collect();
    written.into_iter().collect::<Result<(), OutputError>>()
}
