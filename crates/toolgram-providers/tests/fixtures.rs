//! Providers that cannot be reached from here, checked against their documented shapes:
//! reply bodies copied from each provider's public documentation (source noted in each
//! fixture) read into toolgram's calls, and rendered requests checked for the documented
//! fields — including the OpenAI-strict profile rules and explicit `parallel_tool_calls`.

use serde_json::{Value, json};
use toolgram_core::define::request::{CallShape, Path};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax};
use toolgram_providers::{
    Capabilities, Kind, RenderInput, choose_path, lookup, read_reply, render,
};

fn kind(name: &str) -> Kind {
    lookup(name).expect("registered")
}

fn tools() -> ToolSet {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/weather.json");
    ToolSet::from_json_str(&std::fs::read_to_string(path).expect("examples/weather.json"))
        .expect("valid tools")
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
}

fn body(kind: Kind, choice: ToolChoice, parallel: bool, path: Path) -> Value {
    let messages = [
        ChatMessage::text("system", "Be brief."),
        ChatMessage::text("user", "Weather in Paris?"),
    ];
    render(&RenderInput {
        kind,
        messages: &messages,
        tools: &tools(),
        shape: &CallShape {
            choice,
            parallel,
            ..CallShape::default()
        },
        model: Some("m"),
        path,
        syntax: syntax::by_name("hermes").expect("hermes"),
        temperature: Some(0.0),
        max_tokens: Some(256),
        stream: false,
    })
    .expect("renders")
    .body
}

#[test]
fn documented_replies_become_tool_calls() {
    let hermes = syntax::by_name("hermes").expect("hermes");
    for (file, kind, path) in [
        (
            "openai-chat.response.json",
            kind("openai-chat"),
            Path::StrictJson,
        ),
        (
            "openai-responses.response.json",
            kind("openai-responses"),
            Path::StrictJson,
        ),
        (
            "anthropic.response.json",
            kind("anthropic"),
            Path::StrictJson,
        ),
        ("gemini.response.json", kind("gemini"), Path::StrictJson),
        ("ollama.response.json", kind("ollama"), Path::Prompt),
    ] {
        let f = fixture(file);
        assert!(
            f["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("https://"))
        );
        let reply = read_reply(
            kind,
            path,
            &f["body"],
            &tools(),
            &CallShape::default(),
            hermes,
        )
        .unwrap_or_else(|_| panic!("{file}: readable"));
        let got: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        assert_eq!(Value::Array(got), f["expect"], "{file}");
        if let Some(text) = f["expect_content"].as_str() {
            assert_eq!(reply.content.as_deref(), Some(text), "{file}");
        }
    }
}

#[test]
fn openai_chat_sends_strict_function_tools_and_says_parallel_false() {
    let b = body(
        kind("openai-chat"),
        ToolChoice::Named("get_weather".into()),
        false,
        Path::StrictJson,
    );
    assert_eq!(b["model"], "m");
    assert_eq!(b["parallel_tool_calls"], false);
    assert_eq!(
        b["tool_choice"],
        json!({"type": "function", "function": {"name": "get_weather"}})
    );
    let f = &b["tools"][0]["function"];
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(f["strict"], true);
    // OpenAI strict: every property required, optional ones nullable, objects closed.
    let p = &f["parameters"];
    assert_eq!(p["additionalProperties"], false);
    assert_eq!(p["required"], json!(["city", "unit"]));
    assert!(
        p["properties"]["unit"]["type"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("null")))
    );
    assert_eq!(
        b["tools"].as_array().map(Vec::len),
        Some(1),
        "named choice sends that tool"
    );
    let allowed = body(
        kind("openai-chat"),
        ToolChoice::AllowedTools {
            tools: vec!["get_weather".into()],
            required: true,
        },
        true,
        Path::StrictJson,
    );
    assert_eq!(allowed["tool_choice"]["type"], "allowed_tools");
    assert_eq!(allowed["tool_choice"]["allowed_tools"]["mode"], "required");
    assert_eq!(
        allowed["tools"].as_array().map(Vec::len),
        Some(2),
        "allowed_tools keeps the pool"
    );
    assert_eq!(allowed["parallel_tool_calls"], true);
}

#[test]
fn openai_responses_uses_flat_function_tools_and_input_items() {
    let b = body(
        kind("openai-responses"),
        ToolChoice::Named("get_weather".into()),
        false,
        Path::StrictJson,
    );
    assert_eq!(b["tools"][0]["name"], "get_weather");
    assert_eq!(b["tools"][0]["strict"], true);
    assert_eq!(
        b["tool_choice"],
        json!({"type": "function", "name": "get_weather"})
    );
    assert_eq!(
        b["input"][1],
        json!({"role": "user", "content": "Weather in Paris?"})
    );
    assert_eq!(b["max_output_tokens"], 256);
}

#[test]
fn anthropic_gets_input_schema_and_its_tool_choice_modes() {
    let b = body(
        kind("anthropic"),
        ToolChoice::Required,
        false,
        Path::StrictJson,
    );
    assert_eq!(b["system"], "Be brief.");
    assert_eq!(
        b["messages"][0],
        json!({"role": "user", "content": "Weather in Paris?"})
    );
    assert_eq!(
        b["tool_choice"],
        json!({"type": "any", "disable_parallel_tool_use": true})
    );
    assert!(b["tools"][0]["input_schema"].is_object());
    assert_eq!(b["max_tokens"], 256);
    let named = body(
        kind("anthropic"),
        ToolChoice::Named("send_email".into()),
        true,
        Path::StrictJson,
    );
    assert_eq!(named["tool_choice"]["type"], "tool");
    assert_eq!(named["tool_choice"]["name"], "send_email");
    let none = body(kind("anthropic"), ToolChoice::None, false, Path::StrictJson);
    assert_eq!(none["tool_choice"], json!({"type": "none"}));
}

#[test]
fn gemini_gets_function_declarations_and_calling_modes() {
    let b = body(
        kind("gemini"),
        ToolChoice::Named("get_weather".into()),
        false,
        Path::StrictJson,
    );
    assert!(
        b["tools"][0]["functionDeclarations"]
            .as_array()
            .is_some_and(|d| d.len() == 2)
    );
    assert_eq!(
        b["toolConfig"]["functionCallingConfig"],
        json!({"mode": "ANY", "allowedFunctionNames": ["get_weather"]})
    );
    assert_eq!(b["systemInstruction"]["parts"][0]["text"], "Be brief.");
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 256);
    let auto = body(kind("gemini"), ToolChoice::Auto, false, Path::StrictJson);
    assert_eq!(
        auto["toolConfig"]["functionCallingConfig"]["mode"],
        "VALIDATED"
    );
}

#[test]
fn servers_with_grammars_get_our_gbnf_never_with_tools() {
    let b = body(
        kind("llama-server"),
        ToolChoice::Required,
        false,
        Path::Grammar,
    );
    assert!(
        b["grammar"]
            .as_str()
            .is_some_and(|g| g.starts_with("root ::= "))
    );
    assert!(
        b.get("tools").is_none(),
        "llama-server never gets grammar and tools together"
    );
    assert!(
        b["messages"][0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("get_weather"))
    );
    let v = body(kind("vllm"), ToolChoice::Required, false, Path::Grammar);
    assert!(v["structured_outputs"]["grammar"].is_string());
    let s = body(kind("sglang"), ToolChoice::Required, false, Path::Grammar);
    assert!(s["ebnf"].is_string());
    let o = body(
        kind("ollama"),
        ToolChoice::Required,
        false,
        Path::StrictJson,
    );
    assert_eq!(o["stream"], false);
    assert!(o["format"]["properties"]["call"].is_object(), "{o}");
}

#[test]
fn a_named_choice_is_never_quietly_turned_into_auto() {
    for kind in [
        kind("openai-chat"),
        kind("anthropic"),
        kind("gemini"),
        kind("openai-responses"),
    ] {
        let b = body(
            kind,
            ToolChoice::Named("send_email".into()),
            false,
            Path::StrictJson,
        );
        let text = b.to_string();
        assert!(text.contains("send_email"), "{kind:?}: {b}");
        assert!(
            !text.contains("\"auto\"") && !text.contains("AUTO"),
            "{kind:?}: {b}"
        );
    }
    // Without any constraint capability and no fallback, the request is refused.
    let none = Capabilities {
        grammar: false,
        strict_json: false,
    };
    assert!(choose_path(kind("openai-chat"), none, Path::StrictJson, false).is_err());
}

#[test]
fn documented_streams_assemble_into_the_same_calls() {
    use toolgram_providers::assemble;
    let hermes = syntax::by_name("hermes").expect("hermes");
    for (file, kind, path, id) in [
        (
            "openai-chat.stream.txt",
            kind("openai-chat"),
            Path::StrictJson,
            "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        ),
        (
            "anthropic.stream.txt",
            kind("anthropic"),
            Path::StrictJson,
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        ),
        (
            "gemini.stream.txt",
            kind("gemini"),
            Path::StrictJson,
            "call_1",
        ),
        (
            "openai-responses.stream.txt",
            kind("openai-responses"),
            Path::StrictJson,
            "call_1234xyz",
        ),
        ("ollama.stream.txt", kind("ollama"), Path::Prompt, "call_0"),
    ] {
        let path_str = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path_str).expect("fixture");
        assert!(text.starts_with("source: https://"), "{file}");
        let body = assemble(kind, &text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let reply = read_reply(kind, path, &body, &tools(), &CallShape::default(), hermes)
            .unwrap_or_else(|_| panic!("{file}: readable"));
        assert_eq!(reply.tool_calls.len(), 1, "{file}: {body}");
        let call = &reply.tool_calls[0];
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            (id, "get_weather"),
            "{file}"
        );
        assert_eq!(call.arguments, json!({"city": "Paris"}), "{file}");
    }
}

fn with_grammar_tool() -> ToolSet {
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/weather.json"
        ))
        .expect("examples/weather.json"),
    )
    .expect("JSON");
    if let Value::Array(items) = &mut doc {
        items.push(json!({"type": "custom", "name": "calc", "description": "Add numbers.",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: NUM (\"+\" NUM)*\nNUM: /[0-9]+/\n"}}));
    }
    ToolSet::from_value(&doc).expect("valid tools")
}

#[test]
fn freeform_grammar_tools_go_native_only_where_the_model_takes_them() {
    let tools = with_grammar_tool();
    let messages = [ChatMessage::text("user", "2+40?")];
    let render_for = |kind: Kind, model: &str| {
        render(&RenderInput {
            kind,
            messages: &messages,
            tools: &tools,
            shape: &CallShape {
                choice: ToolChoice::Auto,
                parallel: false,
                ..CallShape::default()
            },
            model: Some(model),
            path: Path::StrictJson,
            syntax: syntax::by_name("hermes").expect("hermes"),
            temperature: None,
            max_tokens: None,
            stream: false,
        })
        .expect("renders")
    };
    let native = render_for(kind("openai-responses"), "gpt-5");
    let calc = &native.body["tools"][2];
    assert_eq!(calc["type"], "custom", "{}", native.body);
    assert_eq!(calc["format"]["type"], "grammar");
    assert_eq!(calc["format"]["syntax"], "lark");
    assert!(
        calc["format"]["definition"]
            .as_str()
            .is_some_and(|d| d.starts_with("start:"))
    );
    let chat = render_for(kind("openai-chat"), "gpt-5");
    assert_eq!(
        chat.body["tools"][2]["custom"]["format"]["grammar"]["syntax"],
        "lark"
    );
    let older = render_for(kind("openai-responses"), "gpt-4.1");
    let calc = &older.body["tools"][2];
    assert_eq!(calc["type"], "function");
    assert_eq!(calc["parameters"]["required"], json!(["input"]));
    assert!(
        older
            .notes
            .iter()
            .any(|n| n.contains("`calc` sent as its JSON fallback")),
        "{:?}",
        older.notes
    );
    // The documented custom_tool_call reply comes back as a call with its raw input.
    let f = fixture("openai-responses.custom.response.json");
    let reply = read_reply(
        kind("openai-responses"),
        Path::StrictJson,
        &f["body"],
        &tools,
        &CallShape::default(),
        syntax::by_name("hermes").expect("hermes"),
    )
    .unwrap_or_else(|_| panic!("readable"));
    assert_eq!(reply.tool_calls[0].name, "calc");
    assert_eq!(reply.tool_calls[0].arguments, json!({"input": "2+40"}));
}
