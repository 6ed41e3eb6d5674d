//! Shared harness for the real-engine tests: the tool set and prompts in `tests/data`, one
//! engine per model per test process, and a lock so model tests never compete for the cores.

#![allow(dead_code)]

use serde_json::{Map, Value};
use std::sync::{Mutex, MutexGuard, OnceLock};
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_engine::{
    CallGrammar, CallRequest, CallResponse, CallShape, Engine, EngineError, EngineOptions,
    FinishReason, Sampling, Session, models,
};

pub(crate) struct Case {
    pub prompt: String,
    pub tool: String,
    pub args: Map<String, Value>,
}

pub(crate) const TOOLS_JSON: &str = include_str!("../data/tools.json");

pub(crate) fn tools() -> ToolSet {
    ToolSet::from_json_str(TOOLS_JSON).expect("test tools are valid")
}

pub(crate) fn cases() -> Vec<Case> {
    let raw: Vec<Value> =
        serde_json::from_str(include_str!("../data/prompts.json")).expect("prompts parse");
    raw.into_iter()
        .map(|v| Case {
            prompt: v["prompt"].as_str().expect("prompt").to_owned(),
            tool: v["tool"].as_str().expect("tool").to_owned(),
            args: v["args"].as_object().cloned().unwrap_or_default(),
        })
        .collect()
}

static LOCK: Mutex<()> = Mutex::new(());

/// Serialize model work inside one test process.
pub(crate) fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The engine for a registry model (`test` or `default`), loaded once per process.
pub(crate) fn engine(role: &'static str) -> &'static Engine {
    static TEST: OnceLock<Engine> = OnceLock::new();
    static DEFAULT: OnceLock<Engine> = OnceLock::new();
    let cell = if role == "test" { &TEST } else { &DEFAULT };
    cell.get_or_init(|| {
        let path = models::find(role)
            .and_then(|m| m.fetch())
            .expect("model fetch");
        Engine::load(&path, &EngineOptions::default()).expect("model loads")
    })
}

pub(crate) fn ask(
    session: &mut Session<'_>,
    tools: &ToolSet,
    prompt: &str,
    choice: ToolChoice,
    sampling: Sampling,
) -> Result<CallResponse, EngineError> {
    let messages = [ChatMessage::text("user", prompt)];
    session.call(&CallRequest {
        messages: &messages,
        tools,
        grammar: CallGrammar::Shape(CallShape {
            choice,
            ..CallShape::default()
        }),
        few_shot: false,
        sampling,
    })
}

/// Validate a call's arguments with the `jsonschema` crate directly, against the tool's
/// schema as the user wrote it (independent of toolgram's own validator).
pub(crate) fn assert_schema_valid(call: &ToolCall) {
    let tools: Value = serde_json::from_str(TOOLS_JSON).expect("json");
    let schema = tools
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|t| t["function"]["name"] == call.name.as_str())
        })
        .map(|t| t["function"]["parameters"].clone())
        .unwrap_or_else(|| panic!("call to unknown tool {}", call.name));
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&call.arguments)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "call {} {} is invalid: {errors:?}",
        call.name,
        call.arguments
    );
}

/// Whether the call is the expected tool with every listed key argument among its accepted values.
pub(crate) fn is_right(call: &ToolCall, case: &Case) -> bool {
    call.name == case.tool
        && case.args.iter().all(|(k, accepted)| {
            let got = call.arguments.get(k);
            accepted.as_array().is_some_and(|a| {
                a.iter()
                    .any(|want| Some(want) == got || matches_text(want, got))
            })
        })
}

fn matches_text(want: &Value, got: Option<&Value>) -> bool {
    matches!((want, got), (Value::String(w), Some(Value::String(g))) if w.eq_ignore_ascii_case(g.trim()))
}

/// The repository's test data (`testdata/`: copies of others' test cases, each with its
/// license; see `testdata/README.md`).
pub(crate) fn testdata() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The lines of a JSONL file under `grammar-tests/`.
pub(crate) fn grammar_tests(name: &str) -> Vec<Value> {
    let path = testdata().join("grammar-tests").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

/// The test model's file, fetched once.
pub(crate) fn test_model_path() -> std::path::PathBuf {
    models::find("test")
        .and_then(|m| m.fetch())
        .expect("test model fetch")
}

/// A model kept from ending (every end-of-generation token biased away) can only write
/// `ping` calls one after another: the loop guard must stop the reply at the second
/// identical call, complete and readable, instead of running to the token limit — the repeat
/// kept, or cut and reported with `cut_runaways`.
pub(crate) fn assert_a_repeated_call_ends_the_reply(e: &Engine, choice: ToolChoice) {
    let tools = ToolSet::from_json_str(
        r#"[{"type": "function", "function": {"name": "ping", "description": "Ping the server.",
            "parameters": {"type": "object", "properties": {}}}}]"#,
    )
    .expect("tools");
    let mut s = e.session().expect("session");
    for cut_runaways in [false, true] {
        let req = CallRequest {
            messages: &[ChatMessage::text("user", "Ping the server.")],
            tools: &tools,
            grammar: CallGrammar::Shape(CallShape {
                choice: choice.clone(),
                parallel: true,
                ..CallShape::default()
            }),
            few_shot: false,
            sampling: Sampling {
                max_tokens: 300,
                logit_bias: e.eog_tokens().iter().map(|&t| (t, -1e9)).collect(),
                cut_runaways,
                ..Sampling::default()
            },
        };
        let r = s
            .call(&req)
            .unwrap_or_else(|err| panic!("{choice:?}: {err:?}"));
        let names: Vec<&str> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert!(r.completion_tokens < 100, "{} tokens", r.completion_tokens);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls, "{}", r.raw);
        if cut_runaways {
            assert_eq!(names, ["ping"], "{choice:?}: {}", r.raw);
            let cut = r.cut_call.expect("the repeat is reported");
            assert_eq!(cut.name, "ping");
            assert_eq!(cut.reason, "repeats call 0 of this reply");
        } else {
            assert_eq!(names, ["ping", "ping"], "{choice:?}: {}", r.raw);
            assert_eq!(r.tool_calls[0].arguments, r.tool_calls[1].arguments);
            assert_eq!(r.cut_call, None);
        }
    }
}
