//! Votes: one request answered `k` times at once — on the embedded engine, `k` lanes of one
//! batch — and the answer most of them give returned, its calls compared by canonical
//! equality (the same tools with the same arguments as JSON values, in any order; a reply
//! with no call is one answer, whatever its text).
//!
//! The first ballot decodes as the request asks (greedy by default); the others sample at
//! the request's temperature or [`VOTE_TEMPERATURE`], whichever is higher (ballots at or near
//! greedy decoding — BFCL asks for 0.001 — would agree by construction), each with its own
//! seed. A tie goes to the
//! answer of the earliest ballot, so `k` = 2 is the greedy answer unless both samples agree
//! on another one. The reply carries every ballot's tokens in its usage and the tally in
//! [`Tally`].
//!
//! This module must not decode, parse or validate: each ballot is an ordinary run.

use crate::response::{Call, Response, Tally, Usage};
use crate::{Ready, RunError};

/// The most ballots a request may ask for.
pub const MAX_VOTES: usize = 16;

/// The lowest temperature of the ballots after the first.
pub const VOTE_TEMPERATURE: f32 = 0.7;

/// Cast a checked request's ballots at once, each through `cast` (an ordinary run of the
/// same check: ballots differ only in sampling, not in pool or grammar), and return the
/// answer most of them give.
pub(crate) fn run<F>(cast: F, ready: &Ready) -> Result<Response, RunError>
where
    F: Fn(&Ready) -> Result<Response, RunError> + Sync,
{
    let cast = &cast;
    let k = ready.req.votes;
    let ballots: Vec<Result<Response, RunError>> = std::thread::scope(|scope| {
        let running: Vec<_> = (0..k)
            .map(|i| {
                let ballot = ballot(ready, i);
                scope.spawn(move || cast(&ballot))
            })
            .collect();
        running
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RunError::Stopped("a ballot's thread panicked".into())))
            })
            .collect()
    });
    tally(ballots)
}

/// Ballot `i` of `ready`: the first as asked, the others sampled at [`VOTE_TEMPERATURE`] at
/// least, each with its own seed.
fn ballot(ready: &Ready, i: usize) -> Ready {
    let mut b = ready.clone();
    b.req.votes = 1;
    if i > 0 {
        let sampling = &mut b.req.sampling;
        sampling.temperature = sampling.temperature.max(VOTE_TEMPERATURE);
        let seed = sampling.seed.unwrap_or(0x7001_6a4d);
        sampling.seed = Some(seed.wrapping_add(i as u64));
    }
    b
}

/// Whether two replies give the same answer: the same calls in any order, or no call.
fn same_answer(a: &[Call], b: &[Call]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut used = vec![false; b.len()];
    a.iter().all(|x| {
        let found = b
            .iter()
            .enumerate()
            .position(|(j, y)| !used[j] && x.name == y.name && x.kind == y.kind);
        found.map(|j| used[j] = true).is_some()
    })
}

/// The answer of the most ballots (ties: the earliest ballot's), with every ballot's tokens
/// and the tally; every ballot failed: the first ballot's error with every ballot's tokens
/// ([`RunError::Ballots`]).
fn tally(ballots: Vec<Result<Response, RunError>>) -> Result<Response, RunError> {
    let cast = ballots.len();
    let mut first_error = None;
    let mut answers: Vec<(Response, usize)> = Vec::new();
    let mut usage: Option<Usage> = None;
    for ballot in ballots {
        match ballot {
            Ok(r) => {
                usage = add(usage, r.usage);
                match answers
                    .iter_mut()
                    .find(|(a, _)| same_answer(&a.tool_calls, &r.tool_calls))
                {
                    Some((_, n)) => *n += 1,
                    None => answers.push((r, 1)),
                }
            }
            Err(e) => {
                usage = add(usage, e.usage());
                first_error.get_or_insert(e);
            }
        }
    }
    let Some(best) = (0..answers.len()).max_by_key(|&i| (answers[i].1, usize::MAX - i)) else {
        let first =
            first_error.unwrap_or_else(|| RunError::InvalidRequest("no ballot was cast".into()));
        return Err(RunError::Ballots {
            first: Box::new(first),
            cast,
            usage,
        });
    };
    let failed = cast - answers.iter().map(|(_, n)| n).sum::<usize>();
    let (mut winner, n) = answers.remove(best);
    let mut counts = vec![n];
    counts.extend(answers.iter().map(|(_, n)| n));
    winner.usage = usage;
    winner.votes = Some(Tally {
        cast,
        failed,
        answers: counts,
    });
    Ok(winner)
}

fn add(total: Option<Usage>, u: Option<Usage>) -> Option<Usage> {
    match (total, u) {
        (Some(t), Some(u)) => Some(Usage {
            prompt_tokens: t.prompt_tokens + u.prompt_tokens,
            cached_prompt_tokens: t.cached_prompt_tokens + u.cached_prompt_tokens,
            completion_tokens: t.completion_tokens + u.completion_tokens,
        }),
        (t, u) => t.or(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::CallKind;
    use serde_json::json;

    fn reply(calls: &[(&str, serde_json::Value)]) -> Result<Response, RunError> {
        let mut r = Response::ran(
            toolgram_core::define::request::Path::Grammar,
            "",
            "embedded",
            "hermes",
            "m",
        );
        r.tool_calls = calls
            .iter()
            .map(|(name, args)| Call {
                id: "c".into(),
                name: (*name).to_owned(),
                kind: CallKind::Function {
                    arguments: args.clone(),
                },
            })
            .collect();
        r.usage = Some(Usage {
            prompt_tokens: 10,
            cached_prompt_tokens: 0,
            completion_tokens: 5,
        });
        Ok(r)
    }

    #[test]
    fn the_answer_most_ballots_give_wins_with_calls_compared_as_values_in_any_order() {
        let paris = ("weather", json!({"city": "Paris", "unit": "c"}));
        let paris_reordered = ("weather", json!({"unit": "c", "city": "Paris"}));
        let oslo = ("weather", json!({"city": "Oslo"}));
        let won = tally(vec![
            reply(std::slice::from_ref(&oslo)),
            reply(&[paris.clone(), oslo.clone()]),
            reply(&[oslo.clone(), paris_reordered]),
            Err(RunError::Stopped("gone".into())),
        ])
        .expect("a winner");
        assert_eq!(won.tool_calls.len(), 2, "two ballots of three agree");
        assert_eq!(
            won.votes,
            Some(Tally {
                cast: 4,
                failed: 1,
                answers: vec![2, 1]
            })
        );
        assert_eq!(won.usage.map(|u| u.completion_tokens), Some(15));
    }

    #[test]
    fn a_tie_goes_to_the_first_ballot_and_no_answer_is_the_first_error() {
        let won = tally(vec![reply(&[]), reply(&[("f", json!({}))])]).expect("a winner");
        assert!(won.tool_calls.is_empty(), "the first ballot's answer");
        let failed = tally(vec![
            Err(RunError::Stopped("first".into())),
            Err(RunError::Stopped("second".into())),
        ]);
        let e = failed.expect_err("no answer");
        assert_eq!(e.kind(), "engine_stopped", "the first ballot's kind");
        assert!(e.to_string().contains("first"), "{e}");
    }

    #[test]
    fn when_every_ballot_fails_the_error_carries_every_ballots_tokens() {
        let cut = |completion| {
            Err(RunError::Engine(toolgram_engine::EngineError::Truncated {
                partial: String::new(),
                max_tokens: 8,
                repeated: None,
                usage: Some(Usage {
                    prompt_tokens: 10,
                    cached_prompt_tokens: 2,
                    completion_tokens: completion,
                }),
            }))
        };
        let e = tally(vec![cut(7), cut(8), cut(9)]).expect_err("no answer");
        assert_eq!(e.kind(), "truncated");
        let usage = e.usage().expect("the tokens");
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.cached_prompt_tokens,
                usage.completion_tokens
            ),
            (30, 6, 24)
        );
        assert_eq!(e.details()["ballots"], 3);
        assert_eq!(e.details()["usage"]["completion_tokens"], 24);
    }

    #[test]
    fn the_first_ballot_of_a_greedy_request_is_greedy_and_the_others_sample_with_own_seeds() {
        let tools = toolgram_core::ToolSet::from_json_str("[]").expect("no tools");
        let user = vec![toolgram_core::ChatMessage::text("user", "Hi")];
        let mut ready = Ready::remote(crate::Request::new(user, tools)).expect("a request");
        let sampled = |r: &Ready, i| ballot(r, i).req.sampling;
        assert_eq!(sampled(&ready, 0).temperature, 0.0);
        let (one, two) = (ballot(&ready, 1), ballot(&ready, 2));
        assert_eq!(one.req.sampling.temperature, VOTE_TEMPERATURE);
        assert_ne!(one.req.sampling.seed, two.req.sampling.seed);
        assert_eq!(one.req.votes, 1);
        ready.req.sampling.temperature = 0.001; // BFCL's
        assert_eq!(sampled(&ready, 0).temperature, 0.001);
        assert_eq!(sampled(&ready, 1).temperature, VOTE_TEMPERATURE);
        ready.req.sampling.temperature = 1.0;
        assert_eq!(sampled(&ready, 1).temperature, 1.0);
    }
}
