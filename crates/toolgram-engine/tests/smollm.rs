//! Real-engine tests on the fast test model (SmolLM2-135M, a template without tool syntax:
//! the generic JSON call format). Every invariant of the decode stage is checked here.

mod common;

use common::*;
use serde_json::json;
use toolgram_core::{ChatMessage, ToolChoice};
use toolgram_engine::{
    CallGrammar, CallRequest, CallShape, Engine, EngineError, EngineOptions, FinishReason,
    Sampling, models,
};

fn greedy(max_tokens: usize) -> Sampling {
    Sampling {
        max_tokens,
        ..Sampling::default()
    }
}

/// A 135M model sometimes loops inside a string until the token limit: that must end in a
/// typed truncation, never an invalid call. Returns the reply, or `None` for a truncation.
fn call_or_truncated(
    r: Result<toolgram_engine::CallResponse, EngineError>,
    prompt: &str,
) -> Option<toolgram_engine::CallResponse> {
    match r {
        Ok(r) => Some(r),
        Err(EngineError::Truncated { partial, .. }) => {
            assert!(
                partial.starts_with("{\"name\": "),
                "{prompt}: truncated outside a call: {partial}"
            );
            None
        }
        Err(e) => panic!("{prompt}: {e}"),
    }
}

/// Most replies of the small model must be complete calls (a run of truncations fails).
fn assert_mostly_complete(done: usize, total: usize) {
    assert!(
        done * 5 >= total * 4,
        "only {done} of {total} replies were complete calls"
    );
}

#[test]
fn required_gives_one_schema_valid_call_for_every_prompt() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    let cases = cases();
    assert!(cases.len() >= 20);
    let mut done = 0;
    for case in &cases {
        let Some(r) = call_or_truncated(
            ask(
                &mut s,
                &tools,
                &case.prompt,
                ToolChoice::Required,
                greedy(256),
            ),
            &case.prompt,
        ) else {
            continue;
        };
        assert_eq!(r.tool_calls.len(), 1, "{}: {:?}", case.prompt, r.raw);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_schema_valid(&r.tool_calls[0]);
        done += 1;
    }
    assert_mostly_complete(done, cases.len());
}

#[test]
fn named_choice_calls_exactly_that_tool() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    let (cases, mut done) = (cases(), 0);
    for (i, case) in cases.iter().enumerate() {
        // Name a tool the prompt does not ask for every other time: the choice must win.
        let name = if i % 2 == 0 {
            case.tool.clone()
        } else {
            "set_thermostat".to_owned()
        };
        let r = ask(
            &mut s,
            &tools,
            &case.prompt,
            ToolChoice::Named(name.clone()),
            greedy(256),
        );
        let Some(r) = call_or_truncated(r, &case.prompt) else {
            continue;
        };
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, name);
        assert_schema_valid(&r.tool_calls[0]);
        done += 1;
    }
    assert_mostly_complete(done, cases.len());
}

#[test]
fn none_never_gives_a_call() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    for case in cases().iter().take(8) {
        let r =
            ask(&mut s, &tools, &case.prompt, ToolChoice::None, greedy(96)).expect("text reply");
        assert!(
            r.tool_calls.is_empty(),
            "{}: {:?}",
            case.prompt,
            r.tool_calls
        );
        assert_ne!(r.finish_reason, FinishReason::ToolCalls);
    }
}

#[test]
fn auto_replies_are_text_or_valid_calls() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    for case in &cases() {
        let r = ask(&mut s, &tools, &case.prompt, ToolChoice::Auto, greedy(128));
        match r {
            Ok(r) => r.tool_calls.iter().for_each(assert_schema_valid),
            // A long prose reply may run out of tokens; never inside a call.
            Err(EngineError::Truncated { partial, .. }) => {
                assert!(partial.trim_start().starts_with('{'), "{partial}")
            }
            Err(e) => panic!("{}: {e}", case.prompt),
        }
    }
}

#[test]
fn end_of_generation_cannot_cut_a_call_short() {
    let _g = lock();
    let tools = tools();
    let e = engine("test");
    let mut s = e.session().expect("session");
    let bias: Vec<(u32, f32)> = e.eog_tokens().iter().map(|&t| (t, 100.0)).collect();
    let biased = Sampling {
        logit_bias: bias,
        ..greedy(256)
    };
    // The bias works: with nothing required, the model ends at once.
    let r = ask(
        &mut s,
        &tools,
        "Set the bedroom to 21 degrees.",
        ToolChoice::None,
        biased.clone(),
    )
    .expect("reply");
    assert_eq!((r.completion_tokens, r.content), (0, None));
    // Under required the same bias cannot end the reply before the call is complete.
    let mut done = 0;
    for case in cases().iter().take(6) {
        let r = ask(
            &mut s,
            &tools,
            &case.prompt,
            ToolChoice::Required,
            biased.clone(),
        );
        let Some(r) = call_or_truncated(r, &case.prompt) else {
            continue;
        };
        assert_eq!(r.tool_calls.len(), 1, "{:?}", r.raw);
        assert_schema_valid(&r.tool_calls[0]);
        done += 1;
    }
    assert_mostly_complete(done, 6);
}

#[test]
fn max_tokens_inside_a_call_is_a_typed_truncation() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    match ask(
        &mut s,
        &tools,
        "What's the weather in Rome?",
        ToolChoice::Required,
        greedy(6),
    ) {
        Err(EngineError::Truncated {
            partial,
            max_tokens,
            usage,
            ..
        }) => {
            assert_eq!(max_tokens, 6);
            assert!(partial.starts_with("{\"name\": "), "{partial}");
            // The cut reply still says what it used.
            let usage = usage.expect("usage");
            assert_eq!(usage.completion_tokens, 6);
            assert!(usage.prompt_tokens > 0);
        }
        other => panic!("expected a truncation, got {other:?}"),
    }
}

/// A reply cut inside a later call keeps the calls completed before it (each whole and valid)
/// and names the one cut, instead of dropping them all.
#[test]
fn a_cut_after_complete_calls_keeps_them_and_names_the_cut_one() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    let messages = [ChatMessage::text(
        "user",
        "What's the weather in Paris, in Rome and in Oslo?",
    )];
    let ask = |s: &mut toolgram_engine::Session<'_>, max_tokens| {
        s.call(&CallRequest {
            messages: &messages,
            tools: &tools,
            grammar: CallGrammar::Shape(CallShape {
                choice: ToolChoice::Required,
                parallel: true,
                ..CallShape::default()
            }),
            few_shot: false,
            sampling: greedy(max_tokens),
        })
    };
    let whole = ask(&mut s, 400).expect("a reply");
    assert!(whole.tool_calls.len() >= 2, "{}", whole.raw);
    // A limit a few tokens past the end of the first call (its closing brace) cuts the second.
    let mut depth = 0;
    let first_end = whole
        .raw
        .char_indices()
        .find_map(|(i, c)| {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            (c == '}' && depth == 0).then_some(i + 1)
        })
        .expect("a first call");
    let first = engine("test").count_tokens(&whole.raw[..first_end]);
    let cut = (first + 2..first + 12)
        .find_map(|n| {
            ask(&mut s, n)
                .ok()
                .filter(|r| r.finish_reason == FinishReason::Length && !r.tool_calls.is_empty())
        })
        .expect("a limit past the first call cuts the second");
    assert!(cut.tool_calls.len() < whole.tool_calls.len(), "{}", cut.raw);
    for (kept, full) in cut.tool_calls.iter().zip(&whole.tool_calls) {
        assert_eq!((&kept.name, &kept.arguments), (&full.name, &full.arguments));
        assert_schema_valid(kept);
    }
    let truncated = cut.truncated_call.expect("the cut call is named");
    assert!(
        whole.raw.contains(&truncated.partial),
        "{truncated:?} in {}",
        whole.raw
    );
}

#[test]
fn a_conversation_too_long_for_the_context_is_a_typed_error() {
    let _g = lock();
    let path = models::find("test").and_then(|m| m.fetch()).expect("model");
    let small = Engine::load(
        &path,
        &EngineOptions {
            n_ctx: Some(512),
            ..Default::default()
        },
    )
    .expect("loads");
    let mut s = small.session().expect("session");
    let long = "Please check the weather. ".repeat(200);
    match ask(&mut s, &tools(), &long, ToolChoice::Required, greedy(16)) {
        Err(EngineError::ContextOverflow {
            prompt_tokens,
            n_ctx,
        }) => assert!(prompt_tokens >= n_ctx && n_ctx == 512),
        other => panic!("expected a context overflow, got {other:?}"),
    }
}

#[test]
fn reused_prompt_prefix_and_compiled_grammar_give_the_same_reply_as_a_fresh_context() {
    let _g = lock();
    let tools = tools();
    let e = engine("test");
    let mut warm = e.session().expect("session");
    let _ = ask(
        &mut warm,
        &tools,
        "Set the office to 20 degrees.",
        ToolChoice::Required,
        greedy(64),
    );
    let prompt = "Find flights from JFK to LHR on 2026-12-20.";
    let reused = ask(&mut warm, &tools, prompt, ToolChoice::Required, greedy(128)).expect("second");
    assert!(
        reused.timings.prompt_evaluated < reused.prompt_tokens / 2,
        "prefix not reused: {:?}",
        reused.timings
    );
    let hits = e.grammars().stats().cache_hits;
    let fresh = ask(
        &mut e.session().expect("session"),
        &tools,
        prompt,
        ToolChoice::Required,
        greedy(128),
    )
    .expect("fresh");
    assert_eq!(fresh.timings.prompt_evaluated, fresh.prompt_tokens);
    assert!(
        e.grammars().stats().cache_hits > hits,
        "the same pool and choice did not reuse the compiled grammar"
    );
    assert_eq!(reused.raw, fresh.raw);
}

#[test]
fn multi_turn_conversation_with_tool_results_continues() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    let messages: Vec<ChatMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "What's the weather in Oslo?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temperature\": -3, \"sky\": \"snow\"}"},
        {"role": "user", "content": "And in Bergen?"}
    ]))
    .expect("messages");
    let req = CallRequest {
        messages: &messages,
        tools: &tools,
        grammar: CallGrammar::Shape(CallShape {
            choice: ToolChoice::Required,
            parallel: true,
            ..CallShape::default()
        }),
        few_shot: false,
        sampling: greedy(256),
    };
    let r = s.call(&req).expect("reply");
    assert!(!r.tool_calls.is_empty());
    r.tool_calls.iter().for_each(assert_schema_valid);
}

#[test]
fn temperature_sampling_is_reproducible_with_a_seed() {
    let _g = lock();
    let tools = tools();
    let sampling = Sampling {
        temperature: 0.9,
        seed: Some(42),
        ..greedy(256)
    };
    // The same text twice, whether it ends in a call or runs into the token limit (which
    // the 135M model may do at this temperature; that is not what is tested here).
    let run = || {
        let mut s = engine("test").session().expect("session");
        match ask(
            &mut s,
            &tools,
            "What's the weather in Lyon?",
            ToolChoice::Required,
            sampling.clone(),
        ) {
            Ok(r) => r.raw,
            Err(EngineError::Truncated { partial, .. }) => partial,
            Err(e) => panic!("seeded: {e}"),
        }
    };
    let (a, b) = (run(), run());
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[test]
fn timings_split_a_call_into_grammar_template_prefill_and_decode() {
    let _g = lock();
    let tools = tools();
    let e = engine("test");
    let mut s = e.session().expect("session");
    let started = std::time::Instant::now();
    let r = ask(
        &mut s,
        &tools,
        "Set the office to 20 degrees.",
        ToolChoice::Required,
        greedy(64),
    )
    .expect("a call");
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let t = &r.timings;
    assert!(t.template_ms > 0.0 && t.prompt_ms > 0.0, "{t:?}");
    // Some decode happened after the first sampled token, and it is part of generation.
    assert!(t.decode_ms > 0.0 && t.decode_ms <= t.generate_ms, "{t:?}");
    let parts = t.grammar_ms + t.template_ms + t.prompt_ms + t.generate_ms;
    assert!(
        parts <= wall_ms,
        "parts {parts} ms over the call's {wall_ms} ms: {t:?}"
    );
}

#[test]
fn the_vocabulary_read_from_the_gguf_header_matches_llama_cpp_token_for_token() {
    // The token trie and mask slices are built from the GGUF header while the weights load;
    // any token llama.cpp spells otherwise would have sent the engine the slow way.
    let _g = lock();
    assert!(engine("test").vocab_built_early());
}

#[test]
fn a_call_repeated_in_a_row_ends_the_reply() {
    let _g = lock();
    assert_a_repeated_call_ends_the_reply(engine("test"), ToolChoice::Required);
}

/// `few_shot` writes prompt mode's instructions into the prompt and nothing else: the reply
/// is still decoded under the grammar (masks were computed), not freely as in prompt mode.
#[test]
fn few_shot_lengthens_the_prompt_and_keeps_the_grammar() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("test").session().expect("session");
    let messages = [ChatMessage::text("user", "What's the weather in Oslo?")];
    let req = |few_shot| CallRequest {
        messages: &messages,
        tools: &tools,
        grammar: CallGrammar::Shape(CallShape {
            choice: ToolChoice::Required,
            ..CallShape::default()
        }),
        few_shot,
        sampling: greedy(256),
    };
    let plain = s.reply(&req(false)).expect("plain reply");
    let shown = s.reply(&req(true)).expect("few-shot reply");
    assert!(
        shown.prompt_tokens > plain.prompt_tokens + 60,
        "few-shot prompt {} tokens, plain {}",
        shown.prompt_tokens,
        plain.prompt_tokens
    );
    assert!(
        !shown.timings.mask_us.is_empty(),
        "decoded without the grammar"
    );
    assert_eq!(shown.tool_calls.len(), 1, "{}", shown.raw);
}
