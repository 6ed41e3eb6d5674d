//! `toolgram eval bfcl` and `toolgram eval tools` as a user runs them, on the fast test model:
//! a few items of two shared categories in every mode, `--resume` skipping what is done, a
//! category this repository has never seen, read from its file name in a `--data` folder; and
//! the three forms of two grammar tools, each call run and scored.

mod common;
use common::{repo, toolgram};

use serde_json::Value;
use std::path::{Path, PathBuf};

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolgram-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("items.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn rows(out: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    v["rows"].as_array().cloned().expect("rows")
}

fn eval(data: &str, categories: &str, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = out.to_string_lossy().into_owned();
    let mut args = vec![
        "eval",
        "bfcl",
        "--model",
        "test",
        "--data",
        data,
        "--category",
        categories,
        "--limit",
        "1",
        "--max-tokens",
        "48",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    toolgram(&args)
}

/// BFCL's own summary leads the output and is in `results.json`, one per mode: irrelevance
/// beside it, and no overall without every category it averages.
fn assert_bfcl_summary_leads(out: &Path, stdout: &str) {
    assert!(stdout.starts_with("BFCL's own summary"), "{stdout}");
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("results.json is JSON");
    let summary = results["bfcl_summary"].as_array().expect("bfcl_summary");
    assert_eq!(summary.len(), 3, "one per mode: {summary:?}");
    assert!(
        summary
            .iter()
            .all(|s| s["irrelevance"].is_number() && s["non_live"].is_null())
    );
}

#[test]
fn eval_bfcl_runs_every_mode_resumes_and_reads_unseen_categories() {
    let out = temp("shared");
    let (code, stdout, stderr) = eval("testdata/bfcl", "simple_python,irrelevance", &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| simple_python | grammar | toolgram | 1 |"),
        "{stdout}"
    );
    let items = lines(&out.join("items.jsonl"));
    assert_eq!(items.len(), 6, "2 categories × 3 modes × 1 item");
    for it in &items {
        assert!(
            it["reason"].is_string() || it["correct"] == true,
            "a miss says why: {it}"
        );
        if it["mode"] == "grammar" {
            assert_eq!(it["valid"], true, "grammar mode is schema-valid: {it}");
        }
    }
    let r = rows(&out);
    assert!(
        r.iter()
            .any(|r| r["category"] == "all (items pooled)" && r["mode"] == "prompt" && r["n"] == 2)
    );
    assert_bfcl_summary_leads(&out, &stdout);
    let svg = std::fs::read_to_string(out.join("chart.svg")).expect("chart.svg");
    assert!(
        svg.starts_with("<svg") && svg.contains("simple_python"),
        "the chart names its categories"
    );

    // Resume: nothing left to run, nothing appended, the same table.
    let (code, again, stderr) = eval(
        "testdata/bfcl",
        "simple_python,irrelevance",
        &out,
        &["--resume"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines(&out.join("items.jsonl")).len(), 6);
    assert_eq!(again, stdout);

    // Rescore: this version's checker on the stored calls, no model run; a verdict it made
    // itself does not change, one changed by hand is set right.
    let path = out.join("items.jsonl");
    let flipped: Vec<String> = lines(&path)
        .into_iter()
        .map(|mut it| {
            if it["category"] == "simple_python" && it["mode"] == "grammar" {
                it["correct"] = serde_json::json!(!it["correct"].as_bool().unwrap_or(false));
            }
            it.to_string()
        })
        .collect();
    std::fs::write(&path, flipped.join("\n") + "\n").expect("write");
    let (code, rescored, stderr) = eval(
        "testdata/bfcl",
        "simple_python,irrelevance",
        &out,
        &["--rescore"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("6 records scored again, 1 verdicts changed"),
        "{stderr}"
    );
    assert_eq!(rescored, stdout);

    // A category never seen here: `live_simple`, laid out as BFCL lays it out.
    let data = temp("data");
    std::fs::create_dir_all(data.join("possible_answer")).expect("dir");
    let bfcl = repo().join("testdata/bfcl");
    for (from, to) in [
        ("BFCL_v4_simple_python.json", "BFCL_v4_live_simple.json"),
        (
            "possible_answer/BFCL_v4_simple_python.json",
            "possible_answer/BFCL_v4_live_simple.json",
        ),
    ] {
        let text = std::fs::read_to_string(bfcl.join(from)).expect("shared data");
        let first: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
        std::fs::write(
            data.join(to),
            first.replace("simple_python_", "live_simple_"),
        )
        .expect("write");
    }
    let out2 = temp("unseen");
    let (code, stdout, stderr) = eval(
        &data.to_string_lossy(),
        "live_simple",
        &out2,
        &["--mode", "grammar"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| live_simple | grammar | toolgram | 1 |"),
        "{stdout}"
    );
    assert_eq!(lines(&out2.join("items.jsonl"))[0]["id"], "live_simple_0");

    // Bad input: a clear error before any model is loaded.
    let (code, _, stderr) = eval("testdata/bfcl", "no_such_category", &out2, &[]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("no BFCL_v<N>_no_such_category.json"),
        "{stderr}"
    );
    let (code, _, stderr) = eval(
        "testdata/bfcl",
        "simple_python",
        &out2,
        &["--mode", "fallback"],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("mode fallback is for grammar tools"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&out2);
    let _ = std::fs::remove_dir_all(&data);
}

/// `--protocol bfcl` on the embedded model: one attempt, the row and every record labelled
/// `bfcl`, and a resumed run under the other protocol adds its own rows beside them; the modes
/// that add toolgram's instructions are refused under it.
#[test]
fn eval_bfcl_under_bfcls_protocol_is_labelled_and_kept_apart() {
    let out = temp("protocol");
    let (code, stdout, stderr) = eval(
        "testdata/bfcl",
        "irrelevance",
        &out,
        &["--protocol", "bfcl"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| irrelevance | grammar-template | bfcl | 1 |"),
        "{stdout}"
    );
    let items = lines(&out.join("items.jsonl"));
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["protocol"], "bfcl");
    assert_eq!(items[0]["attempts"], 1);
    assert!(
        items[0]["run"].as_str().is_some_and(|r| r.contains(" · ")),
        "{}",
        items[0]
    );
    let (code, stdout, stderr) = eval(
        "testdata/bfcl",
        "irrelevance",
        &out,
        &["--resume", "--mode", "grammar-template"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| irrelevance | grammar-template | toolgram | 1 |")
            && stdout.contains("| irrelevance | grammar-template | bfcl | 1 |"),
        "{stdout}"
    );
    assert_eq!(lines(&out.join("items.jsonl")).len(), 2);
    // BFCL's protocol adds nothing to the prompt: the modes that do are refused up front.
    let (code, _, stderr) = eval(
        "testdata/bfcl",
        "simple_python",
        &out,
        &["--protocol", "bfcl", "--mode", "grammar"],
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("use grammar-template"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `toolgram eval tools`: the three forms of two tools on the test model; every call that was made
/// is run and its outcome kept; the grammar form's calls are always in the grammar; `--resume`
/// adds nothing; an unknown tool is a clear error.
#[test]
fn eval_tools_runs_both_forms_executes_the_calls_and_resumes() {
    let out = temp("tools");
    let out_s = out.to_string_lossy().into_owned();
    let args = [
        "eval",
        "tools",
        "--model",
        "test",
        "--tool",
        "math_eval,apply_patch",
        "--limit",
        "1",
        "--max-tokens",
        "48",
        "--out",
        &out_s,
    ];
    let (code, stdout, stderr) = toolgram(&args);
    assert_eq!(code, 0, "{stderr}");
    for row in [
        "| math_eval | grammar-template | 1 |",
        "| apply_patch | fallback-template | 1 |",
        "| apply_patch | json-template | 1 |",
    ] {
        assert!(stdout.contains(row), "{row} in {stdout}");
    }
    let items = lines(&out.join("items.jsonl"));
    assert_eq!(items.len(), 6, "2 tools × 1 task × 3 forms");
    for it in &items {
        assert!(
            it["correct"] == true || it["reason"].is_string(),
            "a miss says why: {it}"
        );
        if it["called"] == true {
            assert!(it["outcome"].is_object(), "a call is run: {it}");
            if it["mode"] == "grammar-template" {
                assert_eq!(
                    it["valid"], true,
                    "grammar-form input is in the grammar: {it}"
                );
            }
        }
    }
    assert!(
        items
            .iter()
            .any(|it| it["mode"] == "grammar-template" && it["called"] == true),
        "the test model makes at least one grammar-form call"
    );
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    assert_eq!(results["run"]["tool_choice"], "required");

    let mut resumed = args.to_vec();
    resumed.push("--resume");
    let (code, again, stderr) = toolgram(&resumed);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        lines(&out.join("items.jsonl")).len(),
        6,
        "nothing run twice"
    );
    assert_eq!(again, stdout, "the same table from the same records");

    let (code, _, stderr) = toolgram(&["eval", "tools", "--tool", "nope", "--out", &out_s]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("math_eval"),
        "names the tools with tasks: {stderr}"
    );
    // Providers are not sent prompt mode's instructions in grammar mode: refused before any
    // item runs, not recorded as a miss per item.
    let few = out.join("fewshot");
    let few_s = few.to_string_lossy().into_owned();
    let (code, _, stderr) = toolgram(&[
        "eval",
        "tools",
        "--tool",
        "math_eval",
        "--limit",
        "1",
        "--mode",
        "grammar",
        "--provider",
        "llama-server",
        "--base-url",
        "http://127.0.0.1:9",
        "--out",
        &few_s,
    ]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("mode grammar ") && stderr.contains("-template"),
        "{stderr}"
    );
    assert!(
        !few.join("items.jsonl").exists() || lines(&few.join("items.jsonl")).is_empty(),
        "no item was recorded"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// No reply hides a call in its text: the default model under the count plan on `irrelevance` (where
/// the stored runs hid most: `docs/eval.md`, "Calls hidden in text"), four items spread over
/// the file, each reply without a structured call judged by core's detector against the tools
/// its item offered.
#[test]
fn no_reply_without_a_call_hides_one_in_its_text() {
    let out = temp("hidden");
    let outs = out.to_string_lossy().into_owned();
    let (code, _, stderr) = toolgram(&[
        "eval",
        "bfcl",
        "--model",
        "default",
        "--category",
        "irrelevance",
        "--limit",
        "4",
        "--protocol",
        "bfcl",
        "--plan=count",
        "--out",
        &outs,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let data = repo().join("testdata/bfcl");
    let items = toolgram_eval::bfcl::read_category(&data, "irrelevance").expect("items");
    let records = lines(&out.join("items.jsonl"));
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records {
        let id = r["id"].as_str().expect("id");
        let item = items.iter().find(|i| i.id == id).expect("the item");
        let offered: Vec<Value> = item
            .functions
            .iter()
            .map(|f| {
                toolgram_eval::bfcl::convert::openai_tool_as_bfcl_sends(f, item.language)
                    .expect("converts")
            })
            .collect();
        let tools = toolgram_runtime::tools_from_json(Value::Array(offered), Path::new("."))
            .expect("tools");
        let text = r["raw"].as_str().unwrap_or_default();
        let called = r["calls"].as_array().is_some_and(|c| !c.is_empty());
        if !called {
            let hidden = toolgram_core::validate::hidden_call(text, tools.tools());
            assert!(hidden.is_none(), "{id} hides {hidden:?} in: {text}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
