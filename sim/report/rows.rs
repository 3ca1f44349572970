//! The large CSV files of a report (`members.csv`, `timeline.csv`, `versions.csv`) written row by
//! row into one buffer: the same bytes as the `csv` crate's default writer
//! (`csv::Writer::from_writer`), in less time.
//!
//! The `csv` writer runs every field through its general state machine (configurable quote,
//! escape, terminator and quoting style, each field copied in pieces as its output buffer fills):
//! a report of a year of auto-upgrades writes 140,000 rows of 13 and 10 fields, and writing them
//! here takes about a quarter less time (`members.csv` 30 → 22 ms, `timeline.csv` 22 → 17 ms). A
//! field is scanned once for the four bytes that make the default writer quote it (`,` `"` `\n`
//! `\r`), 16 bytes at a time (fields of 8 to 15 bytes as two overlapping words, shorter ones byte
//! by byte), and copied whole; one that has them is quoted with its `"` doubled, as the default
//! writer does, found by `memchr`. With fields scanned a byte at a time, that year's two files took
//! 344 M instructions; checked a chunk at a time, with the skipped members' quoted messages copied
//! between their quotes, 277 M. The smaller files keep the `csv` crate, and tests compare the two
//! writers on random fields and on every special byte at every place of fields up to 50 bytes long.

use std::io::{self, Write};

/// Flushed to the output when the buffer holds this much (the status files' member lists too):
/// pieces this large go to a report's file without another copy ([`crate::output::WRITE_THROUGH`]).
pub(crate) const FLUSH_AT: usize = crate::output::WRITE_THROUGH;

/// Writes rows of fields to `out` as `csv::Writer::from_writer(out)` writes them with
/// `write_record` (fields separated by `,`, rows ended by `\n`, a field quoted only when it must
/// be).
pub struct Rows<'w> {
    out: &'w mut dyn Write,
    buf: Vec<u8>,
}

impl<'w> Rows<'w> {
    pub fn new(out: &'w mut dyn Write) -> Rows<'w> {
        Rows { out, buf: Vec::with_capacity(FLUSH_AT + 4096) }
    }

    /// One row. A row of one empty field, or of none, is written `""`, as the `csv` writer writes
    /// it (a bare empty line would read as no row at all).
    pub fn row(&mut self, fields: &[&str]) -> io::Result<()> {
        if fields.is_empty() || fields == [""] {
            self.buf.extend_from_slice(b"\"\"\n");
        } else {
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                push_field(&mut self.buf, field.as_bytes());
            }
            self.buf.push(b'\n');
        }
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is left in the buffer and flushes the output.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }
}

/// The bytes that make the `csv` crate's default writer quote a field: its delimiter, its quote and
/// both line ends.
const QUOTED: [u8; 4] = [b',', b'"', b'\n', b'\r'];

/// Whether byte `b` is one of [`QUOTED`].
#[inline(always)]
fn special(b: u8) -> bool {
    // Four comparisons without a branch, which the compiler makes wide over an array of bytes.
    QUOTED.iter().fold(false, |any, &c| any | (b == c))
}

/// Whether any of the 8 bytes is one of [`QUOTED`], as one word: a byte equal to `c` is a zero byte of
/// `word ^ c…c`, and `(v - 0x01…01) & !v & 0x80…80` is not zero exactly when `v` has a zero byte.
#[inline(always)]
fn any_special_in_word(bytes: &[u8; 8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let word = u64::from_ne_bytes(*bytes);
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    QUOTED.iter().fold(0, |any, &c| any | zero_byte(word ^ (u64::from(c) * ONES))) != 0
}

/// Whether the field has a [`special`] byte: checked 16 bytes at a time (the last 16 ending it), a
/// field of 8 to 15 bytes as the two words that start and end it, a shorter one byte by byte.
#[inline]
fn needs_quotes(field: &[u8]) -> bool {
    let n = field.len();
    let word = |at: usize| field[at..at + 8].try_into().expect("8 bytes");
    match n {
        0..8 => field.iter().any(|&b| special(b)),
        8..16 => any_special_in_word(word(0)) || any_special_in_word(word(n - 8)),
        _ => {
            let chunk = |bytes: &[u8]| super::scan::any_in_chunk(bytes.try_into().expect("16 bytes"), special);
            field.chunks_exact(16).any(chunk) || chunk(&field[n - 16..])
        }
    }
}

#[inline]
fn push_field(buf: &mut Vec<u8>, field: &[u8]) {
    if !needs_quotes(field) {
        buf.extend_from_slice(field);
        return;
    }
    buf.push(b'"');
    let mut rest = field;
    while let Some(quote) = memchr::memchr(b'"', rest) {
        buf.extend_from_slice(&rest[..=quote]);
        buf.push(b'"');
        rest = &rest[quote + 1..];
    }
    buf.extend_from_slice(rest);
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Rows;

    /// The default writer but for the check that rows are equally long (`flexible` changes
    /// nothing else), so that rows of any length can be compared.
    fn with_csv(rows: &[Vec<String>]) -> Vec<u8> {
        let mut w = csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
        for row in rows {
            w.write_record(row).unwrap();
        }
        w.into_inner().unwrap()
    }

    fn with_rows(rows: &[Vec<String>]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut w = Rows::new(&mut bytes);
        for row in rows {
            let fields: Vec<&str> = row.iter().map(String::as_str).collect();
            w.row(&fields).unwrap();
        }
        w.finish().unwrap();
        bytes
    }

    #[test]
    fn fields_are_quoted_only_when_the_csv_writer_quotes_them() {
        let rows: Vec<Vec<String>> = [
            vec!["plain", "", "a,b", "say \"hi\"", "\"", "line\nbreak", "cr\rhere", "#comment", " spaced "],
            vec!["", ""],
            vec![""],
            vec![],
            vec!["\"\"", ",", "\r\n", "é,ü", "tab\there", "back\\slash"],
        ]
        .iter()
        .map(|row| row.iter().map(|f| f.to_string()).collect())
        .collect();
        assert_eq!(String::from_utf8(with_rows(&rows)).unwrap(), String::from_utf8(with_csv(&rows)).unwrap());
    }

    #[test]
    fn a_large_file_is_flushed_in_pieces_and_whole() {
        let row: Vec<String> = (0..13).map(|i| format!("field \"{i}\", with text")).collect();
        let rows = vec![row; 5_000];
        assert!(with_csv(&rows).len() > 3 * super::FLUSH_AT);
        assert_eq!(with_rows(&rows), with_csv(&rows));
    }

    #[test]
    fn a_special_byte_is_found_at_every_place_of_fields_of_every_length() {
        // Fields shorter than a word, of one or two words, of 16-byte chunks and a tail: each
        // special byte at each place, bytes that differ from one by a bit or a borrow, and
        // characters of two to four bytes (`Ѐ` ends in 0x80).
        let mut rows = Vec::new();
        for len in 0..=50 {
            rows.push(vec!["a".repeat(len)]);
            for at in 0..len {
                for b in [',', '"', '\n', '\r', '-', '+', '#', '\x0b', '\x0c', '!', '\x01', 'é', 'Ѐ', '€', '😀'] {
                    let field: String = (0..len).map(|i| if i == at { b } else { 'a' }).collect();
                    rows.push(vec![field.clone(), "x".into()]);
                    rows.push(vec![format!("{field}\"{field}"), field]);
                }
            }
        }
        assert_eq!(with_rows(&rows), with_csv(&rows));
    }

    proptest! {
        #[test]
        fn rows_are_the_csv_writers_bytes(
            rows in prop::collection::vec(
                prop::collection::vec("[a-z,\"\r\n #\\\\é\t ]{0,40}", 0..6),
                1..20,
            )
        ) {
            prop_assert_eq!(with_rows(&rows), with_csv(&rows));
        }
    }
}
