//! One request on one session: tool calls under the retry loop (the engine as a
//! `CallModel`), with repeats of the conversation's calls left out under
//! [`Repeats::Forbid`] (beside a `response_format`, the call grammar's text branch is the
//! answer in that format, checked here) and a reply that hides a call in its text decoded
//! again with that call required, or free generation under a `response_format` alone;
//! the result as the run stage's [`Response`]. This module must not queue, cache or stream:
//! its callers do.

use crate::check::ReadyFormat;
use crate::error::RunError;
use crate::format::{Prepared, check_output, warning_texts};
use crate::post::{self, typed_calls};
use crate::request::{Repeats, Request};
use crate::response::{Branch, FinishReason, Response, RunTimings, Usage};
use toolgram_core::define::request::{Mode, Path};
use toolgram_core::validate::{self, RepeatedCall};
use toolgram_core::{ChatMessage, ToolChoice};
use toolgram_engine::{
    CallGrammar, CallRequest, CallResponse, CallShape, CompiledCall, EngineModel, GenerateRequest,
    Sampling, Session, Timings,
};
use toolgram_retry::Outcome;

/// The request's sampling, its runaway calls cut where it forbids repeats.
fn sampling(req: &Request) -> Sampling {
    Sampling {
        cut_runaways: req.sampling.cut_runaways || req.repeats == Repeats::Forbid,
        ..req.sampling.clone()
    }
}

fn timings(t: &Timings) -> RunTimings {
    RunTimings {
        total_ms: 0.0,
        queue_ms: 0.0,
        grammar_ms: t.grammar_ms,
        prompt_ms: t.prompt_ms,
        generate_ms: t.generate_ms,
        prompt_evaluated: t.prompt_evaluated,
    }
}

fn path_reason(mode: Mode) -> &'static str {
    match mode {
        Mode::Grammar => {
            "embedded engine: the call and its argument schema are enforced while decoding"
        }
        Mode::Json => {
            "embedded engine: the call shape and tool name are enforced while decoding; the schema is checked after parsing"
        }
        Mode::Prompt => {
            "embedded engine: nothing is enforced while decoding; the reply is read leniently and validated"
        }
    }
}

/// Run `req` on `session`, its calls under `compiled` (the request's call grammar, compiled
/// by its check; every request with tools has one), its response format as `format` (prepared
/// by its check, and compiled there when it stands alone).
pub(crate) fn run(
    session: &mut Session<'_>,
    req: &Request,
    compiled: Option<&CompiledCall>,
    format: Option<&ReadyFormat>,
) -> Result<Response, RunError> {
    if !req.format_only() {
        let compiled = compiled.ok_or_else(|| {
            RunError::Stopped("a request with tools reached its lane without its grammar".into())
        })?;
        return call(session, req, compiled, format.map(|f| &f.prepared));
    }
    if req.few_shot {
        return Err(RunError::InvalidRequest(
            "`few_shot` shows example calls; a `response_format` reply without tools makes none"
                .into(),
        ));
    }
    let format = format.ok_or_else(|| {
        RunError::Stopped("a response format reached its lane without its grammar".into())
    })?;
    generate(session, req, format)
}

fn call(
    session: &mut Session<'_>,
    req: &Request,
    compiled: &CompiledCall,
    answer: Option<&Prepared>,
) -> Result<Response, RunError> {
    let engine = session.engine();
    let request = CallRequest {
        messages: &[],
        tools: &req.tools,
        grammar: CallGrammar::Compiled(compiled),
        few_shot: req.few_shot,
        sampling: sampling(req),
    };
    let mut model = EngineModel::new(session, request);
    let mut outcome = toolgram_retry::run(
        &mut model,
        &req.tools,
        &req.shape.choice,
        &req.messages,
        req.retry,
    )?;
    let excluded = post::excluded_repeats(req, &outcome.reply.tool_calls);
    if !excluded.is_empty() {
        let repeated: Vec<usize> = excluded.iter().map(|r| r.index).collect();
        let mut index = 0;
        outcome.reply.tool_calls.retain(|_| {
            index += 1;
            !repeated.contains(&(index - 1))
        });
        if outcome.reply.tool_calls.is_empty() {
            // Only repeats: ask again with every call excluded by the grammar, told why, so
            // the model answers from the results it already has (left alone, a small model
            // writes the same call again as text).
            let mut text_only = req.clone();
            text_only.shape.choice = ToolChoice::None;
            text_only
                .messages
                .push(ChatMessage::text("user", repeat_note(&excluded)));
            model.request.grammar = another_choice(&model, ToolChoice::None);
            let again = toolgram_retry::run(
                &mut model,
                &text_only.tools,
                &text_only.shape.choice,
                &text_only.messages,
                text_only.retry,
            )?;
            outcome = merged(outcome, again);
        }
    }
    let replied_with_text = excluded.is_empty() || !outcome.reply.tool_calls.is_empty();
    let hidden = post::hidden_call(
        req,
        outcome.reply.content.as_deref(),
        !outcome.reply.tool_calls.is_empty(),
    )
    .filter(|_| replied_with_text);
    let (outcome, hidden) = match hidden {
        Some(h) => unhide(&mut model, req, outcome, h)?,
        None => (outcome, None),
    };
    let last: CallResponse = model
        .last
        .take()
        .ok_or_else(|| RunError::Stopped("no attempt was recorded".into()))?;
    let finish_reason = match last.finish_reason {
        FinishReason::ToolCalls if outcome.reply.tool_calls.is_empty() => FinishReason::Stop,
        other => other,
    };
    let mut warnings = warning_texts(&last.ignored);
    if let Some(r) = &last.repeated_text {
        let cut_call = last.truncated_call.is_some();
        warnings.push(crate::response::repeated_warning(r, cut_call));
    }
    let answered = outcome.reply.tool_calls.is_empty();
    if let Some(prepared) = answer {
        warnings.extend(prepared.warnings.iter().cloned());
        // The answer's keywords the grammar left out, on the finished text.
        if let (Some(v), Some(text), FinishReason::Stop) =
            (&prepared.validator, &outcome.reply.content, finish_reason)
            && answered
        {
            check_output(v, text)?;
        }
    }
    Ok(Response {
        raw: outcome.reply.raw,
        content: outcome.reply.content,
        reasoning: with_plan_line(
            outcome.reply.reasoning_content,
            last.plan.filter(|_| req.show_plan),
        ),
        tool_calls: typed_calls(&req.tools, outcome.reply.tool_calls),
        finish_reason,
        usage: outcome.usage,
        attempts: outcome.attempts,
        failed_attempts: outcome.failed,
        excluded_repeats: excluded,
        enforced_after_parse: last.deferred,
        warnings,
        format_branch: answer.map(|_| {
            if answered {
                Branch::Answer
            } else {
                Branch::Calls
            }
        }),
        truncated_call: last.truncated_call,
        cut_call: last.cut_call,
        repeated_text: last.repeated_text,
        call_margin: last.call_margin,
        count_margin: last.count_margin,
        hidden_call: hidden.as_ref().map(post::hidden_note),
        timings: timings(&last.timings),
        ..Response::ran(
            last.mode.into(),
            path_reason(last.mode),
            "embedded",
            engine.syntax().name,
            engine.model_name(),
        )
    })
}

/// The reasoning a client gets: the model's reasoning block, then the plan line where it is
/// shown ([`Request::show_plan`]).
fn with_plan_line(reasoning: Option<String>, plan: Option<String>) -> Option<String> {
    match (reasoning, plan) {
        (Some(r), Some(line)) => Some(format!("{r}\n{line}")),
        (r, line) => r.or(line),
    }
}

/// A reply whose text hides a call to `hidden.tool`, decoded again with a call to that tool
/// required, so the grammar makes the call (the detector judges; it parses nothing into a
/// call); under a stream the first reply's deltas are voided (`Retry`). When the call it gets
/// is one already made and answered in the conversation, the text was reporting it: the first
/// reply stands (the second's tokens counted) and nothing was hidden.
fn unhide(
    model: &mut EngineModel<'_, '_>,
    req: &Request,
    mut outcome: Outcome,
    hidden: validate::HiddenCall,
) -> Result<(Outcome, Option<validate::HiddenCall>), RunError> {
    tracing::debug!(tool = %hidden.tool, form = hidden.form.as_str(), "a call hidden in text: decoding again");
    let forced = post::forced(req, &hidden.tool);
    model.request.grammar = another_choice(model, forced.shape.choice.clone());
    let again = toolgram_retry::run(
        model,
        &forced.tools,
        &forced.shape.choice,
        &forced.messages,
        forced.retry,
    )?;
    let calls = &again.reply.tool_calls;
    if !calls.is_empty() && post::excluded_repeats(req, calls).len() == calls.len() {
        outcome.attempts += again.attempts;
        if let (Some(u), Some(more)) = (outcome.usage.as_mut(), again.usage) {
            *u += more;
        }
        return Ok((outcome, None));
    }
    Ok((merged(outcome, again), Some(hidden)))
}

/// The grammar of `model`'s request with `choice` in place of its tool choice: another
/// grammar, compiled on the lane.
fn another_choice<'s>(model: &EngineModel<'s, '_>, choice: ToolChoice) -> CallGrammar<'s> {
    CallGrammar::Shape(CallShape {
        choice,
        ..model.request.shape().clone()
    })
}

/// What the model is told when its calls were all repeats: the results are already in the
/// conversation.
fn repeat_note(excluded: &[RepeatedCall]) -> String {
    let mut tools: Vec<&str> = excluded.iter().map(|r| r.tool.as_str()).collect();
    tools.dedup();
    format!(
        "(toolgram) You already called {} with these same arguments, and the result is above. \
         Do not call it again and do not write a call: answer in plain words from that result.",
        tools.join(", ")
    )
}

/// The outcome of a second run after a first: its reply, both runs' attempts and tokens.
fn merged(first: Outcome, second: Outcome) -> Outcome {
    let usage = match (first.usage, second.usage) {
        (Some(mut a), Some(b)) => {
            a += b;
            Some(a)
        }
        (a, b) => a.or(b),
    };
    let mut failed = first.failed;
    failed.extend(second.failed);
    Outcome {
        reply: second.reply,
        attempts: first.attempts + second.attempts,
        failed,
        usage,
    }
}

fn generate(
    session: &mut Session<'_>,
    req: &Request,
    format: &ReadyFormat,
) -> Result<Response, RunError> {
    let prepared = &format.prepared;
    let grammar = format.alone.as_ref().ok_or_else(|| {
        RunError::Stopped("a response format alone reached its lane uncompiled".into())
    })?;
    let r = session.generate_text(&GenerateRequest {
        messages: &req.messages,
        grammar,
        sampling: sampling(req),
    })?;
    // Keywords the grammar left out are checked on the finished text.
    if let Some(v) = &prepared.validator
        && r.finish_reason == FinishReason::Stop
    {
        check_output(v, &r.content)?;
    }
    let engine = session.engine();
    Ok(Response {
        raw: r.content.clone(),
        content: Some(r.content),
        reasoning: r.reasoning_content,
        finish_reason: r.finish_reason,
        usage: Some(Usage {
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            cached_prompt_tokens: r.prompt_tokens.saturating_sub(r.timings.prompt_evaluated),
        }),
        warnings: prepared.warnings.clone(),
        timings: timings(&r.timings),
        ..Response::ran(
            Path::Grammar,
            "embedded engine: the text is decoded under the response format's grammar",
            "embedded",
            engine.syntax().name,
            engine.model_name(),
        )
    })
}
