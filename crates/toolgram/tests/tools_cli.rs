//! `toolgram tools` as a user runs it: list, grammar in every format, run with a JSON result
//! or a JSON error and a non-zero exit.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn toolgram(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("stdin");
    }
    let out = child.wait_with_output().expect("finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn math_eval_runs_from_the_command_line() {
    let (code, out, err) = toolgram(&["tools", "list"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains("\"math_eval\"")), "{out}");
    let (code, out, err) = toolgram(
        &["tools", "run", "math_eval", "--input", "-"],
        "2^10 / 4 - 1/2\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["result"]["value"], "511/2");
    assert_eq!(v["result"]["decimal"], "255.5");
    let (code, _, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], "1/(3-3)");
    assert_ne!(code, 0);
    let e: Value = serde_json::from_str(err.lines().last().unwrap_or("")).expect("JSON error");
    assert_eq!(e["error"]["type"], "invalid_input");
    let (code, _, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], "rm -rf /");
    assert_ne!(code, 0, "{err}");
    for format in ["lark", "lark-openai", "gbnf", "json-schema"] {
        let (code, out, err) = toolgram(&["tools", "grammar", "math_eval", "--format", format], "");
        assert_eq!(code, 0, "{format}: {err}");
        assert!(!out.is_empty());
    }
}

#[test]
fn call_uses_a_builtin_grammar_tool_on_the_default_model() {
    let dir = std::env::temp_dir().join(format!("toolgram-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tools = dir.join("tools.json");
    std::fs::write(&tools, r#"[{"type": "builtin", "name": "math_eval"}]"#).expect("write");
    let tools = tools.to_string_lossy().into_owned();
    let (code, out, err) = toolgram(
        &[
            "call",
            "--tools",
            &tools,
            "--tool-choice",
            "required",
            "What is 17 times 23, minus 5?",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let msg: Value = serde_json::from_str(&out).expect("one JSON object");
    let call = &msg["tool_calls"][0];
    assert_eq!(call["type"], "custom", "{msg}");
    assert_eq!(call["custom"]["name"], "math_eval");
    let input = call["custom"]["input"].as_str().expect("raw input text");
    // The input is in the tool's grammar (validated after parsing) and runs.
    let (code, out, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], input);
    assert_eq!(code, 0, "{input}: {err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["result"]["value"].is_string(), "{v}");
    // An unknown built-in is refused before any model is loaded.
    std::fs::write(
        dir.join("bad.json"),
        r#"[{"type": "builtin", "name": "nope"}]"#,
    )
    .expect("write");
    let bad = dir.join("bad.json").to_string_lossy().into_owned();
    let (code, _, err) = toolgram(&["call", "--tools", &bad, "hi"], "");
    assert_ne!(code, 0);
    assert!(
        err.contains("invalid_tools") && err.contains("math_eval"),
        "{err}"
    );
}
