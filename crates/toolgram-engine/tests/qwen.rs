//! Real-engine tests on the default model (Qwen2.5-Coder-0.5B, Hermes `<tool_call>` syntax).
//! CI runs a representative subset; `TOOLGRAM_FULL=1` runs every prompt.

mod common;

use common::*;
use toolgram_core::ToolChoice;
use toolgram_core::define::request::Plan;
use toolgram_engine::{CallGrammar, CallShape, FinishReason, Sampling};

fn greedy() -> Sampling {
    Sampling {
        max_tokens: 256,
        ..Sampling::default()
    }
}

fn subset<T>(all: Vec<T>, n: usize) -> Vec<T> {
    if std::env::var_os("TOOLGRAM_FULL").is_some() {
        all
    } else {
        all.into_iter().take(n).collect()
    }
}

/// Every pick across the set: a third of the prompts, spread over all six tools.
fn spread(n: usize) -> Vec<Case> {
    let all = cases();
    let step = (all.len() / n).max(1);
    if std::env::var_os("TOOLGRAM_FULL").is_some() {
        all
    } else {
        all.into_iter().step_by(step).take(n).collect()
    }
}

/// Print `hits/total` and fail when it is below `num/den`.
fn assert_rate(what: &str, hits: usize, total: usize, num: usize, den: usize) {
    eprintln!("{what}: {hits}/{total}");
    assert!(
        hits * den >= total * num,
        "{what}: only {hits} of {total}, need {num}/{den}"
    );
}

#[test]
fn required_calls_are_valid_and_mostly_right() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    let cases = spread(8);
    let mut right = 0;
    for case in &cases {
        let r = ask(&mut s, &tools, &case.prompt, ToolChoice::Required, greedy())
            .unwrap_or_else(|e| panic!("{}: {e}", case.prompt));
        assert_eq!(r.tool_calls.len(), 1, "{}: {:?}", case.prompt, r.raw);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_schema_valid(&r.tool_calls[0]);
        if is_right(&r.tool_calls[0], case) {
            right += 1;
        } else {
            eprintln!(
                "wrong: {} -> {} {}",
                case.prompt, r.tool_calls[0].name, r.tool_calls[0].arguments
            );
        }
    }
    assert_rate(
        "required: right tool and key arguments",
        right,
        cases.len(),
        3,
        4,
    );
}

#[test]
fn auto_calls_when_the_prompt_asks_for_an_action() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    let cases = subset(cases(), 10);
    let mut called = 0;
    for case in &cases {
        let r = ask(&mut s, &tools, &case.prompt, ToolChoice::Auto, greedy())
            .unwrap_or_else(|e| panic!("{}: {e}", case.prompt));
        r.tool_calls.iter().for_each(assert_schema_valid);
        if r.tool_calls.is_empty() {
            eprintln!("no call: {} -> {:?}", case.prompt, r.raw);
        } else {
            called += 1;
        }
    }
    assert_rate(
        "auto: action prompts that gave a call",
        called,
        cases.len(),
        9,
        10,
    );
}

#[test]
fn named_choice_wins_over_the_prompt() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    for case in subset(cases(), 3) {
        let r = ask(
            &mut s,
            &tools,
            &case.prompt,
            ToolChoice::Named("set_thermostat".into()),
            greedy(),
        )
        .expect("named call");
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "set_thermostat");
        assert_schema_valid(&r.tool_calls[0]);
    }
}

#[test]
fn none_gives_text_only() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    for case in subset(cases(), 3) {
        let r = ask(
            &mut s,
            &tools,
            &case.prompt,
            ToolChoice::None,
            Sampling {
                max_tokens: 64,
                ..greedy()
            },
        )
        .expect("text");
        assert!(r.tool_calls.is_empty(), "{:?}", r.tool_calls);
        assert!(r.content.is_some());
    }
}

#[test]
fn the_vocabulary_read_from_the_gguf_header_matches_llama_cpp_token_for_token() {
    // Qwen's vocabulary holds `</s>` as a normal token that llama.cpp makes a control one.
    let _g = lock();
    assert!(engine("default").vocab_built_early());
}

/// Qwen's tagged calls are forced whole in one step after the sampled `\n` (`ping` has no
/// arguments); its bare calls under `auto` are not: the loop guard must stop both.
#[test]
fn a_call_repeated_in_a_row_ends_the_reply_whether_forced_or_sampled() {
    let _g = lock();
    for choice in [ToolChoice::Required, ToolChoice::Auto] {
        assert_a_repeated_call_ends_the_reply(engine("default"), choice);
    }
}

/// Whether a reply opens with what `call_bias` counts as a call's opening: Qwen's
/// `<tool_call>`, or a bare JSON call's `{` (a code fence is on the other side: it opens a
/// ```` ```json ```` call or a ```` ```python ```` block alike).
fn opens_a_call(raw: &str) -> bool {
    let t = raw.trim_start();
    t.starts_with("<tool_call>") || t.starts_with('{')
}

#[test]
fn call_bias_tips_the_call_or_text_choice_and_the_margin_is_the_models_lean() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    let biased = |b: f32| Sampling {
        max_tokens: 128,
        call_bias: Some(b),
        ..greedy()
    };
    for prompt in [
        cases()[0].prompt.clone(),
        "Write a haiku about the sea.".to_owned(),
    ] {
        let plain = ask(&mut s, &tools, &prompt, ToolChoice::Auto, biased(0.0)).expect("reply");
        let margin = plain.call_margin.expect("auto: a call-or-text choice");
        assert_eq!(
            opens_a_call(&plain.raw),
            margin > 0.0,
            "{prompt}: {plain:?}"
        );
        let against = ask(&mut s, &tools, &prompt, ToolChoice::Auto, biased(-100.0));
        let against = against.expect("reply");
        assert!(!opens_a_call(&against.raw), "{prompt}: {:?}", against.raw);
        // Measured before the bias (a prompt prefix from the cache moves it by float noise).
        let again = against.call_margin.expect("the same choice");
        assert!((again - margin).abs() < 0.1, "{again} against {margin}");
        let towards = ask(&mut s, &tools, &prompt, ToolChoice::Auto, biased(100.0));
        let towards = towards.unwrap_or_else(|e| panic!("{prompt}: {e}"));
        assert!(opens_a_call(&towards.raw), "{prompt}: {:?}", towards.raw);
    }
    let forced = ask(
        &mut s,
        &tools,
        &cases()[0].prompt,
        ToolChoice::Required,
        greedy(),
    );
    assert_eq!(
        forced.expect("call").call_margin,
        None,
        "no choice: no margin"
    );
}

/// A reply to `prompt` under `plan` (several calls allowed), sampled as `sampling` says.
fn reply_under(
    s: &mut toolgram_engine::Session<'_>,
    tools: &toolgram_core::ToolSet,
    prompt: &str,
    choice: ToolChoice,
    plan: Plan,
    sampling: Sampling,
) -> toolgram_engine::CallResponse {
    let messages = [toolgram_core::ChatMessage::text("user", prompt)];
    s.reply(&toolgram_engine::CallRequest {
        messages: &messages,
        tools,
        grammar: CallGrammar::Shape(CallShape {
            choice,
            parallel: true,
            plan,
            ..CallShape::default()
        }),
        few_shot: false,
        sampling,
    })
    .expect("reply")
}

#[test]
fn under_a_plan_call_bias_tips_the_count_between_none_and_some() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    let mut planned = |b: f32| {
        let sampling = Sampling {
            max_tokens: 160,
            call_bias: Some(b),
            ..greedy()
        };
        let prompt = "What is the weather in Paris and in Rome?";
        reply_under(
            &mut s,
            &tools,
            prompt,
            ToolChoice::Auto,
            Plan::Count,
            sampling,
        )
    };
    let none = planned(-100.0);
    let plan = none.plan.clone().unwrap_or_default();
    assert!(plan.ends_with(": 0"), "{plan:?} ({:?})", none.raw);
    assert!(none.call_margin.is_some());
    let some = planned(100.0);
    let plan = some.plan.clone().unwrap_or_default();
    assert!(
        !plan.ends_with(": 0") && !some.tool_calls.is_empty(),
        "{plan:?} {some:?}"
    );
}

/// A plan of one call is taken out of the context once written: the session then holds the
/// prompt and the call, not the plan line, whose text is still read back as reasoning.
#[test]
fn a_plan_of_one_call_leaves_the_context_once_written() {
    let _g = lock();
    let tools = tools();
    let e = engine("default");
    let mut s = e.session().expect("session");
    let line = e.count_tokens("Number of tool calls needed: 1\n");
    let mut planned = |prompt: &str, choice: ToolChoice| {
        let sampling = Sampling {
            max_tokens: 200,
            ..greedy()
        };
        let r = reply_under(&mut s, &tools, prompt, choice, Plan::Count, sampling);
        // What was written and is not held: the plan line if it left, else at most the
        // last step (never decoded: nothing comes after it).
        let unheld = r.prompt_tokens + r.completion_tokens - s.cached_tokens();
        (r, unheld)
    };
    let (one, unheld) = planned(
        "What's the weather like in Paris right now?",
        ToolChoice::Required,
    );
    let plan = one.plan.clone().unwrap_or_default();
    assert!(plan.ends_with(": 1"), "{plan:?}: {}", one.raw);
    assert_eq!(one.tool_calls.len(), 1, "{}", one.raw);
    assert!(
        unheld >= line,
        "{unheld} tokens left the context; the plan line has {line}"
    );
    let (two, unheld) = planned(
        "What is the weather in Paris and in Rome?",
        ToolChoice::Required,
    );
    let plan = two.plan.clone().unwrap_or_default();
    assert!(plan.ends_with(": 2"), "{plan:?}: {}", two.raw);
    assert!(
        unheld < line,
        "a plan of two stays in view: {unheld} tokens unheld"
    );
}

/// Under `Plan::Calls` call or text is the unplanned reply's choice: a reply in text is the
/// unplanned reply itself (no plan line, the same text); a reply that calls is counted — one
/// call and the unplanned reply stands under its plan line (a few tokens more), two cities
/// and it is decoded again under the plan, two calls where the unplanned reply stops after
/// one, its tokens counting both decodes.
#[test]
fn under_plan_calls_text_stays_unplanned_and_a_calling_reply_is_counted() {
    let _g = lock();
    let tools = tools();
    let mut s = engine("default").session().expect("session");
    let mut reply = |prompt: &str, plan: Plan| {
        let sampling = Sampling {
            max_tokens: 200,
            ..greedy()
        };
        reply_under(&mut s, &tools, prompt, ToolChoice::Auto, plan, sampling)
    };
    let hello = "Hi! In one sentence, who are you?";
    let (text, unplanned) = (reply(hello, Plan::Calls), reply(hello, Plan::Off));
    assert!(text.tool_calls.is_empty(), "{}", text.raw);
    assert_eq!((text.plan.as_deref(), &text.raw), (None, &unplanned.raw));
    let paris = "What's the weather like in Paris right now?";
    let (one, unplanned) = (reply(paris, Plan::Calls), reply(paris, Plan::Off));
    let plan = one.plan.clone().unwrap_or_default();
    assert!(plan.ends_with(": 1"), "{plan:?}: {}", one.raw);
    assert!(
        one.raw.ends_with(&unplanned.raw),
        "{} / {}",
        one.raw,
        unplanned.raw
    );
    assert_eq!(one.tool_calls.len(), 1, "{}", one.raw);
    assert_eq!(
        one.tool_calls[0].arguments,
        unplanned.tool_calls[0].arguments
    );
    assert!(
        one.completion_tokens < unplanned.completion_tokens + 20,
        "a count of one costs its line: {} against {}",
        one.completion_tokens,
        unplanned.completion_tokens
    );
    let two = "What is the weather in Paris and in Rome?";
    let (counted, unplanned) = (reply(two, Plan::Calls), reply(two, Plan::Off));
    assert_eq!(unplanned.tool_calls.len(), 1, "{}", unplanned.raw);
    let plan = counted.plan.clone().unwrap_or_default();
    assert!(plan.ends_with(": 2"), "{plan:?}: {}", counted.raw);
    assert_eq!(counted.tool_calls.len(), 2, "{}", counted.raw);
    assert!(
        counted.completion_tokens > unplanned.completion_tokens + 2 * 10,
        "both decodes counted: {} against {} unplanned",
        counted.completion_tokens,
        unplanned.completion_tokens
    );
}
