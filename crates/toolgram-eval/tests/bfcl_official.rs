//! toolgram's reading of BFCL against BFCL's own code (bfcl-eval 2026.3.23, in the venv
//! `scripts/bfcl-official` makes; `scripts/prepare-tests` makes it first):
//! - the replies BFCL's handler got from `toolgram serve` (`docs/eval/bfcl-official`) get
//!   the verdict BFCL's checker gave them from toolgram's FC reading and checker;
//! - every stored toolgram record of the BFCL categories gets the verdict BFCL's checker gives
//!   its calls (BFCL run in Python on the same calls);
//! - the tools BFCL's handler sends are the tools `--protocol bfcl` sends.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use toolgram_eval::bfcl::{DEFAULT_CATEGORIES, Item, fc, read_category, rescored};
use toolgram_eval::record::read_records;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn items() -> HashMap<String, Item> {
    let dir = repo().join("testdata/bfcl");
    DEFAULT_CATEGORIES
        .iter()
        .flat_map(|c| read_category(&dir, c).unwrap_or_else(|e| panic!("{c}: {e}")))
        .map(|i| (i.id.clone(), i))
        .collect()
}

/// BFCL's script in its venv: the JSON lines it prints for `args`, `stdin` written to it.
fn bfcl_official(args: &[&str], stdin: &str) -> Vec<Value> {
    let script = repo().join("scripts/bfcl-official");
    let python = Command::new(&script)
        .arg("--python")
        .output()
        .expect("scripts/bfcl-official runs");
    assert!(
        python.status.success(),
        "the BFCL venv (scripts/prepare-tests makes it): {}",
        String::from_utf8_lossy(&python.stderr)
    );
    let python = String::from_utf8_lossy(&python.stdout).trim().to_owned();
    let root = std::env::temp_dir().join("toolgram-bfcl-root");
    std::fs::create_dir_all(&root).expect("BFCL project root");
    let mut child = Command::new(python)
        .arg(repo().join("scripts/bfcl_official.py"))
        .args(args)
        .env("BFCL_PROJECT_ROOT", &root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || input.write_all(stdin.as_bytes()));
    let out = child.wait_with_output().expect("python ends");
    writer.join().expect("writer").expect("stdin written");
    assert!(
        out.status.success(),
        "bfcl_official.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn bfcl_official_replies_get_bfcls_verdicts_from_toolgrams_reading() {
    let path = repo().join("docs/eval/bfcl-official/replies.jsonl");
    let text = std::fs::read_to_string(&path).expect("docs/eval/bfcl-official/replies.jsonl");
    let items = items();
    let (mut n, mut differ) = (0, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line).expect("a JSON line");
        let id = r["id"].as_str().expect("id");
        let item = &items[id];
        let (verdict, _) = fc::verdict(item, &fc::message_of_result(&r["result"]));
        n += 1;
        if verdict.is_ok() != r["valid"].as_bool().expect("valid") {
            differ.push(format!(
                "{id}: BFCL {} ({}), toolgram {verdict:?}",
                r["valid"], r["error_type"]
            ));
        }
    }
    assert!(n > 0, "no replies in {}", path.display());
    assert!(
        differ.is_empty(),
        "{} of {n} verdicts differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn stored_records_get_bfcls_verdicts() {
    let items = items();
    let mut records = Vec::new();
    for folder in ["bfcl-full", "bfcl-shared-sample", "bfcl", "bfcl-protocol"] {
        let path = repo().join("docs/eval").join(folder).join("items.jsonl");
        records.extend(read_records(&path).expect("records"));
    }
    // Records with a reply: not a transport error, not tools refused before any model ran.
    let records: Vec<_> = records
        .into_iter()
        .filter(|r| items.contains_key(&r.id))
        .filter(|r| {
            !r.reason
                .as_deref()
                .is_some_and(|x| x.starts_with("peer error:") || x.starts_with("tools refused:"))
        })
        .collect();
    let input: String = records
        .iter()
        .map(|r| {
            json!({"id": r.id, "category": r.category, "mode": r.mode, "calls": r.calls})
                .to_string()
                + "\n"
        })
        .collect();
    let verdicts = bfcl_official(&["check", "--records", "/dev/stdin"], &input);
    assert_eq!(verdicts.len(), records.len());
    let mut differ = Vec::new();
    for (r, v) in records.iter().zip(&verdicts) {
        let ours = rescored(&items[&r.id], r);
        if ours.correct != v["valid"].as_bool().expect("valid") {
            differ.push(format!(
                "{} {}: BFCL {} ({}), toolgram {} ({:?})",
                r.id, r.mode, v["valid"], v["error_type"], ours.correct, ours.reason
            ));
        }
    }
    assert!(records.len() > 10_000, "{} records", records.len());
    assert!(
        differ.is_empty(),
        "{} of {} verdicts differ:\n{}",
        differ.len(),
        records.len(),
        differ.join("\n")
    );
}

#[test]
fn the_tools_bfcl_sends_are_the_tools_protocol_bfcl_sends() {
    let items = items();
    let sent = bfcl_official(&["tools"], "");
    assert_eq!(sent.len(), items.len());
    let differ: Vec<&str> = sent
        .iter()
        .filter_map(|s| {
            let id = s["id"].as_str()?;
            (s["tools"] != json!(items[id].tools_as_bfcl_sends)).then_some(id)
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{} items differ: {differ:?}",
        differ.len()
    );
}
