//! A structure-aware fuzzer of the request readers (proptest): random JSON bodies shaped like
//! Chat Completions, Responses and Anthropic Messages requests — the fields each API reads,
//! messages, items, content parts, tools of every kind with schema-like parameters and small
//! grammars, and any JSON value in any place — read by all three readers, which must answer
//! a request or a typed error and never panic. A few thousand cases in CI; `PROPTEST_CASES`
//! raises it (docs/server.md gives the long run's count).

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use toolgram_providers::{Config, Overrides};
use toolgram_runtime::{Backend, ModelEntry, ModelSet, ProviderConfig, Residency};
use toolgram_server::app::Stored;
use toolgram_server::{App, ServerConfig};

/// Cases in a CI run, unless `PROPTEST_CASES` says otherwise.
const CI_CASES: u32 = 3000;

/// One app for every case: a provider runtime never reached (reading runs nothing), with a
/// stored response for `previous_response_id`.
fn app() -> Arc<App> {
    static APP: OnceLock<Arc<App>> = OnceLock::new();
    Arc::clone(APP.get_or_init(|| {
        let overrides = Overrides {
            base_url: Some("http://127.0.0.1:9".into()),
            model: Some("m".into()),
            ..Overrides::default()
        };
        let provider = Config::default()
            .resolve("llama-server", &overrides)
            .expect("resolves");
        let backend = Backend::Provider(ProviderConfig {
            provider,
            stream: false,
        });
        let app = Arc::new(App::new(
            ModelSet::new(vec![ModelEntry::new("m", backend)], Residency::default())
                .expect("a model set"),
            ServerConfig::default(),
        ));
        app.store(Stored {
            id: "resp-1".into(),
            messages: vec![toolgram_core::ChatMessage::text("user", "hi".to_owned())],
            body: "{}".into(),
        });
        app
    }))
}

/// The one model, as a request runs on it.
fn served(app: &App) -> toolgram_server::Served {
    let runtime = app.models.get(0).expect("a provider loads at once");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    app.served(0, runtime, deadline)
}

/// A read request settled on the model, as the handler does once it is loaded.
fn settle<A>(
    app: &App,
    read: Result<toolgram_server::handler::Read<A>, toolgram_server::error::ApiError>,
) {
    if let Ok(mut r) = read {
        r.asks.apply(&served(app), &mut r.req, &mut r.notes);
    }
}

/// Words the readers look for, so random objects hit their branches.
const WORDS: &[&str] = &[
    "function",
    "custom",
    "namespace",
    "web_search",
    "file_search",
    "message",
    "text",
    "input_text",
    "output_text",
    "image_url",
    "tool_use",
    "tool_result",
    "thinking",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "additional_tools",
    "user",
    "assistant",
    "system",
    "developer",
    "tool",
    "auto",
    "none",
    "required",
    "any",
    "json_schema",
    "json_object",
    "object",
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "null",
    "lark",
    "regex",
    "grammar",
    "enabled",
    "disabled",
    "high",
    "minimal",
    "resp-1",
    "resp-2",
    "get_weather",
    "city",
    "#/$defs/a",
    "reasoning.encrypted_content",
    "forbid",
    "list",
    "allow",
    "<|im_start|>",
    "",
];

/// Fields any of the three APIs reads.
const FIELDS: &[&str] = &[
    "model",
    "messages",
    "input",
    "instructions",
    "previous_response_id",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "text",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "stop",
    "stop_sequences",
    "logit_bias",
    "max_attempts",
    "repeats",
    "repeated_text",
    "strict_schemas",
    "stream",
    "stream_options",
    "n",
    "store",
    "reasoning",
    "include",
    "metadata",
    "system",
    "thinking",
    "user",
    "prompt_cache_key",
    "service_tier",
];

fn word() -> BoxedStrategy<String> {
    prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_owned),
        1 => ".{0,12}",
    ]
    .boxed()
}

fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        word().prop_map(Value::String),
    ]
    .boxed()
}

/// Any JSON value, a few levels deep.
fn any_json() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((word(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
        .boxed()
}

/// An object with some of `keys`, each a value of `value` or any JSON.
fn shaped(keys: &'static [&'static str], value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    proptest::collection::vec(
        (
            proptest::sample::select(keys),
            prop_oneof![3 => value, 1 => any_json()],
        ),
        0..keys.len() + 1,
    )
    .prop_map(|kv| {
        Value::Object(
            kv.into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<Map<_, _>>(),
        )
    })
    .boxed()
}

/// A JSON-Schema-like value.
fn schema() -> BoxedStrategy<Value> {
    let keys: &'static [&'static str] = &[
        "type",
        "properties",
        "items",
        "enum",
        "required",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "minimum",
        "maxLength",
        "pattern",
        "format",
        "additionalProperties",
        "const",
    ];
    shaped(keys, leaf())
        .prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec((word(), inner.clone()), 0..4).prop_map(|kv| {
                    json!({"type": "object", "properties": Value::Object(kv.into_iter().collect())})
                }),
                inner
                    .clone()
                    .prop_map(|i| json!({"type": "array", "items": i})),
                proptest::collection::vec(inner, 0..3).prop_map(|v| json!({"anyOf": v})),
            ]
        })
        .boxed()
}

/// A tool of any kind, in the Chat, Responses or Anthropic shape.
fn tool() -> BoxedStrategy<Value> {
    let grammar = prop_oneof![
        Just("start: \"a\"".to_owned()),
        Just("start: x+\nx: /[0-9]/".to_owned()),
        "[a-z: \"|()+*?/\\n]{0,30}",
    ];
    (word(), word(), schema(), grammar, any_json())
        .prop_flat_map(|(kind, name, params, grammar, other)| {
            let function = json!({"name": name, "description": "d", "parameters": params});
            let format = json!({"type": "grammar", "syntax": "lark", "definition": grammar});
            prop_oneof![
                Just(json!({"type": "function", "function": function.clone()})),
                Just(json!({"type": "function", "name": name, "parameters": params})),
                Just(json!({"type": "custom", "custom": {"name": name, "format": format}})),
                Just(json!({"type": "custom", "name": name, "format": format})),
                Just(json!({"name": name, "input_schema": params})),
                Just(json!({"type": "namespace", "name": name, "tools": [function]})),
                Just(json!({"type": kind, "name": name})),
                Just(other),
            ]
        })
        .boxed()
}

/// A content value: text, or parts of the kinds the APIs send.
fn content() -> BoxedStrategy<Value> {
    let part = (word(), word(), any_json()).prop_map(|(kind, text, other)| {
        json!({"type": kind, "text": text, "id": "c1", "tool_use_id": "c1", "name": "get_weather",
            "input": other, "content": text, "call_id": "c1", "thinking": text})
    });
    prop_oneof![
        word().prop_map(Value::String),
        proptest::collection::vec(part, 0..4).prop_map(Value::Array),
        any_json(),
    ]
    .boxed()
}

/// A message or input item.
fn message() -> BoxedStrategy<Value> {
    let keys: &'static [&'static str] = &[
        "role",
        "content",
        "type",
        "name",
        "tool_calls",
        "tool_call_id",
        "call_id",
        "arguments",
        "output",
        "input",
        "reasoning_content",
        "encrypted_content",
        "summary",
        "tools",
    ];
    let call = (word(), any_json()).prop_map(|(name, args)| {
        json!({"id": "c1", "type": "function", "function": {"name": name,
            "arguments": args.to_string()}})
    });
    (
        shaped(keys, word().prop_map(Value::String).boxed()),
        word(),
        content(),
        proptest::collection::vec(call, 0..3),
    )
        .prop_map(|(mut m, role, content, calls)| {
            if let Value::Object(o) = &mut m {
                o.entry("role").or_insert(json!(role));
                o.entry("content").or_insert(content);
                if !calls.is_empty() {
                    o.entry("tool_calls").or_insert(json!(calls));
                }
            }
            m
        })
        .boxed()
}

/// A request body for any of the three APIs.
fn request() -> BoxedStrategy<Value> {
    let conversation = proptest::collection::vec(message(), 0..5).prop_map(Value::Array);
    let tools = proptest::collection::vec(tool(), 0..4).prop_map(Value::Array);
    (
        shaped(FIELDS, leaf()),
        conversation,
        tools,
        word(),
        any_json(),
    )
        .prop_map(|(mut body, conversation, tools, text, choice)| {
            if let Value::Object(o) = &mut body {
                let input = if text.len() % 2 == 0 {
                    conversation.clone()
                } else {
                    json!(text)
                };
                o.entry("messages").or_insert(conversation);
                o.entry("input").or_insert(input);
                o.entry("tools").or_insert(tools);
                o.entry("tool_choice").or_insert(choice);
            }
            body
        })
        .boxed()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CI_CASES)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every reader answers every body, shaped or not, without a panic.
    #[test]
    fn the_request_readers_never_panic(body in prop_oneof![4 => request(), 1 => any_json()]) {
        let app = app();
        settle(&app, toolgram_server::chat::read(&app, &body));
        settle(&app, toolgram_server::responses::read(&app, &body));
        settle(&app, toolgram_server::anthropic::read::read(&app, &body));
    }

    /// The body reader reads every JSON text as serde_json does (its keys distinct), and a
    /// key repeated anywhere in it is refused.
    #[test]
    fn the_body_reader_reads_what_serde_json_reads_and_refuses_a_repeated_key(
        body in prop_oneof![4 => request(), 1 => any_json()]
    ) {
        let text = serde_json::to_vec(&body).expect("serializes");
        let read = toolgram_server::body_json::parse(&text).expect("reads");
        let serde: Value = serde_json::from_slice(&text).expect("serde_json reads it");
        prop_assert_eq!(&read, &serde);
        let text = String::from_utf8(text).expect("UTF-8");
        if let Some(at) = text.find("{\"") {
            // The object's first key given again before it.
            let key_end = text[at + 2..].find('"').map(|e| at + 2 + e + 1);
            if let Some(end) = key_end {
                let key = &text[at + 1..end];
                let twice = format!("{}{key}:0,{}", &text[..at + 1], &text[at + 1..]);
                prop_assert!(toolgram_server::body_json::parse(twice.as_bytes()).is_err(), "{}", twice);
            }
        }
    }
}
