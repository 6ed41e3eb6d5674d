//! The repository's test data (`testdata/` at the repository root: copies of others' test cases,
//! each with its license; see `testdata/README.md`).

#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

pub(crate) fn jsonl(name: &str) -> Vec<Value> {
    let path = testdata().join("grammar-tests").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

pub(crate) fn sample_grammars() -> Vec<(String, String)> {
    let dir = testdata().join("grammar-tests/llamacpp_grammars");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable grammar");
            (
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text,
            )
        })
        .collect();
    out.sort();
    out
}
