//! Every model family as a user meets it: the default model (Qwen2.5-Coder) given another
//! family's chat template (`--chat-template`) calls a tool in that family's own syntax —
//! tagged parameters (Qwen3-Coder, GLM, DeepSeek's DSML, MiniMax M2), XML elements (MiniMax
//! M3), a name then JSON (Mistral v11, Kimi K2), harmony messages (GPT-OSS), Gemma 4's own
//! values — the syntax
//! read from what the template renders, the call constrained by the grammar compiled for
//! it, parsed back and schema-valid; and a template written for this test, in no family's
//! syntax, gets a syntax derived from its calls.

mod common;
use common::{repo, temp_file, toolgram};

use serde_json::Value;

fn call_with_template(template: &str, prompt: &str) -> Value {
    let path = repo()
        .join("testdata/toolcall-parsing/templates")
        .join(template);
    call_with_template_file(&path.to_string_lossy(), prompt)
}

fn call_with_template_file(path: &str, prompt: &str) -> Value {
    call_with_template_stderr(path, prompt, &[]).0
}

/// The reply and what the CLI said on stderr; `extra` flags go before the prompt.
fn call_with_template_stderr(path: &str, prompt: &str, extra: &[&str]) -> (Value, String) {
    let mut args = vec![
        "call",
        "--model",
        "default",
        "--tools",
        "examples/weather.json",
        "--chat-template",
        path,
        "--tool-choice",
        "required",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let (code, stdout, stderr) = toolgram(&args);
    assert_eq!(code, 0, "{path}: {stderr}");
    let reply =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{path}: {e}: {stdout}"));
    (reply, stderr)
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
        ("MiniMax-M3.jinja", "minimax-m3", email, "send_email"),
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
        (
            "openai-gpt-oss-120b.jinja",
            "gpt-oss",
            weather,
            "get_weather",
        ),
        (
            "google-gemma-4-31B-it.jinja",
            "gemma4",
            weather,
            "get_weather",
        ),
        // The generation prompt writes the first call's `>>>`.
        (
            "meetkai-functionary-medium-v3.2.jinja",
            "functionary-v3.2",
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

/// GPT-OSS reasons in harmony's analysis message: with `--think required` and a small
/// budget the engine forces the message closed (`<|end|><|start|>assistant`), the call
/// follows, and the analysis comes back as `reasoning_content`.
#[test]
fn harmony_reasoning_is_the_analysis_message() {
    let path = repo().join("testdata/toolcall-parsing/templates/openai-gpt-oss-120b.jinja");
    let think = ["--think", "required", "--think-budget", "24"];
    let (msg, _) = call_with_template_stderr(
        &path.to_string_lossy(),
        "What's the weather in Paris?",
        &think,
    );
    assert_eq!(msg["toolgram"]["syntax"], "gpt-oss", "{msg}");
    let reasoning = msg["reasoning_content"].as_str().unwrap_or_default();
    assert!(
        !reasoning.is_empty() && !reasoning.contains("<|"),
        "the analysis text alone: {msg}"
    );
    assert_eq!(
        msg["tool_calls"][0]["function"]["name"], "get_weather",
        "{msg}"
    );
}

#[test]
fn a_template_in_no_family_s_syntax_gets_a_derived_one() {
    let file = "examples/templates/invoke-tags.jinja";
    let (code, stdout, stderr) = toolgram(&["syntax", "--template", file]);
    assert_eq!(code, 0, "{stderr}");
    let found: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(found["syntax"], "derived", "{found}");
    let how = found["how"].as_str().unwrap_or_default();
    assert!(
        how.contains("tagged parameters") && how.contains("<arg name="),
        "{how}"
    );

    // The default model decodes under the derived syntax's grammar; the reply parses to a
    // valid call, and stderr says the syntax was derived.
    let (msg, said) = call_with_template_stderr(file, "What's the weather in Paris?", &[]);
    assert_eq!(msg["toolgram"]["syntax"], "derived", "{msg}");
    assert!(
        said.contains("call syntax: derived from the template: tagged parameters"),
        "{said}"
    );
    assert_paris_weather(&msg, "invoke-tags.jinja");

    // A template whose calls fit no shape is refused with what was found.
    let odd = temp_file(
        "odd.jinja",
        "{% for m in messages %}{{ m.role }}: {{ m.content or '' }}\
         {% for c in m.tool_calls or [] %}CALL {{ c.function.name }}\
         {% for k, v in c.function.arguments | items %} {{ k }}={{ v }}{% endfor %}{% endfor %}\n\
         {% endfor %}{% if add_generation_prompt %}assistant: {% endif %}",
    );
    let (code, _, stderr) = toolgram(&["syntax", "--template", &odd.to_string_lossy()]);
    assert_ne!(code, 0, "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    let err: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(err["error"]["type"], "unsupported_syntax", "{err}");
    let message = err["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("CALL get_probe_weather city=Probeville"),
        "{message}"
    );
}

/// Templates of families the registry does not know (vLLM's, in the engine's held-out set):
/// Llama 3.2's Python call lists and Granite 20B's `<function_call> {json}` are derived, and
/// the default model decodes a valid call under each derived grammar.
#[test]
fn the_default_model_calls_in_derived_python_and_marker_json_syntaxes() {
    let dir = "crates/toolgram-engine/tests/data/unseen-families/templates";
    for (file, shape) in [
        ("tool_chat_template_llama3.2_pythonic.jinja", "Python calls"),
        (
            "tool_chat_template_granite_20b_fc.jinja",
            "<function_call> ",
        ),
    ] {
        let path = format!("{dir}/{file}");
        let (msg, said) = call_with_template_stderr(&path, "What's the weather in Paris?", &[]);
        assert_eq!(msg["toolgram"]["syntax"], "derived", "{file}: {msg}");
        assert!(said.contains(shape), "{file}: {said}");
        assert_paris_weather(&msg, file);
    }
}

/// The reply's first call is `get_weather` for Paris.
fn assert_paris_weather(msg: &Value, what: &str) {
    let call = &msg["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{what}: {msg}");
    let args: Value = call["arguments"]
        .as_str()
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    assert!(
        args["city"].as_str().is_some_and(|c| c.contains("Paris")),
        "{what}: {msg}"
    );
}
