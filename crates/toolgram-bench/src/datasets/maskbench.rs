//! MaskBench (JSONSchemaBench's `maskbench/data`): one file per schema, `{"schema": …,
//! "tests": [{"data": …, "valid": bool}]}`, named `<subset>---<name>.json` or
//! `<subset>_<n>.json`. Lists the files (all, or a fixed seeded sample) and reads one.
//!
//! This module must not compile or check a schema.

use super::{Instance, SchemaCase, json_files, paths};
use crate::BenchError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The schema files of `dir`, sorted, or a seeded sample of `sample` of them (the same
/// files for the same seed, whatever the order the folder lists them in).
pub fn files(dir: &Path, sample: Option<usize>, seed: u64) -> Result<Vec<PathBuf>, BenchError> {
    let mut names = json_files(dir)?;
    if let Some(n) = sample {
        names.sort_by_key(|name| splitmix(fnv(name) ^ seed));
        names.truncate(n);
        names.sort();
    }
    Ok(paths(dir, names))
}

/// The file's name (empty when the path has none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The subset a file belongs to: what precedes `---`, else the name without its last
/// `_`-separated part.
pub fn subset_of(file: &str) -> String {
    let stem = file.trim_end_matches(".json");
    match stem.split_once("---") {
        Some((s, _)) => s.to_owned(),
        None => {
            let parts: Vec<&str> = stem.split('_').collect();
            parts[..parts.len().saturating_sub(1).max(1)].join("_")
        }
    }
}

/// Read one schema file; `None` when it cannot be read or is not JSON.
pub fn read(path: &Path) -> Option<SchemaCase> {
    let doc: Value = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())?;
    Some(SchemaCase {
        subset: subset_of(&file_name(path)),
        schema: doc.get("schema").cloned().unwrap_or(Value::Null),
        tests: Instance::read_all(doc.get("tests")),
    })
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_from_both_naming_schemes() {
        assert_eq!(subset_of("Github_easy---o12345.json"), "Github_easy");
        assert_eq!(subset_of("BFCL_parallel_118.json"), "BFCL_parallel");
        assert_eq!(subset_of("Glaiveai2K_7.json"), "Glaiveai2K");
        // One part only: the whole stem.
        assert_eq!(subset_of("single.json"), "single");
    }

    fn scratch(names: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolgram-maskbench-{}-{}",
            std::process::id(),
            names.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        for n in names {
            std::fs::write(dir.join(n), "{}").expect("scratch file");
        }
        dir
    }

    #[test]
    fn sample_is_sorted_seeded_and_stable() {
        let names: Vec<String> = (0..20).map(|i| format!("S_{i}.json")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut with_other = refs.clone();
        with_other.push("notes.txt");
        let dir = scratch(&with_other);
        let all = files(&dir, None, 0).expect("listed");
        assert_eq!(all.len(), 20, "non-JSON files are left out");
        let a = files(&dir, Some(5), 7).expect("listed");
        let b = files(&dir, Some(5), 7).expect("listed");
        let c = files(&dir, Some(5), 8).expect("listed");
        assert_eq!(a.len(), 5);
        assert_eq!(a, b, "same seed, same sample");
        assert_ne!(a, c, "another seed, another sample");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(a, sorted);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_folder_is_an_io_error() {
        let err = files(Path::new("/nonexistent/maskbench"), None, 0);
        assert!(matches!(err, Err(BenchError::Io { .. })));
    }

    #[test]
    fn reads_schema_and_instances() {
        let dir =
            std::env::temp_dir().join(format!("toolgram-maskbench-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        let p = dir.join("Kubernetes_3.json");
        let doc = r#"{"schema": {"type": "integer"}, "tests": [{"data": 1, "valid": true}, {"data": "x"}]}"#;
        std::fs::write(&p, doc).expect("scratch file");
        let case = read(&p).expect("readable file");
        assert_eq!(case.subset, "Kubernetes");
        assert_eq!(case.schema, serde_json::json!({"type": "integer"}));
        assert_eq!(case.tests.len(), 2);
        assert!(case.tests[0].valid && !case.tests[1].valid);
        std::fs::write(&p, "not json").expect("scratch file");
        assert!(read(&p).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
