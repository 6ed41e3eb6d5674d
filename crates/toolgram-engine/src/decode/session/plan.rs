//! The plan's decodes on a session ([`Plan::Calls`]): the unplanned reply chooses call or
//! text, a calling reply is counted, and a count of several decodes it again under the plan;
//! under the default count bias a reply counted at several that repeats a call or runs out of
//! tokens gives way to one call. A plan line of one call or none is taken out of the context
//! once written ([`after_plan_of_one`]). This module must not sample or read a finished reply
//! on its own terms: the decode loop and the readers beside it do.

use super::{Decoded, Decoding, Session, Timings, matcher_err};
use crate::call_bias::CallChoice;
use crate::compiled_call::CompiledCall;
use crate::error::EngineError;
use crate::sample::{Bias, Rng, pick_nucleus};
use crate::session::{Levers, Sampling};
use llama_cpp_2::token::LlamaToken;
use llguidance::Matcher;
use std::time::Instant;
use toolgram_core::ToolCall;
use toolgram_core::compile::PLAN_PREFIX;
use toolgram_core::define::request::Plan;
use toolgram_core::parse;

/// A call bias that leaves the call-starting tokens alone at the choice: the count of a reply
/// already known to call ([`Session::decide_then_plan`]).
const MUST_CALL: f32 = f32::INFINITY;

impl Session<'_> {
    /// [`Plan::Calls`]: the reply is decoded without the plan (`decider`'s grammar), so call
    /// or text is the model's unplanned choice (and the request's `call_bias` acts there); a
    /// reply that calls is then taken out of the context and the plan asked its count (1–9):
    /// one, and the unplanned reply stands under the line `… needed: 1`; more, and the reply
    /// is decoded again under the plan (`planned`), which writes that many calls. Text stays
    /// as it is. The tokens of every decode are counted; the margin is the first decode's.
    pub(super) fn decide_then_plan(
        &mut self,
        d: &Decoding<'_, '_>,
        decider: &CompiledCall,
        planned: Matcher,
        timings: &mut Timings,
    ) -> Result<Decoded, EngineError> {
        let reply_start = self.cached.len();
        let sampling = &d.req.sampling;
        let tools = d.req.tools.tools().len();
        let unplanned = Levers::settled(sampling, tools, Plan::Off);
        let first = self.decode_reply(d, Some(decider.matcher()?), unplanned, timings)?;
        let raw = String::from_utf8_lossy(&self.text);
        let syntax = self.engine.syntax;
        let (_, answer) = parse::split_reasoning(&raw, d.req.shape().think, syntax.reasoning());
        let read = parse::parse_output(answer, syntax, d.req.tools, d.choice);
        if !read.is_ok_and(|r| !r.tool_calls.is_empty()) {
            return Ok(first);
        }
        let margin = self.call_margin;
        let first_repeated = self.repeated_text.clone();
        let called = std::mem::take(&mut self.text);
        let td = Instant::now();
        self.unsee_reply(reply_start, &[])?;
        let counted = Levers {
            plan: Plan::Count,
            call_bias: MUST_CALL,
            count_bias: sampling.count_bias_for(tools, Plan::Calls),
        };
        let count = self.count_of_one(planned.deep_clone(), sampling, counted)?;
        timings.decode_ms += td.elapsed().as_secs_f64() * 1e3;
        self.call_margin = margin;
        let count_margin = self.count_margin;
        let under_plan = match count {
            Count::One(line) => {
                // One call: the unplanned reply stands, under its plan line.
                self.text = format!("{PLAN_PREFIX}1\n").into_bytes();
                self.text.extend_from_slice(&called);
                return Ok((first.0 + line, first.1, first.2));
            }
            // More than one call was counted: the decode under the plan keeps that.
            Count::Several => Levers {
                count_bias: f32::INFINITY,
                ..counted
            },
            Count::Unread => counted,
        };
        self.unsee_reply(reply_start, &[])?;
        let guarded =
            matches!(count, Count::Several) && sampling.counts_up_by_default(tools, Plan::Calls);
        let decoded = self.decode_reply(d, Some(planned), under_plan, timings);
        self.call_margin = margin;
        if guarded && self.gives_way(d, &decoded) {
            // The unplanned reply of one call stands.
            self.count_margin = count_margin;
            self.repeated_text = first_repeated;
            self.text = format!("{PLAN_PREFIX}1\n").into_bytes();
            self.text.extend_from_slice(&called);
            return Ok((first.0 + spent(&decoded, d.budget), first.1, first.2));
        }
        let (n, hit, cut) = decoded?;
        // Unread by the count step, the count was measured by the decode under the plan.
        self.count_margin = count_margin.or(self.count_margin);
        Ok((first.0 + n, hit, cut))
    }

    /// A planned reply under [`ONE_TOOL_COUNT_BIAS`] with no unplanned reply to fall back on
    /// (the request requires a call): decoded under the plan; where it counted several and
    /// [gives way](Self::gives_way), decoded again with one call counted.
    pub(super) fn planned_or_one(
        &mut self,
        d: &Decoding<'_, '_>,
        planned: Matcher,
        timings: &mut Timings,
    ) -> Result<Decoded, EngineError> {
        let reply_start = self.cached.len();
        let again = planned.deep_clone();
        let levers = d.levers();
        let decoded = self.decode_reply(d, Some(planned), levers, timings);
        if !self.counted_several(d) || !self.gives_way(d, &decoded) {
            return decoded;
        }
        let n = spent(&decoded, d.budget);
        let margins = (self.call_margin, self.count_margin);
        self.unsee_reply(reply_start, &[])?;
        let one = Levers {
            count_bias: f32::NEG_INFINITY,
            ..levers
        };
        let (m, hit, cut) = self.decode_reply(d, Some(again), one, timings)?;
        (self.call_margin, self.count_margin) = margins;
        Ok((n + m, hit, cut))
    }

    /// Whether a reply counted at several under the default count bias gives way to one call:
    /// it ran out of tokens (ended by the limit, or cut inside a call), or it makes one call
    /// twice (same tool, same arguments) — calls the count added that are no calls.
    fn gives_way(&self, d: &Decoding<'_, '_>, decoded: &Result<Decoded, EngineError>) -> bool {
        let hit = match decoded {
            Ok((_, hit, _)) => *hit,
            Err(EngineError::Truncated { .. }) => true,
            Err(_) => return false,
        };
        let calls = self.reply_calls(d);
        let repeats = calls.iter().enumerate().any(|(i, a)| {
            calls[..i]
                .iter()
                .any(|b| a.name == b.name && a.arguments == b.arguments)
        });
        if hit || repeats {
            tracing::info!(
                ran_out = hit,
                repeats,
                "the plan counted several calls by the default count bias, and its reply \
                 repeated a call or ran out of tokens: one call stands"
            );
        }
        hit || repeats
    }

    /// Whether the reply just decoded has a plan line counting more than one call.
    fn counted_several(&self, d: &Decoding<'_, '_>) -> bool {
        let raw = String::from_utf8_lossy(&self.text);
        let reasoning = self.engine.syntax.reasoning();
        let (_, answer) = parse::split_reasoning(&raw, d.req.shape().think, reasoning);
        parse::split_plan(answer).0.is_some_and(|line| {
            line.strip_prefix(PLAN_PREFIX.trim_end())
                .and_then(|n| n.trim().parse::<u32>().ok())
                .is_some_and(|n| n > 1)
        })
    }

    /// The calls of the reply just decoded, as far as they read (none where they do not).
    fn reply_calls(&self, d: &Decoding<'_, '_>) -> Vec<ToolCall> {
        let raw = String::from_utf8_lossy(&self.text);
        let syntax = self.engine.syntax;
        let (_, answer) = parse::split_reasoning(&raw, d.req.shape().think, syntax.reasoning());
        let (_, calls) = parse::split_plan(answer);
        parse::parse_output(calls, syntax, d.req.tools, d.choice)
            .map(|r| r.tool_calls)
            .unwrap_or_default()
    }

    /// The plan's count for a reply known to call, read at the plan line's one choice (its
    /// prefix fast-forwarded under `planned`, the count sampled among 1–9 as `s` and `levers`
    /// say).
    fn count_of_one(
        &mut self,
        mut m: Matcher,
        s: &Sampling,
        levers: Levers,
    ) -> Result<Count, EngineError> {
        let engine = self.engine;
        let ff = m.compute_ff_tokens();
        let spelled: Vec<u8> = ff
            .iter()
            .flat_map(|&t| engine.tok.piece(t))
            .copied()
            .collect();
        if spelled != PLAN_PREFIX.as_bytes() {
            return Ok(Count::Unread);
        }
        m.consume_tokens(&ff).map_err(|e| matcher_err(&m, e))?;
        let toks: Vec<LlamaToken> = ff.iter().map(|&t| LlamaToken::new(t as i32)).collect();
        self.decode(&toks, true)?;
        let mask = m.compute_mask().map_err(|e| matcher_err(&m, e))?;
        let mut choice = CallChoice::new(&engine.call_starts, true, MUST_CALL, levers.count_bias);
        choice.at_step(&mask, PLAN_PREFIX.as_bytes(), &mut self.logits);
        self.count_margin = choice.count_margin;
        let bias = Bias::new(&s.logit_bias, engine.tok.pieces.len())?;
        let mut rng = Rng::new(s.seed.unwrap_or(1));
        let sampling = (&bias, s.temperature, s.top_p);
        let token = pick_nucleus(&self.logits, &mask, sampling, &mut rng, &mut self.scratch)
            .ok_or_else(|| EngineError::Constraint("the grammar allows no count here".into()))?;
        // As `CallStarts` sorts them: a count token is read by its first byte.
        Ok(if engine.tok.piece(token).first() == Some(&b'1') {
            Count::One(ff.len() + 1)
        } else {
            Count::Several
        })
    }
}

/// The tokens a decode spent: its count, where it was cut the tokens it had made (the text
/// guard can cut before the limit), or all of `budget` where it failed otherwise.
fn spent(decoded: &Result<Decoded, EngineError>, budget: usize) -> usize {
    match decoded {
        Ok(d) => d.0,
        Err(EngineError::Truncated { max_tokens, .. }) => *max_tokens,
        Err(_) => budget,
    }
}

/// What [`Session::count_of_one`] read of a calling reply's plan.
enum Count {
    /// One call: the line's tokens.
    One(usize),
    /// More than one.
    Several,
    /// Not read alone: the grammar does not open with the line (a think block first), so the
    /// plan decodes whole.
    Unread,
}
