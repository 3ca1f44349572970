//! The sweep folder: what it holds, how a run claims it, and how the final files are made.
//!
//! ```text
//! manifest.json    identity and reproducibility: version, hashes, seeds, crate versions, commands
//! points.csv       point index, seed and parameter values of every point
//! points/<p>.json  each point's complete scenario (`fleetsim run points/3.json --replication 17`)
//! journal.jsonl    one line per finished replication (append-only while running)
//! results.csv      one row per point × replication × run          (written when every job is done)
//! summary.csv      one row per point × run × metric: statistics   (written when every job is done)
//! ```
//!
//! Architecture invariant: `results.csv` and `summary.csv` are computed only from files (the
//! manifest, `points.csv`, the journal records), never from memory ([`super::finish`]). An
//! uninterrupted run, a resumed run and a merge of shards therefore write the same bytes.

use fs_err as fs;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SweepError;
use super::metrics::Metric;
use super::plan::{SweepPlan, value_text};

pub const MANIFEST: &str = "manifest.json";
pub const POINTS_CSV: &str = "points.csv";
pub const POINTS_DIR: &str = "points";
pub const JOURNAL: &str = "journal.jsonl";
pub const RESULTS_CSV: &str = "results.csv";
pub const SUMMARY_CSV: &str = "summary.csv";
pub const PAIRED_CSV: &str = "paired.csv";

/// The summary row that turns `runState` into the probability that the run ended `Failed`.
pub const RUN_FAILED: &str = "runFailed";

/// `--shard K/N`: the jobs whose index modulo N is K − 1 (job index = point × replications +
/// replication). Round robin rather than blocks, so every shard gets a share of every point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// 1-based, like `JOB_COMPLETION_INDEX + 1`.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const MAX_COUNT: u64 = 100_000;

    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("\"{text}\" is not a shard like \"2/8\" (shard K of N, 1 ≤ K ≤ N ≤ {})", Shard::MAX_COUNT);
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count || count > Shard::MAX_COUNT {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn owns(&self, job: u64) -> bool {
        job % self.count == self.index - 1
    }

    /// How many of `jobs` jobs this shard runs.
    pub fn share(&self, jobs: u64) -> u64 {
        jobs / self.count + u64::from(jobs % self.count >= self.index)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestParameter {
    pub name: String,
    pub pointer: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestSample {
    pub method: String,
    pub points: u64,
    pub seed: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reproduce {
    /// Where to run the command from.
    pub directory: String,
    /// Fill in `{point}`, `{seed}` and `{replication}` from a row of `results.csv`.
    pub command: String,
    pub example: String,
}

/// `manifest.json`: what produced the folder's results. Equal manifests (apart from `shard`) mean the
/// same jobs with the same results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub fleetsim: String,
    pub sweep: String,
    /// The sweep file's `description`, for the sweep page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub sweep_hash: String,
    pub scenario: String,
    pub scenario_hash: String,
    pub root_seed: u64,
    pub replications: u64,
    pub points: u64,
    pub jobs: u64,
    pub combine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<ManifestSample>,
    pub parameters: Vec<ManifestParameter>,
    /// Columns of `results.csv` after the fixed ones, in order.
    pub metrics: Vec<String>,
    /// The point `paired.csv` compares every point with.
    #[serde(default)]
    pub reference: u64,
    /// Versions of the crates that decide the random draws (pinned in `Cargo.toml`).
    pub crates: BTreeMap<String, String>,
    pub reproduce: Reproduce,
    pub job_order: String,
    /// Only in shard folders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl Manifest {
    pub fn new(plan: &SweepPlan, shard: Option<Shard>) -> Manifest {
        let seed0 = plan.point_seeds.first().copied().unwrap_or(plan.root_seed).to_string();
        Manifest {
            fleetsim: env!("CARGO_PKG_VERSION").to_string(),
            sweep: plan.name.clone(),
            description: plan.description.clone(),
            sweep_hash: plan.sweep_hash.clone(),
            scenario: plan.scenario_name.clone(),
            scenario_hash: plan.scenario_hash.clone(),
            root_seed: plan.root_seed,
            replications: plan.replications,
            points: plan.points.len() as u64,
            jobs: plan.jobs(),
            combine: if plan.sampling.is_some() { "sampled".into() } else { plan.combine.name().into() },
            sample: plan.sampling.map(|s| ManifestSample {
                method: s.method.name().into(),
                points: s.points,
                seed: s.seed,
            }),
            parameters: plan
                .parameters
                .iter()
                .map(|p| ManifestParameter { name: p.name.clone(), pointer: p.pointer.clone() })
                .collect(),
            metrics: plan.metrics.iter().map(|m| m.name().to_string()).collect(),
            reference: plan.reference as u64,
            crates: crate_versions(),
            reproduce: Reproduce {
                directory: "this sweep folder".into(),
                command: plan.reproduce_command("{point}", "{seed}", "{replication}"),
                example: plan.reproduce_command("0", &seed0, "0"),
            },
            job_order: "job = point × replications + replication; shard K/N runs the jobs with job mod N = K − 1"
                .into(),
            shard,
        }
    }

    pub fn metrics(&self) -> Vec<Metric> {
        self.metrics.iter().filter_map(|m| Metric::from_name(m)).collect()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("manifests serialize");
        bytes.push(b'\n');
        bytes
    }

    pub fn read(dir: &Path) -> Result<Manifest, SweepError> {
        let path = dir.join(MANIFEST);
        let text = fs::read_to_string(&path)?;
        serde_json::from_str(&text)
            .map_err(|e| SweepError::Conflict(format!("{}: not a fleetsim sweep manifest: {e}", path.display())))
    }
}

/// Versions of `rand`, `rand_chacha` and `rand_distr`: the exact pins of `Cargo.toml` (an exact pin
/// is what `Cargo.lock` resolves; a unit test checks they agree).
pub fn crate_versions() -> BTreeMap<String, String> {
    const MANIFEST_TOML: &str = include_str!("../../Cargo.toml");
    ["rand", "rand_chacha", "rand_distr"]
        .iter()
        .map(|name| {
            let version = MANIFEST_TOML
                .lines()
                .find(|l| l.strip_prefix(name).is_some_and(|rest| rest.trim_start().starts_with('=')))
                .and_then(|l| l.split_once("\"=").map(|(_, v)| v))
                .and_then(|v| v.split_once('"').map(|(v, _)| v.to_string()))
                .unwrap_or_else(|| "unpinned".to_string());
            (name.to_string(), version)
        })
        .collect()
}

/// The point table: index, seed and parameter values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointTable {
    pub parameters: Vec<String>,
    /// (seed, parameter values as text) per point.
    pub rows: Vec<(String, Vec<String>)>,
}

impl PointTable {
    pub fn of(plan: &SweepPlan) -> PointTable {
        PointTable {
            parameters: plan.parameters.iter().map(|p| p.name.clone()).collect(),
            rows: plan
                .points
                .iter()
                .zip(&plan.point_seeds)
                .map(|(values, seed)| (seed.to_string(), values.iter().map(value_text).collect()))
                .collect(),
        }
    }

    pub fn to_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["point".to_string(), "seed".to_string()];
        header.extend(self.parameters.iter().cloned());
        w.write_record(&header).expect("writing to memory");
        for (p, (seed, values)) in self.rows.iter().enumerate() {
            let mut row = vec![p.to_string(), seed.clone()];
            row.extend(values.iter().cloned());
            w.write_record(&row).expect("writing to memory");
        }
        w.into_inner().expect("writing to memory")
    }

    pub fn read(dir: &Path, manifest: &Manifest) -> Result<PointTable, SweepError> {
        let path = dir.join(POINTS_CSV);
        let bad = |why: String| SweepError::Conflict(format!("{}: {why}", path.display()));
        let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
        let parameters: Vec<String> = manifest.parameters.iter().map(|p| p.name.clone()).collect();
        let mut rows = Vec::new();
        for (p, record) in reader.records().enumerate() {
            let record = record.map_err(|e| bad(e.to_string()))?;
            let cells: Vec<String> = record.iter().map(str::to_string).collect();
            if cells.len() != parameters.len() + 2 || cells[0] != p.to_string() {
                return Err(bad(format!("row {} does not match the manifest", p + 1)));
            }
            rows.push((cells[1].clone(), cells[2..].to_vec()));
        }
        if rows.len() as u64 != manifest.points {
            return Err(bad(format!("{} points, the manifest says {}", rows.len(), manifest.points)));
        }
        Ok(PointTable { parameters, rows })
    }
}

/// Point `p`'s scenario file, relative to the folder.
pub fn point_file(plan: &SweepPlan, p: usize) -> (PathBuf, Vec<u8>) {
    let mut bytes = serde_json::to_vec_pretty(&plan.point_value(p)).expect("JSON values serialize");
    bytes.push(b'\n');
    (Path::new(POINTS_DIR).join(format!("{p}.json")), bytes)
}

/// Writes a file whole or not at all: a temporary sibling, synced, then renamed over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let mut file = fs::File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&temporary, path)
}

/// The lock file of a sweep folder: one fleetsim process writes a folder at a time.
pub const LOCK: &str = ".fleetsim-sweep.lock";

/// An exclusive advisory lock on a sweep folder, held while the process writes it (released when
/// dropped, and by the system when the process dies).
#[derive(Debug)]
pub struct FolderLock {
    file: std::fs::File,
}

impl Drop for FolderLock {
    /// Unlocks explicitly rather than by closing: a child process forked by another thread between
    /// its fork and its exec holds a copy of the descriptor, and the lock (which belongs to the open
    /// file, not to one descriptor) would outlive this one's close until that exec.
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

impl FolderLock {
    /// Locks `dir` (which must exist) or says that another process holds it.
    pub fn take(dir: &Path) -> Result<FolderLock, SweepError> {
        let path = dir.join(LOCK);
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
        match file.try_lock() {
            Ok(()) => Ok(FolderLock { file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(SweepError::Conflict(format!(
                "{} is being written by another fleetsim process; wait for it to finish, or give this one another --out (shards take one folder each)",
                dir.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(SweepError::Io(io::Error::new(e.kind(), format!("{}: cannot lock: {e}", path.display()))))
            }
        }
    }
}

/// Claims `dir` for the sweep: a new folder gets the manifest and the points; an existing one must
/// hold this very sweep (and shard), else it is refused. A folder of the same sweep with fewer
/// replications is grown: its finished replications are kept and only the new ones run. The
/// returned lock keeps other fleetsim processes out until it is dropped.
pub fn prepare(dir: &Path, plan: &SweepPlan, shard: Option<Shard>) -> Result<(Manifest, FolderLock), SweepError> {
    let manifest = Manifest::new(plan, shard);
    if fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(SweepError::Conflict(format!(
            "{} exists and is not a folder; choose another --out",
            dir.display()
        )));
    }
    let lock;
    if dir.join(MANIFEST).exists() {
        lock = FolderLock::take(dir)?;
        let found = Manifest::read(dir)?;
        if found != manifest {
            let grows = found.replications < manifest.replications
                && found == Manifest::new(&plan.with_replications(found.replications), shard);
            if let Some(shard) = shard.filter(|_| grows) {
                return Err(SweepError::Conflict(format!(
                    "{} holds shard {shard} of this sweep with {} replications: a shard cannot grow (its jobs are spread by the replication count); run the larger sweep in new shard folders",
                    dir.display(),
                    found.replications
                )));
            }
            if !grows {
                check_same(dir, &found, &manifest)?;
            }
            write_atomic(&dir.join(MANIFEST), &manifest.to_bytes())?;
        }
    } else if dir.exists() && fs::read_dir(dir)?.next().is_some() {
        return Err(SweepError::Conflict(format!(
            "{} exists and is not a sweep folder (it has no {MANIFEST}); choose another --out",
            dir.display()
        )));
    } else {
        fs::create_dir_all(dir)?;
        lock = FolderLock::take(dir)?;
        // Another process may have claimed the new folder between the check and the lock.
        if dir.join(MANIFEST).exists() {
            check_same(dir, &Manifest::read(dir)?, &manifest)?;
        } else {
            write_atomic(&dir.join(MANIFEST), &manifest.to_bytes())?;
        }
    }
    // Points next (they are deterministic, so rewriting missing ones after a kill is safe).
    fs::create_dir_all(dir.join(POINTS_DIR))?;
    remove_temporaries(dir)?;
    remove_temporaries(&dir.join(POINTS_DIR))?;
    let table = PointTable::of(plan).to_csv();
    if fs::read(dir.join(POINTS_CSV)).ok().as_deref() != Some(&table[..]) {
        write_atomic(&dir.join(POINTS_CSV), &table)?;
    }
    for p in 0..plan.points.len() {
        let target = dir.join(POINTS_DIR).join(format!("{p}.json"));
        if !target.exists() {
            let (_, bytes) = point_file(plan, p);
            write_atomic(&target, &bytes)?;
        }
    }
    Ok((manifest, lock))
}

fn check_same(dir: &Path, found: &Manifest, expected: &Manifest) -> Result<(), SweepError> {
    if found.sweep_hash != expected.sweep_hash {
        return Err(SweepError::Conflict(format!(
            "{} holds the results of another sweep (\"{}\", {}); this sweep is {}: use another --out, or delete the folder to start over",
            dir.display(),
            found.sweep,
            found.sweep_hash,
            expected.sweep_hash
        )));
    }
    if found.shard != expected.shard {
        let name = |s: Option<Shard>| s.map_or("the whole sweep".to_string(), |s| format!("shard {s}"));
        return Err(SweepError::Conflict(format!(
            "{} holds {} of this sweep, not {}: use another --out",
            dir.display(),
            name(found.shard),
            name(expected.shard)
        )));
    }
    if found != expected {
        return Err(SweepError::Conflict(format!(
            "{} was made by a different fleetsim build (its {MANIFEST} differs): use another --out",
            dir.display()
        )));
    }
    Ok(())
}

fn remove_temporaries(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.contains(".tmp-") {
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_jobs_round_robin() {
        let shard = Shard::parse("2/3").unwrap();
        assert_eq!((0..10).filter(|j| shard.owns(*j)).collect::<Vec<_>>(), vec![1, 4, 7]);
        for jobs in 0..20 {
            let total: u64 = (1..=3).map(|k| Shard { index: k, count: 3 }.share(jobs)).sum();
            assert_eq!(total, jobs);
            for k in 1..=3 {
                let s = Shard { index: k, count: 3 };
                assert_eq!(s.share(jobs), (0..jobs).filter(|j| s.owns(*j)).count() as u64);
            }
        }
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/100001"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn crate_versions_are_the_locked_ones() {
        let lock = include_str!("../../Cargo.lock");
        for (name, version) in crate_versions() {
            let entry = format!("name = \"{name}\"\nversion = \"{version}\"\n");
            assert!(lock.contains(&entry), "{name} {version} is not in Cargo.lock");
        }
    }
}
