//! BFCL's `java_type_converter`: a Java expression (the string a model passed for a Java
//! parameter) → the value BFCL compares with its answers. Text that does not look like the
//! expected type stays a string, as in BFCL.
//!
//! This module must not score: it converts.

use serde_json::{Map, Value, json};
use std::sync::LazyLock;

fn re(pattern: &str) -> regex::Regex {
    // The patterns below are fixed and valid; an invalid one would be a bug caught by tests.
    regex::Regex::new(pattern).unwrap_or_else(|e| unreachable!("bad pattern {pattern}: {e}"))
}

static INT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+$"));
static FLOAT: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$"));
static DOUBLE: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$"));
static LONG: LazyLock<regex::Regex> = LazyLock::new(|| re(r"^-?\d+[lL]$"));
static AS_LIST: LazyLock<regex::Regex> =
    LazyLock::new(|| re(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)"));
static ADDS: LazyLock<regex::Regex> =
    LazyLock::new(|| re(r"(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}"));
static ADD: LazyLock<regex::Regex> = LazyLock::new(|| re(r"add\((.+?)\)"));
static EMPTY_LIST: LazyLock<regex::Regex> = LazyLock::new(|| re(r"new\s+ArrayList<\w*>\(\)"));
static ARRAY: LazyLock<regex::Regex> = LazyLock::new(|| re(r"new\s+\w+\[\]\s*\{(.*?)\}"));
static MAP: LazyLock<regex::Regex> =
    LazyLock::new(|| re(r"(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}"));
static PUT: LazyLock<regex::Regex> = LazyLock::new(|| re(r#"put\("(.*?)",\s*(.*?)\)"#));
static EMPTY_MAP: LazyLock<regex::Regex> = LazyLock::new(|| re(r"new\s+HashMap<.*?>\s*\(\)"));

/// Whether BFCL can convert this Java type (`Set`, `Hashtable`, `Queue`, `Stack` are not).
pub fn supported(t: &str) -> bool {
    matches!(
        t,
        "byte"
            | "short"
            | "integer"
            | "float"
            | "double"
            | "long"
            | "boolean"
            | "char"
            | "Array"
            | "ArrayList"
            | "HashMap"
            | "String"
            | "any"
    )
}

fn float(text: &str) -> Value {
    text.parse::<f64>()
        .map_or_else(|_| json!(text), |f| json!(f))
}

fn int(text: &str) -> Value {
    text.parse::<i64>()
        .map_or_else(|_| json!(text), |i| json!(i))
}

/// Convert `value` written as Java `expected` (with element type `nested` for lists).
pub fn convert(value: &str, expected: &str, nested: Option<&str>) -> Value {
    match expected {
        "byte" | "short" | "integer" if INT.is_match(value) => int(value),
        "float" if FLOAT.is_match(value) => float(&value[..value.len() - 1]),
        "double" if DOUBLE.is_match(value) => float(value),
        "long" if LONG.is_match(value) => int(&value[..value.len() - 1]),
        "boolean" if value == "true" || value == "false" => json!(value == "true"),
        "ArrayList" => array_list(value, nested),
        "Array" => array(value, nested),
        "HashMap" => hash_map(value),
        _ => json!(value),
    }
}

fn element(text: &str, nested: Option<&str>) -> Value {
    match nested {
        Some("char" | "String") => json!(strip_ends(text)),
        Some(t) => convert(text, t, None),
        None => value(text),
    }
}

/// `s[1:-1]` in Python.
fn strip_ends(s: &str) -> String {
    let mut c = s.chars();
    c.next();
    c.next_back();
    c.as_str().to_owned()
}

fn array_list(text: &str, nested: Option<&str>) -> Value {
    if let Some(m) = AS_LIST.captures(text) {
        let items = m[1].split(',').map(|e| element(e.trim(), nested)).collect();
        return Value::Array(items);
    }
    if let Some(m) = ADDS.captures(text) {
        let items = ADD
            .captures_iter(&m[1])
            .map(|a| element(a[1].trim(), nested))
            .collect();
        return Value::Array(items);
    }
    if EMPTY_LIST.is_match(text) {
        return json!([]);
    }
    json!(text)
}

fn array(text: &str, nested: Option<&str>) -> Value {
    let Some(m) = ARRAY.captures(text) else {
        return json!(text);
    };
    let items = m[1]
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| match nested {
            Some(t) => convert(x, t, None),
            None => value(x),
        })
        .collect();
    Value::Array(items)
}

fn hash_map(text: &str) -> Value {
    if let Some(m) = MAP.captures(text) {
        let mut out = Map::new();
        if !m[1].trim().is_empty() {
            for p in PUT.captures_iter(&m[1]) {
                out.insert(p[1].to_owned(), value(p[2].trim()));
            }
        }
        return Value::Object(out);
    }
    if EMPTY_MAP.is_match(text) {
        return json!({});
    }
    json!(text)
}

/// BFCL's `parse_java_value`: a Java literal of unknown type.
pub fn value(text: &str) -> Value {
    if text == "true" || text == "false" {
        return json!(text == "true");
    }
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        return json!(strip_ends(text));
    }
    if LONG.is_match(text) {
        return int(&text[..text.len() - 1]);
    }
    if FLOAT.is_match(text) {
        return float(&text[..text.len() - 1]);
    }
    if let Ok(i) = python_int(text) {
        return json!(i);
    }
    match python_float(text) {
        Some(f) => json!(f),
        None => json!(text),
    }
}

/// Python's `int(s)`: optional sign and digits, surrounding whitespace allowed.
pub(crate) fn python_int(s: &str) -> Result<i64, ()> {
    let t = s.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return Err(());
    }
    t.replace('_', "").parse().map_err(|_| ())
}

/// Python's `float(s)` for the decimal forms a model writes (`inf`/`nan` refused: JSON
/// cannot hold them).
pub(crate) fn python_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let ok = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !ok {
        return None;
    }
    t.parse::<f64>().ok().filter(|f| f.is_finite())
}
