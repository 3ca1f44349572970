//! Running a sweep: the (point, replication) jobs still missing from the journal, in parallel on a
//! local rayon pool, and merging shard folders.
//!
//! Workers only compute; one thread (the caller's) writes every journal line and draws the progress
//! bar, so the journal needs no lock and a line is never interleaved with another.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::scenario::Scenario;
use crate::simulation::{SimOptions, simulate};

use super::SweepError;
use super::folder::{self, JOURNAL, Manifest, PointTable, Shard};
use super::journal::{self, JobRecord, Journal};
use super::metrics::{self, Metric, RunMetrics};
use super::plan::SweepPlan;

/// How to run a sweep.
#[derive(Clone, Copy, Debug)]
pub struct ExecOptions {
    /// Worker threads (a local pool; the global rayon pool is left alone).
    pub threads: usize,
    pub shard: Option<Shard>,
    /// Draw a progress bar on stderr (only if stderr is a terminal).
    pub progress: bool,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct ExecReport {
    /// Jobs of this sweep (or shard).
    pub jobs: u64,
    /// Found finished in the journal.
    pub already_done: u64,
    /// Run now.
    pub ran: u64,
    pub elapsed: Duration,
    /// Journal lines that could not be read (their jobs ran again).
    pub unreadable_lines: usize,
    /// Whether `results.csv` and `summary.csv` were written (not for shards).
    pub finalized: bool,
}

/// One replication of a point: simulate without the timeline (metrics do not need it) and collect.
pub fn run_replication(scenario: &Scenario, replication: u64, metrics: &[Metric]) -> Vec<RunMetrics> {
    let result = simulate(scenario, SimOptions { record_timeline: false, replication });
    metrics::collect(&result, metrics)
}

/// Runs the jobs of `plan` (or of one shard) that `dir`'s journal does not have yet; then writes the
/// final files (whole sweep) or sorts the journal (shard).
pub fn run(plan: &SweepPlan, dir: &Path, options: ExecOptions) -> Result<ExecReport, SweepError> {
    let started = Instant::now();
    let manifest = folder::prepare(dir, plan, options.shard)?;
    let cells = plan.metrics.len();
    let (mut journal, contents) = Journal::open(&dir.join(JOURNAL), cells)?;
    let owned = |job: u64| options.shard.is_none_or(|s| s.owns(job));
    let mut done: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut unreadable = contents.bad_lines.len();
    for record in &contents.records {
        let job = record.point * plan.replications + record.replication;
        if record.point < plan.points.len() as u64 && record.replication < plan.replications && owned(job) {
            done.insert((record.point, record.replication));
        } else {
            unreadable += 1;
        }
    }
    let mut missing: Vec<(usize, Vec<u64>)> = Vec::new();
    for p in 0..plan.points.len() {
        let replications: Vec<u64> = (0..plan.replications)
            .filter(|r| owned(p as u64 * plan.replications + r) && !done.contains(&(p as u64, *r)))
            .collect();
        if !replications.is_empty() {
            missing.push((p, replications));
        }
    }
    let jobs = options.shard.map_or(plan.jobs(), |s| s.share(plan.jobs()));
    let to_run: u64 = missing.iter().map(|(_, r)| r.len() as u64).sum();
    let bar = progress_bar(to_run, done.len() as u64, options.progress);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .thread_name(|i| format!("fleetsim-sweep-{i}"))
        .build()
        .map_err(|e| SweepError::Io(std::io::Error::other(e)))?;

    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<Result<String, String>>();
    let mut written = 0u64;
    let mut failure: Option<SweepError> = None;
    std::thread::scope(|scope| {
        let stop = &stop;
        let missing = &missing;
        scope.spawn(move || {
            pool.install(|| {
                missing.par_iter().for_each(|(p, replications)| {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let scenario = match plan.build_point(*p) {
                        Ok(s) => s,
                        Err(problems) => {
                            let text: Vec<String> = problems.iter().map(|x| x.to_string()).collect();
                            let _ = sender.send(Err(format!("point {p}: {}", text.join("; "))));
                            return;
                        }
                    };
                    replications.par_iter().for_each(|r| {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let runs = run_replication(&scenario, *r, &plan.metrics);
                        let line = JobRecord { point: *p as u64, replication: *r, runs }.to_line();
                        let _ = sender.send(Ok(line));
                    });
                });
            });
        });
        for message in receiver.iter() {
            let outcome = message.map_err(SweepError::Conflict).and_then(|line| Ok(journal.append(&line)?));
            match outcome {
                Ok(()) => {
                    written += 1;
                    bar.inc(1);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                }
            }
        }
    });
    journal.sync()?;
    bar.finish_and_clear();
    if let Some(e) = failure {
        return Err(e);
    }
    let finalized = finish(dir, &manifest, cells)?;
    Ok(ExecReport {
        jobs,
        already_done: done.len() as u64,
        ran: written,
        elapsed: started.elapsed(),
        unreadable_lines: unreadable,
        finalized,
    })
}

fn progress_bar(total: u64, already_done: u64, wanted: bool) -> ProgressBar {
    let target = if wanted && std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    let resumed = if already_done > 0 { format!(" ({already_done} already done)") } else { String::new() };
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} replications{resumed}, {{per_sec}}, ETA {{eta}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// After the last job: a whole sweep gets its final files, a shard its sorted journal. Returns whether
/// the final files were written.
fn finish(dir: &Path, manifest: &Manifest, cells: usize) -> Result<bool, SweepError> {
    let contents = journal::read(&dir.join(JOURNAL), cells)?;
    let records = unique_records(contents.records, manifest)?;
    if manifest.shard.is_some() {
        folder::write_atomic(&dir.join(JOURNAL), &journal::sorted_text(&records))?;
        return Ok(false);
    }
    let points = PointTable::read(dir, manifest)?;
    let files = folder::final_files(manifest, &points, &records);
    folder::write_atomic(&dir.join(folder::RESULTS_CSV), &files.results_csv)?;
    folder::write_atomic(&dir.join(folder::SUMMARY_CSV), &files.summary_csv)?;
    folder::write_atomic(&dir.join(JOURNAL), &files.journal)?;
    Ok(true)
}

/// The records of the jobs the manifest expects, each once, checked complete.
fn unique_records(records: Vec<JobRecord>, manifest: &Manifest) -> Result<Vec<JobRecord>, SweepError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        let job = record.point * manifest.replications + record.replication;
        let valid = record.point < manifest.points
            && record.replication < manifest.replications
            && manifest.shard.is_none_or(|s| s.owns(job));
        // Two lines for one job can only come from two processes sharing a folder; both computed the
        // same deterministic result, so the first is kept.
        if valid && seen.insert((record.point, record.replication)) {
            out.push(record);
        }
    }
    let expected = manifest.shard.map_or(manifest.jobs, |s| s.share(manifest.jobs));
    if out.len() as u64 != expected {
        return Err(SweepError::Conflict(format!(
            "the journal has {} of {expected} replications; run the sweep again to finish it",
            out.len()
        )));
    }
    Ok(out)
}

/// What a merge did.
#[derive(Clone, Debug)]
pub struct MergeReport {
    pub shards: u64,
    pub jobs: u64,
}

/// Combines the folders of every shard of one sweep into `out`: exactly the files an unsharded run
/// writes. `out` must not exist, or hold this same sweep (it is then replaced whole).
pub fn merge(out: &Path, shard_dirs: &[PathBuf]) -> Result<MergeReport, SweepError> {
    let conflict = |m: String| SweepError::Conflict(m);
    if shard_dirs.is_empty() {
        return Err(conflict("give the shard folders to merge".into()));
    }
    let mut manifests = Vec::new();
    for dir in shard_dirs {
        if same_path(dir, out) {
            return Err(conflict(format!("{} is a shard folder; merge into another folder", dir.display())));
        }
        let manifest = Manifest::read(dir)?;
        if manifest.shard.is_none() {
            return Err(conflict(format!("{} is not a shard folder (its manifest has no shard)", dir.display())));
        }
        manifests.push(manifest);
    }
    let first = manifests[0].clone();
    let count = first.shard.expect("checked").count;
    let mut seen = vec![None; count as usize];
    for (dir, manifest) in shard_dirs.iter().zip(&manifests) {
        let shard = manifest.shard.expect("checked");
        let unsharded = Manifest { shard: None, ..manifest.clone() };
        let expected = Manifest { shard: None, ..first.clone() };
        if unsharded != expected || shard.count != count {
            return Err(conflict(format!(
                "{} holds another sweep or sharding than {} (sweep \"{}\" {}, shard {shard})",
                dir.display(),
                shard_dirs[0].display(),
                manifest.sweep,
                manifest.sweep_hash
            )));
        }
        if let Some(other) = seen[shard.index as usize - 1].replace(dir) {
            return Err(conflict(format!("{} and {} are both shard {shard}", other.display(), dir.display())));
        }
    }
    let absent: Vec<String> =
        seen.iter().enumerate().filter(|(_, d)| d.is_none()).map(|(k, _)| format!("{}/{count}", k + 1)).collect();
    if !absent.is_empty() {
        return Err(conflict(format!("shards missing: {}", absent.join(", "))));
    }
    let manifest = Manifest { shard: None, ..first };
    let cells = manifest.metrics.len();
    let mut records = Vec::new();
    for (dir, shard_manifest) in shard_dirs.iter().zip(&manifests) {
        let contents = journal::read(&dir.join(JOURNAL), cells)?;
        let shard = shard_manifest.shard.expect("checked");
        let mut shard_records = unique_records(contents.records, shard_manifest)
            .map_err(|e| conflict(format!("{} (shard {shard}) is not finished: {e}", dir.display())))?;
        records.append(&mut shard_records);
    }
    if out.join(folder::MANIFEST).exists() {
        let existing = Manifest::read(out)?;
        if existing.sweep_hash != manifest.sweep_hash {
            return Err(conflict(format!(
                "{} holds the results of another sweep; choose another folder",
                out.display()
            )));
        }
    } else if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(conflict(format!("{} exists and is not a sweep folder; choose another folder", out.display())));
    }
    let source = &shard_dirs[0];
    let points = PointTable::read(source, &manifest)?;
    let mut files: Vec<(PathBuf, Vec<u8>)> =
        vec![(folder::MANIFEST.into(), manifest.to_bytes()), (folder::POINTS_CSV.into(), points.to_csv())];
    for p in 0..manifest.points {
        let path = Path::new(folder::POINTS_DIR).join(format!("{p}.json"));
        files.push((path.clone(), std::fs::read(source.join(&path))?));
    }
    let finals = folder::final_files(&manifest, &points, &records);
    files.push((JOURNAL.into(), finals.journal));
    files.push((folder::RESULTS_CSV.into(), finals.results_csv));
    files.push((folder::SUMMARY_CSV.into(), finals.summary_csv));
    crate::report::write_folder(out, &files).map_err(|e| SweepError::Io(std::io::Error::other(e.to_string())))?;
    Ok(MergeReport { shards: count, jobs: manifest.jobs })
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
