//! The schema datasets the benchmarks read, one reader each: [`maskbench`] (JSONSchemaBench's
//! MaskBench: one schema with valid and invalid instances per file) and [`schema_suite`] (the
//! official JSON-Schema-Test-Suite: groups of a schema and its tests per file). BFCL's reader
//! is `toolgram_eval::bfcl`.
//!
//! These modules read files into [`SchemaCase`]s and nothing else: they must not compile,
//! check or score a schema (the benchmarks of this crate do).

pub mod maskbench;
pub mod schema_suite;

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::BenchError;

/// One schema and the instances it is tested on.
#[derive(Debug, Clone)]
pub struct SchemaCase {
    /// The group it is reported under (a MaskBench subset, a test-suite file).
    pub subset: String,
    /// The JSON Schema (`null` when the file has none).
    pub schema: Value,
    /// Its test instances.
    pub tests: Vec<Instance>,
}

/// One test instance of a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// The JSON value.
    pub data: Value,
    /// Whether the schema must accept it.
    pub valid: bool,
}

impl Instance {
    /// `{"data": …, "valid": …}` as both datasets write it (a missing `data` is `null`, a
    /// missing or non-boolean `valid` is `false`).
    fn read(test: &Value) -> Self {
        Self {
            data: test.get("data").cloned().unwrap_or(Value::Null),
            valid: test.get("valid").and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// The instances of a `tests` array (none when it is missing).
    fn read_all(tests: Option<&Value>) -> Vec<Self> {
        tests
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(Self::read)
            .collect()
    }
}

/// The `.json` files of `dir`, sorted by name.
fn json_files(dir: &Path) -> Result<Vec<String>, BenchError> {
    let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    Ok(names)
}

/// `dir` joined with each name.
fn paths(dir: &Path, names: Vec<String>) -> Vec<PathBuf> {
    names.into_iter().map(|n| dir.join(n)).collect()
}
