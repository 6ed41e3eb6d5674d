//! BFCL's AST checker, ported rule for rule (`ast_checker.py`): the function name exact; every
//! required parameter present; no parameter outside the function's document or its answer;
//! each value of the documented type (an `int` where a `float` is expected is accepted; Java
//! and JavaScript strings converted first) and among its accepted values — strings after
//! BFCL's normalisation, lists element by element, dictionaries key by key, lists of
//! dictionaries in order; a value whose type is the answers' type rather than the documented
//! one is a "variable" and compared as is; a parameter may be omitted only where `""` is
//! accepted. `multiple` expects exactly one call; parallel categories match calls to answers
//! in any order with the right count; irrelevance passes only when no call was made.
//!
//! This module must not run a model or read files.

use super::pyvalue::{PyType, py_in, py_type, standardize};
use super::{Item, Language, Scoring, convert::tool_name, java, js};
use serde_json::{Map, Value, json};

/// One decoded call: tool name and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool name (as offered: `.` already `_`).
    pub name: String,
    /// The arguments object.
    pub arguments: Map<String, Value>,
}

/// Why an item failed, with BFCL's error type (`simple_function_checker:missing_required`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// BFCL's error type.
    pub kind: String,
    /// What was wrong.
    pub message: String,
}

fn miss(kind: &str, message: impl Into<String>) -> Miss {
    Miss {
        kind: kind.to_owned(),
        message: message.into(),
    }
}

/// Score an item's calls.
pub fn check(item: &Item, calls: &[Call]) -> Result<(), Miss> {
    match item.scoring {
        Scoring::NoCall if calls.is_empty() => Ok(()),
        Scoring::NoCall => Err(miss(
            "irrelevance_checker:call_made",
            format!("no call was due; {} made", calls.len()),
        )),
        Scoring::AnyCall if calls.is_empty() => {
            Err(miss("relevance_checker:no_call", "a call was due"))
        }
        Scoring::AnyCall => Ok(()),
        Scoring::Simple => {
            if calls.len() != 1 {
                return Err(miss(
                    "simple_function_checker:wrong_count",
                    "Wrong number of functions.",
                ));
            }
            let f = item
                .functions
                .first()
                .ok_or_else(|| miss("data", "no function"))?;
            let a = item
                .answers
                .first()
                .ok_or_else(|| miss("data", "no answer"))?;
            check_call(f, &calls[0], a, item.language)
        }
        Scoring::Multiple => {
            if calls.len() != item.answers.len() {
                return Err(miss(
                    "multiple_function_checker:wrong_count",
                    "Wrong number of functions.",
                ));
            }
            let a = item
                .answers
                .first()
                .ok_or_else(|| miss("data", "no answer"))?;
            let f = description(item, a)?;
            check_call(f, &calls[0], a, item.language)
        }
        Scoring::Parallel => parallel(item, calls),
    }
}

/// The function document an answer names (BFCL's `find_description`).
fn description<'a>(item: &'a Item, answer: &Map<String, Value>) -> Result<&'a Value, Miss> {
    let name = answer
        .keys()
        .next()
        .ok_or_else(|| miss("data", "an empty answer"))?;
    item.functions
        .iter()
        .find(|f| f["name"].as_str() == Some(name))
        .ok_or_else(|| miss("data", format!("no function named {name}")))
}

fn parallel(item: &Item, calls: &[Call]) -> Result<(), Miss> {
    if calls.len() != item.answers.len() {
        return Err(miss(
            "parallel_function_checker_no_order:wrong_count",
            "Wrong number of functions.",
        ));
    }
    let mut matched: Vec<usize> = Vec::new();
    for (i, answer) in item.answers.iter().enumerate() {
        let f = description(item, answer)?;
        let mut last = None;
        for (j, call) in calls.iter().enumerate() {
            if matched.contains(&j) {
                continue;
            }
            match check_call(f, call, answer, item.language) {
                Ok(()) => {
                    matched.push(j);
                    last = None;
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            return Err(miss(
                "parallel_function_checker_no_order:cannot_find_match",
                format!("no call matches expected call {i}: {}", e.message),
            ));
        }
    }
    Ok(())
}

/// BFCL's `PYTHON_TYPE_MAPPING` / `JAVA_TYPE_CONVERSION` / `JS_TYPE_CONVERSION`.
fn python_type(language: Language, t: &str) -> Option<PyType> {
    let py = match (language, t) {
        (Language::Python, "string" | "any") => PyType::Str,
        (Language::Python, "integer") => PyType::Int,
        (Language::Python, "float") => PyType::Float,
        (Language::Python, "boolean") => PyType::Bool,
        (Language::Python, "array" | "tuple") => PyType::List,
        (Language::Python, "dict") => PyType::Dict,
        (Language::Java, "byte" | "short" | "integer" | "long") => PyType::Int,
        (Language::Java, "float" | "double") => PyType::Float,
        (Language::Java, "boolean") => PyType::Bool,
        (Language::Java, "char" | "String" | "any") => PyType::Str,
        (Language::Java, "Array" | "ArrayList" | "Queue" | "Stack") => PyType::List,
        (Language::Java, "HashMap" | "Hashtable") => PyType::Dict,
        (Language::JavaScript, "String" | "any") => PyType::Str,
        (Language::JavaScript, "integer" | "Bigint") => PyType::Int,
        (Language::JavaScript, "float") => PyType::Float,
        (Language::JavaScript, "Boolean") => PyType::Bool,
        (Language::JavaScript, "dict") => PyType::Dict,
        (Language::JavaScript, "array") => PyType::List,
        _ => return None,
    };
    Some(py)
}

fn nested_list(language: Language, t: &str) -> bool {
    match language {
        Language::Python => matches!(t, "array" | "tuple"),
        _ => matches!(t, "Array" | "ArrayList" | "array"),
    }
}

/// BFCL's `simple_function_checker`: one call against one expected call.
pub fn check_call(
    function: &Value,
    call: &Call,
    answer: &Map<String, Value>,
    language: Language,
) -> Result<(), Miss> {
    let expected = answer
        .values()
        .next()
        .and_then(Value::as_object)
        .ok_or_else(|| miss("data", "an answer without parameters"))?;
    let name = tool_name(function["name"].as_str().unwrap_or_default());
    if call.name != name {
        return Err(miss(
            "simple_function_checker:wrong_func_name",
            format!("Function name '{name}' not found in model output."),
        ));
    }
    let details = function["parameters"]["properties"].as_object();
    let empty = Vec::new();
    let required = function["parameters"]["required"]
        .as_array()
        .unwrap_or(&empty);
    for r in required.iter().filter_map(Value::as_str) {
        if !call.arguments.contains_key(r) {
            return Err(miss(
                "simple_function_checker:missing_required",
                format!("Missing required parameter: '{r}'."),
            ));
        }
    }
    for (param, value) in &call.arguments {
        let (Some(detail), Some(accepted)) =
            (details.and_then(|d| d.get(param)), expected.get(param))
        else {
            return Err(miss(
                "simple_function_checker:unexpected_param",
                format!("Unexpected parameter: '{param}'."),
            ));
        };
        let accepted = accepted.as_array().map(Vec::as_slice).unwrap_or_default();
        check_param(param, value, detail, accepted, language)?;
    }
    for (param, accepted) in expected {
        let optional = accepted.as_array().is_some_and(|a| py_in(&json!(""), a));
        if !call.arguments.contains_key(param) && !optional {
            return Err(miss(
                "simple_function_checker:missing_optional",
                format!("Optional parameter '{param}' not provided and not marked as optional."),
            ));
        }
    }
    Ok(())
}

fn check_param(
    param: &str,
    value: &Value,
    detail: &Value,
    accepted: &[Value],
    language: Language,
) -> Result<(), Miss> {
    let t = detail["type"].as_str().unwrap_or_default();
    let Some(expected) = python_type(language, t) else {
        return Err(miss(
            "type_error:unsupported",
            format!("BFCL has no type '{t}' for {language:?}"),
        ));
    };
    let nested_t =
        nested_list(language, t).then(|| detail["items"]["type"].as_str().unwrap_or_default());
    let nested = match nested_t {
        Some(n) => Some(
            python_type(language, n)
                .ok_or_else(|| miss("type_error:unsupported", format!("BFCL has no type '{n}'")))?,
        ),
        None => None,
    };
    let mut value = value.clone();
    match language {
        Language::Java | Language::JavaScript => {
            let supported = if language == Language::Java {
                java::supported(t)
            } else {
                js::supported(t)
            };
            if !supported {
                return Err(miss(
                    "type_error:unsupported",
                    format!("BFCL cannot convert {t}"),
                ));
            }
            let Value::String(text) = &value else {
                return Err(miss(
                    if language == Language::Java {
                        "type_error:java"
                    } else {
                        "type_error:js"
                    },
                    format!(
                        "Incorrect type for parameter '{param}'. Expected type String, got {}.",
                        py_type(&value).name()
                    ),
                ));
            };
            value = if language == Language::Java {
                java::convert(text, t, nested_t)
            } else {
                js::convert(text, t, nested_t)
            };
        }
        Language::Python => {
            if t == "float" && py_type(&value) == PyType::Int {
                value = value.as_f64().map_or(value, |f| json!(f));
            }
        }
    }
    let is_variable = type_check(param, &value, accepted, t, expected, nested)?;
    if !is_variable {
        match expected {
            PyType::Dict => return dict_check(param, &value, accepted),
            PyType::List if nested == Some(PyType::Dict) => {
                return list_dict_check(param, &value, accepted);
            }
            PyType::Str => return string_check(param, &value, accepted),
            PyType::List => return list_check(param, &value, accepted),
            _ => {}
        }
    }
    if py_in(&value, accepted) {
        Ok(())
    } else {
        Err(miss(
            "value_error:others",
            format!(
                "Invalid value for parameter '{param}': {value}. Expected one of {}.",
                json!(accepted)
            ),
        ))
    }
}

/// `get_possible_answer_type`: the type of the first answer that is not `""`.
fn answer_type(accepted: &[Value]) -> Option<PyType> {
    accepted.iter().find(|a| *a != "").map(py_type)
}

/// BFCL's `type_checker`: `Ok(is_variable)` or the type error.
fn type_check(
    param: &str,
    value: &Value,
    accepted: &[Value],
    described: &str,
    expected: PyType,
    nested: Option<PyType>,
) -> Result<bool, Miss> {
    let answer_t = answer_type(accepted);
    let is_variable = answer_t.is_some_and(|t| t != expected);
    let mut nested_failed = false;
    if py_type(value) == expected {
        let Some(inner) = nested else {
            return Ok(is_variable);
        };
        for answer in accepted {
            let flag = match (answer, value) {
                (Value::Array(items), Value::Array(values)) => values
                    .iter()
                    .all(|v| type_check(param, v, items, inner.name(), inner, None).is_ok()),
                _ => true,
            };
            if flag {
                return Ok(is_variable);
            }
        }
        nested_failed = true;
    }
    if answer_t.is_some_and(|t| py_type(value) == t) {
        // BFCL returns its result here, still invalid after a failed nested check (its
        // "variable" path only sets `is_variable`).
        if nested_failed {
            return Err(miss(
                "type_error:nested",
                format!(
                    "Nested type checking failed for parameter '{param}'. Expected outer type {described} with inner type {}. Parameter value: {value}.",
                    nested.map_or("", PyType::name)
                ),
            ));
        }
        return Ok(true);
    }
    Err(miss(
        "type_error:simple",
        format!(
            "Incorrect type for parameter '{param}'. Expected type {described}, got {}. Parameter value: {value}.",
            py_type(value).name()
        ),
    ))
}

fn std_value(v: &Value) -> Value {
    match v {
        Value::String(s) => json!(standardize(s)),
        other => other.clone(),
    }
}

fn string_check(param: &str, value: &Value, accepted: &[Value]) -> Result<(), Miss> {
    let got = std_value(value);
    let options: Vec<Value> = accepted
        .iter()
        .filter(|a| a.is_string())
        .map(std_value)
        .collect();
    if py_in(&got, &options) {
        Ok(())
    } else {
        Err(miss(
            "value_error:string",
            format!(
                "Invalid value for parameter '{param}': {value}. Expected one of {}. Case insensitive.",
                json!(accepted)
            ),
        ))
    }
}

fn list_check(param: &str, value: &Value, accepted: &[Value]) -> Result<(), Miss> {
    let got: Vec<Value> = value
        .as_array()
        .map(|a| a.iter().map(std_value).collect())
        .unwrap_or_default();
    let options: Vec<Value> = accepted
        .iter()
        .map(|a| match a {
            Value::Array(items) => Value::Array(items.iter().map(std_value).collect()),
            // BFCL iterates `len(answer)` over a non-list answer: `""` gives an empty list.
            Value::String(s) if s.is_empty() => json!([]),
            other => other.clone(),
        })
        .collect();
    if py_in(&Value::Array(got), &options) {
        Ok(())
    } else {
        Err(miss(
            "value_error:list/tuple",
            format!(
                "Invalid value for parameter '{param}': {value}. Expected one of {}.",
                json!(accepted)
            ),
        ))
    }
}

/// BFCL's `dict_checker`: the dictionary matches one accepted dictionary key by key.
fn dict_check(param: &str, value: &Value, accepted: &[Value]) -> Result<(), Miss> {
    let mut last = miss(
        "dict_checker:unclear",
        format!("no accepted value for '{param}'"),
    );
    let empty = Map::new();
    let got = value.as_object().unwrap_or(&empty);
    for answer in accepted {
        if answer == "" {
            continue;
        }
        let Some(answer) = answer.as_object() else {
            continue;
        };
        match dict_matches(got, answer) {
            Ok(()) => return Ok(()),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn dict_matches(got: &Map<String, Value>, answer: &Map<String, Value>) -> Result<(), Miss> {
    for (key, v) in got {
        let Some(options) = answer.get(key) else {
            return Err(miss(
                "value_error:dict_key",
                format!("Unexpected dict key parameter: '{key}'."),
            ));
        };
        let options: Vec<Value> = options
            .as_array()
            .map(|o| o.iter().map(std_value).collect())
            .unwrap_or_default();
        if !py_in(&std_value(v), &options) {
            return Err(miss(
                "value_error:dict_value",
                format!(
                    "Invalid value for parameter '{key}': {v}. Expected one of {}.",
                    json!(options)
                ),
            ));
        }
    }
    for (key, options) in answer {
        let optional = options.as_array().is_some_and(|o| py_in(&json!(""), o));
        if !got.contains_key(key) && !optional {
            return Err(miss(
                "value_error:dict_key",
                format!("Missing dict key parameter: '{key}'."),
            ));
        }
    }
    Ok(())
}

/// BFCL's `list_dict_checker`: the list of dictionaries matches one accepted list, in order.
fn list_dict_check(param: &str, value: &Value, accepted: &[Value]) -> Result<(), Miss> {
    let got = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut last = miss(
        "list_dict_checker:unclear",
        format!("no accepted value for '{param}'"),
    );
    for answer in accepted {
        let answer = match answer {
            Value::Array(a) => a.as_slice(),
            _ => &[],
        };
        if got.len() != answer.len() {
            last = miss(
                "value_error:list_dict_count",
                "Wrong number of dictionaries in the list.",
            );
            continue;
        }
        let all = got
            .iter()
            .zip(answer)
            .try_for_each(|(g, a)| dict_check(param, g, std::slice::from_ref(a)));
        match all {
            Ok(()) => return Ok(()),
            Err(e) => last = e,
        }
    }
    Err(last)
}
