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
    for ((p, a), t) in prompts.iter().zip(&alone).zip(&together) {
        assert!(t.starts_with("{\"name\": "), "{p}: not a call: {t:?}");
        assert_eq!(a, t, "{p}: batched reply differs from the reply alone");
    }
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
