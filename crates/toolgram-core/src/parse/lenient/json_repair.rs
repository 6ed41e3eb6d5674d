//! Lenient JSON: reads one JSON-like value from free model output and says what it repaired
//! (single quotes, unquoted keys, trailing commas, comments, Python literals). Gemma 4's
//! `<|"|>` strings, and bare keys when the caller asks for them, are read as that family's
//! spelling, not as repairs.
//!
//! It must NOT guess: text that stops inside a value is [`JsonFail::Truncated`], never
//! completed into a value.

use crate::syntax::GEMMA_QUOTE;
use serde_json::{Map, Number, Value};

/// Why no value was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonFail {
    /// The text ends inside the value.
    Truncated,
    /// Not a value at this byte offset.
    Invalid(usize),
}

/// Reads values; `repairs` collects what had to be repaired.
pub(crate) struct JsonReader<'a> {
    text: &'a str,
    /// Byte offset of the next unread character.
    pub pos: usize,
    /// What was repaired, in reading order.
    pub repairs: Vec<String>,
    /// Bare keys are the spelling read (Gemma's arguments), not a repair.
    pub bare_keys: bool,
    /// Strings between this marker are read too (Gemma 4's `<|"|>` unless the syntax
    /// says another).
    pub quote: &'static str,
}

impl<'a> JsonReader<'a> {
    pub(crate) fn new(text: &'a str, pos: usize) -> Self {
        Self {
            text,
            pos,
            repairs: Vec::new(),
            bare_keys: false,
            quote: GEMMA_QUOTE,
        }
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn note(&mut self, what: &str) {
        if !self.repairs.iter().any(|r| r == what) {
            self.repairs.push(what.to_owned());
        }
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Skip whitespace and `//`, `/* */` comments.
    pub(crate) fn skip_ws(&mut self) -> Result<(), JsonFail> {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.note("removed a comment");
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if let Some(body) = trimmed.strip_prefix("/*") {
                self.note("removed a comment");
                let end = body.find("*/").ok_or(JsonFail::Truncated)?;
                self.pos += 2 + end + 2;
            } else {
                return Ok(());
            }
        }
    }

    /// Read one value.
    pub(crate) fn value(&mut self) -> Result<Value, JsonFail> {
        self.skip_ws()?;
        let rest = self.rest();
        if rest.starts_with(self.quote) {
            return self.gemma_string().map(Value::String);
        }
        match self.peek() {
            None => Err(JsonFail::Truncated),
            Some('{') => self.object(),
            Some('[') => self.array(),
            Some('"') | Some('\'') => self.string().map(Value::String),
            Some(c) if c == '-' || c == '+' || c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => self.word(),
            Some(_) => Err(JsonFail::Invalid(self.pos)),
        }
    }

    fn word(&mut self) -> Result<Value, JsonFail> {
        let start = self.pos;
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let at_end = len == rest.len();
        let literals = [
            ("true", Value::Bool(true), false),
            ("false", Value::Bool(false), false),
            ("null", Value::Null, false),
            ("True", Value::Bool(true), true),
            ("False", Value::Bool(false), true),
            ("None", Value::Null, true),
        ];
        for (lit, v, python) in literals {
            if word == lit {
                self.pos += len;
                if python {
                    self.note("read a Python literal");
                }
                return Ok(v);
            }
            if at_end && lit.starts_with(word) {
                return Err(JsonFail::Truncated);
            }
        }
        Err(JsonFail::Invalid(start))
    }

    fn number(&mut self) -> Result<Value, JsonFail> {
        let start = self.pos;
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(rest.len());
        if len == rest.len() {
            return Err(JsonFail::Truncated);
        }
        let raw = rest[..len].trim_start_matches('+');
        self.pos += len;
        if let Ok(v) = serde_json::from_str::<Number>(raw) {
            return Ok(Value::Number(v));
        }
        match raw.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => {
                self.note("normalised a number");
                Ok(Value::Number(n))
            }
            None => Err(JsonFail::Invalid(start)),
        }
    }

    fn gemma_string(&mut self) -> Result<String, JsonFail> {
        self.pos += self.quote.len();
        let rest = self.rest();
        let end = rest.find(self.quote).ok_or(JsonFail::Truncated)?;
        let s = rest[..end].to_owned();
        self.pos += end + self.quote.len();
        Ok(s)
    }

    fn string(&mut self) -> Result<String, JsonFail> {
        let quote = self.bump().ok_or(JsonFail::Truncated)?;
        if quote == '\'' {
            self.note("read a single-quoted string");
        }
        let mut out = String::new();
        loop {
            let c = self.bump().ok_or(JsonFail::Truncated)?;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let e = self.bump().ok_or(JsonFail::Truncated)?;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => out.push(self.unicode_escape()?),
                other => out.push(other),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonFail> {
        let rest = self.rest();
        let hex = rest.get(..4).ok_or(JsonFail::Truncated)?;
        let n = u32::from_str_radix(hex, 16).map_err(|_| JsonFail::Invalid(self.pos))?;
        self.pos += 4;
        Ok(n)
    }

    fn unicode_escape(&mut self) -> Result<char, JsonFail> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) && self.rest().starts_with("\\u") {
            self.pos += 2;
            let lo = self.hex4()?;
            0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
        } else {
            hi
        };
        Ok(char::from_u32(code).unwrap_or('\u{FFFD}'))
    }

    fn key(&mut self) -> Result<String, JsonFail> {
        if self.rest().starts_with(self.quote) {
            return self.gemma_string();
        }
        match self.peek() {
            None => Err(JsonFail::Truncated),
            Some('"') | Some('\'') => self.string(),
            Some(c) if c.is_alphanumeric() || c == '_' || c == '$' => {
                let rest = self.rest();
                let len = rest
                    .find(|c: char| !(c.is_alphanumeric() || "_$.-".contains(c)))
                    .unwrap_or(rest.len());
                if len == rest.len() {
                    return Err(JsonFail::Truncated);
                }
                if !self.bare_keys {
                    self.note("quoted a bare key");
                }
                self.pos += len;
                Ok(rest[..len].to_owned())
            }
            Some(_) => Err(JsonFail::Invalid(self.pos)),
        }
    }

    fn object(&mut self) -> Result<Value, JsonFail> {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                None => return Err(JsonFail::Truncated),
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                Some(',') if !map.is_empty() => {
                    self.pos += 1;
                    self.skip_ws()?;
                    if self.peek() == Some('}') {
                        self.note("removed a trailing comma");
                    } else if self.peek().is_none() {
                        return Err(JsonFail::Truncated);
                    } else {
                        continue;
                    }
                }
                Some(_) => {
                    let key = self.key()?;
                    self.skip_ws()?;
                    match self.bump() {
                        Some(':') => {}
                        None => return Err(JsonFail::Truncated),
                        Some(_) => return Err(JsonFail::Invalid(self.pos)),
                    }
                    let v = self.value()?;
                    map.insert(key, v);
                    self.skip_ws()?;
                    match self.peek() {
                        Some(',') | Some('}') => {}
                        None => return Err(JsonFail::Truncated),
                        Some(_) => return Err(JsonFail::Invalid(self.pos)),
                    }
                }
            }
        }
    }

    fn array(&mut self) -> Result<Value, JsonFail> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                None => return Err(JsonFail::Truncated),
                Some(']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                Some(',') if !items.is_empty() => {
                    self.pos += 1;
                    self.skip_ws()?;
                    match self.peek() {
                        Some(']') => self.note("removed a trailing comma"),
                        None => return Err(JsonFail::Truncated),
                        Some(_) => {}
                    }
                }
                Some(_) => {
                    items.push(self.value()?);
                    self.skip_ws()?;
                    match self.peek() {
                        Some(',') | Some(']') => {}
                        None => return Err(JsonFail::Truncated),
                        Some(_) => return Err(JsonFail::Invalid(self.pos)),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(t: &str) -> Result<Value, JsonFail> {
        JsonReader::new(t, 0).value()
    }

    #[test]
    fn repairs_common_slips() {
        assert_eq!(read("{'a': 1,}"), Ok(json!({"a": 1})));
        assert_eq!(
            read("{a: True, b: None} "),
            Ok(json!({"a": true, "b": null}))
        );
        assert_eq!(read("{/* c */ \"a\": [1, 2,]}"), Ok(json!({"a": [1, 2]})));
        assert_eq!(
            read("{city:<|\"|>Paris<|\"|>}"),
            Ok(json!({"city": "Paris"}))
        );
        assert_eq!(read("\"\\u00e9\\n\""), Ok(json!("é\n")));
    }

    #[test]
    fn truncation_is_never_completed() {
        for t in [
            "{\"a\": ",
            "{\"a\": tr",
            "[1, 2",
            "{\"a\": \"x",
            "{\"a\": 12",
        ] {
            assert_eq!(read(t), Err(JsonFail::Truncated), "{t}");
        }
    }
}
