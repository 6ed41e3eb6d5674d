//! The one reply of the run stage, the same on every path (embedded engine, provider):
//! [`Response`], and its JSON form — an OpenAI assistant message plus a `toolgram` object
//! with the same field names and shapes whichever path ran. This module must not decide
//! anything; it only holds and prints what the run produced.

use serde_json::{Value, json};
use std::sync::Arc;
use toolgram_core::define::arguments::DeferredKeyword;
use toolgram_core::define::request::Path;
use toolgram_core::parse::lenient::LenientOutput;
use toolgram_core::validate::RepeatedCall;
use toolgram_engine::gpu::Offload;
pub use toolgram_engine::{CutCall, FinishReason, RepeatedText, TruncatedCall};
pub use toolgram_retry::{FailedAttempt, Usage};
pub use toolgram_wire::{Call, CallKind};
use toolgram_wire::{Reply, chat};

/// The assistant message for text read leniently (`toolgram parse`), shaped like a run's: a
/// call without an id gets `call_N`; a call cut off keeps its partial arguments text and says
/// `partial`; repairs made are listed under `toolgram.repairs`.
pub fn lenient_message(out: &LenientOutput) -> Value {
    let calls: Vec<Value> = out
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = match c.id.as_str() {
                "" => format!("call_{i}"),
                id => id.to_owned(),
            };
            let arguments = match &c.partial_arguments {
                Some(text) => text.clone(),
                None => c.arguments.to_string(),
            };
            let mut v = chat::reply::function_call(&id, &c.name, arguments);
            if c.partial {
                v["partial"] = json!(true);
            }
            v
        })
        .collect();
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let (content, reasoning) = (text(&out.content), text(&out.reasoning_content));
    let mut msg = chat::reply::assistant_message(content.as_deref(), reasoning.as_deref(), calls);
    if !out.repairs.is_empty() {
        msg["toolgram"] = json!({"path": "lenient", "repairs": out.repairs});
    }
    msg
}

/// A tool the request named that the model was not offered, and why: an escape-hatch tool
/// none of whose trigger words was said, or a tool a front end could not honour (a hosted
/// tool such as `web_search` that this server cannot run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilteredTool {
    /// The tool's name (or its type, for hosted tools without a name).
    pub tool: String,
    /// Why it was left out.
    pub reason: String,
}

impl FilteredTool {
    /// `tool` left out for `reason`.
    pub fn new(tool: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            reason: reason.into(),
        }
    }
}

/// How long the run took.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunTimings {
    /// Wall clock of the whole run, all attempts, queueing excluded.
    pub total_ms: f64,
    /// Time the request waited in the queue before it ran (embedded path).
    pub queue_ms: f64,
    /// Grammar compile and matcher of the last attempt (embedded path).
    pub grammar_ms: f64,
    /// Prompt evaluation of the last attempt (embedded path).
    pub prompt_ms: f64,
    /// Generation of the last attempt (embedded path).
    pub generate_ms: f64,
    /// Prompt tokens the last attempt evaluated (the rest came from the KV cache).
    pub prompt_evaluated: usize,
}

/// Which branch a reply took where a response format came beside the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// Calls (`tool_choice` allowed or required them); the format is for the answer after
    /// their results.
    Calls,
    /// No calls: the text is the answer, in the format.
    Answer,
}

impl Branch {
    /// As the reply's `toolgram.response_format_branch` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Calls => "calls",
            Self::Answer => "answer",
        }
    }
}

/// The reply, whichever path produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// Text before or instead of calls.
    pub content: Option<String>,
    /// What the model wrote in the accepted attempt, as generated.
    pub raw: String,
    /// The reasoning block.
    pub reasoning: Option<String>,
    /// Validated calls.
    pub tool_calls: Vec<Call>,
    /// Why the reply ended.
    pub finish_reason: FinishReason,
    /// Tokens over all attempts (`None` when a provider reports none).
    pub usage: Option<Usage>,
    /// The path that ran (`grammar`, `json`, `strict_json`, `prompt`).
    pub path: Path,
    /// Why that path.
    pub path_reason: String,
    /// Where it ran: `embedded` or the provider's kind.
    pub provider: String,
    /// The call syntax of the grammar and prompt paths.
    pub syntax: String,
    /// The model (file name, or the provider's model id).
    pub model: String,
    /// Attempts made, the successful one included.
    pub attempts: usize,
    /// The attempts that failed validation, with their errors and raw text.
    pub failed_attempts: Vec<FailedAttempt>,
    /// Calls repeating an earlier call with the same arguments.
    pub repeated_calls: Vec<RepeatedCall>,
    /// Calls repeating one already made in the conversation, left out under
    /// [`crate::Repeats::Forbid`].
    pub excluded_repeats: Vec<RepeatedCall>,
    /// Tools left out of the pool for this request, each with why.
    pub filtered_out: Vec<FilteredTool>,
    /// Schema keywords the grammar could not say, checked after parsing instead.
    pub enforced_after_parse: Vec<DeferredKeyword>,
    /// Unknown schema keywords accepted as annotations (never enforced): one line each with
    /// the tool and the JSON pointer.
    pub warnings: Vec<String>,
    /// Which branch the reply took where a response format came beside the tools (`None`
    /// otherwise).
    pub format_branch: Option<Branch>,
    /// The call `max_tokens` cut after the complete ones (`finish_reason` is `length`).
    pub truncated_call: Option<TruncatedCall>,
    /// The runaway call the loop guard cut from a reply that may hold several calls, under
    /// [`crate::Repeats::Forbid`] (`finish_reason` stays `tool_calls`).
    pub cut_call: Option<CutCall>,
    /// What the embedded model repeated verbatim until decoding stopped it
    /// (`toolgram.repeated_text`): free text (`finish_reason` `stop`, the text as written), or
    /// a call cut as at the token limit (`length`, the cut call under `truncated_call`).
    pub repeated_text: Option<RepeatedText>,
    /// The model's lean at the reply's call-or-text choice, in logits, before `call_bias`:
    /// the best call-opening token's logit less the best other allowed token's (> 0: it would
    /// call). `None` where the reply had no such choice (a call required, none allowed, a
    /// provider).
    pub call_margin: Option<f32>,
    /// The plan's lean at its count, in logits, before `count_bias`: the best count of more
    /// than one call less the logit of one (> 0: several calls). `None` where no plan counted.
    pub count_margin: Option<f32>,
    /// How the votes went, when the request asked for several ballots.
    pub votes: Option<Tally>,
    /// A call the first reply hid in its text, decoded again as a call to that tool.
    pub hidden_call: Option<HiddenCallNote>,
    /// The calls a tool loop ran on MCP servers before this reply, in order
    /// ([`crate::Runtime::run_tool_loop`]); empty outside one.
    pub steps: Vec<ToolStep>,
    /// Calls to a tool loop's MCP tools it did not run (`toolgram.pending_calls`): waiting for
    /// the client's approval, past `max_steps`, or beside a call to the request's own tools.
    /// Never among `tool_calls`, which are the client's to run.
    pub pending: Vec<PendingCall>,
    /// The messages a tool loop added to the conversation before this reply (each reply
    /// whose calls it ran, each result, each answer to an approval), so a stored
    /// conversation goes on from where it ended; empty outside one.
    pub loop_messages: Vec<toolgram_core::ChatMessage>,
    /// Measurements.
    pub timings: RunTimings,
    /// Where the embedded model's layers are (`None` for a provider): in `toolgram.timings`.
    pub offload: Option<Arc<Offload>>,
}

/// A call a reply hid in its text (`toolgram.hidden_call`): the tool and how the text wrote
/// it; the reply was decoded again with a call to that tool required.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenCallNote {
    /// The offered tool the text called.
    pub tool: String,
    /// How the text wrote the call.
    pub form: &'static str,
}

/// One call a tool loop ran on an MCP server (`toolgram.steps`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    /// The call's id (as the model's reply gave it).
    pub id: String,
    /// The server that listed the tool, as declared.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// What the model was shown.
    pub result: String,
    /// The server said it failed (`isError`), or its output broke its `outputSchema`.
    pub is_error: bool,
    /// It ran once the client approved it (an approval request's call).
    pub approved: bool,
    /// How long the server took.
    pub ms: f64,
}

/// A call to an MCP tool a loop did not run (`toolgram.pending_calls`), with its server.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    /// The server that lists the tool, as declared.
    pub server: String,
    /// The call.
    pub call: Call,
}

/// How a reply's votes went (`votes`: the ballots it was the majority of).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Ballots cast.
    pub cast: usize,
    /// Ballots that failed (an error, not an answer).
    pub failed: usize,
    /// Ballots per distinct answer, the winner's first, then in order of first appearance.
    pub answers: Vec<usize>,
}

impl Response {
    /// A reply that says only where it ran — the path and why, the provider (`embedded` or
    /// the provider's kind), the call syntax and the model — with no text, no calls and no
    /// usage, finished by `stop` after one attempt; a run fills in what it has.
    pub fn ran(
        path: Path,
        path_reason: impl Into<String>,
        provider: impl Into<String>,
        syntax: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            content: None,
            raw: String::new(),
            reasoning: None,
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: None,
            path,
            path_reason: path_reason.into(),
            provider: provider.into(),
            syntax: syntax.into(),
            model: model.into(),
            attempts: 1,
            failed_attempts: Vec::new(),
            repeated_calls: Vec::new(),
            excluded_repeats: Vec::new(),
            filtered_out: Vec::new(),
            enforced_after_parse: Vec::new(),
            warnings: Vec::new(),
            format_branch: None,
            truncated_call: None,
            cut_call: None,
            repeated_text: None,
            call_margin: None,
            count_margin: None,
            votes: None,
            hidden_call: None,
            steps: Vec::new(),
            pending: Vec::new(),
            loop_messages: Vec::new(),
            timings: RunTimings::default(),
            offload: None,
        }
    }

    /// The reply as every API's writer reads it: text, reasoning, calls, finish reason and
    /// usage.
    pub fn reply(&self) -> Reply<'_> {
        Reply {
            reasoning: self.reasoning.as_deref(),
            content: self.content.as_deref(),
            calls: &self.tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }

    /// The OpenAI assistant message (toolgram-wire's one builder of it): `toolgram call`
    /// prints it ([`Self::to_json`]) and the server's chat completions carry it.
    pub fn openai_message(&self) -> Value {
        chat::reply::message(&self.reply())
    }

    /// The OpenAI assistant message with `finish_reason`, `usage` and the `toolgram` object:
    /// what `toolgram call` prints.
    pub fn to_json(&self) -> Value {
        let mut msg = self.openai_message();
        msg["finish_reason"] = json!(self.finish_reason.as_str());
        msg["usage"] = self.usage.map_or(Value::Null, chat::reply::usage);
        msg["toolgram"] = self.toolgram_json();
        msg
    }

    /// The `toolgram` object alone.
    pub fn toolgram_json(&self) -> Value {
        let t = &self.timings;
        let mut object = json!({
            "path": self.path.name(),
            "path_reason": self.path_reason,
            "provider": self.provider,
            "syntax": self.syntax,
            "model": self.model,
            "attempts": self.attempts,
            "failed_attempts": failed_json(&self.failed_attempts),
            "repeated_calls": repeats_json(&self.repeated_calls),
            "excluded_repeats": repeats_json(&self.excluded_repeats),
            "filtered_out": self.filtered_out.iter()
                .map(|f| json!({"tool": f.tool, "reason": f.reason}))
                .collect::<Vec<_>>(),
            "truncated_call": self.truncated_call.as_ref()
                .map(|c| json!({"name": c.name, "partial": c.partial})),
            "cut_call": self.cut_call.as_ref()
                .map(|c| json!({"name": c.name, "arguments": c.arguments, "reason": c.reason})),
            "repeated_text": self.repeated_text.as_ref()
                .map(|r| json!({"span": r.span, "copies": r.copies,
                    "action": repeated_action(self.truncated_call.is_some())})),
            "enforced_after_parse": self.enforced_after_parse.iter()
                .map(|d| json!({"tool": d.tool, "pointer": d.pointer, "keyword": d.keyword}))
                .collect::<Vec<_>>(),
            "warnings": self.warnings,
            "response_format_branch": self.format_branch.map(Branch::as_str),
            "call_margin": self.call_margin.map(|m| (f64::from(m) * 1000.0).round() / 1000.0),
            "count_margin": self.count_margin.map(|m| (f64::from(m) * 1000.0).round() / 1000.0),
            "votes": self.votes.as_ref().map(|v| json!({"cast": v.cast, "failed": v.failed,
                "answers": v.answers})),
            "hidden_call": self.hidden_call.as_ref().map(|h| json!({"tool": h.tool,
                "form": h.form, "action": "decoded again with a call to this tool required"})),
            "timings": {"queue_ms": round(t.queue_ms), "total_ms": round(t.total_ms),
                "grammar_ms": round(t.grammar_ms),
                "prompt_ms": round(t.prompt_ms),
                "generate_ms": round(t.generate_ms), "prompt_evaluated": t.prompt_evaluated,
                "offload": self.offload.as_ref().map(|o| o.to_json())},
        });
        if !self.pending.is_empty() {
            object["pending_calls"] = self
                .pending
                .iter()
                .map(|p| {
                    let mut v = chat::reply::call(&p.call);
                    v["server"] = json!(p.server);
                    v
                })
                .collect();
        }
        if !self.steps.is_empty() {
            object["steps"] = self
                .steps
                .iter()
                .map(|s| {
                    json!({"id": s.id, "server": s.server, "tool": s.tool, "arguments": s.arguments,
                        "result": s.result, "is_error": s.is_error, "approved": s.approved,
                        "ms": round(s.ms)})
                })
                .collect();
        }
        object
    }
}

/// What the text guard did to a reply that repeated itself: stopped its text, or cut the call
/// in progress as its token limit would have (`cut_call`: the reply keeps its complete calls
/// and reports the cut one in `truncated_call`).
pub(crate) fn repeated_action(cut_call: bool) -> &'static str {
    if cut_call {
        "cut as at the token limit; the call in progress is left out (truncated_call)"
    } else {
        "decoding stopped; the text is kept as written"
    }
}

/// The warning a reply carries when the text guard ended it.
pub(crate) fn repeated_warning(r: &RepeatedText, cut_call: bool) -> String {
    let what = if cut_call {
        "a call repeated itself verbatim"
    } else {
        "the reply's text repeated itself verbatim"
    };
    format!(
        "{what} ({} copies in a row of a span of {} bytes): {}",
        r.copies,
        r.span.len(),
        repeated_action(cut_call)
    )
}

fn repeats_json(repeats: &[RepeatedCall]) -> Value {
    repeats
        .iter()
        .map(|r| json!({"index": r.index, "tool": r.tool, "first_seen": r.first_seen}))
        .collect()
}

fn round(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// Failed attempts as `[{"attempt","errors","raw"}]`.
pub fn failed_json(failed: &[FailedAttempt]) -> Value {
    failed
        .iter()
        .map(|f| json!({"attempt": f.attempt, "errors": f.errors, "raw": f.raw}))
        .collect()
}
