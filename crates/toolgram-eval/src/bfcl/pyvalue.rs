//! Python's view of JSON values, as BFCL's checker (Python) sees them after `json.loads`:
//! `type()` (`int` vs `float` vs `bool`), `==` (`1 == 1.0`, `True == 1`), `in`, and BFCL's
//! `standardize_string`.
//!
//! This module must not know BFCL's rules beyond these primitives.

use serde_json::Value;

/// A Python type, as `type(json.loads(...))` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyType {
    /// `str`
    Str,
    /// `int`
    Int,
    /// `float`
    Float,
    /// `bool`
    Bool,
    /// `list`
    List,
    /// `dict`
    Dict,
    /// `NoneType`
    None,
}

impl PyType {
    /// Python's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Str => "str",
            Self::Int => "int",
            Self::Float => "float",
            Self::Bool => "bool",
            Self::List => "list",
            Self::Dict => "dict",
            Self::None => "NoneType",
        }
    }
}

/// `type(v)`.
pub fn py_type(v: &Value) -> PyType {
    match v {
        Value::Null => PyType::None,
        Value::Bool(_) => PyType::Bool,
        Value::Number(n) if n.is_f64() => PyType::Float,
        Value::Number(_) => PyType::Int,
        Value::String(_) => PyType::Str,
        Value::Array(_) => PyType::List,
        Value::Object(_) => PyType::Dict,
    }
}

fn numeric(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// `a == b` in Python.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (numeric(a), numeric(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// `v in list` in Python.
pub fn py_in(v: &Value, list: &[Value]) -> bool {
    list.iter().any(|x| py_eq(v, x))
}

/// BFCL's `standardize_string`: spaces and `,./-_*^` removed, lower case, `'` → `"`.
pub fn standardize(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect::<String>()
        .to_lowercase()
        .replace('\'', "\"")
}
