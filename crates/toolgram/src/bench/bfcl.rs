//! Reading BFCL (Berkeley Function Calling Leaderboard) cases: its JSON-Schema-like dialect
//! mapped the way BFCL maps it for OpenAI (`dict→object`, `float→number`, `tuple→array`,
//! `any→string`, `.` in names → `_`, its `optional` flag dropped — `required` says it), and
//! its ground truth (acceptable values per argument, `""` = may be omitted).

use serde_json::{Map, Value, json};
use toolgram_core::ToolCall;

/// One BFCL case.
pub struct Case {
    /// `simple_python_0`, …
    pub id: String,
    /// The user's turn.
    pub question: String,
    /// The functions, as OpenAI tools.
    pub tools: Value,
    /// Ground truth: one entry per expected call, `{tool name: {argument: [accepted]}}`.
    pub truth: Vec<Map<String, Value>>,
}

/// The OpenAI tool name for a BFCL function name.
pub fn tool_name(name: &str) -> String {
    name.replace('.', "_")
}

fn map_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("optional", _) => {}
                    ("type", Value::String(t)) => {
                        let t = match t.as_str() {
                            "dict" => "object",
                            "float" => "number",
                            "tuple" => "array",
                            "any" => "string",
                            other => other,
                        };
                        out.insert(k.clone(), json!(t));
                    }
                    _ => {
                        out.insert(k.clone(), map_schema(x));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(map_schema).collect()),
        other => other.clone(),
    }
}

/// Read a BFCL questions file and its possible-answer file (JSON lines each).
pub fn read(questions: &str, answers: &str) -> Vec<Case> {
    let truths: std::collections::HashMap<String, Vec<Map<String, Value>>> = answers
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let id = v["id"].as_str()?.to_owned();
            let gt = v["ground_truth"]
                .as_array()?
                .iter()
                .filter_map(|g| g.as_object().cloned())
                .collect();
            Some((id, gt))
        })
        .collect();
    questions
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let id = v["id"].as_str()?.to_owned();
            let question = v["question"][0]
                .as_array()?
                .iter()
                .filter(|m| m["role"] == "user")
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let tools: Vec<Value> = v["function"]
                .as_array()?
                .iter()
                .map(|f| {
                    json!({"type": "function", "function": {
                        "name": tool_name(f["name"].as_str().unwrap_or_default()),
                        "description": f["description"],
                        "parameters": map_schema(&f["parameters"]),
                    }})
                })
                .collect();
            let truth = truths.get(&id).cloned().unwrap_or_default();
            Some(Case {
                id,
                question,
                tools: Value::Array(tools),
                truth,
            })
        })
        .collect()
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) => x.trim().eq_ignore_ascii_case(y.trim()),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// Whether the calls match the ground truth (right tools, every argument among its accepted
/// values, omitted only where `""` is accepted; calls in any order).
pub fn matches(calls: &[ToolCall], truth: &[Map<String, Value>]) -> (bool, bool) {
    let names_ok = calls.len() == truth.len()
        && truth.iter().all(|t| {
            t.keys()
                .all(|n| calls.iter().any(|c| c.name == tool_name(n)))
        });
    let args_ok = names_ok
        && truth.iter().all(|t| {
            t.iter().all(|(name, expected)| {
                calls.iter().any(|c| {
                    c.name == tool_name(name)
                        && expected.as_object().is_some_and(|params| {
                            params.iter().all(|(p, accepted)| {
                                let got = c.arguments.get(p);
                                accepted.as_array().is_some_and(|list| match got {
                                    None => list.iter().any(|a| a == ""),
                                    Some(g) => list.iter().any(|a| same(a, g)),
                                })
                            })
                        })
                })
            })
        });
    (names_ok, args_ok)
}
