//! Running a sweep: the (point, replication) jobs still missing from the journal, in parallel on a
//! local rayon pool; and merging shard folders.
//!
//! Workers only compute; one thread (the caller's) writes every journal line and draws the progress
//! bar, so the journal needs no lock and a line is never interleaved with another.

use std::io::{ErrorKind, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use rayon::prelude::*;

use crate::output::{self, Existing, Staging};
use crate::simulation::{SimOptions, Simulator};

use super::SweepError;
use super::finish::{self, JobIndex, Source};
use super::folder::{self, JOURNAL, Manifest, PointTable, Shard};
use super::journal::{Contents, JobRecord, Journal};
use super::metrics::{self, Metric, RunMetrics};
use super::plan::SweepPlan;

/// Finished batches waiting for the writer; bounds memory if the disk is slower than the workers.
const CHANNEL_CAPACITY: usize = 256;

/// How long a worker keeps finished lines before it sends them to the writer (at the latest when
/// its piece of replications ends). Sending each line woke the writer for each replication: at
/// 1,000 members, about 0.3 ms each, that was a context switch per replication, and with two
/// worker threads on two cores the writer took a core from a worker about 6,600 times in a sweep
/// of 5,000 replications (about 190 times with batches). Replications slower than this are still
/// journaled, and counted by the progress bar, one by one as they finish.
const BATCH_WAIT: Duration = Duration::from_millis(50);

/// Journal lines of finished jobs, sent to the writer together.
struct Batch {
    lines: String,
    jobs: u64,
}

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
    /// Journal lines that could not be used (their jobs ran again).
    pub unreadable_lines: usize,
    /// Whether `results.csv` and `summary.csv` were written (not for shards).
    pub finalized: bool,
}

/// One replication of a point: simulate without the timeline (metrics do not need it) and collect.
pub fn run_replication(simulator: &mut Simulator, replication: u64, metrics: &[Metric]) -> Vec<RunMetrics> {
    let result = simulator.run(SimOptions { record_timeline: false, replication });
    metrics::collect(result, metrics)
}

/// Replications handed to one worker at a time: a worker resets one [`Simulator`] through them,
/// and there are enough pieces (16 per thread) that the last ones leave little for one thread to
/// finish alone.
pub fn replications_per_piece(replications: usize) -> usize {
    (replications / (16 * rayon::current_num_threads())).clamp(1, 64)
}

/// Finished jobs, one bit each (an index of a 100-million-job sweep takes 12.5 MB).
struct JobSet {
    words: Vec<u64>,
}

impl JobSet {
    fn new(jobs: u64) -> JobSet {
        JobSet { words: vec![0; jobs.div_ceil(64) as usize] }
    }
    fn insert(&mut self, job: u64) -> bool {
        let (word, bit) = ((job / 64) as usize, 1u64 << (job % 64));
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        fresh
    }
    fn contains(&self, job: u64) -> bool {
        self.words[(job / 64) as usize] & (1u64 << (job % 64)) != 0
    }
}

/// The jobs the journal has already, how many, and how many of its lines were of no use (unreadable,
/// or of jobs outside this sweep or shard).
fn finished_jobs(contents: &Contents, plan: &SweepPlan, owned: impl Fn(u64) -> bool) -> (JobSet, u64, usize) {
    let mut done = JobSet::new(plan.jobs());
    let (mut already_done, mut unreadable) = (0, contents.bad_lines.len());
    for record in &contents.records {
        let in_range = record.point < plan.points.len() as u64 && record.replication < plan.replications;
        let job = in_range.then(|| record.point * plan.replications + record.replication);
        match job.filter(|j| owned(*j)) {
            Some(job) => already_done += u64::from(done.insert(job)),
            None => unreadable += 1,
        }
    }
    (done, already_done, unreadable)
}

/// Runs the jobs of `plan` (or of one shard) that `dir`'s journal does not have yet; then writes the
/// final files (whole sweep) or sorts the journal (shard).
pub fn run(plan: &SweepPlan, dir: &Path, options: ExecOptions) -> Result<ExecReport, SweepError> {
    let started = Instant::now();
    // The lock is held until the final files are written (it is dropped at the end of this function).
    let (manifest, _lock) = folder::prepare(dir, plan, options.shard)?;
    let (mut journal, contents) = Journal::open(&dir.join(JOURNAL), plan.metrics.len())?;
    let owned = |job: u64| options.shard.is_none_or(|s| s.owns(job));
    let (done, already_done, unreadable) = finished_jobs(&contents, plan, owned);
    let pending = |p: usize| (0..plan.replications).map(move |r| p as u64 * plan.replications + r);
    let todo: Vec<usize> =
        (0..plan.points.len()).filter(|p| pending(*p).any(|job| owned(job) && !done.contains(job))).collect();
    let jobs = options.shard.map_or(plan.jobs(), |s| s.share(plan.jobs()));
    let bar = progress_bar(jobs - already_done, already_done, options.progress);
    let ran = execute(plan, Work { todo: &todo, done: &done, owned: &owned }, options.threads, &mut journal, &bar);
    bar.finish_and_clear();
    drop(journal); // closed before it is replaced by the sorted one
    let ran = ran?;
    let index = JobIndex::build(&[Source { path: dir.join(JOURNAL), shard: options.shard }], &manifest)?;
    let finalized = match options.shard {
        Some(_) => {
            finish::write_shard_journal(dir, &index, &manifest)?;
            false
        }
        None => {
            finish::write_finals(dir, &manifest, &PointTable::read(dir, &manifest)?, &index)?;
            // The charts on as many threads as the replications.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(options.threads.max(1))
                .build()
                .map_err(|e| SweepError::Io(std::io::Error::other(e)))?;
            pool.install(|| super::report::write_charts(dir))?;
            true
        }
    };
    Ok(ExecReport { jobs, already_done, ran, elapsed: started.elapsed(), unreadable_lines: unreadable, finalized })
}

/// What is left to run: the points with missing jobs, the finished jobs, and the shard's filter.
struct Work<'a> {
    todo: &'a [usize],
    done: &'a JobSet,
    owned: &'a (dyn Fn(u64) -> bool + Sync),
}

/// Computes the missing jobs on a local pool while this thread appends their lines to the journal.
/// Returns how many were journaled; on a journal error, workers stop early and the error is returned.
fn execute(
    plan: &SweepPlan,
    work: Work,
    threads: usize,
    journal: &mut Journal,
    bar: &ProgressBar,
) -> Result<u64, SweepError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("fleetsim-sweep-{i}"))
        .build()
        .map_err(|e| SweepError::Io(std::io::Error::other(e)))?;
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::sync_channel::<Result<Batch, String>>(CHANNEL_CAPACITY);
    let mut ran = 0u64;
    let mut failure: Option<SweepError> = None;
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || {
            pool.install(|| {
                work.todo.par_iter().for_each(|p| {
                    let missing = |r: &u64| {
                        let job = *p as u64 * plan.replications + r;
                        (work.owned)(job) && !work.done.contains(job) && !stop.load(Ordering::Relaxed)
                    };
                    compute_point(plan, *p, missing, &sender);
                });
            });
        });
        for message in receiver.iter() {
            if failure.is_some() {
                continue; // drain, so that workers are never blocked on a full queue
            }
            match message
                .map_err(SweepError::Conflict)
                .and_then(|batch| Ok(journal.append(&batch.lines).map(|()| batch)?))
            {
                Ok(batch) => {
                    ran += batch.jobs;
                    bar.inc(batch.jobs);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure = Some(e);
                }
            }
        }
    });
    journal.sync()?;
    failure.map_or(Ok(ran), Err)
}

/// Builds point `p`'s scenario once and runs its missing replications in parallel, sending the
/// finished jobs' journal lines in batches (or why the point could not be built) to the writer.
fn compute_point(
    plan: &SweepPlan,
    p: usize,
    missing: impl Fn(&u64) -> bool + Sync + Send,
    sender: &mpsc::SyncSender<Result<Batch, String>>,
) {
    let scenario = match plan.build_point(p) {
        Ok(s) => s,
        Err(problems) => {
            let text: Vec<String> = problems.iter().map(|x| x.to_string()).collect();
            let _ = sender.send(Err(format!("point {p} does not build: {}", text.join("; "))));
            return;
        }
    };
    let todo: Vec<u64> = (0..plan.replications).filter(missing).collect();
    todo.par_chunks(replications_per_piece(todo.len())).for_each(|piece| {
        let mut simulator = Simulator::new(&scenario);
        let mut batch = Batch { lines: String::new(), jobs: 0 };
        let mut since = Instant::now();
        for (i, &r) in piece.iter().enumerate() {
            let runs = run_replication(&mut simulator, r, &plan.metrics);
            batch.lines.push_str(&JobRecord { point: p as u64, replication: r, runs }.to_line());
            batch.jobs += 1;
            if i + 1 == piece.len() || since.elapsed() >= BATCH_WAIT {
                // A send fails only when the writer gave up; the sweep is stopping then.
                let _ = sender.send(Ok(std::mem::replace(&mut batch, Batch { lines: String::new(), jobs: 0 })));
                since = Instant::now();
            }
        }
    });
}

fn progress_bar(total: u64, already_done: u64, wanted: bool) -> ProgressBar {
    let target = if wanted && std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    let resumed = if already_done > 0 { format!(" ({already_done} done before)") } else { String::new() };
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} replications{resumed}, {{rate}}, ETA {{eta}}"
    );
    let rate = |state: &ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = write!(w, "{:.0}/s", state.per_sec());
    };
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.with_key("rate", rate));
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
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
    let manifests = shard_manifests(out, shard_dirs)?;
    let manifest = Manifest { shard: None, ..manifests[0].clone() };
    let sources: Vec<Source> =
        shard_dirs.iter().zip(&manifests).map(|(d, m)| Source { path: d.join(JOURNAL), shard: m.shard }).collect();
    let index = JobIndex::build(&sources, &manifest)?;
    for (dir, m) in shard_dirs.iter().zip(&manifests) {
        let shard = m.shard.expect("checked");
        let found = index.found_where(|job| shard.owns(job));
        if found != shard.share(m.jobs) {
            return Err(SweepError::Conflict(format!(
                "{} (shard {shard}) is not finished: {}",
                dir.display(),
                finish::incomplete(found, shard.share(m.jobs))
            )));
        }
    }
    // The merged folder replaces `out` whole: never the working directory, a file, or a folder that
    // holds something else than this sweep.
    let target = output::folder_target(out)?;
    if target.path.join(folder::MANIFEST).exists() {
        if Manifest::read(&target.path)?.sweep_hash != manifest.sweep_hash {
            return Err(SweepError::Conflict(format!(
                "{} holds the results of another sweep; choose another folder",
                out.display()
            )));
        }
    } else if target.existing == Existing::NotEmpty {
        return Err(SweepError::Conflict(format!(
            "{} exists and is not a sweep folder; choose another folder",
            out.display()
        )));
    }
    // A folder being replaced is not being written by another process meanwhile.
    let _lock =
        if target.path.join(folder::MANIFEST).exists() { Some(folder::FolderLock::take(&target.path)?) } else { None };
    let staging = Staging::beside(&target.path, "merging")?;
    let staged = staging.path();
    let source = &shard_dirs[0];
    let points = PointTable::read(source, &manifest)?;
    std::fs::create_dir_all(staged.join(folder::POINTS_DIR))?;
    std::fs::write(staged.join(folder::LOCK), b"")?;
    std::fs::write(staged.join(folder::MANIFEST), manifest.to_bytes())?;
    std::fs::write(staged.join(folder::POINTS_CSV), points.to_csv())?;
    for p in 0..manifest.points {
        let path = Path::new(folder::POINTS_DIR).join(format!("{p}.json"));
        std::fs::copy(source.join(&path), staged.join(&path))?;
    }
    finish::write_finals(staged, &manifest, &points, &index)?;
    super::report::write_charts(staged)?;
    staging.commit()?;
    Ok(MergeReport { shards: manifest_count(&manifests), jobs: manifest.jobs })
}

fn manifest_count(manifests: &[Manifest]) -> u64 {
    manifests[0].shard.map_or(1, |s| s.count)
}

/// The manifests of the shard folders, checked to be every shard of one sweep, each once.
fn shard_manifests(out: &Path, shard_dirs: &[PathBuf]) -> Result<Vec<Manifest>, SweepError> {
    let conflict = SweepError::Conflict;
    if shard_dirs.is_empty() {
        return Err(conflict("give the shard folders to merge".into()));
    }
    let mut manifests = Vec::new();
    for dir in shard_dirs {
        if same_path(dir, out) {
            return Err(conflict(format!("{} is a shard folder; merge into another folder", dir.display())));
        }
        // A folder that is not a sweep's is a wrong argument, said as such (exit 2), not a failed read.
        // (Only a manifest that is not there; one that cannot be read is a read error, told below.)
        let absent = |e: std::io::Error| matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory);
        if std::fs::symlink_metadata(dir.join(folder::MANIFEST)).is_err_and(absent) {
            let what = if dir.is_dir() { "has no manifest.json" } else { "does not exist or is not a folder" };
            return Err(conflict(format!("{} is not a sweep shard folder: it {what}", dir.display())));
        }
        let manifest = Manifest::read(dir)?;
        if manifest.shard.is_none() {
            return Err(conflict(format!("{} is not a shard folder (its manifest has no shard)", dir.display())));
        }
        manifests.push(manifest);
    }
    let first = Manifest { shard: None, ..manifests[0].clone() };
    let count = manifests[0].shard.expect("checked").count;
    let mut seen: Vec<Option<&PathBuf>> = vec![None; count as usize];
    for (dir, manifest) in shard_dirs.iter().zip(&manifests) {
        let shard = manifest.shard.expect("checked");
        if (Manifest { shard: None, ..manifest.clone() }) != first || shard.count != count {
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
    Ok(manifests)
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
