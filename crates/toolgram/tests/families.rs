//! Every model family as a user meets it: the default model (Qwen2.5-Coder) given another
//! family's chat template (`--chat-template`) calls a tool in that family's own syntax —
//! tagged parameters (Qwen3-Coder, GLM, DeepSeek's DSML, MiniMax), a name then JSON
//! (Mistral v11, Kimi K2) — the syntax read from what the template renders, the call
//! constrained by the grammar compiled for it, parsed back and schema-valid.

mod common;
use common::{repo, toolgram};

use serde_json::Value;

fn call_with_template(template: &str, prompt: &str) -> Value {
    let path = repo()
        .join("../shared/data/toolcall-parsing/templates")
        .join(template);
    let path = path.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "call",
        "--model",
        "default",
        "--tools",
        "examples/weather.json",
        "--chat-template",
        &path,
        "--tool-choice",
        "required",
        prompt,
    ]);
    assert_eq!(code, 0, "{template}: {stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{template}: {e}: {stdout}"))
}

#[test]
fn the_default_model_calls_in_other_families_syntaxes() {
    let weather = "What's the weather in Paris?";
    let email = "Email bob@example.com that the meeting moved to 3pm";
    for (template, syntax, prompt, tool) in [
        ("Qwen3-Coder.jinja", "qwen3-coder", email, "send_email"),
        ("GLM-4.6.jinja", "glm", weather, "get_weather"),
        (
            "deepseek-ai-DeepSeek-V3.2.jinja",
            "deepseek-v3.2",
            email,
            "send_email",
        ),
        ("MiniMax-M2.jinja", "minimax-m2", weather, "get_weather"),
        (
            "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
            "mistral-v11",
            weather,
            "get_weather",
        ),
        (
            "moonshotai-Kimi-K2.jinja",
            "kimi-k2",
            weather,
            "get_weather",
        ),
    ] {
        let msg = call_with_template(template, prompt);
        assert_eq!(msg["toolgram"]["syntax"], syntax, "{template}: {msg}");
        assert_eq!(msg["toolgram"]["path"], "grammar", "{template}: {msg}");
        let calls = msg["tool_calls"].as_array().cloned().unwrap_or_default();
        assert_eq!(calls.len(), 1, "{template}: {msg}");
        assert_eq!(calls[0]["function"]["name"], tool, "{template}: {msg}");
        let args: Value = calls[0]["function"]["arguments"]
            .as_str()
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(Value::Null);
        match tool {
            "get_weather" => assert!(
                args["city"].as_str().is_some_and(|c| c.contains("Paris")),
                "{msg}"
            ),
            _ => assert_eq!(args["to"], "bob@example.com", "{template}: {msg}"),
        }
    }
}
