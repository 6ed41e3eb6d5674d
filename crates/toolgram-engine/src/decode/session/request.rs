//! What a session is asked and answers: one call request, its reply with its measurements,
//! a call the token limit cut, and the observer that sees each decode step. Types only: this
//! module must not decode.

use super::sampling::Sampling;
use crate::compiled_call::{CallShape, CompiledCall};
use crate::loop_guard::CutCall;
use crate::text_guard::RepeatedText;
use toolgram_core::define::reply::FinishReason;
use toolgram_core::define::request::Mode;
use toolgram_core::{ChatMessage, ToolCall, ToolSet};

/// The call grammar of a request: compiled before it reached the session, or its shape to
/// compile on the lane. Either way the shape is carried whole, never re-derived: a caller that
/// changes what is compiled (another tool choice) hands the new shape, not the old grammar.
#[derive(Clone)]
pub enum CallGrammar<'a> {
    /// Compiled for the request's pool ([`crate::Grammars::compile_call`]); its shape is the
    /// request's.
    Compiled(&'a CompiledCall),
    /// Compiled on the lane for the pool (or, unconstrained, only read as a plan).
    Shape(CallShape),
}

impl CallGrammar<'_> {
    /// What the grammar is compiled for.
    pub fn shape(&self) -> &CallShape {
        match self {
            Self::Compiled(c) => c.shape(),
            Self::Shape(s) => s,
        }
    }
}

/// One call request.
#[derive(Clone)]
pub struct CallRequest<'a> {
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    /// The tool pool.
    pub tools: &'a ToolSet,
    /// Its call grammar, compiled or to compile; its shape says which calls, how many, the
    /// mode, think, plan and answer format.
    pub grammar: CallGrammar<'a>,
    /// Write prompt mode's instructions (what the tool choice demands and an example call for each
    /// of the first three tools, in the model's syntax) into the system prompt in grammar and json modes too;
    /// prompt mode always has them. Same prompt, constraint on or off: an A/B of the grammar
    /// alone (`toolgram eval bfcl --mode grammar`).
    pub few_shot: bool,
    /// Sampling settings.
    pub sampling: Sampling,
}

impl<'a> CallRequest<'a> {
    /// `messages` and `tools` under a grammar of `shape` compiled on the lane, default
    /// sampling, no few-shot block.
    pub fn new(messages: &'a [ChatMessage], tools: &'a ToolSet, shape: CallShape) -> Self {
        Self {
            messages,
            tools,
            grammar: CallGrammar::Shape(shape),
            few_shot: false,
            sampling: Sampling::default(),
        }
    }

    /// What its call grammar is compiled for.
    pub fn shape(&self) -> &CallShape {
        self.grammar.shape()
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
    /// What the reply repeated verbatim until decoding stopped it (see
    /// [`Sampling::stop_repeated_text`]): free text (`finish_reason` then `stop`), or a call
    /// cut as at the token limit (`length`, the cut call under `truncated_call`).
    pub repeated_text: Option<RepeatedText>,
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
