//! Tasks × modes on one run stage: the tool alone in the pool, its call required, decoded as
//! the freeform grammar tool (`grammar`) or as its JSON fallback (`json`; `prompt` too if
//! asked), validated with the tool's own parser and checks and retried as any call is; then
//! the accepted input is run in a fresh workspace and the outcome compared with the task's.
//! Every run becomes one [`ItemRecord`] (category = the tool) handed to the caller.
//!
//! This module must not print or write `items.jsonl`.

use super::{Fixture, Task, TaskFile};
use crate::EvalError;
use crate::RunOptions;
use crate::record::ItemRecord;
use crate::run::{Done, EvalMode, partial_text};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;
use toolgram_core::define::request::Mode;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_runtime::{CallKind, Request, RetryPolicy, RunError, Runtime, tools_from_json};
use toolgram_tools::{BuildOptions, DynTool, RunContext, builtin};

/// The pool of one task file: its tool alone, as the grammar tool (its JSON fallback shape
/// comes from the same definition), with the executor's checks attached; for `fallback`, its
/// text left free while decoding and checked after.
pub fn tool_set(file: &TaskFile, fixture: &Fixture, mode: EvalMode) -> Result<ToolSet, EvalError> {
    let mut entry = json!({"type": "builtin", "name": file.tool});
    if let Some(db) = fixture.db() {
        entry["db"] = json!(db);
    }
    let mut tools = tools_from_json(json!([entry]), Path::new("/"))?;
    if mode.fallback() {
        tools.set_text_checked_after(&file.tool);
    }
    Ok(tools)
}

/// The executor of `file`'s tool.
fn executor(file: &TaskFile, fixture: &Fixture) -> Result<Box<dyn DynTool>, EvalError> {
    builtin(
        &file.tool,
        &BuildOptions {
            db: fixture.db().map(Path::to_path_buf),
        },
    )
    .map_err(|e| EvalError::Unsupported(e.to_string()))
}

/// Run `input` for `task` in a fresh workspace and compare the outcome: the tool's result
/// (or its refusal) and the verdict.
pub(super) fn execute(
    file: &TaskFile,
    fixture: &Fixture,
    tool: &dyn DynTool,
    task: &Task,
    input: &str,
    label: &str,
) -> Result<(Value, Result<(), String>), EvalError> {
    let root = fixture.workspace(file, task, label)?;
    let ctx = RunContext {
        root: Some(root.clone()),
        db: fixture.db().map(Path::to_path_buf),
        ..RunContext::default()
    };
    Ok(match tool.run_text(input, &ctx) {
        Ok(result) => {
            let verdict = task.expect.check(&result, &root);
            (result, verdict)
        }
        Err(e) => (json!({"error": e.to_string()}), Err(format!("tool: {e}"))),
    })
}

fn key(file: &TaskFile, task: &Task, mode: EvalMode) -> (String, String, String) {
    (file.tool.clone(), mode.name().to_owned(), task.id.clone())
}

/// How many task × mode runs of `file` are still to do.
pub fn pending(file: &TaskFile, modes: &[EvalMode], done: &Done) -> usize {
    file.tasks
        .iter()
        .flat_map(|t| modes.iter().map(move |m| key(file, t, *m)))
        .filter(|k| !done.contains(k))
        .count()
}

/// Run every task of `file` in every mode not yet in `done`; each record goes to `sink`.
pub fn run_tasks(
    runtime: &Runtime,
    file: &TaskFile,
    modes: &[EvalMode],
    options: RunOptions,
    done: &Done,
    mut sink: impl FnMut(&ItemRecord) -> Result<(), EvalError>,
) -> Result<(), EvalError> {
    if modes.contains(&EvalMode::Native) {
        return Err(EvalError::Unsupported(
            "eval tools runs the embedded model or a provider, not a peer: every mode but native"
                .into(),
        ));
    }
    let fixture = Fixture::new(file)?;
    let tool = executor(file, &fixture)?;
    let mut pools = Vec::new();
    for &mode in modes {
        let mut req = Request::new(Vec::new(), tool_set(file, &fixture, mode)?);
        // Fallback runs the JSON function under the grammar too.
        req.shape.mode = mode.core().unwrap_or(Mode::Grammar);
        req.few_shot = mode.few_shot();
        req.shape.choice = ToolChoice::Required;
        req.shape.parallel = false;
        req.sampling.max_tokens = options.embedded_max_tokens();
        req.retry = RetryPolicy {
            max_attempts: options.attempts(),
            consecutive_blocked: 2,
        };
        pools.push((mode, req));
    }
    for (index, task) in file.tasks.iter().enumerate() {
        // The forms take turns going first: the first evaluates the task's turn, the ones
        // after it may find it in the session cache.
        let mut order: Vec<&(EvalMode, Request)> = pools.iter().collect();
        order.rotate_left(index % pools.len().max(1));
        for (mode, pool) in order {
            if done.contains(&key(file, task, *mode)) {
                continue;
            }
            let mut req = pool.clone();
            req.messages = vec![ChatMessage::text("user", task.user_message(file))];
            let mut record = run_one(runtime, file, &fixture, tool.as_ref(), task, *mode, req)?;
            record.stamp(options.protocol);
            sink(&record)?;
        }
    }
    Ok(())
}

fn run_one(
    runtime: &Runtime,
    file: &TaskFile,
    fixture: &Fixture,
    tool: &dyn DynTool,
    task: &Task,
    mode: EvalMode,
    req: Request,
) -> Result<ItemRecord, EvalError> {
    let t0 = Instant::now();
    let outcome = runtime.ready(req).and_then(|r| runtime.run(&r));
    let latency_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut r = ItemRecord {
        latency_ms,
        ..ItemRecord::new(&task.id, &file.tool, mode.name(), true)
    };
    match outcome {
        Ok(resp) => {
            r.take_reply(&resp);
            let input = resp.tool_calls.first().map(|c| {
                r.called = true;
                r.first_tool_match = c.name == file.tool;
                match &c.kind {
                    CallKind::Custom { input } => input.clone(),
                    CallKind::Function { arguments } => arguments
                        .get("input")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                }
            });
            match input {
                Some(input) => {
                    let (result, verdict) =
                        execute(file, fixture, tool, task, &input, mode.name())?;
                    r.calls = vec![json!({"name": file.tool, "input": input})];
                    r.outcome = Some(result);
                    r.correct = verdict.is_ok();
                    r.reason = verdict.err();
                }
                None => r.reason = Some("no call".into()),
            }
        }
        Err(
            RunError::NoValidCall { message, failed } | RunError::RetryBlocked { message, failed },
        ) => {
            r.reason = Some(format!("no valid call: {message}"));
            r.parsed = failed.first().is_some_and(|f| f.readable);
            r.raw = failed.last().map(|f| f.raw.clone()).unwrap_or_default();
            r.attempts = failed.len();
        }
        Err(e @ (RunError::Busy { .. } | RunError::Stopped(_) | RunError::ModelFetch(_))) => {
            return Err(e.into());
        }
        Err(e) => {
            // A run cut short (the token limit inside a call) made at least this attempt.
            r.attempts = 1;
            r.reason = Some(format!("{}: {e}", e.kind()));
            r.raw = partial_text(&e);
        }
    }
    Ok(r)
}
