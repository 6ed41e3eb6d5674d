//! JSON text → serde_json's compact form, as it arrives: whitespace outside strings dropped,
//! strings re-escaped as serde_json escapes them, numbers printed as serde_json prints them
//! once they end. Concatenated, the output is `serde_json::to_string` of the parsed value,
//! so streamed argument deltas add up to the final arguments string exactly. This module
//! must not buffer more than one number or one escape sequence.

use serde_json::Value;

/// The rewriter's state between characters.
#[derive(Debug, Default)]
pub(crate) struct Canonical {
    in_string: bool,
    escape: String,
    high_surrogate: Option<u32>,
    number: String,
}

/// serde_json's escaping of one character inside a string.
fn push_escaped(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        c if (c as u32) < 0x20 => {
            out.push_str("\\u00");
            let hex = b"0123456789abcdef";
            out.push(char::from(hex[(c as usize) >> 4]));
            out.push(char::from(hex[(c as usize) & 0xf]));
        }
        c => out.push(c),
    }
}

impl Canonical {
    /// Take one character; append what can be written for it.
    pub(crate) fn push(&mut self, c: char, out: &mut String) {
        if self.in_string {
            self.push_in_string(c, out);
            return;
        }
        if !self.number.is_empty() {
            if c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E') {
                self.number.push(c);
                return;
            }
            self.flush_number(out);
        }
        match c {
            '"' => {
                self.in_string = true;
                out.push('"');
            }
            c if c.is_whitespace() => {}
            c if c == '-' || c.is_ascii_digit() => self.number.push(c),
            c => out.push(c),
        }
    }

    /// The value ended: write a number still being read.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.flush_number(out);
    }

    fn flush_number(&mut self, out: &mut String) {
        if self.number.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(&self.number) {
            Ok(v) => out.push_str(&v.to_string()),
            Err(_) => out.push_str(&self.number),
        }
        self.number.clear();
    }

    fn push_in_string(&mut self, c: char, out: &mut String) {
        if self.escape.is_empty() {
            match c {
                '\\' => self.escape.push(c),
                '"' => {
                    self.in_string = false;
                    out.push('"');
                }
                c => push_escaped(c, out),
            }
            return;
        }
        self.escape.push(c);
        let esc = self.escape.as_str();
        let decoded = match esc.as_bytes().get(1) {
            Some(b'u') if esc.len() < 6 => return,
            Some(b'u') => match u32::from_str_radix(&esc[2..], 16) {
                Ok(code) => self.code_unit(code),
                Err(_) => Some('\u{FFFD}'),
            },
            Some(b'n') => Some('\n'),
            Some(b't') => Some('\t'),
            Some(b'r') => Some('\r'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(_) => esc[1..].chars().next(),
            None => return,
        };
        self.escape.clear();
        if let Some(ch) = decoded {
            push_escaped(ch, out);
        }
    }

    /// One `\uXXXX` unit: a character, or half of a surrogate pair (held for the other).
    fn code_unit(&mut self, code: u32) -> Option<char> {
        match (self.high_surrogate.take(), code) {
            (None, 0xD800..=0xDBFF) => {
                self.high_surrogate = Some(code);
                None
            }
            (Some(high), 0xDC00..=0xDFFF) => {
                char::from_u32(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
            }
            (Some(_), _) => Some('\u{FFFD}'),
            (None, code) => Some(char::from_u32(code).unwrap_or('\u{FFFD}')),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canonical(text: &str) -> String {
        let mut c = Canonical::default();
        let mut out = String::new();
        for ch in text.chars() {
            c.push(ch, &mut out);
        }
        c.finish(&mut out);
        out
    }

    #[test]
    fn spacing_escapes_and_numbers_come_out_as_serde_json_prints_them() {
        let text = r#" { "city" : "Par\u00e9 \"x\"\/ \ud83d\ude00", "n": 1.50, "e": 1e2, "l": [ true , null ] } "#;
        let want = serde_json::from_str::<Value>(text).map(|v| v.to_string());
        assert_eq!(Ok(canonical(text)), want.map_err(|e| e.to_string()));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
            "\\PC*".prop_map(Value::from),
            "[\\x00-\\x1f\"\\\\/é😀]*".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"]{1,6}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// What the final reply holds for `text`: serde_json's parse, printed compact.
    fn parsed(text: &str) -> String {
        serde_json::from_str::<Value>(text)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }

    proptest! {
        /// Pretty-printed or compact, ASCII-escaped or not, the stream gives the compact text
        /// the final reply prints for the same spelling.
        #[test]
        fn any_spelling_of_a_value_streams_to_its_compact_text(v in arb_json()) {
            let compact = v.to_string();
            prop_assert_eq!(canonical(&compact), parsed(&compact));
            let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
            prop_assert_eq!(canonical(&pretty), parsed(&pretty));
            let ascii: String = compact.chars().flat_map(|c| {
                if (c as u32) < 0x80 {
                    vec![c.to_string()]
                } else {
                    let mut buf = [0u16; 2];
                    c.encode_utf16(&mut buf).iter().map(|u| format!("\\u{u:04X}")).collect()
                }
            }).collect();
            prop_assert_eq!(canonical(&ascii), parsed(&ascii));
        }
    }
}
