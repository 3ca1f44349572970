//! The journal: an append-only file with one line per finished replication, so that an interrupted
//! sweep keeps what it wrote and redoes none of it.
//!
//! Each line is a JSON array `[point, replication, [[run, cell, …], …]]` ending in `\n`, written with
//! the other lines of its batch (a worker's, see [`super::exec`]) in one `write` call: a process
//! killed at any moment leaves whole lines and at most one torn last line, which has no `\n`. Opening
//! the journal truncates such a tail, so new lines never glue onto a fragment. Lines are flushed to
//! disk (`fsync`) every 1,024 lines or second; a kill -9 loses nothing written even between syncs
//! (the page cache survives the process), only what workers had not handed to the writer yet (about
//! 50 ms of replications each); a power cut may lose the lines not synced yet. Those replications
//! are simply run again.
//!
//! The order of lines follows thread timing; when a sweep finishes, the journal is rewritten in
//! (point, replication) order ([`super::finish`]), so finished folders are byte-identical however they
//! were produced.

use fs_err::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::ser::{Serialize, SerializeSeq, Serializer};

use super::metrics::RunMetrics;

/// Sync to disk after this many lines or this much time, whichever comes first.
const SYNC_EVERY_LINES: usize = 1024;
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// The metrics of one finished replication of one point.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JobRecord {
    pub point: u64,
    pub replication: u64,
    pub runs: Vec<RunMetrics>,
}

impl JobRecord {
    /// The journal line, with its `\n`: the record written by serde straight from its fields, the
    /// bytes `serde_json::Value`'s compact text would be (a test compares them), without building
    /// and dropping a tree of values for every line.
    pub fn to_line(&self) -> String {
        let size = self.runs.iter().map(|r| r.run.len() + r.cells.iter().map(|c| c.len() + 3).sum::<usize>() + 5);
        let mut line = Vec::with_capacity(48 + size.sum::<usize>());
        serde_json::to_writer(&mut line, &Line(self)).expect("a record serializes");
        line.push(b'\n');
        String::from_utf8(line).expect("serde_json writes UTF-8")
    }

    /// Parses a line (without its `\n`); `None` if it is not a record with `cells` cells per run.
    pub fn parse(line: &str, cells: usize) -> Option<JobRecord> {
        // Exactly `[point, replication, [[run, cell, …], …]]`: other lengths, types or trailing
        // text fail to deserialize.
        let (point, replication, runs): (u64, u64, Vec<Vec<String>>) = serde_json::from_str(line).ok()?;
        let runs = runs
            .into_iter()
            .map(|mut text| {
                if text.len() != cells + 1 {
                    return None;
                }
                let run = text.remove(0);
                Some(RunMetrics { run, cells: text })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(JobRecord { point, replication, runs })
    }
}

/// A record as its journal line has it: `[point, replication, [[run, cell, …], …]]`.
struct Line<'a>(&'a JobRecord);

/// One run of a record: its name, then its cells.
struct RunCells<'a>(&'a RunMetrics);

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let runs: Vec<RunCells> = self.0.runs.iter().map(RunCells).collect();
        (self.0.point, self.0.replication, runs).serialize(serializer)
    }
}

impl Serialize for RunCells<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.cells.len() + 1))?;
        seq.serialize_element(&self.0.run)?;
        for cell in &self.0.cells {
            seq.serialize_element(cell)?;
        }
        seq.end()
    }
}

/// What reading a journal found.
#[derive(Debug, Default)]
pub struct Contents {
    pub records: Vec<JobRecord>,
    /// Complete lines that were not records (1-based line numbers); their replications run again.
    pub bad_lines: Vec<usize>,
    /// Bytes of a torn last line that were cut off.
    pub torn_bytes: usize,
}

/// An open journal, appending.
pub struct Journal {
    file: File,
    unsynced: usize,
    last_sync: Instant,
}

impl Journal {
    /// Opens or creates the journal, reads its records and cuts off a torn last line.
    pub fn open(path: &Path, cells: usize) -> io::Result<(Journal, Contents)> {
        let (journal, bytes, torn_bytes) = Journal::open_lines(path)?;
        let mut contents = parse(&bytes, cells);
        contents.torn_bytes = torn_bytes;
        Ok((journal, contents))
    }

    /// Opens or creates a journal of any line format: its complete lines (with their `\n`) and
    /// how many bytes of a torn last line were cut off.
    pub fn open_lines(path: &Path) -> io::Result<(Journal, Vec<u8>, usize)> {
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let torn = bytes.len() - complete;
        if torn > 0 {
            file.set_len(complete as u64)?;
            file.sync_data()?;
        }
        file.seek(SeekFrom::End(0))?;
        bytes.truncate(complete);
        Ok((Journal { file, unsynced: 0, last_sync: Instant::now() }, bytes, torn))
    }

    /// Appends whole lines (one or more, each ending in a newline) in a single `write` call.
    pub fn append(&mut self, lines: &str) -> io::Result<()> {
        debug_assert!(lines.ends_with('\n'));
        let written = self.file.write(lines.as_bytes())?;
        if written != lines.len() {
            // A short write to a regular file means the disk is full or similar; finish the lines so
            // the journal stays line-structured, and report the problem.
            self.file.write_all(&lines.as_bytes()[written..])?;
        }
        self.unsynced += memchr::memchr_iter(b'\n', lines.as_bytes()).count();
        if self.unsynced >= SYNC_EVERY_LINES || self.last_sync.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    pub fn sync(&mut self) -> io::Result<()> {
        if self.unsynced > 0 {
            self.file.sync_data()?;
            self.unsynced = 0;
        }
        self.last_sync = Instant::now();
        Ok(())
    }
}

/// The complete lines of a journal of any line format, without changing it (a torn last line is
/// ignored).
pub fn read_lines(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = fs_err::read(path)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    Ok(bytes)
}

/// Reads a journal without changing it (a torn last line is ignored).
pub fn read(path: &Path, cells: usize) -> io::Result<Contents> {
    let bytes = fs_err::read(path)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut contents = parse(&bytes[..complete], cells);
    contents.torn_bytes = bytes.len() - complete;
    Ok(contents)
}

fn parse(bytes: &[u8], cells: usize) -> Contents {
    let mut contents = Contents::default();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        match std::str::from_utf8(line).ok().and_then(|l| JobRecord::parse(l, cells)) {
            Some(record) => contents.records.push(record),
            None => contents.bad_lines.push(i + 1),
        }
    }
    contents
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn record(point: u64, replication: u64) -> JobRecord {
        JobRecord {
            point,
            replication,
            runs: vec![RunMetrics { run: "r\"1".into(), cells: vec!["1.5".into(), String::new()] }],
        }
    }

    /// A line as `serde_json::Value` writes it, as lines were written before [`Line`].
    fn line_by_value(record: &JobRecord) -> String {
        let runs: Vec<Value> = record
            .runs
            .iter()
            .map(|r| Value::Array(std::iter::once(&r.run).chain(&r.cells).cloned().map(Value::String).collect()))
            .collect();
        format!("{}\n", serde_json::json!([record.point, record.replication, runs]))
    }

    /// A line read through `serde_json::Value`, as lines were read before the typed reading.
    fn parse_by_value(line: &str, cells: usize) -> Option<JobRecord> {
        let value: Value = serde_json::from_str(line).ok()?;
        let [point, replication, runs] = value.as_array()?.as_slice() else { return None };
        let runs = runs
            .as_array()?
            .iter()
            .map(|r| {
                let mut text: Vec<String> =
                    r.as_array()?.iter().map(|c| c.as_str().map(str::to_string)).collect::<Option<_>>()?;
                (text.len() == cells + 1).then(|| RunMetrics { run: text.remove(0), cells: text })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(JobRecord { point: point.as_u64()?, replication: replication.as_u64()?, runs })
    }

    #[test]
    fn lines_are_written_and_read_as_json_values_write_and_read_them() {
        let texts = ["", "r\"1", "a\\b", "tab\there", "new\nline", "\u{1}\u{1f}\u{7f}", "é ü ✓ 😀", "</script>", "1.5"];
        for (i, run) in texts.iter().enumerate() {
            let cells =
                |k: usize| vec![texts[(i + k) % texts.len()].to_string(), texts[(i * 7 + k) % texts.len()].to_string()];
            let runs = vec![
                RunMetrics { run: run.to_string(), cells: cells(1) },
                RunMetrics { run: format!("{run}-2"), cells: cells(2) },
            ];
            let record = JobRecord { point: i as u64, replication: u64::MAX - i as u64, runs };
            let line = record.to_line();
            assert_eq!(line, line_by_value(&record));
            assert_eq!(JobRecord::parse(line.trim_end(), 2), Some(record));
        }
        let empty = JobRecord { point: 0, replication: 0, runs: Vec::new() };
        assert_eq!(empty.to_line(), line_by_value(&empty));
        let lines = [
            "[1,2,[]]",
            " [ 1 , 2 , [ [ \"r\" , \"a\" , \"\" ] ] ] ",
            "[1,2,[[\"r\",\"a\",\"\"],[\"s\",\"b\",\"c\"]]]",
            "",
            "[]",
            "[1,2]",
            "[1,2,[],3]",
            "[-1,2,[]]",
            "[1.0,2,[]]",
            "[1,2.5,[]]",
            "[18446744073709551616,0,[]]",
            "[1,2,[[\"r\",1,\"\"]]]",
            "[1,2,[[null,\"\",\"\"]]]",
            "[1,2,[[\"r\",\"1\"]]]",
            "[1,2,[[\"r\",\"1\",\"\",\"\"]]]",
            "[1,2,[\"r\",\"1\",\"\"]]",
            "[1,2,{}]",
            "[1,2,[[\"r\",\"1\",\"\"]]] x",
            "[1,2,[[\"r\",\"1\",\"\"]]",
            "{\"point\":1}",
            "[1,2,[[\"r\",\"\\ud800\",\"\"]]]",
        ];
        for line in lines {
            assert_eq!(JobRecord::parse(line, 2), parse_by_value(line, 2), "{line}");
        }
        assert_eq!(lines.iter().filter(|l| JobRecord::parse(l, 2).is_some()).count(), 3);
    }

    #[test]
    fn lines_round_trip() {
        let line = record(3, 17).to_line();
        assert_eq!(line, "[3,17,[[\"r\\\"1\",\"1.5\",\"\"]]]\n");
        assert_eq!(JobRecord::parse(line.trim_end(), 2), Some(record(3, 17)));
        assert_eq!(JobRecord::parse(line.trim_end(), 3), None);
        assert_eq!(JobRecord::parse("[3,17", 2), None);
    }

    #[test]
    fn a_torn_tail_is_cut_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let torn = record(1, 0).to_line();
        std::fs::write(&path, format!("{}garbage\n{}", record(0, 0).to_line(), &torn[..5])).unwrap();
        let (mut journal, contents) = Journal::open(&path, 2).unwrap();
        assert_eq!(contents.records, vec![record(0, 0)]);
        assert_eq!(contents.bad_lines, vec![2]);
        assert_eq!(contents.torn_bytes, 5);
        journal.append(&record(1, 0).to_line()).unwrap();
        journal.sync().unwrap();
        let again = read(&path, 2).unwrap();
        assert_eq!(again.records, vec![record(0, 0), record(1, 0)]);
        assert_eq!(again.torn_bytes, 0);
    }

    #[test]
    fn a_batch_of_lines_is_appended_whole_and_counted_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let (mut journal, _) = Journal::open(&path, 2).unwrap();
        let batch: String = (0..3).map(|r| record(2, r).to_line()).collect();
        journal.append(&batch).unwrap();
        assert_eq!(journal.unsynced, 3, "three lines wait for a sync");
        journal.append(&record(2, 3).to_line()).unwrap();
        assert_eq!(journal.unsynced, 4);
        let read_back = read(&path, 2).unwrap();
        assert_eq!(read_back.records, (0..4).map(|r| record(2, r)).collect::<Vec<_>>());
        assert_eq!((read_back.bad_lines.len(), read_back.torn_bytes), (0, 0));
        // Enough lines at once are synced at once.
        let many: String = (0..SYNC_EVERY_LINES as u64).map(|r| record(3, r).to_line()).collect();
        journal.append(&many).unwrap();
        assert_eq!(journal.unsynced, 0, "{} lines were synced", SYNC_EVERY_LINES + 4);
    }
}
