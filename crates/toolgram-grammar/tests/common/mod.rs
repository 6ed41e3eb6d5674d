//! Shared test data: `TOOLGRAM_SHARED_DATA`, else the first ancestor of the crate holding
//! `shared/data`, else `/work/shared/data`. Absent data fails the test with that message.

#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) fn shared_data() -> PathBuf {
    if let Ok(p) = std::env::var("TOOLGRAM_SHARED_DATA") {
        return PathBuf::from(p);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in manifest.ancestors() {
        let cand = dir.join("shared/data");
        if cand.is_dir() {
            return cand;
        }
    }
    let fallback = PathBuf::from("/work/shared/data");
    assert!(
        fallback.is_dir(),
        "shared test data not found: set TOOLGRAM_SHARED_DATA to the directory holding grammar-tests/"
    );
    fallback
}

pub(crate) fn jsonl(name: &str) -> Vec<Value> {
    let path = shared_data().join("grammar-tests").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

pub(crate) fn sample_grammars() -> Vec<(String, String)> {
    let dir = shared_data().join("grammar-tests/llamacpp_grammars");
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
