//! Continuous batching on the real test model: sessions on lanes of one context, driven from
//! their own threads, decode together and each gets the reply it would get alone.

mod common;

use common::*;
use toolgram_core::ToolChoice;
use toolgram_engine::{EngineError, Sampling};

fn greedy() -> Sampling {
    Sampling {
        max_tokens: 96,
        ..Sampling::default()
    }
}

/// The reply's text, or the partial text of a truncated call (the small model may loop).
fn text(r: Result<toolgram_engine::CallResponse, EngineError>) -> String {
    match r {
        Ok(r) => r.raw,
        Err(EngineError::Truncated { partial, .. }) => partial,
        Err(e) => panic!("{e}"),
    }
}

/// Sessions decoding together share decodes and each gets the reply it gets alone.
///
/// Which tokens share a decode depends on thread timing, and llama.cpp's CPU kernels are not
/// batch-invariant (a token's matmul can run in a different kernel, with a different summation
/// order, depending on how many columns the batch holds), so a greedy choice between two
/// near-equal logits can flip with the batch's composition (seen once in 11 runs on
/// 2026-11-24: the first of three full test runs; eight targeted runs passed). A real batching fault (another lane's logits, a mixed-up KV cache) fails
/// every round, so the batched round is run up to twice and must match in one; a
/// first-round difference is printed.
#[test]
fn concurrent_sessions_share_decodes_and_reply_as_they_would_alone() {
    let _g = lock();
    let engine = engine("test");
    let tools = tools();
    let prompts: Vec<String> = cases().into_iter().take(3).map(|c| c.prompt).collect();
    let alone: Vec<String> = prompts
        .iter()
        .map(|p| {
            let mut s = engine.session().expect("session");
            text(ask(&mut s, &tools, p, ToolChoice::Required, greedy()))
        })
        .collect();
    let mut differences = Vec::new();
    for round in 1..=2 {
        let batch = engine.batch(prompts.len()).expect("batch");
        let together: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = prompts
                .iter()
                .map(|p| {
                    let (batch, tools) = (&batch, &tools);
                    scope.spawn(move || {
                        let mut s = batch.session().expect("a free lane");
                        text(ask(&mut s, tools, p, ToolChoice::Required, greedy()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("lane thread"))
                .collect()
        });
        let stats = batch.stats();
        assert!(
            stats.lane_steps > stats.decodes,
            "no decode was shared by two lanes: {stats:?}"
        );
        for (p, t) in prompts.iter().zip(&together) {
            assert!(t.starts_with("{\"name\": "), "{p}: not a call: {t:?}");
        }
        differences = prompts
            .iter()
            .zip(&alone)
            .zip(&together)
            // A newline may end a call without a closing marker; whether the model writes
            // it before ending is a near tie that batched logits may round the other way.
            .filter(|((_, a), t)| a.trim_end() != t.trim_end())
            .map(|((p, a), t)| format!("{p}: alone {a:?}, batched {t:?}"))
            .collect();
        if differences.is_empty() {
            return;
        }
        eprintln!(
            "round {round}: batched replies differ:\n{}",
            differences.join("\n")
        );
    }
    panic!(
        "batched replies differ from the replies alone in both rounds:\n{}",
        differences.join("\n")
    );
}

#[test]
fn a_batch_with_every_lane_taken_refuses_another_session_until_one_is_freed() {
    let _g = lock();
    let batch = engine("test").batch(1).expect("batch");
    let first = batch.session().expect("the one lane");
    match batch.session() {
        Err(EngineError::Busy { lanes: 1 }) => {}
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a second session on a one-lane batch"),
    }
    drop(first);
    let mut again = batch.session().expect("the lane is free again");
    let tools = tools();
    let r = ask(
        &mut again,
        &tools,
        "What's the weather in Paris?",
        ToolChoice::Required,
        greedy(),
    );
    assert!(text(r).starts_with("{\"name\": "));
}
