//! Finishing a sweep: `results.csv`, `summary.csv` and the sorted journal, made from journal files.
//!
//! Two passes, so memory stays small whatever the number of replications: the first reads the
//! journals once and notes where each job's line is (16 bytes per job); the second reads the lines in
//! (point, replication) order and streams the output files, keeping only one point's values for its
//! statistics. The files are written to temporaries and renamed, so a kill leaves the old ones or the
//! new ones, never half of one.

use fs_err::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::SweepError;
use super::folder::{JOURNAL, Manifest, PointTable, RESULTS_CSV, RUN_FAILED, SUMMARY_CSV, Shard};
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
        let mut files: Vec<File> = self.files.iter().map(File::open).collect::<io::Result<_>>()?;
        let mut buffer = Vec::new();
        Ok(self.locations.iter().map(move |location| {
            assert!(*location != MISSING, "finishing needs every job");
            let file = &mut files[location.file as usize];
            file.seek(SeekFrom::Start(location.offset))?;
            buffer.resize(location.len as usize, 0);
            file.read_exact(&mut buffer)?;
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

/// Writes `results.csv`, `summary.csv` and the sorted journal of a whole sweep into `dir`.
pub fn write_finals(dir: &Path, manifest: &Manifest, points: &PointTable, index: &JobIndex) -> Result<(), SweepError> {
    if index.found != manifest.jobs {
        return Err(incomplete(index.found, manifest.jobs));
    }
    let metrics: Vec<Metric> = manifest.metrics();
    let mut journal = Temporary::create(&dir.join(JOURNAL))?;
    let mut results = csv::Writer::from_writer(Temporary::create(&dir.join(RESULTS_CSV))?);
    let mut summary = csv::Writer::from_writer(Temporary::create(&dir.join(SUMMARY_CSV))?);
    results.write_record(results_header(manifest, points)).map_err(csv_error)?;
    summary.write_record(summary_header(points)).map_err(csv_error)?;
    let mut point = PointStats::new(0, metrics.len());
    for record in index.records(metrics.len())? {
        let record = record?;
        if record.point != point.point {
            write_summary(&mut summary, points, &metrics, &point)?;
            point = PointStats::new(record.point, metrics.len());
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
    let results = results.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let summary = summary.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    // The journal last: until it is sorted, a rerun finishes again and writes the same bytes.
    results.commit()?;
    summary.commit()?;
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

const SUMMARY_COLUMNS: [&str; 10] = ["run", "metric", "n", "mean", "sd", "ci95_low", "ci95_high", "p50", "p90", "p99"];

fn summary_header(points: &PointTable) -> Vec<String> {
    let mut header = vec!["point".to_string()];
    header.extend(points.parameters.iter().cloned());
    header.extend(SUMMARY_COLUMNS.map(String::from));
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
    /// Per metric: the numeric values (empty cells left out).
    values: Vec<Vec<f64>>,
    /// Per replication of this run: whether it ended `Failed`.
    failed: Vec<bool>,
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
                    self.runs.push(RunValues { name: run.run.clone(), values, failed: Vec::new() });
                    self.runs.len() - 1
                }
            };
            let entry = &mut self.runs[at];
            for (i, (metric, cell)) in metrics.iter().zip(&run.cells).enumerate() {
                if !metric.is_numeric() {
                    entry.failed.push(cell == "Failed");
                } else if let Ok(x) = cell.parse::<f64>() {
                    entry.values[i].push(x);
                }
            }
        }
    }
}

fn write_summary<W: Write>(
    w: &mut csv::Writer<W>,
    points: &PointTable,
    metrics: &[Metric],
    point: &PointStats,
) -> Result<(), SweepError> {
    for run in &point.runs {
        for (i, metric) in metrics.iter().enumerate() {
            let (name, summary) = if metric.is_numeric() {
                (metric.name(), stats::summarize(&run.values[i]))
            } else {
                (RUN_FAILED, stats::summarize_indicator(&run.failed))
            };
            let mut cells = vec![point.point.to_string()];
            cells.extend(points.rows[point.point as usize].1.iter().cloned());
            cells.extend([run.name.clone(), name.to_string()]);
            cells.extend(summary_cells(summary));
            w.write_record(&cells).map_err(csv_error)?;
        }
    }
    Ok(())
}

fn summary_cells(summary: Option<Summary>) -> Vec<String> {
    let Some(s) = summary else {
        return std::iter::once("0".to_string()).chain(std::iter::repeat_n(String::new(), 7)).collect();
    };
    let (low, high) = s.ci95.map_or((String::new(), String::new()), |(l, h)| (number(l), number(h)));
    vec![
        s.n.to_string(),
        number(s.mean),
        s.sd.map(number).unwrap_or_default(),
        low,
        high,
        number(s.p50),
        number(s.p90),
        number(s.p99),
    ]
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
        let summary = match (n, number(3), number(5), number(6)) {
            (0, _, _, _) => None,
            (n, Some(mean), low, high) => Some(Summary {
                n,
                mean,
                sd: number(4),
                ci95: low.zip(high),
                p50: number(7).unwrap_or(mean),
                p90: number(8).unwrap_or(mean),
                p99: number(9).unwrap_or(mean),
            }),
            _ => return Err(bad("a row with a count but no mean".into())),
        };
        rows.push(SummaryRow { point, run: cell(0).to_string(), metric: cell(1).to_string(), summary });
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
    fn numbers_have_four_decimals() {
        assert_eq!(number(1.0 / 3.0), "0.3333");
        assert_eq!(number(-0.00001), "0.0000");
        assert_eq!(number(12.0), "12.0000");
    }
}
