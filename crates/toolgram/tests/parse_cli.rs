//! `toolgram parse` as a user runs it: raw text on stdin, the assistant message on stdout,
//! one `{"error":…}` line on stderr with a non-zero exit. No model is needed.

mod common;
use common::repo;

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn parse(args: &[&str], stdin: &str) -> (i32, Value, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .arg("parse")
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    if let Some(mut input) = child.stdin.take() {
        // A run refused before it reads its input (a bad flag or tools file) may have exited
        // already: a broken pipe is then expected, anything else is not.
        match input.write_all(stdin.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {e}"),
            _ => {}
        }
    }
    let out = child.wait_with_output().expect("binary ends");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn error_type(stderr: &str) -> String {
    let last = stderr.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(last).unwrap_or(Value::Null);
    v["error"]["type"].as_str().unwrap_or("").to_owned()
}

#[test]
fn hermes_call_with_reasoning_becomes_an_openai_message() {
    let text = "<think>need weather</think>Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let (code, msg, err) = parse(&["--tools", "examples/weather.json"], text);
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["role"], "assistant");
    assert_eq!(msg["content"], "Checking.");
    assert_eq!(msg["reasoning_content"], "need weather");
    let call = &msg["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or(""))
        .unwrap_or(Value::Null);
    assert_eq!(args["city"], "Paris");
    assert!(call["id"].as_str().is_some_and(|s| !s.is_empty()));
}

#[test]
fn named_syntax_and_reasoning_none() {
    let text = "<think>x</think>[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}";
    let (code, msg, err) = parse(
        &["--syntax", "mistral-v11", "--reasoning-format", "none"],
        text,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["content"], "<think>x</think>");
    assert_eq!(msg["tool_calls"][0]["function"]["name"], "get_weather");
}

#[test]
fn errors_are_one_json_line() {
    let trunc = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa";
    let (code, _, err) = parse(&[], trunc);
    assert_ne!(code, 0);
    assert_eq!(error_type(&err), "truncated");
    let (code, msg, err) = parse(&["--partial"], trunc);
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["tool_calls"][0]["partial"], true);
    let unknown = "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>";
    let (code, _, err) = parse(&["--tools", "examples/weather.json"], unknown);
    assert_ne!(code, 0);
    assert_eq!(error_type(&err), "unknown_tool");
    let (code, _, err) = parse(&["--syntax", "klingon"], "hi");
    assert_ne!(code, 0);
    assert_eq!(error_type(&err), "invalid_request");
}

#[test]
fn template_file_selects_the_family() {
    let dir = std::env::temp_dir().join(format!("toolgram-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tpl = dir.join("lfm2.jinja");
    std::fs::write(
        &tpl,
        "{{ '<|tool_call_start|>' }}{{ messages }}{{ '<|tool_call_end|>' }}",
    )
    .expect("template written");
    let tpl = tpl.to_string_lossy().into_owned();
    let text = "<|tool_call_start|>[get_weather(city='Oslo')]<|tool_call_end|>";
    let (code, msg, err) = parse(&["--template", &tpl], text);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        msg["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Oslo\"}"
    );
}

/// `--template` finds the syntax as `call` does, from what the template renders: InternLM2's
/// template names markers of other families in its text (text detection read 1 of 6 of
/// its held-out outputs), but the calls it renders derive its own syntax, said on stderr.
#[test]
fn a_template_is_read_from_what_it_renders() {
    let template = "crates/toolgram-engine/tests/data/unseen-families/templates/tool_chat_template_internlm2_tool.jinja";
    let text = "Let me look.<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}<|action_end|>";
    let (code, msg, err) = parse(&["--template", template], text);
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["content"], "Let me look.", "{msg}");
    assert_eq!(
        msg["tool_calls"][0]["function"]["name"], "get_weather",
        "{msg}"
    );
    assert!(err.contains("derived from the template"), "{err}");
}

/// Markers a template writes around `reasoning_content` (its own
/// `<|begin_reasoning|>`…`<|end_reasoning|>`, no registry entry's) and around an answer's
/// text (`<answer>`…`</answer>`) are read from what it renders: the reasoning is extracted,
/// the text markers are not content, and stderr says so.
#[test]
fn reasoning_and_text_markers_are_read_from_what_the_template_renders() {
    let template = "examples/templates/own-markers.jinja";
    let text = "<|begin_reasoning|>\nThe user wants Paris.\n<|end_reasoning|>\n<answer>Checking.</answer><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let (code, msg, err) = parse(
        &["--template", template, "--tools", "examples/weather.json"],
        text,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["reasoning_content"], "The user wants Paris.", "{msg}");
    assert_eq!(msg["content"], "Checking.", "{msg}");
    assert_eq!(
        msg["tool_calls"][0]["function"]["name"], "get_weather",
        "{msg}"
    );
    assert!(
        err.contains("reasoning between \"<|begin_reasoning|>\" and \"<|end_reasoning|>\""),
        "{err}"
    );
    assert!(
        err.contains("an answer's text between \"<answer>\" and \"</answer>\""),
        "{err}"
    );
    let (code, msg, err) = parse(&["--template", template], "<answer>It is sunny.</answer>");
    assert_eq!(code, 0, "{err}");
    assert_eq!(msg["content"], "It is sunny.", "{msg}");
    // Text markers are not content, but inside a call's arguments they are data.
    let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"<answer>Paris</answer>\"}}\n</tool_call>";
    let (code, msg, err) = parse(&["--template", template], text);
    assert_eq!(code, 0, "{err}");
    let args: Value = msg["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    assert_eq!(args["city"], "<answer>Paris</answer>", "{msg}");
}
