//! Test data written by others: BFCL parameter schemas and llama.cpp's tool definitions,
//! read from the shared data folder. Finding the folder: `TOOLGRAM_SHARED_DATA`, else
//! `shared/data` in an ancestor of `CARGO_MANIFEST_DIR`, else `/work/shared/data`; a missing
//! folder fails the test with that explanation. This module must not edit the data.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The shared data folder.
pub fn shared_data() -> PathBuf {
    if let Ok(dir) = std::env::var("TOOLGRAM_SHARED_DATA") {
        return PathBuf::from(dir);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if let Some(found) = manifest
        .ancestors()
        .map(|a| a.join("shared/data"))
        .find(|p| p.is_dir())
    {
        return found;
    }
    let fallback = PathBuf::from("/work/shared/data");
    assert!(
        fallback.is_dir(),
        "shared test data not found: set TOOLGRAM_SHARED_DATA, or put `shared/data` in an \
         ancestor of {} (or at /work/shared/data)",
        manifest.display()
    );
    fallback
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// BFCL type names → JSON Schema (BFCL's own `GORILLA_TO_OPENAPI` table, plus `Boolean` and
/// `Set` from its Java/JS conversion tables; the one empty type in the data is read like
/// `any`, i.e. as a string).
fn bfcl_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "integer" | "byte" | "short" | "long" | "Bigint" => "integer",
        "number" | "float" | "double" => "number",
        "string" | "any" | "Any" | "char" | "String" | "" => "string",
        "boolean" | "bool" | "Boolean" => "boolean",
        "array" | "list" | "tuple" | "ArrayList" | "Array" | "Queue" | "Stack" | "Set" => "array",
        "dict" | "object" | "HashMap" | "Hashtable" => "object",
        _ => return None,
    })
}

/// Map BFCL's dialect to JSON Schema: types by BFCL's table, and its non-standard
/// `"optional": true` marker removed (it repeats what `required` says).
pub fn bfcl_to_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, c) in m {
                match (k.as_str(), c) {
                    // BFCL's own marker, in several spellings (true, "True", "yes", a list).
                    ("optional", _) => {}
                    ("type", Value::String(t)) => {
                        let mapped =
                            bfcl_type(t).unwrap_or_else(|| panic!("unmapped BFCL type {t}"));
                        out.insert(k.clone(), Value::String(mapped.into()));
                    }
                    ("properties", Value::Object(p)) => {
                        let p = p.iter().map(|(n, s)| (n.clone(), bfcl_to_json_schema(s)));
                        out.insert(k.clone(), Value::Object(p.collect()));
                    }
                    ("items" | "additionalProperties", s) => {
                        out.insert(k.clone(), bfcl_to_json_schema(s));
                    }
                    _ => {
                        out.insert(k.clone(), c.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// One BFCL function: its name, mapped parameters, and the case id it came from.
pub struct BfclTool {
    pub case: String,
    pub name: String,
    pub parameters: Value,
}

/// Every function of a BFCL file (JSON lines).
pub fn bfcl(file: &str) -> Vec<BfclTool> {
    let text = read(&shared_data().join("bfcl").join(file));
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}: {e}"));
        let id = case["id"].as_str().unwrap_or_default().to_owned();
        for f in case["function"].as_array().into_iter().flatten() {
            out.push(BfclTool {
                case: id.clone(),
                name: f["name"].as_str().unwrap_or_default().to_owned(),
                parameters: bfcl_to_json_schema(&f["parameters"]),
            });
        }
    }
    out
}

/// Every BFCL file with function definitions.
pub const BFCL_FILES: &[&str] = &[
    "BFCL_v4_simple_python.json",
    "BFCL_v4_simple_java.json",
    "BFCL_v4_simple_javascript.json",
    "BFCL_v4_multiple.json",
    "BFCL_v4_parallel.json",
    "BFCL_v4_parallel_multiple.json",
    "BFCL_v4_irrelevance.json",
];

/// BFCL ground truth of a file, by case id: `[{function name: {param: [acceptable values]}}]`.
pub fn bfcl_answers(file: &str) -> std::collections::HashMap<String, Value> {
    let text = read(&shared_data().join("bfcl/possible_answer").join(file));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v["id"].as_str()?.to_owned(), v["ground_truth"].clone())))
        .collect()
}

/// llama.cpp's chat-test tool definitions: `{name: {name, description, parameters}}`.
pub fn llama_cpp_tools() -> Vec<(String, Value)> {
    let text = read(&shared_data().join("toolcall-parsing/tools.json"));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("tools.json: {e}"));
    doc.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v["parameters"].clone()))
        .collect()
}
