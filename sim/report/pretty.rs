//! Pretty JSON as `serde_json::to_writer_pretty` writes it (two-space indent), with each line break
//! and its indentation written in one piece.
//!
//! serde_json's `PrettyFormatter` writes the indentation of a line one level at a time, and the
//! report's JSON is deep: a group in `status/<run>.json` sits seven levels down (its members, the
//! bulk of the file, are written by [`super::status::write_run_resource`] in this same layout).

use std::io::{self, Write};

use serde_json::ser::Formatter;

/// A line break followed by the spaces of [`MAX_DEPTH`] levels, after a comma: every line start
/// the formatter writes is a slice of it.
const BREAKS: &[u8; 2 + 2 * MAX_DEPTH] = &{
    let mut bytes = [b' '; 2 + 2 * MAX_DEPTH];
    bytes[0] = b',';
    bytes[1] = b'\n';
    bytes
};

/// Levels written in one piece; deeper lines add the rest level by level.
const MAX_DEPTH: usize = 32;

/// The formatter: the same bytes as `serde_json::ser::PrettyFormatter::new()`.
#[derive(Default)]
pub struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break and the current indentation, after a comma when `comma`.
    fn line<W: ?Sized + Write>(&self, writer: &mut W, comma: bool) -> io::Result<()> {
        let levels = self.depth.min(MAX_DEPTH);
        let from = if comma { 0 } else { 1 };
        writer.write_all(&BREAKS[from..2 + 2 * levels])?;
        for _ in levels..self.depth {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, writer: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, writer: &mut W, close: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line(writer, false)?;
        }
        writer.write_all(close)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.begin(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.end(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.line(writer, !first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.begin(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.end(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.line(writer, !first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as pretty JSON to `writer`, as `serde_json::to_writer_pretty` does.
pub fn to_writer<W: Write, T: ?Sized + serde::Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, Pretty::default());
    value.serialize(&mut serializer)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn same_as_serde_json(value: &Value) {
        let mut ours = Vec::new();
        super::to_writer(&mut ours, value).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string_pretty(value).unwrap());
    }

    #[test]
    fn writes_what_serde_json_writes() {
        same_as_serde_json(&json!(null));
        same_as_serde_json(&json!("text with \"quotes\", \\ and \n"));
        same_as_serde_json(&json!([]));
        same_as_serde_json(&json!({}));
        same_as_serde_json(&json!([[], {}, [[]], {"a": {}}, {"a": []}]));
        same_as_serde_json(&json!({
            "id": "/subscriptions/x",
            "properties": {
                "status": {"stages": [{"name": "a", "groups": [], "failureCount": 0}], "state": "Completed"},
                "empty": {},
                "numbers": [1, -2, 3.5, 1e300],
                "flags": [true, false, null]
            },
            "last": "x"
        }));
    }

    #[test]
    fn deep_nesting_past_the_one_piece_indentation() {
        for depth in [31, 32, 33, 40] {
            let mut value = json!({"leaf": [1, 2]});
            for level in 0..depth {
                value = if level % 2 == 0 { json!([value, level]) } else { json!({"k": value, "n": level}) };
            }
            same_as_serde_json(&value);
        }
    }
}
