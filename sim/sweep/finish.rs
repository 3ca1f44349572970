//! Finishing a sweep: `results.csv`, `summary.csv` and the sorted journal, made from journal files.
//!
//! Two passes, so memory stays small whatever the number of replications: the first reads the
//! journals once and notes where each job's line is (16 bytes per job); the second reads the lines in
//! (point, replication) order and streams the output files, keeping only one point's values for its
//! statistics. The files are written to temporaries and renamed, so a kill leaves the old ones or the
//! new ones, never half of one.

use fs_err::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::SweepError;
use super::folder::{JOURNAL, Manifest, PAIRED_CSV, PointTable, RESULTS_CSV, RUN_FAILED, SUMMARY_CSV, Shard};
use super::journal::JobRecord;
use super::metrics::Metric;
use super::stats::{self, Summary};

/// Where a job's line is: which journal file, at which byte, how long (without its `\n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Location {
    file: u32,
    len: u32,
    offset: u64,
}

const MISSING: Location = Location { file: u32::MAX, len: 0, offset: 0 };

/// A journal file and the shard whose jobs it may hold (`None`: any job).
pub struct Source {
    pub path: PathBuf,
    pub shard: Option<Shard>,
}

/// Where every job of a sweep is recorded.
pub struct JobIndex {
    locations: Vec<Location>,
    found: u64,
    files: Vec<PathBuf>,
}

impl JobIndex {
    /// Reads the journals once. Lines that are torn, unreadable, out of range, of another shard or a
    /// second record of a job are passed over (the first record of a job wins: any later one can only
    /// come from a second process computing the same deterministic result).
    pub fn build(sources: &[Source], manifest: &Manifest) -> io::Result<JobIndex> {
        let mut locations = vec![MISSING; manifest.jobs as usize];
        let mut found = 0;
        let cells = manifest.metrics.len();
        for (file, source) in sources.iter().enumerate() {
            let mut reader = BufReader::new(File::open(&source.path)?);
            let mut line = Vec::new();
            let mut offset = 0u64;
            loop {
                line.clear();
                let n = reader.read_until(b'\n', &mut line)?;
                if n == 0 || line.last() != Some(&b'\n') {
                    break;
                }
                let record = std::str::from_utf8(&line[..n - 1]).ok().and_then(|l| JobRecord::parse(l, cells));
                if let Some(job) = record.and_then(|r| job_of(&r, manifest, source.shard))
                    && locations[job as usize] == MISSING
                {
                    locations[job as usize] = Location { file: file as u32, len: (n - 1) as u32, offset };
                    found += 1;
                }
                offset += n as u64;
            }
        }
        Ok(JobIndex { locations, found, files: sources.iter().map(|s| s.path.clone()).collect() })
    }

    pub fn found(&self) -> u64 {
        self.found
    }

    /// How many of the jobs for which `wanted` holds were found.
    pub fn found_where(&self, wanted: impl Fn(u64) -> bool) -> u64 {
        self.locations.iter().enumerate().filter(|(j, l)| **l != MISSING && wanted(*j as u64)).count() as u64
    }

    /// The records in job order, read back from the journals.
    fn records(&self, cells: usize) -> io::Result<impl Iterator<Item = io::Result<JobRecord>> + '_> {
        self.records_of(cells, 0..self.locations.len())
    }

    /// The records of the jobs in `jobs`, in job order.
    fn records_of(
        &self,
        cells: usize,
        jobs: std::ops::Range<usize>,
    ) -> io::Result<impl Iterator<Item = io::Result<JobRecord>> + '_> {
        // Each journal through a buffer, with where it stands: records of one process's run are
        // mostly in job order, so the next one is usually in the buffer already (one read per
        // buffer, not a seek and a read per record).
        let mut files: Vec<(BufReader<File>, u64)> = self
            .files
            .iter()
            .map(|path| Ok((BufReader::with_capacity(1 << 16, File::open(path)?), 0)))
            .collect::<io::Result<_>>()?;
        let mut buffer = Vec::new();
        Ok(self.locations[jobs].iter().map(move |location| {
            assert!(*location != MISSING, "finishing needs every job");
            let (file, at) = &mut files[location.file as usize];
            if *at != location.offset {
                // Within the buffer this moves in it; beyond, it seeks the file.
                file.seek_relative(location.offset as i64 - *at as i64)?;
            }
            buffer.resize(location.len as usize, 0);
            file.read_exact(&mut buffer)?;
            *at = location.offset + u64::from(location.len);
            let text = std::str::from_utf8(&buffer).map_err(io::Error::other)?;
            JobRecord::parse(text, cells).ok_or_else(|| io::Error::other("a journal line changed while finishing"))
        }))
    }
}

/// The job index of a record, if the record belongs to the sweep (and shard).
fn job_of(record: &JobRecord, manifest: &Manifest, shard: Option<Shard>) -> Option<u64> {
    let job = record.point.checked_mul(manifest.replications)?.checked_add(record.replication)?;
    let valid = record.point < manifest.points
        && record.replication < manifest.replications
        && shard.is_none_or(|s| s.owns(job));
    valid.then_some(job)
}

/// Writes the journal of a finished shard in job order (the jobs of other shards are absent).
pub fn write_shard_journal(dir: &Path, index: &JobIndex, manifest: &Manifest) -> Result<(), SweepError> {
    let shard = manifest.shard.expect("a shard folder");
    let expected = shard.share(manifest.jobs);
    let present: Vec<usize> = (0..index.locations.len()).filter(|j| shard.owns(*j as u64)).collect();
    if index.found != expected || present.iter().any(|j| index.locations[*j] == MISSING) {
        return Err(incomplete(index.found, expected));
    }
    let only_shard = JobIndex {
        locations: present.iter().map(|j| index.locations[*j]).collect(),
        found: index.found,
        files: index.files.clone(),
    };
    let mut journal = Temporary::create(&dir.join(JOURNAL))?;
    for record in only_shard.records(manifest.metrics.len())? {
        journal.writer.write_all(record?.to_line().as_bytes())?;
    }
    journal.commit()?;
    Ok(())
}

pub fn incomplete(found: u64, expected: u64) -> SweepError {
    SweepError::Conflict(format!(
        "the journal has {found} of {expected} replications; run the sweep again to finish it"
    ))
}

/// Writes `results.csv`, `summary.csv`, `paired.csv` and the sorted journal of a whole sweep into
/// `dir`.
pub fn write_finals(dir: &Path, manifest: &Manifest, points: &PointTable, index: &JobIndex) -> Result<(), SweepError> {
    if index.found != manifest.jobs {
        return Err(incomplete(index.found, manifest.jobs));
    }
    let metrics: Vec<Metric> = manifest.metrics();
    let cells = metrics.len();
    // The reference point's values, read first: every point is paired with them.
    let reference_point = manifest.reference.min(manifest.points.saturating_sub(1));
    let mut reference = PointStats::new(reference_point, cells);
    let first = (reference_point * manifest.replications) as usize;
    for record in index.records_of(cells, first..first + manifest.replications as usize)? {
        reference.add(&record?, &metrics);
    }
    let mut journal = Temporary::create(&dir.join(JOURNAL))?;
    let mut results = csv::Writer::from_writer(Temporary::create(&dir.join(RESULTS_CSV))?);
    let mut summary = csv::Writer::from_writer(Temporary::create(&dir.join(SUMMARY_CSV))?);
    let mut paired = csv::Writer::from_writer(Temporary::create(&dir.join(PAIRED_CSV))?);
    results.write_record(results_header(manifest, points)).map_err(csv_error)?;
    summary.write_record(summary_header(points)).map_err(csv_error)?;
    paired.write_record(paired_header(points)).map_err(csv_error)?;
    let mut point = PointStats::new(0, cells);
    for record in index.records(cells)? {
        let record = record?;
        if record.point != point.point {
            write_summary(&mut summary, points, &metrics, &point)?;
            write_paired(&mut paired, points, &metrics, &point, &reference)?;
            point = PointStats::new(record.point, cells);
        }
        journal.writer.write_all(record.to_line().as_bytes())?;
        let (seed, values) = &points.rows[record.point as usize];
        for run in &record.runs {
            let mut row = vec![record.point.to_string()];
            row.extend(values.iter().cloned());
            row.extend([record.replication.to_string(), seed.clone(), run.run.clone()]);
            row.extend(run.cells.iter().cloned());
            results.write_record(&row).map_err(csv_error)?;
        }
        point.add(&record, &metrics);
    }
    write_summary(&mut summary, points, &metrics, &point)?;
    write_paired(&mut paired, points, &metrics, &point, &reference)?;
    let results = results.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let summary = summary.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let paired = paired.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    // The journal last: until it is sorted, a rerun finishes again and writes the same bytes.
    results.commit()?;
    summary.commit()?;
    paired.commit()?;
    journal.commit()?;
    Ok(())
}

fn csv_error(e: csv::Error) -> SweepError {
    SweepError::Io(io::Error::other(e.to_string()))
}

fn results_header(manifest: &Manifest, points: &PointTable) -> Vec<String> {
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    header.extend(["replication", "seed", "run"].map(String::from));
    header.extend(manifest.metrics.iter().cloned());
    header
}

/// After `point` and the parameters. `reached`: the fraction of the run's replications in which the
/// metric had a value (every statistic after it is over those replications).
pub const SUMMARY_COLUMNS: [&str; 20] = [
    "run",
    "metric",
    "n",
    "reached",
    "mean",
    "sd",
    "ci95_low",
    "ci95_high",
    "p50",
    "p50_low",
    "p50_high",
    "p90",
    "p90_low",
    "p90_high",
    "p95",
    "p95_low",
    "p95_high",
    "p99",
    "p99_low",
    "p99_high",
];

fn summary_header(points: &PointTable) -> Vec<String> {
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    header.extend(SUMMARY_COLUMNS.map(String::from));
    header
}

/// After `point` and the parameters: the point minus the reference, replication by replication.
pub const PAIRED_COLUMNS: [&str; 8] =
    ["run", "metric", "reference", "n", "mean_diff", "ci95_low", "ci95_high", "p_better"];

fn paired_header(points: &PointTable) -> Vec<String> {
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    header.extend(PAIRED_COLUMNS.map(String::from));
    header
}

/// One point's values, per run (in the order runs first appear) and metric, in replication order.
struct PointStats {
    point: u64,
    metrics: usize,
    runs: Vec<RunValues>,
}

struct RunValues {
    name: String,
    /// The replications this run has rows in, ascending.
    replications: Vec<u64>,
    /// Per metric, per replication of `replications`: the number (`runState`: 1 when `Failed`);
    /// `None` for an empty cell.
    values: Vec<Vec<Option<f64>>>,
}

impl RunValues {
    fn present(&self, metric: usize) -> Vec<f64> {
        self.values[metric].iter().flatten().copied().collect()
    }
}

impl PointStats {
    fn new(point: u64, metrics: usize) -> PointStats {
        PointStats { point, metrics, runs: Vec::new() }
    }

    fn add(&mut self, record: &JobRecord, metrics: &[Metric]) {
        for run in &record.runs {
            let at = match self.runs.iter().position(|r| r.name == run.run) {
                Some(i) => i,
                None => {
                    let values = vec![Vec::new(); self.metrics];
                    self.runs.push(RunValues { name: run.run.clone(), replications: Vec::new(), values });
                    self.runs.len() - 1
                }
            };
            let entry = &mut self.runs[at];
            entry.replications.push(record.replication);
            for (i, (metric, cell)) in metrics.iter().zip(&run.cells).enumerate() {
                let value = if metric.is_numeric() {
                    cell.parse::<f64>().ok()
                } else {
                    Some(if cell == "Failed" { 1.0 } else { 0.0 })
                };
                entry.values[i].push(value);
            }
        }
    }
}

/// The summary row's name of a metric (`runState` is summarised as `runFailed`).
fn row_name(metric: Metric) -> &'static str {
    if metric.is_numeric() { metric.name() } else { RUN_FAILED }
}

fn write_summary<W: Write>(
    w: &mut csv::Writer<W>,
    points: &PointTable,
    metrics: &[Metric],
    point: &PointStats,
) -> Result<(), SweepError> {
    for run in &point.runs {
        for (i, metric) in metrics.iter().enumerate() {
            let values = run.present(i);
            let summary = if metric.is_indicator() || !metric.is_numeric() {
                stats::summarize_indicator(&values.iter().map(|v| *v != 0.0).collect::<Vec<_>>())
            } else {
                stats::summarize(&values)
            };
            let mut cells = vec![point.point.to_string()];
            cells.extend(points.rows[point.point as usize].1.iter().cloned());
            cells.extend([run.name.clone(), row_name(*metric).to_string()]);
            cells.extend(summary_cells(summary, run.replications.len()));
            w.write_record(&cells).map_err(csv_error)?;
        }
    }
    Ok(())
}

fn summary_cells(summary: Option<Summary>, replications: usize) -> Vec<String> {
    let Some(s) = summary else {
        let mut cells = vec!["0".to_string(), number(0.0)];
        cells.extend(std::iter::repeat_n(String::new(), SUMMARY_COLUMNS.len() - 4));
        return cells;
    };
    let (low, high) = s.ci95.map_or((String::new(), String::new()), |(l, h)| (number(l), number(h)));
    let mut cells = vec![
        s.n.to_string(),
        number(s.n as f64 / replications.max(1) as f64),
        number(s.mean),
        s.sd.map(number).unwrap_or_default(),
        low,
        high,
    ];
    for (q, (l, h)) in [s.p50, s.p90, s.p95, s.p99].into_iter().zip(s.quantile_ci) {
        cells.extend([number(q), number(l), number(h)]);
    }
    cells
}

/// The paired difference of one metric between a point and the reference: over the replications in
/// which both have a value, `point − reference`, its mean with Student's t interval, and the share
/// of those replications in which the point is strictly better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    pub n: usize,
    pub mean_diff: f64,
    pub ci95: Option<(f64, f64)>,
    /// `None` for metrics that are neither better nor worse when lower.
    pub p_better: Option<f64>,
}

/// Pairs two runs' values of one metric by replication number (both ascending).
pub fn paired(
    replications: &[u64],
    values: &[Option<f64>],
    reference_replications: &[u64],
    reference_values: &[Option<f64>],
    lower_is_better: Option<bool>,
) -> Option<Paired> {
    let mut diffs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < replications.len() && j < reference_replications.len() {
        match replications[i].cmp(&reference_replications[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if let (Some(a), Some(b)) = (values[i], reference_values[j]) {
                    diffs.push(a - b);
                }
                i += 1;
                j += 1;
            }
        }
    }
    let s = stats::summarize(&diffs)?;
    let better = |d: &f64| match lower_is_better {
        Some(true) => *d < 0.0,
        Some(false) => *d > 0.0,
        None => false,
    };
    let p_better = lower_is_better.map(|_| diffs.iter().filter(|d| better(d)).count() as f64 / diffs.len() as f64);
    Some(Paired { n: s.n, mean_diff: s.mean, ci95: s.ci95, p_better })
}

fn write_paired<W: Write>(
    w: &mut csv::Writer<W>,
    points: &PointTable,
    metrics: &[Metric],
    point: &PointStats,
    reference: &PointStats,
) -> Result<(), SweepError> {
    for run in &point.runs {
        let Some(base) = reference.runs.iter().find(|r| r.name == run.name) else {
            continue;
        };
        for (i, metric) in metrics.iter().enumerate() {
            let better = if metric.is_numeric() { metric.lower_is_better() } else { Some(true) };
            let pair = paired(&run.replications, &run.values[i], &base.replications, &base.values[i], better);
            let mut cells = vec![point.point.to_string()];
            cells.extend(points.rows[point.point as usize].1.iter().cloned());
            cells.extend([run.name.clone(), row_name(*metric).to_string(), reference.point.to_string()]);
            match pair {
                None => cells.extend(["0".to_string(), String::new(), String::new(), String::new(), String::new()]),
                Some(p) => {
                    let (low, high) = p.ci95.map_or((String::new(), String::new()), |(l, h)| (number(l), number(h)));
                    cells.extend([
                        p.n.to_string(),
                        number(p.mean_diff),
                        low,
                        high,
                        p.p_better.map(number).unwrap_or_default(),
                    ]);
                }
            }
            w.write_record(&cells).map_err(csv_error)?;
        }
    }
    Ok(())
}

/// Four decimals, never `-0.0000`.
fn number(x: f64) -> String {
    let text = format!("{x:.4}");
    if text == "-0.0000" { "0.0000".to_string() } else { text }
}

/// One row of `summary.csv`, as read back (for chart data).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub point: usize,
    pub run: String,
    /// A metric name, or [`RUN_FAILED`].
    pub metric: String,
    /// The fraction of the run's replications in which the metric had a value.
    pub reached: f64,
    pub summary: Option<Summary>,
}

/// Reads a finished folder's `summary.csv`.
pub fn read_summary(dir: &Path, points: &PointTable) -> Result<Vec<SummaryRow>, SweepError> {
    let path = dir.join(SUMMARY_CSV);
    let bad = |why: String| SweepError::Conflict(format!("{}: {why}", path.display()));
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    let first = 1 + points.parameters.len();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let cell = |i: usize| record.get(first + i).unwrap_or("");
        let number = |i: usize| cell(i).parse::<f64>().ok();
        let point = record.get(0).and_then(|p| p.parse().ok()).ok_or_else(|| bad("a row without a point".into()))?;
        let n: usize = cell(2).parse().unwrap_or(0);
        let summary = match (n, number(4), number(6), number(7)) {
            (0, _, _, _) => None,
            (n, Some(mean), low, high) => {
                let q = |k: usize| number(8 + 3 * k).unwrap_or(mean);
                let qci = |k: usize| (number(9 + 3 * k).unwrap_or(mean), number(10 + 3 * k).unwrap_or(mean));
                Some(Summary {
                    n,
                    mean,
                    sd: number(5),
                    ci95: low.zip(high),
                    p50: q(0),
                    p90: q(1),
                    p95: q(2),
                    p99: q(3),
                    quantile_ci: [qci(0), qci(1), qci(2), qci(3)],
                })
            }
            _ => return Err(bad("a row with a count but no mean".into())),
        };
        let reached = number(3).unwrap_or(0.0);
        rows.push(SummaryRow { point, run: cell(0).to_string(), metric: cell(1).to_string(), reached, summary });
    }
    Ok(rows)
}

/// One row of `paired.csv`, as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedRow {
    pub point: usize,
    pub run: String,
    pub metric: String,
    pub reference: usize,
    pub paired: Option<Paired>,
}

/// Reads a finished folder's `paired.csv` (none in folders finished by an older fleetsim).
pub fn read_paired(dir: &Path, points: &PointTable) -> Result<Vec<PairedRow>, SweepError> {
    let path = dir.join(PAIRED_CSV);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let bad = |why: String| SweepError::Conflict(format!("{}: {why}", path.display()));
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    let first = 1 + points.parameters.len();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let cell = |i: usize| record.get(first + i).unwrap_or("");
        let number = |i: usize| cell(i).parse::<f64>().ok();
        let point = record.get(0).and_then(|p| p.parse().ok()).ok_or_else(|| bad("a row without a point".into()))?;
        let n: usize = cell(3).parse().unwrap_or(0);
        let paired = match (n, number(4)) {
            (0, _) | (_, None) => None,
            (n, Some(mean_diff)) => Some(Paired { n, mean_diff, ci95: number(5).zip(number(6)), p_better: number(7) }),
        };
        rows.push(PairedRow {
            point,
            run: cell(0).to_string(),
            metric: cell(1).to_string(),
            reference: cell(2).parse().unwrap_or(0),
            paired,
        });
    }
    Ok(rows)
}

/// A file written under a temporary name next to its target, synced, then renamed over it.
struct Temporary {
    writer: BufWriter<File>,
    temporary: PathBuf,
    target: PathBuf,
}

impl Temporary {
    fn create(target: &Path) -> io::Result<Temporary> {
        let name = target.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let temporary = target.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        Ok(Temporary { writer: BufWriter::new(File::create(&temporary)?), temporary, target: target.to_path_buf() })
    }

    fn commit(self) -> io::Result<()> {
        let file = self.writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs_err::rename(&self.temporary, &self.target)
    }
}

impl Write for Temporary {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_interval_holds_a_known_difference() {
        // The point is the reference plus 2 in every replication, plus noise that averages out: the
        // mean difference is 2 and its interval is tight around it.
        let replications: Vec<u64> = (0..100).collect();
        let reference: Vec<Option<f64>> = replications.iter().map(|r| Some((*r % 7) as f64 * 3.0)).collect();
        let noise = |r: u64| if r.is_multiple_of(2) { 0.5 } else { -0.5 };
        let point: Vec<Option<f64>> =
            replications.iter().map(|r| Some((*r % 7) as f64 * 3.0 + 2.0 + noise(*r))).collect();
        let p = paired(&replications, &point, &replications, &reference, Some(true)).unwrap();
        assert_eq!(p.n, 100);
        assert!((p.mean_diff - 2.0).abs() < 1e-12, "{}", p.mean_diff);
        let (low, high) = p.ci95.unwrap();
        // sd of ±0.5 is 0.5025; t(99) × 0.5025 / 10 ≈ 0.0997
        assert!((low - 1.9003).abs() < 1e-3 && (high - 2.0997).abs() < 1e-3, "{low} {high}");
        assert_eq!(p.p_better, Some(0.0), "never lower, so never better");
        // Pairs are made by replication: a missing value or replication drops only that pair.
        let mut gappy = point.clone();
        gappy[3] = None;
        let fewer = paired(&replications[..50], &gappy[..50], &replications, &reference, None).unwrap();
        assert_eq!((fewer.n, fewer.p_better), (49, None));
        assert!(paired(&[], &[], &replications, &reference, Some(true)).is_none());
    }

    #[test]
    fn numbers_have_four_decimals() {
        assert_eq!(number(1.0 / 3.0), "0.3333");
        assert_eq!(number(-0.00001), "0.0000");
        assert_eq!(number(12.0), "12.0000");
    }
}
