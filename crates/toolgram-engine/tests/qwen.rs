//! Real-engine tests on the default model (Qwen2.5-Coder-0.5B, Hermes `<tool_call>` syntax).
//! CI runs a representative subset; `TOOLGRAM_FULL=1` runs every prompt.

mod common;

use common::*;
use toolgram_core::ToolChoice;
use toolgram_engine::{FinishReason, Sampling};

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
