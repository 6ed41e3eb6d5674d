//! The official JSON-Schema-Test-Suite, one draft folder (`tests/draft2020-12`): each file a
//! keyword under test, holding groups `[{"description", "schema", "tests": [{"data",
//! "valid"}]}]`. Each group is one [`SchemaCase`], its subset the file's stem.
//!
//! This module must not compile or check a schema.

use super::{Instance, SchemaCase, json_files, paths};
use crate::BenchError;
use serde_json::Value;
use std::path::Path;

/// Every group of every `.json` file in `dir`, files in name order. A file that cannot be
/// read or is not a JSON array contributes no group.
pub fn read_dir(dir: &Path) -> Result<Vec<SchemaCase>, BenchError> {
    let mut out = Vec::new();
    for path in paths(dir, json_files(dir)?) {
        let subset = path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let groups: Vec<Value> = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        out.extend(groups.iter().map(|g| SchemaCase {
            subset: subset.clone(),
            schema: g.get("schema").cloned().unwrap_or(Value::Null),
            tests: Instance::read_all(g.get("tests")),
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_case_per_group_subset_from_the_file() {
        let dir =
            std::env::temp_dir().join(format!("toolgram-schema-suite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch file");
        let groups = r#"[
            {"description": "a", "schema": {"minimum": 1}, "tests": [{"data": 2, "valid": true}]},
            {"description": "b", "schema": true, "tests": []}
        ]"#;
        std::fs::write(dir.join("minimum.json"), groups).expect("scratch file");
        std::fs::write(dir.join("broken.json"), "[").expect("scratch file");
        let cases = read_dir(&dir).expect("readable folder");
        assert_eq!(cases.len(), 2);
        assert!(cases.iter().all(|c| c.subset == "minimum"));
        assert_eq!(
            cases[0].tests,
            vec![Instance {
                data: 2.into(),
                valid: true
            }]
        );
        assert_eq!(cases[1].schema, Value::Bool(true));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
