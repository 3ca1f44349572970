//! The tune folder: resume after an interruption, and shards round by round.
//!
//! ```text
//! manifest.json    what the folder holds: the tune, the hash of its simulations, the shard
//! journal.jsonl    one line per finished simulation: ["<candidate key>", world, replication, [cells]]
//! recommendation.json, recommended/, baseline/, candidates.csv, pareto.csv, index.html
//!                  written whole (staged beside the folder, renamed into place) when the search ends
//! ```
//!
//! The search is a function of the simulations' figures ([`super::search`]); this module only
//! decides where they come from. A run reads the journal, replays the search, and simulates only
//! what the journal lacks, appending each finished simulation as one line (the sweep journal's
//! rules: one `write` per line, a torn last line cut when opened). So a killed tune started again
//! with the same command and folder spends nothing already done and ends with the same bytes.
//!
//! A candidate's key is its value indices in the space (`0.2.1`, or `base`), never its number in the
//! search, so the simulations of a folder stay valid when only the objective, the constraints or the
//! budget change: the folder belongs to the hash of what decides the figures (the base scenario,
//! the run, the seed, the worlds and the space).
//!
//! `--shard K/N` replays the search on the journal of the folder given by `--from` (the merged
//! results of the earlier rounds) and of its own folder, runs the jobs of the first round that is
//! not complete whose index in the round's job list is K − 1 modulo N, and stops. `--merge` joins
//! the shard folders' journals into the merged folder and replays: when the search ends, it writes
//! the final files, the same bytes a single process writes; otherwise the next round's shards run
//! from it.

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use fs_err as fs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::{self, Existing, Staging};
use crate::report::{MARKER, ReportFile};
use crate::sweep::SweepError;
use crate::sweep::folder::{FolderLock, LOCK, Shard, crate_versions, write_atomic};
use crate::sweep::journal::{self, Journal};

use super::plan::{COLLECTED, Candidate, TunePlan};
use super::search::{self, Cells, Job, Outcome, Simulations};

pub const MANIFEST: &str = "manifest.json";
pub const JOURNAL: &str = "journal.jsonl";
const MARKER_TEXT: &str =
    "This folder is a fleetsim tune folder: `fleetsim tune --out` into it resumes or replaces it whole.\n";

/// `manifest.json` of a tune folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TuneManifest {
    pub fleetsim: String,
    /// The tune's name.
    pub tune: String,
    /// What decides the figures of a simulation: the folder holds simulations of this identity.
    pub simulations_hash: String,
    /// The whole tune file (with its base scenario): shards and merges agree on it.
    pub tune_hash: String,
    pub journal: String,
    pub crates: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl TuneManifest {
    pub fn new(plan: &TunePlan, shard: Option<Shard>) -> TuneManifest {
        TuneManifest {
            fleetsim: env!("CARGO_PKG_VERSION").to_string(),
            tune: plan.name.clone(),
            simulations_hash: plan.simulations_hash.clone(),
            tune_hash: plan.tune_hash.clone(),
            journal: "one line per simulation: [candidate (its value indices in the space joined by '.', or 'base'), world index, replication, [hoursTo50PctUpgraded, hoursTo90PctUpgraded, hoursTo100PctUpgraded, falseHalt, blastRadius, blastRadiusFraction, detectionHours, runState, failedMembers]]".into(),
            crates: crate_versions(),
            shard,
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("manifests serialize");
        bytes.push(b'\n');
        bytes
    }

    /// The manifest of `dir`, if it is a tune folder.
    pub fn read(dir: &Path) -> Option<TuneManifest> {
        serde_json::from_slice(&fs::read(dir.join(MANIFEST)).ok()?).ok()
    }
}

/// One journal line's content.
type Key = (Candidate, usize, u64);

fn line(key: &Key, cells: &[String]) -> String {
    let mut text = serde_json::json!([key.0.key(), key.1, key.2, cells]).to_string();
    text.push('\n');
    text
}

/// The records of journal bytes; lines of no use (unreadable, another space) are counted.
fn parse(bytes: &[u8], plan: &TunePlan, into: &mut HashMap<Key, Cells>) -> usize {
    let mut bad = 0;
    for raw in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let record = std::str::from_utf8(raw).ok().and_then(|l| serde_json::from_str::<Value>(l).ok()).and_then(|v| {
            let [key, world, replication, cells] = v.as_array()?.as_slice() else { return None };
            let candidate = Candidate::parse_key(key.as_str()?, plan.parameters.len())?;
            let world = usize::try_from(world.as_u64()?).ok().filter(|w| *w < plan.worlds.len())?;
            let cells: Option<Cells> = cells.as_array()?.iter().map(|c| c.as_str().map(str::to_string)).collect();
            let cells = cells.filter(|c| c.len() == COLLECTED.len())?;
            Some(((candidate, world, replication.as_u64()?), cells))
        });
        match record {
            Some((key, cells)) => {
                into.insert(key, cells);
            }
            None => bad += 1,
        }
    }
    bad
}

/// The journal sorted by candidate key, world and replication: a finished folder's bytes do not
/// depend on the order simulations finished in.
fn sorted_journal(cache: &HashMap<Key, Cells>) -> Vec<u8> {
    let mut keys: Vec<&Key> = cache.keys().collect();
    keys.sort();
    keys.into_iter().flat_map(|k| line(k, &cache[k]).into_bytes()).collect()
}

/// How a process takes part in a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Runs every missing simulation (a whole tune, or finishing a merged one).
    Whole,
    /// Runs its share of the first incomplete round, then stops.
    Shard(Shard),
    /// Runs nothing (a merge): stops at the first round the journals do not complete.
    ReadOnly,
}

/// The figures a folder's journals hold, and the simulations this process adds.
pub struct Store {
    cache: HashMap<Key, Cells>,
    journal: Option<Mutex<Journal>>,
    mode: Mode,
    pool: rayon::ThreadPool,
    bar: ProgressBar,
    /// Simulations run by this process.
    pub ran: u64,
    /// Simulations the search used that were already in a journal.
    pub reused: u64,
    /// Journal lines that could not be used.
    pub unreadable: usize,
}

impl Simulations for Store {
    fn round(
        &mut self,
        plan: &TunePlan,
        candidates: &[Candidate],
        jobs: &[Job],
    ) -> std::io::Result<Option<Vec<Cells>>> {
        let key = |j: &Job| (candidates[j.candidate].clone(), j.world, j.replication);
        let missing: Vec<(usize, Job)> =
            jobs.iter().enumerate().filter(|(_, j)| !self.cache.contains_key(&key(j))).map(|(i, j)| (i, *j)).collect();
        self.reused += (jobs.len() - missing.len()) as u64;
        self.bar.inc((jobs.len() - missing.len()) as u64);
        let to_run: Vec<Job> = match self.mode {
            Mode::Whole => missing.iter().map(|(_, j)| *j).collect(),
            // The round's job list is fixed by the earlier rounds alone: job i belongs to shard K
            // when i mod N = K − 1, whatever the thread count.
            Mode::Shard(s) => missing.iter().filter(|(i, _)| s.owns(*i as u64)).map(|(_, j)| *j).collect(),
            Mode::ReadOnly => Vec::new(),
        };
        if !to_run.is_empty() {
            let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
            let journal = self.journal.as_ref().expect("a process that simulates has a journal");
            let bar = &self.bar;
            let done = |job: &Job, cells: &Cells| {
                let text = line(&key(job), cells);
                let appended = journal.lock().unwrap_or_else(|e| e.into_inner()).append(&text);
                if let Err(e) = appended {
                    failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                }
                bar.inc(1);
            };
            let cells = search::compute(plan, candidates, &to_run, &self.pool, &done);
            journal.lock().unwrap_or_else(|e| e.into_inner()).sync()?;
            if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
                return Err(e);
            }
            self.ran += to_run.len() as u64;
            for (job, cells) in to_run.iter().zip(cells) {
                self.cache.insert(key(job), cells);
            }
        }
        if jobs.iter().all(|j| self.cache.contains_key(&key(j))) {
            Ok(Some(jobs.iter().map(|j| self.cache[&key(j)].clone()).collect()))
        } else {
            Ok(None)
        }
    }
}

/// What a tune process did.
pub struct TuneReport {
    pub outcome: Outcome,
    pub ran: u64,
    pub reused: u64,
    pub unreadable: usize,
}

/// A progress bar on standard error (hidden when it is not a terminal or `wanted` is false) in
/// the sweep's style: simulations against the budget, with the race's state as its message.
pub fn progress_bar(total: u64, wanted: bool) -> ProgressBar {
    let target = if wanted && std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    let template =
        "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} simulations (budget), ETA {eta}\n  {msg}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_message("round 1");
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn conflict(message: String) -> SweepError {
    SweepError::Conflict(message)
}

/// Claims `dir` for the tune (as a whole, or as one shard): a new or empty folder gets the
/// manifest; a tune folder must hold this tune's simulations (and shard); a fleetsim report folder
/// (an earlier tune's) is taken over and replaced whole at the end. Returns the lock and the
/// journal, open for appending, with what it holds.
fn prepare(dir: &Path, plan: &TunePlan, shard: Option<Shard>) -> Result<(FolderLock, Journal, Vec<u8>), SweepError> {
    let target = output::folder_target(dir)?;
    let manifest = TuneManifest::new(plan, shard);
    let lock;
    if target.path.join(MANIFEST).exists() {
        lock = FolderLock::take(&target.path)?;
        let Some(found) = TuneManifest::read(&target.path) else {
            return Err(conflict(format!(
                "{} holds something else than a tune (its {MANIFEST} is not a tune's, perhaps a sweep's); choose another --out",
                dir.display()
            )));
        };
        check_same(dir, &found, &manifest)?;
        if found != manifest {
            write_atomic(&target.path.join(MANIFEST), &manifest.to_bytes())?;
        }
    } else {
        let reports = target.existing == Existing::NotEmpty && target.path.join(MARKER).is_file();
        if target.existing == Existing::NotEmpty && (shard.is_some() || !reports) {
            return Err(conflict(format!(
                "{} is not empty and is not a fleetsim tune folder (it has no {MANIFEST}); choose another --out",
                dir.display()
            )));
        }
        fs::create_dir_all(&target.path)?;
        lock = FolderLock::take(&target.path)?;
        write_atomic(&target.path.join(MANIFEST), &manifest.to_bytes())?;
    }
    let (journal, bytes, _) = Journal::open_lines(&target.path.join(JOURNAL))?;
    Ok((lock, journal, bytes))
}

fn check_same(dir: &Path, found: &TuneManifest, expected: &TuneManifest) -> Result<(), SweepError> {
    if found.simulations_hash != expected.simulations_hash {
        return Err(conflict(format!(
            "{} holds the simulations of another tune (\"{}\": another base scenario, run, seed, worlds or space, or another fleetsim version); use another --out, or delete the folder to start over",
            dir.display(),
            found.tune
        )));
    }
    if found.shard != expected.shard {
        let name = |s: Option<Shard>| s.map_or("the whole tune".to_string(), |s| format!("shard {s}"));
        return Err(conflict(format!(
            "{} holds {} of this tune, not {}: use another --out",
            dir.display(),
            name(found.shard),
            name(expected.shard)
        )));
    }
    if let Some(shard) = expected.shard
        && found.tune_hash != expected.tune_hash
    {
        return Err(conflict(format!(
            "{} holds shard {shard} of this tune run with another tune file (its objective, constraints or budget differ); every shard and the merge use one tune file: use another --out",
            dir.display()
        )));
    }
    Ok(())
}

/// Reads another folder's journal for a shard (`--from`): it must be a whole folder of this tune.
fn read_from(dir: &Path, plan: &TunePlan, cache: &mut HashMap<Key, Cells>) -> Result<usize, SweepError> {
    if !dir.join(MANIFEST).exists() {
        return Ok(0); // round 1: nothing merged yet
    }
    let Some(found) = TuneManifest::read(dir) else {
        return Err(conflict(format!("{}: not a tune folder (its {MANIFEST} is not a tune's)", dir.display())));
    };
    if found.shard.is_some() || found.tune_hash != plan.tune_hash {
        return Err(conflict(format!(
            "{}: --from takes the merged folder of this very tune file (this one holds {})",
            dir.display(),
            found.shard.map_or("another tune file's search".to_string(), |s| format!("shard {s}"))
        )));
    }
    let contents = journal::read_lines(&dir.join(JOURNAL))?;
    Ok(parse(&contents, plan, cache))
}

/// Runs a tune in `dir` (whole, or one shard reading earlier rounds from `from`): replays the
/// search on what the journals hold and simulates what is missing. A whole tune that ends writes
/// its final files; a shard sorts its journal.
pub fn run(
    plan: &TunePlan,
    dir: &Path,
    threads: usize,
    shard: Option<Shard>,
    from: Option<&Path>,
    bar: ProgressBar,
    progress: impl FnMut(&search::Round, &ProgressBar),
) -> Result<TuneReport, SweepError> {
    let (_lock, journal, bytes) = prepare(dir, plan, shard)?;
    let mut cache = HashMap::new();
    let mut unreadable = 0;
    if let Some(from) = from {
        unreadable += read_from(from, plan, &mut cache)?;
    }
    unreadable += parse(&bytes, plan, &mut cache);
    let mode = shard.map_or(Mode::Whole, Mode::Shard);
    let mut store = Store {
        cache,
        journal: Some(Mutex::new(journal)),
        mode,
        pool: search::pool(threads)?,
        bar,
        ran: 0,
        reused: 0,
        unreadable,
    };
    let outcome = replay(plan, &mut store, progress)?;
    store.bar.finish_and_clear();
    drop(store.journal.take());
    let target = output::folder_target(dir)?.path;
    match (&outcome, shard) {
        (Outcome::Done(result), None) => finish(plan, &target, result, &store.cache)?,
        (_, Some(_)) => {
            // Only this shard's own lines: what came from --from stays in that folder.
            let mut own = HashMap::new();
            parse(&fs::read(target.join(JOURNAL))?, plan, &mut own);
            write_atomic(&target.join(JOURNAL), &sorted_journal(&own))?;
        }
        (Outcome::Stopped { .. }, None) => unreachable!("a whole tune runs every round"),
    }
    Ok(TuneReport { outcome, ran: store.ran, reused: store.reused, unreadable: store.unreadable })
}

fn replay(
    plan: &TunePlan,
    store: &mut Store,
    mut progress: impl FnMut(&search::Round, &ProgressBar),
) -> Result<Outcome, SweepError> {
    let bar = store.bar.clone();
    Ok(search::search_with(plan, store, |round| progress(round, &bar))?)
}

/// Writes the finished folder whole: staged beside it, then renamed into place.
fn finish(
    plan: &TunePlan,
    target: &Path,
    result: &search::SearchResult,
    cache: &HashMap<Key, Cells>,
) -> Result<(), SweepError> {
    let files: Vec<ReportFile> =
        super::write::render(plan, result).map_err(|e| SweepError::Io(std::io::Error::other(e)))?;
    let staging = Staging::beside(target, "partial")?;
    staging.write(Path::new(MARKER), MARKER_TEXT.as_bytes())?;
    staging.write(Path::new(LOCK), b"")?;
    staging.write(Path::new(MANIFEST), &TuneManifest::new(plan, None).to_bytes())?;
    staging.write(Path::new(JOURNAL), &sorted_journal(cache))?;
    for (path, bytes) in &files {
        staging.write(path, bytes)?;
    }
    staging.commit()?;
    Ok(())
}

/// Joins the journals of shard folders into `out` (a whole folder of the tune, created if need be)
/// and replays the search: it ends (the final files are written) or stops at the round the next
/// shards run.
pub fn merge(
    plan: &TunePlan,
    out: &Path,
    shards: &[PathBuf],
    progress: impl FnMut(&search::Round, &ProgressBar),
) -> Result<TuneReport, SweepError> {
    if shards.is_empty() {
        return Err(conflict("--merge: give the shard folders to merge".into()));
    }
    let mut count = None;
    let mut seen: BTreeMap<u64, &PathBuf> = BTreeMap::new();
    let mut cache = HashMap::new();
    let mut unreadable = 0;
    for dir in shards {
        let Some(m) = TuneManifest::read(dir) else {
            return Err(conflict(format!("{}: not a tune shard folder (it has no tune {MANIFEST})", dir.display())));
        };
        let Some(shard) = m.shard else {
            return Err(conflict(format!("{}: not a shard folder (its manifest has no shard)", dir.display())));
        };
        if m.tune_hash != plan.tune_hash {
            return Err(conflict(format!(
                "{}: shard {shard} of another tune file than this one; every shard and the merge use one tune file",
                dir.display()
            )));
        }
        if *count.get_or_insert(shard.count) != shard.count {
            return Err(conflict(format!(
                "{}: shard {shard}, but {} is of another sharding",
                dir.display(),
                shards[0].display()
            )));
        }
        if let Some(other) = seen.insert(shard.index, dir) {
            return Err(conflict(format!("{} and {} are both shard {shard}", other.display(), dir.display())));
        }
        unreadable += parse(&journal::read_lines(&dir.join(JOURNAL))?, plan, &mut cache);
    }
    let n = count.expect("at least one shard");
    let absent: Vec<String> = (1..=n).filter(|k| !seen.contains_key(k)).map(|k| format!("{k}/{n}")).collect();
    if !absent.is_empty() {
        return Err(conflict(format!("shards missing: {}", absent.join(", "))));
    }
    let (_lock, mut journal, bytes) = prepare(out, plan, None)?;
    unreadable += parse(&bytes, plan, &mut cache);
    // The merged journal: what it had and every shard's lines, sorted.
    drop(journal.sync());
    drop(journal);
    let target = output::folder_target(out)?.path;
    write_atomic(&target.join(JOURNAL), &sorted_journal(&cache))?;
    let mut store = Store {
        cache,
        journal: None,
        mode: Mode::ReadOnly,
        pool: search::pool(1)?,
        bar: ProgressBar::hidden(),
        ran: 0,
        reused: 0,
        unreadable,
    };
    let outcome = replay(plan, &mut store, progress)?;
    if let Outcome::Done(result) = &outcome {
        finish(plan, &target, result, &store.cache)?;
    }
    Ok(TuneReport { outcome, ran: 0, reused: store.reused, unreadable: store.unreadable })
}
