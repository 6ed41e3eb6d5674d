//! The validate-and-retry loop on real models: a scripted invalid first attempt repaired by
//! the default model; prompt mode (no constraint) never returning an invalid call; think
//! blocks split into reasoning.

mod common;

use common::*;
use serde_json::json;
use toolgram_core::define::request::{Mode, Think};
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_engine::{CallGrammar, CallRequest, CallShape, EngineError, EngineModel, Sampling};
use toolgram_retry::{AttemptError, CallModel, ModelReply, RetryError, RetryPolicy, run};

fn greedy(max_tokens: usize) -> Sampling {
    Sampling {
        max_tokens,
        ..Sampling::default()
    }
}

/// One request on `tools` without a grammar compiled ahead, its messages each attempt's.
fn request(
    tools: &ToolSet,
    choice: ToolChoice,
    mode: Mode,
    think: Think,
    sampling: Sampling,
) -> CallRequest<'_> {
    CallRequest {
        messages: &[],
        tools,
        grammar: CallGrammar::Shape(CallShape {
            choice,
            mode,
            think,
            ..CallShape::default()
        }),
        few_shot: false,
        sampling,
    }
}

/// Returns a fixed (invalid) reply first, then hands over to the real model.
struct FirstReplyScripted<'s, 'e> {
    scripted: Option<ModelReply>,
    model: EngineModel<'s, 'e>,
    seen: Vec<Vec<ChatMessage>>,
}

impl CallModel for FirstReplyScripted<'_, '_> {
    type Error = EngineError;
    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<EngineError>> {
        self.seen.push(messages.to_vec());
        match self.scripted.take() {
            Some(r) => Ok(r),
            None => self.model.attempt(messages),
        }
    }
}

#[test]
fn an_invalid_first_attempt_is_repaired_by_the_default_model() {
    let _g = lock();
    let tools = tools();
    let mut session = engine("default").session().expect("session");
    let bad = ToolCall {
        id: "call_0".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Paris", "unit": "kelvin"}),
    };
    let mut model = FirstReplyScripted {
        scripted: Some(ModelReply {
            raw: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"kelvin\"}}\n</tool_call>".into(),
            tool_calls: vec![bad],
            ..ModelReply::default()
        }),
        model: EngineModel::new(&mut session, request(&tools, ToolChoice::Required, Mode::Grammar, Think::Off, greedy(128))),
        seen: Vec::new(),
    };
    let messages = [ChatMessage::text("user", "What's the weather in Paris?")];
    let out = run(
        &mut model,
        &tools,
        &ToolChoice::Required,
        &messages,
        RetryPolicy::default(),
    )
    .expect("the second attempt is valid");
    assert_eq!(out.attempts, 2);
    assert_eq!(
        out.failed[0].errors,
        vec!["'unit' must be one of celsius, fahrenheit".to_owned()]
    );
    let call = &out.reply.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_schema_valid(call);
    // The model saw its bad call answered by a tool message carrying the error.
    let second = &model.seen[1];
    assert_eq!(second[2].role, "tool");
    assert!(
        second[2]
            .content
            .as_deref()
            .unwrap_or("")
            .contains("must be one of celsius, fahrenheit")
    );
}

#[test]
fn a_broken_custom_rule_is_repaired_under_the_grammar_that_builds_it_in() {
    let _g = lock();
    let tools = toolgram_core::ToolSet::from_value(&json!([{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city or for coordinates.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "coordinates": {"type": "string", "description": "lat,lon"}}},
        "x-toolgram": {"rules": [{"exactly_one_of": ["city", "coordinates"]}]}}}]))
    .expect("valid tools");
    let mut session = engine("default").session().expect("session");
    let mut model = FirstReplyScripted {
        scripted: Some(ModelReply {
            raw: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"coordinates\": \"48.85,2.35\"}}\n</tool_call>".into(),
            tool_calls: vec![ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: json!({"city": "Paris", "coordinates": "48.85,2.35"}),
            }],
            ..ModelReply::default()
        }),
        model: EngineModel::new(&mut session, request(&tools, ToolChoice::Required, Mode::Grammar, Think::Off, greedy(128))),
        seen: Vec::new(),
    };
    let messages = [ChatMessage::text("user", "What's the weather in Paris?")];
    let out = run(
        &mut model,
        &tools,
        &ToolChoice::Required,
        &messages,
        RetryPolicy::default(),
    )
    .expect("a later attempt keeps to the rule");
    assert_eq!(
        out.failed[0].errors,
        vec!["'city', 'coordinates' cannot be given together for tool 'get_weather'; give exactly one".to_owned()]
    );
    let args = out.reply.tool_calls[0]
        .arguments
        .as_object()
        .expect("object");
    let given = ["city", "coordinates"]
        .iter()
        .filter(|k| args.get(**k).is_some_and(|v| !v.is_null()))
        .count();
    assert_eq!(given, 1, "{args:?}");
}

#[test]
fn prompt_mode_never_returns_an_invalid_call() {
    let _g = lock();
    let tools = tools();
    let mut session = engine("test").session().expect("session");
    let (mut valid, mut refused) = (0, 0);
    for case in cases().iter().step_by(4) {
        let mut model = EngineModel::new(
            &mut session,
            request(
                &tools,
                ToolChoice::Required,
                Mode::Prompt,
                Think::Off,
                greedy(160),
            ),
        );
        let messages = [ChatMessage::text("user", case.prompt.as_str())];
        match run(
            &mut model,
            &tools,
            &ToolChoice::Required,
            &messages,
            RetryPolicy::default(),
        ) {
            Ok(out) => {
                assert!(!out.reply.tool_calls.is_empty(), "{}", case.prompt);
                out.reply.tool_calls.iter().for_each(assert_schema_valid);
                valid += 1;
            }
            Err(e @ (RetryError::Exhausted { .. } | RetryError::Blocked { .. })) => {
                assert!(!e.failed().is_empty() && !e.to_string().is_empty());
                refused += 1;
            }
            Err(RetryError::Model { error, .. }) => {
                assert!(
                    matches!(error, EngineError::Truncated { .. }),
                    "{}: {error}",
                    case.prompt
                );
                refused += 1;
            }
        }
    }
    eprintln!("prompt mode on the test model: {valid} valid, {refused} clear errors");
    assert!(valid + refused > 0);
}

#[test]
fn a_required_think_block_comes_back_as_reasoning() {
    let _g = lock();
    let tools = tools();
    let mut session = engine("default").session().expect("session");
    let mut model = EngineModel::new(
        &mut session,
        request(
            &tools,
            ToolChoice::Required,
            Mode::Grammar,
            Think::Required,
            greedy(384),
        ),
    );
    let messages = [ChatMessage::text(
        "user",
        "Think step by step in <think></think> first, then call the tool: weather in Rome?",
    )];
    let out = run(
        &mut model,
        &tools,
        &ToolChoice::Required,
        &messages,
        RetryPolicy::default(),
    )
    .expect("a call");
    let raw = &out.reply.raw;
    assert!(raw.starts_with("<think>"), "{raw}");
    let reasoning = out
        .reply
        .reasoning_content
        .as_deref()
        .unwrap_or_else(|| panic!("reasoning split off: {raw:?}"));
    assert!(!reasoning.contains("</think>"));
    assert!(raw.contains(reasoning));
    assert_eq!(out.reply.tool_calls.len(), 1);
    assert_schema_valid(&out.reply.tool_calls[0]);
}
