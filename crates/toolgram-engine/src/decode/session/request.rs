//! What a session is asked and answers: one call request, its reply with its measurements,
//! a call the token limit cut, and the observer that sees each decode step. Types only: this
//! module must not decode.

use super::sampling::Sampling;
use crate::compiled_call::{CallShape, CompiledCall};
use crate::loop_guard::CutCall;
use toolgram_core::define::reply::FinishReason;
use toolgram_core::define::request::{Mode, Think};
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};

/// One call request.
#[derive(Clone)]
pub struct CallRequest<'a> {
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    /// The tool pool.
    pub tools: &'a ToolSet,
    /// Which calls may or must be made.
    pub choice: ToolChoice,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// How much of the call the grammar enforces.
    pub mode: Mode,
    /// Whether a `<think>` block may or must open the reply.
    pub think: Think,
    /// Write prompt mode's instructions (what the tool choice demands and an example call for each
    /// of the first three tools, in the model's syntax) into the system prompt in grammar and json modes too;
    /// prompt mode always has them. Same prompt, constraint on or off: an A/B of the grammar
    /// alone (`toolgram eval bfcl --mode grammar`).
    pub few_shot: bool,
    /// Sampling settings.
    pub sampling: Sampling,
    /// The JSON Schema a reply without calls must match ([`CallShape::answer`]).
    pub answer: Option<serde_json::Value>,
    /// The call grammar already compiled for this request ([`crate::Grammars::compile_call`]):
    /// used when its shape is this request's (the pool must be `tools`); `None`, or another
    /// shape, compiles it here.
    pub compiled: Option<&'a CompiledCall>,
}

impl CallRequest<'_> {
    /// What its call grammar is compiled for.
    pub fn shape(&self) -> CallShape {
        CallShape {
            choice: self.choice.clone(),
            parallel: self.parallel,
            mode: self.mode,
            think: self.think,
            max_calls: self.sampling.max_calls,
            plan: self.sampling.plan,
            answer: self.answer.clone(),
        }
    }
}

/// Measurements of one call.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// Compiling the request's grammar and building its matcher; for a grammar compiled
    /// before the request reached the session, a copy of its matcher.
    pub grammar_ms: f64,
    /// Prompt tokens actually evaluated (the rest came from the KV cache).
    pub prompt_evaluated: usize,
    /// Time to evaluate them.
    pub prompt_ms: f64,
    /// Rendering the prompt and tokenizing it (with the probe that finds its reusable prefix).
    pub template_ms: f64,
    /// Time spent generating (masks, sampling, decoding).
    pub generate_ms: f64,
    /// The part of `generate_ms` spent handing steps to the batch and waiting for their
    /// logits: llama.cpp's decode, and on a shared batch the wait for the other lanes.
    pub decode_ms: f64,
    /// Mask computation time of each sampled step, in µs.
    pub mask_us: Vec<u32>,
    /// Tokens appended by fast-forward without sampling.
    pub forced_tokens: usize,
}

/// The reply: text and calls, ready to print as an OpenAI assistant message.
#[derive(Debug, Clone)]
pub struct CallResponse {
    /// The reasoning block's text, when thinking was on and the model wrote one.
    pub reasoning_content: Option<String>,
    /// A planned reply's plan line (`Number of tool calls needed: 2`): the model's own account
    /// of what it will do, not the answer; the run stage shows it as reasoning to a client
    /// that asked for reasoning or for the plan.
    pub plan: Option<String>,
    /// Text before (or instead of) the calls.
    pub content: Option<String>,
    /// Parsed, validated calls.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation ended.
    pub finish_reason: FinishReason,
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Generated tokens (sampled and forced).
    pub completion_tokens: usize,
    /// The raw generated text.
    pub raw: String,
    /// Measurements.
    pub timings: Timings,
    /// The constraint mode that produced the reply (the path taken).
    pub mode: Mode,
    /// Schema keywords the grammar left to the post-parse validator.
    pub deferred: Vec<toolgram_core::define::arguments::DeferredKeyword>,
    /// Unknown schema keywords left out of the grammar as annotations (refusing them is the
    /// run stage's check).
    pub ignored: Vec<toolgram_core::define::arguments::DeferredKeyword>,
    /// The call the token limit cut, when calls before it were complete.
    pub truncated_call: Option<TruncatedCall>,
    /// The runaway call the loop guard cut (see [`Sampling::cut_runaways`]).
    pub cut_call: Option<CutCall>,
    /// The model's lean at the reply's call-or-text choice, before [`Sampling::call_bias`]:
    /// the best call-opening token's logit less the best other allowed token's (> 0: it would
    /// call); `None` where the reply had no such choice.
    pub call_margin: Option<f32>,
    /// The plan's lean at its count, before [`Sampling::count_bias`]: the best count of more
    /// than one call less the logit of one (> 0: several calls); `None` where no plan counted.
    pub count_margin: Option<f32>,
}

/// A call the token limit cut: what of it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedCall {
    /// The tool's name (empty when the cut came before the name was whole).
    pub name: String,
    /// The arguments as written so far (the generated text, when no name was read).
    pub partial: String,
}

/// Sees the bytes of each decode step as they are generated (for streaming).
pub trait DecodeObserver {
    /// A new generation starts (each attempt of a retried call starts one).
    fn started(&mut self);
    /// The bytes one step appended (a sampled token and the tokens forced after it); a
    /// multi-byte character may be split across steps.
    fn piece(&mut self, bytes: &[u8]);
    /// Whether to stop now ([`crate::EngineError::Cancelled`]); asked before every step and
    /// between prompt batches.
    fn cancelled(&self) -> bool {
        false
    }
}
