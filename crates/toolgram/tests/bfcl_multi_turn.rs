//! BFCL's multi-turn categories through BFCL's own code (`scripts/bfcl-official run --category
//! multi_turn`: bfcl-eval's handler, its executable APIs and its multi-turn checker, in the
//! venv `scripts/prepare-tests` makes) against `toolgram serve` on the test model: the first
//! item of each of the four categories, end to end. A 135M model's verdicts may be misses;
//! what must work is the conversation (every turn's steps recorded as BFCL records them), the
//! checker's verdict on it, and the scores with BFCL's multi-turn overall. And, with no model,
//! that the venv runs every conversation: BFCL's checker must accept BFCL's own answers.

mod common;
use common::{ServeChild, repo};

use serde_json::Value;
use std::process::Command;

#[test]
fn one_item_of_each_multi_turn_category_runs_through_serve_and_bfcls_checker() {
    // Replies bounded so a runaway text turn ends soon; the server's defaults otherwise.
    let server = ServeChild::start(&["--model", "test", "--max-tokens", "256"]);
    let out = std::env::temp_dir().join(format!("toolgram-bfcl-mt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let base = server.base();
    let run = Command::new(repo().join("scripts/bfcl-official"))
        .current_dir(repo())
        .args(["run", "--base-url", base.trim_end_matches("/v1")])
        .args(["--category", "multi_turn", "--limit", "1", "--out"])
        .arg(&out)
        .output()
        .expect("scripts/bfcl-official runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(
        run.status.success(),
        "{stdout}\n{stderr}\nserver log:\n{}",
        server.log()
    );
    let replies = std::fs::read_to_string(out.join("replies.jsonl")).expect("replies.jsonl");
    let lines: Vec<Value> = replies
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let categories: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["category"].as_str())
        .collect();
    assert_eq!(
        categories,
        [
            "multi_turn_base",
            "multi_turn_miss_func",
            "multi_turn_miss_param",
            "multi_turn_long_context"
        ],
        "{replies}"
    );
    for line in &lines {
        // BFCL's handler went through every turn (a list of turns, each a list of steps) with
        // no request failing, and its checker gave a verdict.
        assert!(line["http_error"].is_null(), "{line}");
        let turns = line["result"]
            .as_array()
            .unwrap_or_else(|| panic!("{line}"));
        assert!(
            !turns.is_empty() && turns.iter().all(Value::is_array),
            "{line}"
        );
        assert!(line["valid"].is_boolean(), "{line}");
    }
    let scores: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("scores.json")).expect("scores.json"),
    )
    .expect("scores are JSON");
    assert!(scores["multi_turn_overall"].is_number(), "{scores}");
    assert!(stdout.contains("multi-turn overall"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bfcls_checker_accepts_its_own_answers_to_every_multi_turn_conversation() {
    // Each of the 800 conversations' ground truth sent as a model's calls: every executable
    // API must import and run in this venv (MathAPI needs mpmath, which bfcl-eval's
    // `--no-deps` install left out: its 100 conversations would each have ended in an error).
    let run = Command::new(repo().join("scripts/bfcl-official"))
        .current_dir(repo())
        .arg("ground-truth")
        .output()
        .expect("scripts/bfcl-official runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let reports: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(reports.len(), 4, "{stdout}");
    for report in &reports {
        assert_eq!(report["items"], 200, "{report}");
        assert_eq!(report["accepted"], 200, "{report}");
        // The screen's own count: BFCL's answers use values no turn had shown.
        assert!(
            report["conversations_with_unshown_value"].as_u64() > Some(0),
            "{report}"
        );
    }
}
