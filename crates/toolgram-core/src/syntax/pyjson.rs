//! JSON text the way Hugging Face's `tojson` (Python's `json.dumps` with
//! `ensure_ascii=False`) writes it: `", "` between items, `": "` between key and value, no
//! HTML escaping, non-ASCII kept as is.
//!
//! Chat templates were trained on this spelling (`tojson` in Hugging Face's Jinja), so the
//! grammar, the renderer and the template filter all use it. Must not reorder keys.

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io;

/// Formatter with Python's default separators, optionally indented.
#[derive(Debug, Clone)]
pub struct PyFormatter {
    indent: Option<usize>,
    depth: usize,
    has_value: bool,
}

impl PyFormatter {
    /// Compact Python style (`{"a": 1, "b": [1, 2]}`), or indented by `indent` spaces.
    pub fn new(indent: Option<usize>) -> Self {
        Self {
            indent,
            depth: 0,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        if let Some(n) = self.indent {
            w.write_all(b"\n")?;
            for _ in 0..n * self.depth {
                w.write_all(b" ")?;
            }
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, b: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b)
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, b: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        self.has_value = true;
        w.write_all(b)
    }

    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(if self.indent.is_some() { b"," } else { b", " })?;
        }
        self.newline(w)
    }
}

impl Formatter for PyFormatter {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Serialize `value` in Python's `json.dumps` spelling.
pub fn to_string<T: Serialize + ?Sized>(value: &T, indent: Option<usize>) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, PyFormatter::new(indent));
    // Serializing into a Vec cannot fail for JSON values; fall back to serde_json's own
    // spelling rather than panic if a custom Serialize impl errors.
    if value.serialize(&mut ser).is_err() {
        return serde_json::to_string(value).unwrap_or_default();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A string as Python's `repr` writes it (LFM2's template writes string arguments so):
/// single quotes, double quotes when the text holds a `'` and no `"`.
pub fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_as_python_repr_writes_them() {
        assert_eq!(super::repr("São Paulo"), "'São Paulo'");
        assert_eq!(super::repr("It's"), "\"It's\"");
        assert_eq!(super::repr("a'\"b\n"), "'a\\'\"b\\n'");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn compact_matches_python() {
        let v = json!({"a": 1, "b": [1, "x<y>"], "c": {}, "d": []});
        assert_eq!(
            to_string(&v, None),
            r#"{"a": 1, "b": [1, "x<y>"], "c": {}, "d": []}"#
        );
    }

    #[test]
    fn indented_matches_python() {
        let v = json!({"a": [1, 2], "b": {}});
        assert_eq!(
            to_string(&v, Some(2)),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}"
        );
    }
}
