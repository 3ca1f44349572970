//! The large CSV files of a report (`members.csv`, `timeline.csv`, `versions.csv`) written row by
//! row into one buffer: the same bytes as the `csv` crate's default writer
//! (`csv::Writer::from_writer`), in less time.
//!
//! The `csv` writer runs every field through its general state machine (configurable quote,
//! escape, terminator and quoting style, each field copied in pieces as its output buffer fills):
//! a report of a year of auto-upgrades writes 140,000 rows of 13 and 10 fields, and writing them
//! here takes about a quarter less time (`members.csv` 30 → 22 ms, `timeline.csv` 22 → 17 ms). A
//! field is scanned once for the four bytes that make the default writer quote it (`,` `"` `\n`
//! `\r`), 16 bytes at a time (fields of up to 16 bytes as two overlapping words, or three bytes,
//! which are also what is copied), and copied whole; one that has them is quoted with its `"`
//! doubled, as the default writer does, found by `memchr`. With fields scanned a byte at a time,
//! that year's two files took 344 M instructions; checked a chunk at a time, with the skipped
//! members' quoted messages copied between their quotes, 277 M; with short fields copied as the
//! words they were checked in rather than by `memcpy`, 209 M against 223 M (both files with the
//! times and versions formatted for them, as the report is now made). The smaller files keep the
//! `csv` crate, and tests compare the two writers on random fields and on every special byte at
//! every place of fields up to 50 bytes long.

use std::io::{self, Write};

/// Flushed to the output when the buffer holds this much (the status files' member lists too):
/// pieces this large go to a report's file without another copy ([`crate::output::WRITE_THROUGH`]).
pub(crate) const FLUSH_AT: usize = crate::output::WRITE_THROUGH;

/// Writes rows of fields to `out` as `csv::Writer::from_writer(out)` writes them with
/// `write_record` (fields separated by `,`, rows ended by `\n`, a field quoted only when it must
/// be).
///
/// Rows are made in `buf`, whose bytes are all initialized (`len` of them written so far), with
/// room for the next row made before it is written: a field of up to 16 bytes is then copied as
/// two words (or three bytes) that overlap where it is shorter than the two together, the same
/// words it was checked in, where `extend_from_slice` called `memcpy` for every field.
pub struct Rows<'w> {
    out: &'w mut dyn Write,
    buf: Vec<u8>,
    len: usize,
}

impl<'w> Rows<'w> {
    pub fn new(out: &'w mut dyn Write) -> Rows<'w> {
        Rows { out, buf: vec![0; FLUSH_AT + 4096], len: 0 }
    }

    /// One row. A row of one empty field, or of none, is written `""`, as the `csv` writer writes
    /// it (a bare empty line would read as no row at all).
    pub fn row(&mut self, fields: &[&str]) -> io::Result<()> {
        if fields.is_empty() || fields == [""] {
            self.room(3);
            self.put(b"\"\"\n");
        } else {
            // The longest the row can be: every field quoted, every byte of it a doubled quote.
            self.room(fields.iter().map(|f| 2 * f.len() + 3).sum::<usize>() + 1);
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.put_byte(b',');
                }
                self.field(field.as_bytes());
            }
            self.put_byte(b'\n');
        }
        if self.len >= FLUSH_AT {
            self.out.write_all(&self.buf[..self.len])?;
            self.len = 0;
        }
        Ok(())
    }

    /// Writes what is left in the buffer and flushes the output.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.write_all(&self.buf[..self.len])?;
        self.len = 0;
        self.out.flush()
    }

    /// At least `bytes` more initialized bytes after the written ones.
    #[inline]
    fn room(&mut self, bytes: usize) {
        if self.buf.len() < self.len + bytes {
            self.buf.resize(self.len + bytes, 0);
        }
    }

    #[inline(always)]
    fn put_byte(&mut self, byte: u8) {
        self.buf[self.len] = byte;
        self.len += 1;
    }

    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// One field, quoted if it must be: one of up to 16 bytes read as two overlapping words (or
    /// three bytes), checked in them, and written back from them.
    #[inline]
    fn field(&mut self, field: &[u8]) {
        let n = field.len();
        let at = self.len;
        match n {
            0 => {}
            1..4 => {
                let (a, b, c) = (field[0], field[n / 2], field[n - 1]);
                if any_special_in_word(u64::from(a) | u64::from(b) << 8 | u64::from(c) << 16) {
                    return self.quoted(field);
                }
                let out = &mut self.buf[at..at + n];
                (out[0], out[n / 2], out[n - 1]) = (a, b, c);
            }
            4..8 => {
                let word = |i: usize| u32::from_ne_bytes(field[i..i + 4].try_into().expect("4 bytes"));
                let (low, high) = (word(0), word(n - 4));
                if any_special_in_word(u64::from(low) | u64::from(high) << 32) {
                    return self.quoted(field);
                }
                let out = &mut self.buf[at..at + n];
                out[..4].copy_from_slice(&low.to_ne_bytes());
                out[n - 4..].copy_from_slice(&high.to_ne_bytes());
            }
            8..=16 => {
                let word = |i: usize| u64::from_ne_bytes(field[i..i + 8].try_into().expect("8 bytes"));
                let (low, high) = (word(0), word(n - 8));
                if any_special_in_word(low) || any_special_in_word(high) {
                    return self.quoted(field);
                }
                let out = &mut self.buf[at..at + n];
                out[..8].copy_from_slice(&low.to_ne_bytes());
                out[n - 8..].copy_from_slice(&high.to_ne_bytes());
            }
            _ => {
                let chunk = |bytes: &[u8]| super::scan::any_in_chunk(bytes.try_into().expect("16 bytes"), special);
                if field.chunks_exact(16).any(chunk) || chunk(&field[n - 16..]) {
                    return self.quoted(field);
                }
                self.buf[at..at + n].copy_from_slice(field);
            }
        }
        self.len = at + n;
    }

    /// A field quoted, its `"` doubled, as the default writer quotes it (found by `memchr`).
    fn quoted(&mut self, field: &[u8]) {
        self.put_byte(b'"');
        let mut rest = field;
        while let Some(quote) = memchr::memchr(b'"', rest) {
            self.put(&rest[..=quote]);
            self.put_byte(b'"');
            rest = &rest[quote + 1..];
        }
        self.put(rest);
        self.put_byte(b'"');
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

/// Whether any of the 8 bytes of `word` is one of [`QUOTED`] (a zero byte is none of them): a byte
/// equal to `c` is a zero byte of `word ^ c…c`, and `(v - 0x01…01) & !v & 0x80…80` is not zero
/// exactly when `v` has a zero byte.
#[inline(always)]
fn any_special_in_word(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    QUOTED.iter().fold(0, |any, &c| any | zero_byte(word ^ (u64::from(c) * ONES))) != 0
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
    fn a_row_longer_than_the_room_left_grows_the_buffer() {
        // Rows of fields all quotes (each doubled when quoted) and long plain ones, the file several
        // times the flush size, so that rows arrive with the buffer nearly full and longer than
        // the room it was made with.
        let rows: Vec<Vec<String>> =
            (0..40).map(|i| vec!["\"".repeat(3_000 + 97 * i), "x".repeat(5_000 + i), format!("{i}")]).collect();
        assert!(with_csv(&rows).len() > 4 * super::FLUSH_AT);
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
