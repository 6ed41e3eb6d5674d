//! What every front end asks of the run stage: one [`Request`] — conversation, tool pool,
//! the call shape (choice, parallel, mode, think, bound, plan), sampling, retry policy, and an optional `response_format` for structured
//! output without tools. Plain data: this module must not read files or run anything.

use crate::response::FilteredTool;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use toolgram_core::define::request::CallShape;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::Sampling;
pub use toolgram_retry::RetryPolicy;

/// One request to a [`crate::Runtime`].
#[derive(Debug, Clone)]
pub struct Request {
    /// The conversation so far (system, user, assistant with `tool_calls`, tool results).
    pub messages: Vec<ChatMessage>,
    /// The tool pool: function tools and grammar (custom) tools (shared: a checked pool
    /// holds compiled validators).
    pub tools: Arc<ToolSet>,
    /// What its call grammar is compiled for: which calls may or must be made (`auto`,
    /// `none`, `required`, a name, `allowed_tools`), whether several, how much the grammar
    /// enforces (grammar, json, prompt), the `<think>` block, the bound on calls and the plan.
    /// Its `answer` is the check's to fill, from `response_format`.
    pub shape: CallShape,
    /// Prompt mode's instructions (what the tool choice demands, an example call for each of the first three tools)
    /// in the system prompt in grammar and json modes too — the same prompt as prompt mode
    /// with the constraint on. Embedded engine only; prompt mode always has them.
    pub few_shot: bool,
    /// Sampling: the engine's settings, as OpenAI names them where it has a name
    /// (`max_tokens`, `temperature`, `top_p`, `seed`, `stop`, `logit_bias`), and the biases
    /// (`call_bias`, `count_bias`); a provider is sent what it can take
    /// ([`crate::Runtime::render`]).
    pub sampling: Sampling,
    /// Ballots: answer the request this many times at once and return the answer most of
    /// them give (1: one run; at most [`crate::votes::MAX_VOTES`]; docs/eval.md, "Votes").
    pub votes: usize,
    /// How often a reply that fails validation is sent back with its errors.
    pub retry: RetryPolicy,
    /// A reply repeating an earlier call with the same arguments is an error
    /// ([`crate::RunError::RepeatedCall`]) instead of only being reported.
    pub refuse_repeats: bool,
    /// What a call identical to one already made in the conversation gets.
    pub repeats: Repeats,
    /// Refuse tools (or a `response_format`) whose schemas use a keyword toolgram does not
    /// know: [`crate::check`] refuses such tools before a run (as `serve` and `call` do), a
    /// run refuses such a `response_format`. Without it (the default) such keywords are
    /// annotations, as JSON Schema says: accepted, never enforced, and listed in the reply's
    /// `warnings`.
    pub strict_schemas: bool,
    /// Structured output: the reply's text must match this format. Without tools the reply
    /// is that text; beside tools it is calls or an answer in the format (a JSON one), as
    /// `tool_choice` allows: `auto` either, `required` or a named tool calls, `none` the
    /// answer.
    pub response_format: Option<ResponseFormat>,
    /// Call syntax for a provider's grammar and prompt paths (default `hermes`); the
    /// embedded engine speaks its model's own syntax.
    pub syntax: Option<String>,
    /// Return a planned reply's plan line (`Number of tool calls needed: 2`) as reasoning: for
    /// a client that asked for reasoning or for the plan. Otherwise the line is dropped: a
    /// plan on by default is the server's way to a right count, not text the client asked for.
    pub show_plan: bool,
    /// Tools the front end left out before the pool was built (hosted tools it cannot run),
    /// each with why; the reply lists them first under `filtered_out`.
    pub not_offered: Vec<FilteredTool>,
    /// Set it to stop the run: a queued request is dropped, a running one stops decoding
    /// (the error is `cancelled`).
    pub cancel: Cancel,
}

/// What a call identical (tool and arguments) to one already made in the conversation gets:
/// an agent that calls the same tool with the same arguments after each result never ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Repeats {
    /// Made, not reported.
    Allow,
    /// Made, and listed under `repeated_calls`.
    #[default]
    List,
    /// Under `tool_choice: auto`, left out of the reply (embedded engine) where it repeats a
    /// call made since the user's last message or one of the latest turn of calls (a call of
    /// an earlier user turn, with calls since, may be made again: they may have moved the
    /// state it reads): the other calls stay, and a reply of repeats only is asked again with
    /// calls excluded by the grammar, so the model answers in text; listed under
    /// `excluded_repeats`. A tool marked `"x-toolgram": {"repeatable": true}` (polling,
    /// status) is exempt. Inside one reply, a call that repeats an earlier call of the reply
    /// or only counts on from it (numbers the conversation never gave) ends the reply and is
    /// cut, listed under `cut_call`.
    Forbid,
}

impl Repeats {
    /// Read `allow`, `list` or `forbid`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "allow" => Some(Self::Allow),
            "list" => Some(Self::List),
            "forbid" => Some(Self::Forbid),
            _ => None,
        }
    }

    /// Whether `req`'s reply may lose calls to this policy: it forbids repeats, the choice is
    /// `auto`, and the conversation already holds calls.
    pub(crate) fn may_exclude(req: &Request) -> bool {
        req.repeats == Self::Forbid
            && req.shape.choice == ToolChoice::Auto
            && req.messages.iter().any(|m| m.tool_calls.is_some())
    }
}

/// A flag shared between a request and whoever may cancel it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Stop the run.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl Request {
    /// Whether the reply is free generation under the `response_format` alone (no tools).
    pub(crate) fn format_only(&self) -> bool {
        self.response_format.is_some() && self.tools.is_empty()
    }

    /// A request with every option at its default: `auto`, one call at most, grammar mode,
    /// no thinking, greedy, 3 attempts.
    pub fn new(messages: Vec<ChatMessage>, tools: ToolSet) -> Self {
        Self {
            messages,
            tools: Arc::new(tools),
            shape: CallShape::default(),
            few_shot: false,
            sampling: Sampling::default(),
            votes: 1,
            retry: RetryPolicy::default(),
            refuse_repeats: false,
            strict_schemas: false,
            repeats: Repeats::List,
            response_format: None,
            syntax: None,
            show_plan: false,
            not_offered: Vec::new(),
            cancel: Cancel::default(),
        }
    }
}

/// The shape a tool-less reply must have.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    /// Any JSON object.
    JsonObject,
    /// JSON matching this schema (OpenAI's `json_schema`; `strict` or not, the schema is
    /// enforced while decoding, and keywords the grammar cannot say are checked after).
    JsonSchema(Value),
    /// Text matching this Lark grammar (llguidance dialect).
    Lark(String),
}
