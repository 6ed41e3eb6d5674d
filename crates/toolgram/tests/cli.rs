//! The `toolgram` binary as a user runs it: stdout carries exactly one JSON object, errors
//! are one JSON line on stderr with a non-zero exit, and bad input fails before any model
//! is loaded. Uses the fast test model.

mod common;
use common::{temp_file, toolgram, toolgram_env};

use serde_json::Value;

/// `call --model MODEL --tools examples/weather.json EXTRA…`
fn weather_args<'a>(model: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["call", "--model", model, "--tools", "examples/weather.json"];
    args.extend_from_slice(extra);
    args
}

/// `toolgram call --model MODEL --tools examples/weather.json EXTRA…`
fn call_weather(model: &str, extra: &[&str]) -> (i32, String, String) {
    toolgram(&weather_args(model, extra))
}

fn error_line(stderr: &str) -> Value {
    let last = stderr.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("stderr's last line is not JSON ({e}): {stderr}"))
}

/// `call` compiles its request's grammar once, in the model's own syntax: the check after
/// the model loads and the run share it (the engine says each compile at debug level).
#[test]
fn call_compiles_its_grammar_once() {
    let args = weather_args(
        "test",
        &[
            "--tool-choice",
            "required",
            "What's the weather like in Paris today?",
        ],
    );
    let log = std::path::Path::new("error,toolgram_engine=debug");
    let (code, _, stderr) = toolgram_env(&args, &[("TOOLGRAM_LOG", log)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr.matches("call grammar compiled").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn call_prints_one_openai_assistant_message() {
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--tool-choice",
            "required",
            "What's the weather like in Paris today?",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {stdout}"));
    assert_eq!(stdout.trim().lines().count(), 1);
    assert_eq!(msg["role"], "assistant");
    assert_eq!(msg["finish_reason"], "tool_calls");
    let call = &msg["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert!(
        call["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("call_"))
    );
    let args: Value = serde_json::from_str(
        call["function"]["arguments"]
            .as_str()
            .expect("arguments string"),
    )
    .expect("arguments JSON");
    assert!(args.is_object());
    assert!(
        msg["usage"]["prompt_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
}

#[test]
fn invalid_tools_fail_before_any_model_is_loaded() {
    let bad = temp_file(
        "bad.json",
        r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"n":{"type":"integr"}}}}}]"#,
    );
    let bad = bad.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "call",
        "--model",
        "/nonexistent/model.gguf",
        "--tools",
        &bad,
        "hi",
    ]);
    assert_ne!(code, 0);
    assert!(stdout.is_empty());
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "invalid_tools");
    let message = err["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("tool `f`")
            && message.contains("/0/function/parameters/properties/n/type"),
        "{message}"
    );
}

#[test]
fn unknown_named_tool_is_refused_before_loading() {
    let (code, _, stderr) = call_weather(
        "/nonexistent/model.gguf",
        &["--tool-choice", "book_hotel", "hi"],
    );
    assert_ne!(code, 0);
    assert_eq!(error_line(&stderr)["error"]["type"], "invalid_request");
}

#[test]
fn truncation_is_an_error_with_the_partial_text() {
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--tool-choice",
            "get_weather",
            "--max-tokens",
            "4",
            "Weather in Rome?",
        ],
    );
    assert_ne!(code, 0);
    assert!(stdout.is_empty());
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "truncated");
    assert!(
        err["error"]["partial"]
            .as_str()
            .is_some_and(|p| !p.is_empty())
    );
}

/// Free text that repeats itself verbatim ends there by default, said in
/// `toolgram.repeated_text` and its warnings; `--repeated-text keep` lets it run to the token
/// limit (the test model writes the same sentence again and again about Uno, as the default
/// model does on BFCL's `irrelevance_198`).
#[test]
fn text_that_repeats_itself_stops_there_unless_kept() {
    let tools = temp_file(
        "uno.json",
        r#"[{"type": "function", "function": {"name": "cards_shuffle_deck",
            "description": "Shuffles a deck of cards.",
            "parameters": {"type": "object", "properties": {
                "deck": {"type": "string"}, "times": {"type": "integer"}},
                "required": ["deck", "times"]}}}]"#,
    );
    let tools = tools.to_str().expect("utf-8 path");
    let run = |extra: &[&str]| {
        // No stored prefix: a prompt evaluated from a stored KV state can tip a greedy reply
        // another way.
        let mut args = vec!["call", "--model", "test", "--tools", tools, "--no-cache"];
        args.extend_from_slice(&["--max-tokens", "400"]);
        args.extend_from_slice(extra);
        args.push("What are the rules of the game 'Uno'?");
        let (code, stdout, stderr) = toolgram(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).expect("one JSON object")
    };
    let stopped = run(&[]);
    let repeated = &stopped["toolgram"]["repeated_text"];
    let span = repeated["span"].as_str().expect("the repeated span");
    let content = stopped["content"].as_str().expect("text");
    assert_eq!(stopped["finish_reason"], "stop", "{stopped}");
    assert!(
        repeated["copies"].as_u64().is_some_and(|n| n >= 4),
        "{stopped}"
    );
    assert!(content.matches(span).count() >= 2, "{stopped}");
    assert!(stopped["usage"]["completion_tokens"].as_u64() < Some(400));
    assert!(
        stopped["toolgram"]["warnings"].as_array().is_some_and(|w| w
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains("repeated itself")))),
        "{stopped}"
    );
    let kept = run(&["--repeated-text", "keep"]);
    assert_eq!(kept["finish_reason"], "length", "{kept}");
    assert_eq!(kept["usage"]["completion_tokens"], 400);
    assert!(kept["toolgram"]["repeated_text"].is_null());
}

/// A call that repeats itself where the grammar cannot end it (an array writing one item
/// again and again) is cut as its token limit would cut it, only sooner: the typed `truncated`
/// error, which says so and reports the span; `keep` lets it run to the limit.
#[test]
fn a_call_that_repeats_itself_is_cut_as_at_its_limit_unless_kept() {
    let tools = temp_file(
        "palette.json",
        r#"[{"type": "function", "function": {"name": "paint_palette",
            "description": "Makes a palette of named colours.",
            "parameters": {"type": "object", "properties": {
                "colours": {"type": "array", "items": {"type": "string"}}},
                "required": ["colours"]}}}]"#,
    );
    let tools = tools.to_str().expect("utf-8 path");
    let run = |extra: &[&str]| {
        let mut args = vec!["call", "--model", "test", "--tools", tools, "--no-cache"];
        args.extend_from_slice(&["--tool-choice", "required", "--max-tokens", "1200"]);
        args.extend_from_slice(extra);
        args.push("Make a palette of every colour of the rainbow, and more: list as many colour names as you can.");
        let (code, stdout, stderr) = toolgram(&args);
        assert_ne!(
            code, 0,
            "a call cut before it was complete is an error: {stdout}"
        );
        let reply: Value = serde_json::from_str(&stderr).expect("the error as one JSON object");
        assert_eq!(reply["error"]["type"], "truncated", "{reply} {stderr}");
        reply["error"].clone()
    };
    let cut = run(&[]);
    let message = cut["message"].as_str().expect("a message");
    assert!(message.contains("repeated one span"), "{cut}");
    assert!(
        !message.contains("after 1200 tokens"),
        "cut before the limit: {cut}"
    );
    let copies = cut["repeated_text"]["copies"].as_u64().expect("copies");
    assert!(copies >= 8, "{cut}");
    let partial = cut["partial"].as_str().expect("the text decoded");
    let span = cut["repeated_text"]["span"].as_str().expect("the span");
    assert!(partial.matches(span).count() >= 2, "{cut}");
    let kept = run(&["--repeated-text", "keep"]);
    assert!(
        kept["message"]
            .as_str()
            .is_some_and(|m| m.contains("after 1200 tokens") && !m.contains("repeated")),
        "{kept}"
    );
}

#[test]
fn messages_file_continues_a_conversation() {
    let msgs = temp_file(
        "messages.json",
        r#"[{"role":"user","content":"What's the weather in Oslo?"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
            {"role":"tool","tool_call_id":"call_1","content":"-3 C, snow"},
            {"role":"user","content":"And in Bergen?"}]"#,
    );
    let msgs = msgs.to_string_lossy().into_owned();
    // A short call: the tiny test model's greedy email bodies run away on some CPUs.
    let (code, stdout, stderr) = call_weather(
        "test",
        &["--tool-choice", "get_weather", "--messages", &msgs],
    );
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(msg["tool_calls"][0]["function"]["name"], "get_weather");
    // The earlier turns were in the prompt: more tokens than the last message alone.
    let (code, alone, stderr) =
        call_weather("test", &["--tool-choice", "get_weather", "And in Bergen?"]);
    assert_eq!(code, 0, "{stderr}");
    let alone: Value = serde_json::from_str(alone.trim()).expect("one JSON object");
    let tokens = |m: &Value| m["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
    assert!(tokens(&msg) > tokens(&alone) + 20, "{msg}\n{alone}");
}

#[test]
fn model_list_shows_the_registry() {
    let (code, stdout, _) = toolgram(&["model", "list"]);
    assert_eq!(code, 0);
    let roles: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["role"].as_str().map(str::to_owned))
        .collect();
    assert!(
        roles.contains(&"default".to_owned()) && roles.contains(&"test".to_owned()),
        "{stdout}"
    );
}

/// A reader that stops early (`toolgram model list | head -1`) ends a listing quietly:
/// success, and no panic about a broken pipe.
#[test]
fn a_closed_stdout_ends_a_listing_quietly() {
    use std::process::{Command, Stdio};
    for args in [["model", "list"], ["tools", "list"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgram runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("toolgram ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn keywords_outside_the_grammar_are_listed_not_dropped() {
    let tools = temp_file(
        "deferred.json",
        r#"[{"type":"function","function":{"name":"tag_photo","description":"Tag a photo.",
            "parameters":{"type":"object","properties":{
              "photo_id":{"type":"integer","minimum":1},
              "tags":{"type":"array","items":{"type":"string"},"maxItems":3,"uniqueItems":true,"deprecated":false}},
            "required":["photo_id","tags"]}}}]"#,
    );
    let tools = tools.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "call",
        "--model",
        "default",
        "--tools",
        &tools,
        "--tool-choice",
        "required",
        "Tag photo 7 with beach and sunset.",
    ]);
    match code {
        0 => {
            let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
            let listed = &msg["toolgram"]["enforced_after_parse"];
            assert_eq!(
                listed,
                &serde_json::json!([{"tool": "tag_photo", "pointer": "/properties/tags", "keyword": "uniqueItems"}])
            );
        }
        // A repeated tag is caught by the validator after parsing and sent back to the model;
        // if no attempt is valid the result is a typed error listing them, not a call.
        _ => assert_retries_failed(&stderr),
    }
}

#[test]
fn escape_hatch_tools_stay_out_of_the_pool_until_asked_for() {
    let tools = temp_file(
        "hatch.json",
        r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
            {"type":"function","function":{"name":"handoff","description":"Hand the conversation to a human.","x-toolgram":{"escape_hatch":["human","agent"]},
             "parameters":{"type":"object","properties":{"reason":{"type":"string"}}}}}]"#,
    );
    let tools = tools.to_string_lossy().into_owned();
    let run = |prompt: &str| {
        let (code, stdout, stderr) = toolgram(&[
            "call",
            "--model",
            "test",
            "--tools",
            &tools,
            "--tool-choice",
            "required",
            "--max-tokens",
            "128",
            prompt,
        ]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(stdout.trim()).expect("one JSON object")
    };
    let msg = run("I can't find my order, help!");
    assert_eq!(
        msg["toolgram"]["filtered_out"][0]["tool"], "handoff",
        "{msg}"
    );
    assert_eq!(
        msg["toolgram"]["filtered_out"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(msg["tool_calls"][0]["function"]["name"], "get_weather");
    let msg = run("Let me talk to a human.");
    assert_eq!(
        msg["toolgram"]["filtered_out"],
        serde_json::json!([]),
        "{msg}"
    );
}

#[test]
fn grammar_prints_the_compiled_pool_and_checks_it() {
    let (code, stdout, stderr) = toolgram(&[
        "grammar",
        "--tools",
        "examples/weather.json",
        "--tool-choice",
        "send_email",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("%llguidance {}"), "{stdout}");
    assert!(
        stdout.contains("call: call_1\n") && !stdout.contains("call_0"),
        "{stdout}"
    );
    let (code, stdout, _) = toolgram(&[
        "grammar",
        "--tools",
        "examples/weather.json",
        "--parallel-tool-calls",
        "--check",
    ]);
    assert_eq!((code, stdout.trim()), (0, "ok"));
    let bad = temp_file(
        "unknown-format.json",
        r#"[{"type":"function","function":{"name":"ok","parameters":{"type":"object"}}},
            {"type":"function","function":{"name":"when","parameters":{"type":"object","properties":{"d":{"type":"string","format":"not-a-format"}}}}}]"#,
    );
    let bad = bad.to_string_lossy().into_owned();
    let deferred = temp_file(
        "deferred-grammar.json",
        r#"[{"type":"function","function":{"name":"tag","parameters":{"type":"object","properties":{"t":{"type":"array","uniqueItems":true}}}}}]"#,
    );
    let (code, stdout, stderr) = toolgram(&["grammar", "--tools", &deferred.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.contains("uniqueItems"),
        "left in the grammar: {stdout}"
    );
    assert!(
        stderr.contains("tool `tag` at /properties/t: `uniqueItems` is enforced after parsing"),
        "{stderr}"
    );
    // json mode puts no argument schema in the grammar, so the same tool passes the check
    // and the run reaches model loading (and fails there, on the missing file).
    let (code, _, stderr) = toolgram(&[
        "call",
        "--mode",
        "json",
        "--model",
        "/nonexistent/model.gguf",
        "--tools",
        &bad,
        "hi",
    ]);
    assert_ne!(code, 0);
    assert_eq!(
        error_line(&stderr)["error"]["type"],
        "model_fetch_error",
        "{stderr}"
    );
    // An unknown format is an annotation: listed, left out of the grammar; refused with
    // --strict-schemas.
    let (code, stdout, stderr) = toolgram(&["grammar", "--tools", &bad, "--check"]);
    assert_eq!((code, stdout.trim()), (0, "ok"), "{stderr}");
    assert!(
        stderr.contains("warning: tool `when` at /properties/d: `format: not-a-format`"),
        "{stderr}"
    );
    let (code, _, stderr) = toolgram(&["grammar", "--tools", &bad, "--check", "--strict-schemas"]);
    assert_ne!(code, 0);
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "invalid_tools");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("tool `when`") && m.contains("not-a-format")),
        "{err}"
    );
}

#[test]
fn grammar_compiles_a_pool_to_gbnf_and_openai_lark_and_checks_them() {
    let (code, stdout, stderr) = toolgram(&[
        "grammar",
        "--tools",
        "examples/weather.json",
        "--format",
        "gbnf",
        "--tool-choice",
        "required",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("root ::= calls\n"), "{stdout}");
    assert!(stdout.contains(r#"\"name\": \"send_email\""#), "{stdout}");
    for format in ["gbnf", "lark-openai"] {
        let (code, stdout, stderr) = toolgram(&[
            "grammar",
            "--tools",
            "examples/weather.json",
            "--format",
            format,
            "--think",
            "optional",
            "--check",
        ]);
        assert_eq!((code, stdout.trim()), (0, "ok"), "{format}: {stderr}");
        assert!(stderr.contains("grammar_lazy"), "{stderr}");
    }
    // Unknown keywords: annotations, listed as warnings; refused by name with --strict-schemas.
    let odd = temp_file(
        "odd-keyword.json",
        r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string","frobnicate":1}}}}}]"#,
    );
    let odd = odd.to_string_lossy().into_owned();
    let (code, _, stderr) = toolgram(&[
        "grammar",
        "--tools",
        &odd,
        "--format",
        "gbnf",
        "--strict-schemas",
    ]);
    assert_ne!(code, 0);
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "invalid_tools", "{stderr}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("frobnicate")),
        "{err}"
    );
    let (code, _, stderr) = toolgram(&["grammar", "--tools", &odd, "--format", "gbnf"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: tool `f` at /properties/a: `frobnicate`"),
        "{stderr}"
    );
}

#[test]
fn generate_lists_unknown_schema_keywords_or_refuses_them_by_name_before_loading() {
    let schema = temp_file(
        "generate-odd.json",
        r#"{"type":"object","properties":{"n":{"type":"integer","frobnicate":true}}}"#,
    );
    let (code, _, stderr) = toolgram(&[
        "generate",
        "--schema",
        &schema.to_string_lossy(),
        "--strict-schemas",
        "--model",
        "/nonexistent/model.gguf",
        "hi",
    ]);
    assert_ne!(code, 0);
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "invalid_schema", "{stderr}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("/properties/n") && m.contains("frobnicate")),
        "{err}"
    );
    // By default it is listed and the command goes on (to model loading, which fails on the
    // missing file).
    let (_, _, stderr) = toolgram(&[
        "generate",
        "--schema",
        &schema.to_string_lossy(),
        "--model",
        "/nonexistent/model.gguf",
        "hi",
    ]);
    assert!(
        stderr.contains("`frobnicate`: unknown keyword ignored"),
        "{stderr}"
    );
    assert_eq!(
        error_line(&stderr)["error"]["type"],
        "model_fetch_error",
        "{stderr}"
    );
}

#[test]
fn render_reads_named_providers_from_the_config_file() {
    let cfg = temp_file(
        "toolgram.toml",
        "[providers.local]\nkind = \"llama-server\"\nbase_url = \"http://127.0.0.1:9\"\n\n[providers.strict-only]\nkind = \"llama-server\"\ndisable = [\"grammar\"]\nfallback = \"never\"\n",
    );
    let cfg = cfg.to_string_lossy().into_owned();
    let render = |provider: &str| {
        toolgram(&[
            "render",
            "--config",
            &cfg,
            "--provider",
            provider,
            "--tools",
            "examples/weather.json",
            "--tool-choice",
            "required",
            "Weather in Paris?",
        ])
    };
    let (code, out, err) = render("local");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("path: grammar") && err.contains("http://127.0.0.1:9/v1/chat/completions"),
        "{err}"
    );
    let body: Value = serde_json::from_str(&out).expect("JSON body");
    assert!(
        body["grammar"]
            .as_str()
            .is_some_and(|g| g.contains("get_weather"))
    );
    let (code, _, err) = render("strict-only");
    assert_ne!(code, 0);
    assert_eq!(
        error_line(&err)["error"]["type"],
        "capability_missing",
        "{err}"
    );
    let (code, _, err) = render("nowhere");
    assert_ne!(code, 0);
    assert_eq!(
        error_line(&err)["error"]["type"],
        "invalid_request",
        "{err}"
    );
}

#[test]
fn render_shows_the_plan_in_the_grammar_a_provider_is_sent_and_refuses_a_call_bias() {
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            "--provider",
            "llama-server",
            "--base-url",
            "http://127.0.0.1:9",
            "--tools",
            "examples/weather.json",
            "--parallel-tool-calls",
        ];
        args.extend_from_slice(extra);
        args.push("Weather in Paris and Lima?");
        toolgram(&args)
    };
    let grammars = |out: &str| -> Vec<String> {
        serde_json::Deserializer::from_str(out)
            .into_iter::<Value>()
            .map(|b| {
                b.expect("JSON body")["grammar"]
                    .as_str()
                    .expect("GBNF")
                    .to_owned()
            })
            .collect()
    };
    let plan = "Number of tool calls needed: ";
    // The plan on by default (`auto`): call or text first, then the calling reply counted.
    let (code, out, err) = render(&[]);
    assert_eq!(code, 0, "{err}");
    let g = grammars(&out);
    assert_eq!(g.len(), 2, "{out}");
    assert!(!g[0].contains(plan) && g[1].contains(plan), "{out}");
    assert!(err.contains("then, where that reply calls"), "{err}");
    // A call required: one request, planned.
    let (code, out, err) = render(&["--tool-choice", "required"]);
    assert_eq!(code, 0, "{err}");
    let g = grammars(&out);
    assert!(g.len() == 1 && g[0].contains(plan), "{out}");
    // Off: no plan anywhere.
    let (code, out, err) = render(&["--plan=off"]);
    assert_eq!(code, 0, "{err}");
    let g = grammars(&out);
    assert!(g.len() == 1 && !g[0].contains(plan), "{out}");
    // What run refuses, render refuses.
    let (code, _, err) = render(&["--call-bias", "4"]);
    assert_ne!(code, 0);
    assert!(err.contains("`call_bias`"), "{err}");
}

#[test]
fn chat_template_file_selects_the_call_syntax() {
    // SmolLM2's vocabulary has no <tool_call> token: the markers are plain text, and the
    // syntax comes from the given template, not the GGUF's.
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--chat-template",
            "examples/hermes-chatml.jinja",
            "--tool-choice",
            "required",
            "What's the weather in Lima?",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(msg["toolgram"]["syntax"], "hermes");
    assert_eq!(msg["tool_calls"].as_array().map(Vec::len), Some(1), "{msg}");
}

#[test]
fn json_mode_constrains_the_shape_and_checks_the_schema_after_parsing() {
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--mode",
            "json",
            "--tool-choice",
            "required",
            "--max-tokens",
            "128",
            "Weather in Quito?",
        ],
    );
    if code == 0 {
        let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
        // `path` is reported by the engine from the mode it ran.
        assert_eq!(msg["toolgram"]["path"], "json");
        assert_eq!(msg["tool_calls"].as_array().map(Vec::len), Some(1));
    } else {
        // Only the shape is constrained: a schema violation is caught after parsing.
        if error_line(&stderr)["error"]["type"] != "truncated" {
            assert_retries_failed(&stderr);
        }
    }
}

/// The error line of a call whose every attempt failed validation: its kind, and each
/// attempt with its errors and raw text.
fn assert_retries_failed(stderr: &str) {
    let err = &error_line(stderr)["error"];
    let kind = err["type"].as_str().unwrap_or_default();
    assert!(
        kind == "no_valid_call" || kind == "retry_blocked",
        "{stderr}"
    );
    let attempts = err["attempts"].as_array().expect("attempts listed");
    assert!(!attempts.is_empty());
    for a in attempts {
        assert!(
            a["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{stderr}"
        );
        assert!(a["raw"].is_string());
    }
}

#[test]
fn prompt_mode_returns_only_validated_calls() {
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--mode",
            "prompt",
            "--tool-choice",
            "required",
            "--max-tokens",
            "128",
            "What's the weather in Lima?",
        ],
    );
    if code == 0 {
        let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
        assert_eq!(msg["toolgram"]["path"], "prompt");
        let attempts = msg["toolgram"]["attempts"].as_u64().expect("attempts");
        let failed = msg["toolgram"]["failed_attempts"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(attempts as usize, failed + 1);
        let call = &msg["tool_calls"][0]["function"];
        let args: Value =
            serde_json::from_str(call["arguments"].as_str().expect("string")).expect("JSON");
        match call["name"].as_str() {
            Some("get_weather") => assert!(args["city"].is_string(), "{stdout}"),
            Some("send_email") => assert!(args["to"].as_str().is_some_and(|t| t.contains('@'))),
            other => panic!("unexpected tool {other:?}"),
        }
    } else if error_line(&stderr)["error"]["type"] != "truncated" {
        assert_retries_failed(&stderr);
    }
}

#[test]
fn think_required_returns_the_reasoning_separately() {
    let (code, stdout, stderr) = call_weather(
        "test",
        &[
            "--think",
            "required",
            "--think-budget",
            "24",
            "--tool-choice",
            "get_weather",
            "--max-tokens",
            "96",
            "Weather in Oslo?",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let reasoning = msg["reasoning_content"]
        .as_str()
        .expect("reasoning_content");
    assert!(!reasoning.contains("<think>") && !reasoning.contains("</think>"));
    assert_eq!(msg["tool_calls"][0]["function"]["name"], "get_weather");
}

#[test]
fn generate_runs_any_lark_grammar_and_json_schema() {
    let lark = temp_file("classify.lark", "start: \"CODE\" | \"REASONING\"\n");
    let lark = lark.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "generate",
        "--model",
        "test",
        "--grammar",
        &lark,
        "Is 'fix the null pointer in parser.rs' about CODE or REASONING?",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let content = msg["content"].as_str().expect("content");
    assert!(content == "CODE" || content == "REASONING", "{stdout}");
    assert_eq!(msg["finish_reason"], "stop");

    let schema = r#"{"type":"object","properties":{"name":{"type":"string"},
        "age":{"type":"integer","minimum":0,"maximum":130}},"required":["name","age"]}"#;
    let path = temp_file("person.json", schema)
        .to_string_lossy()
        .into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "generate",
        "--model",
        "test",
        "--schema",
        &path,
        "--max-tokens",
        "200",
        "Invent a person.",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    if msg["finish_reason"] == "stop" {
        let out: Value = serde_json::from_str(msg["content"].as_str().expect("content"))
            .expect("the content is JSON");
        let v = jsonschema::validator_for(&serde_json::from_str(schema).expect("schema"))
            .expect("validator");
        assert!(v.is_valid(&out), "{out}");
    }
}

#[test]
fn generate_with_think_returns_reasoning_then_the_grammar_s_answer() {
    let lark = temp_file("yesno.lark", "start: \"yes\" | \"no\"\n");
    let lark = lark.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "generate",
        "--model",
        "test",
        "--grammar",
        &lark,
        "--think",
        "required",
        "--think-budget",
        "16",
        "--max-tokens",
        "40",
        "Is water wet?",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert!(msg["reasoning_content"].is_string(), "{stdout}");
    let content = msg["content"].as_str().expect("content");
    assert!(content == "yes" || content == "no", "{stdout}");
}

#[test]
fn a_broken_grammar_is_refused_with_its_position_before_loading() {
    let bad = temp_file("bad.lark", "start: \"x\" (\n");
    let bad = bad.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "generate",
        "--model",
        "no-such-model",
        "--grammar",
        &bad,
        "hi",
    ]);
    assert_ne!(code, 0);
    assert!(stdout.is_empty());
    let err = error_line(&stderr);
    assert_eq!(err["error"]["type"], "grammar_error", "{stderr}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1(13)"),
        "{stderr}"
    );
}

#[test]
fn grammar_for_a_bare_schema_lists_what_is_enforced_after_parsing() {
    let schema = temp_file(
        "bare.json",
        r#"{"type":"object","properties":{"tags":{"type":"array","uniqueItems":true}},
            "oneOf":[{"required":["tags"]},{"required":["id"]}]}"#,
    );
    let schema = schema.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&["grammar", "--schema", &schema]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("start: %json {"), "{stdout}");
    assert!(
        stdout.contains("\"anyOf\""),
        "oneOf is compiled as anyOf: {stdout}"
    );
    assert!(!stdout.contains("uniqueItems"));
    assert!(
        stderr.contains("at /: `oneOf` is enforced after parsing"),
        "{stderr}"
    );
    assert!(
        stderr.contains("at /properties/tags: `uniqueItems`"),
        "{stderr}"
    );
    let (code, stdout, _) = toolgram(&["grammar", "--schema", &schema, "--check"]);
    assert_eq!((code, stdout.trim()), (0, "ok"));
}

#[test]
fn grammar_json_schema_renders_the_call_union_per_provider_profile() {
    let (code, stdout, stderr) = toolgram(&[
        "grammar",
        "--tools",
        "examples/weather.json",
        "--format",
        "json-schema",
        "--tool-choice",
        "get_weather",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let schema: Value = serde_json::from_str(&stdout).expect("pretty JSON schema");
    let call = &schema["properties"]["call"];
    assert_eq!(
        call["properties"]["name"]["const"], "get_weather",
        "{stdout}"
    );
    // openai-strict: every property required, the optional one nullable, objects closed.
    let args = &call["properties"]["arguments"];
    assert_eq!(args["required"], serde_json::json!(["city", "unit"]));
    assert_eq!(args["additionalProperties"], false);
    assert!(
        !stdout.contains("send_email"),
        "only the named tool is callable"
    );

    let (code, _, stderr) = toolgram(&[
        "grammar",
        "--tools",
        "examples/weather.json",
        "--format",
        "json-schema",
        "--profile",
        "no-such-provider",
    ]);
    assert_ne!(code, 0);
    assert_eq!(
        error_line(&stderr)["error"]["type"],
        "invalid_request",
        "{stderr}"
    );
}

/// A schema llguidance's `%json` refuses (overlapping `patternProperties`) but toolgram's own
/// schema compiler takes: the call still runs, under argument grammars from our compiler, and
/// stderr says so.
#[test]
fn a_schema_llguidance_refuses_runs_under_our_own_schema_grammar() {
    let tools = temp_file(
        "overlapping.json",
        r#"[{"type":"function","function":{"name":"set_labels","description":"Set labels on a resource.",
            "parameters":{"type":"object","properties":{"resource":{"type":"string"},
              "labels":{"type":"object","patternProperties":{"^a":{"type":"string"},"b$":{"type":"string"}}}},
            "required":["resource","labels"]}}}]"#,
    );
    let tools = tools.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "grammar",
        "--tools",
        &tools,
        "--tool-choice",
        "required",
        "--check",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "ok");
    assert!(stderr.contains("not disjoint"), "{stderr}");
    let (code, stdout, stderr) = toolgram(&[
        "call",
        "--model",
        "test",
        "--tools",
        &tools,
        "--tool-choice",
        "required",
        "Label the resource web-1 with app=shop.",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("own schema grammars"), "{stderr}");
    let msg: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let call = &msg["tool_calls"][0]["function"];
    assert_eq!(call["name"], "set_labels");
    let args: Value =
        serde_json::from_str(call["arguments"].as_str().expect("arguments")).expect("JSON");
    assert!(args["resource"].is_string(), "{args}");
    assert!(args["labels"].is_object(), "{args}");
    // What our schema grammar leaves to the validator is listed, as on the `%json` path.
    let listed = msg["toolgram"]["enforced_after_parse"].to_string();
    assert!(
        listed.contains("/properties/labels") && listed.contains("patternProperties"),
        "{msg}"
    );
}
