//! BFCL's `js_type_converter`: a JavaScript expression (the string a model passed for a
//! JavaScript parameter) → the value BFCL compares with its answers. Text that does not look
//! like the expected type stays a string, as in BFCL.
//!
//! This module must not score: it converts.

use super::java::{python_float, python_int};
use serde_json::{Map, Value, json};
use std::sync::LazyLock;

fn re(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).unwrap_or_else(|e| unreachable!("bad pattern {pattern}: {e}"))
}

static INT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+$"));
static FLOAT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?$"));
static BIGINT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+n$"));
static ARRAY_2D: LazyLock<regex::Regex> = LazyLock::new(|| {
    re(r"^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))")
});
static INNER: LazyLock<regex::Regex> = LazyLock::new(|| re(r"\[(.*?)\]"));
static ARRAY: LazyLock<regex::Regex> =
    LazyLock::new(|| re(r"^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))"));
static DICT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^\{(.*?)\}"));

/// Whether BFCL can convert this JavaScript type.
pub fn supported(t: &str) -> bool {
    matches!(
        t,
        "String" | "integer" | "float" | "Bigint" | "Boolean" | "dict" | "array" | "any"
    )
}

fn quoted(s: &str) -> bool {
    s.len() >= 2
        && ((s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\'')))
}

fn strip_ends(s: &str) -> String {
    let mut c = s.chars();
    c.next();
    c.next_back();
    c.as_str().to_owned()
}

/// Convert `value` written as JavaScript `expected` (with element type `nested` for arrays).
pub fn convert(value: &str, expected: &str, nested: Option<&str>) -> Value {
    match expected {
        "String" if quoted(value) => json!(strip_ends(value)),
        "integer" if INT.is_match(value) => {
            python_int(value).map_or_else(|_| json!(value), |i| json!(i))
        }
        "float" if FLOAT.is_match(value) => {
            python_float(value).map_or_else(|| json!(value), |f| json!(f))
        }
        "Bigint" if BIGINT.is_match(value) => {
            python_int(&value[..value.len() - 1]).map_or_else(|_| json!(value), |i| json!(i))
        }
        "Boolean" if value == "true" || value == "false" => json!(value == "true"),
        "dict" => dict(value.trim()),
        "array" => array(value.trim(), nested),
        _ => json!(value),
    }
}

fn array(code: &str, nested: Option<&str>) -> Value {
    if let Some(m) = ARRAY_2D.find(code) {
        let inner: Vec<Value> = INNER
            .captures_iter(m.as_str())
            .enumerate()
            .map(|(i, c)| {
                let mut s = c[1].trim();
                if i == 0 {
                    s = s.strip_prefix('[').unwrap_or(s);
                }
                Value::Array(s.split(',').map(|e| value(e.trim())).collect())
            })
            .collect();
        return Value::Array(inner);
    }
    let Some(c) = ARRAY.captures(code) else {
        return json!(code);
    };
    let body = c
        .get(1)
        .or_else(|| c.get(2))
        .map_or("", |m| m.as_str().trim());
    let elements: Vec<&str> = if body.is_empty() {
        Vec::new()
    } else {
        body.split(',').collect()
    };
    let items = elements
        .into_iter()
        .map(|e| {
            let e = e.trim();
            match nested {
                Some(t) if e.starts_with('\'') || e.starts_with('"') => {
                    convert(e, t, Some("String"))
                }
                Some(t) => convert(e, t, None),
                None => value(e),
            }
        })
        .collect();
    Value::Array(items)
}

/// The `key: value` pairs of an object literal's body, split as BFCL's regex
/// `([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)` splits them: a value ends at the first comma after
/// which (past spaces) a colon comes before any other comma.
fn pairs(content: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(colon) = rest.find(':') {
        if colon == 0 {
            rest = &rest[1..];
            continue;
        }
        let key = &rest[..colon];
        let after = rest[colon + 1..].trim_start();
        let mut end = after.len();
        let mut next = after.len();
        for (i, ch) in after.char_indices() {
            if ch != ',' {
                continue;
            }
            let tail = after[i + 1..].trim_start();
            let upto = tail.find(',').unwrap_or(tail.len());
            if tail[..upto].find(':').is_some_and(|c| c > 0) {
                end = i;
                next = after.len() - tail.len();
                break;
            }
        }
        out.push((key.to_owned(), after[..end].to_owned()));
        rest = &after[next..];
    }
    out
}

fn dict(code: &str) -> Value {
    if code == "{}" {
        return json!({});
    }
    let Some(c) = DICT.captures(code) else {
        return json!(code);
    };
    let mut out = Map::new();
    for (key, val) in pairs(&c[1]) {
        let key = key.trim().trim_matches(['\'', '"']).to_owned();
        let val = val.trim();
        let v = if val.starts_with('[') && val.ends_with(']') {
            array(val, None)
        } else if val.starts_with('{') && val.ends_with('}') {
            dict(val)
        } else {
            value(val.trim_matches(['\'', '"']))
        };
        out.insert(key, v);
    }
    Value::Object(out)
}

/// BFCL's `parse_js_value`: a JavaScript literal of unknown type.
pub fn value(text: &str) -> Value {
    let t = text.trim();
    if t == "true" || t == "false" {
        return json!(t == "true");
    }
    if quoted(t) {
        return json!(strip_ends(t));
    }
    if let Ok(i) = python_int(t) {
        return json!(i);
    }
    python_float(t).map_or_else(|| json!(t), |f| json!(f))
}
