//! Items × modes on one run stage: the model is loaded once, and items run item by item with
//! every mode in turn, so the tool prefix evaluated for one mode is reused by the next (the
//! runtime's session cache); the modes take turns going first so none always pays the cold
//! prompt, and each record says how many prompt tokens came from the cache. Each run is scored at once and handed to the caller (who appends
//! it to `items.jsonl`); items already recorded are skipped.
//!
//! Modes: `grammar`, `json`, `prompt` (all three given prompt mode's instructions; the
//! constrained two on the embedded model only) and `grammar-template`, `json-template` (the
//! chat template's tool block, or a provider's own rendering of the tools) on the run stage with `tool_choice: auto` and parallel calls allowed, as BFCL asks;
//! `native` sends the items to a peer server's own tool calling ([`crate::peer`]).
//!
//! This module must not print or write files.

use crate::EvalError;
use crate::bfcl::checker::Call;
use crate::bfcl::fc;
use crate::bfcl::{Item, scored};
pub use crate::mode::EvalMode;
use crate::peer::Peer;
use crate::record::{ItemRecord, mode_key};
use crate::{Protocol, RunOptions};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Instant;
use toolgram_core::define::request::Mode;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_runtime::{CallKind, Request, RetryPolicy, RunError, Runtime};

/// What runs the items.
pub struct Targets<'a> {
    /// The run stage, for `grammar`, `json`, `prompt`.
    pub runtime: Option<&'a Runtime>,
    /// The peer, for `native`.
    pub peer: Option<&'a Peer>,
}

/// Records already made: `(category, mode, id)`.
pub type Done = HashSet<(String, String, String)>;

fn key(item: &Item, mode: EvalMode, protocol: Protocol) -> (String, String, String) {
    (
        item.category.clone(),
        mode_key(mode.name(), protocol.name()),
        item.id.clone(),
    )
}

/// How many item × mode runs are still to do under `protocol`.
pub fn pending(items: &[Item], modes: &[EvalMode], protocol: Protocol, done: &Done) -> usize {
    items
        .iter()
        .flat_map(|i| modes.iter().map(move |m| key(i, *m, protocol)))
        .filter(|k| !done.contains(k))
        .count()
}

/// Run every item in every mode not yet in `done`; each record goes to `sink` as it is made.
pub fn run_items(
    items: &[Item],
    modes: &[EvalMode],
    targets: &Targets<'_>,
    options: RunOptions,
    done: &Done,
    mut sink: impl FnMut(&ItemRecord) -> Result<(), EvalError>,
) -> Result<(), EvalError> {
    for (index, item) in items.iter().enumerate() {
        let mut todo: Vec<EvalMode> = modes
            .iter()
            .copied()
            .filter(|m| !done.contains(&key(item, *m, options.protocol)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        // Modes take turns going first: the first pays the cold prompt, the ones after it may
        // find the same prefix in the session cache (grammar and json render the same prompt).
        let turn = index % todo.len();
        todo.rotate_left(turn);
        let tools = match options.protocol {
            Protocol::Toolgram => &item.tools,
            Protocol::Bfcl => &item.tools_as_bfcl_sends,
        };
        let base = ToolSet::from_value(&Value::Array(tools.clone()))
            .map(|tools| Request::new(item.chat_messages(), tools));
        for mode in todo {
            let records = match (mode.core(), &base) {
                (_, Err(e)) => vec![refused(item, mode, &e.to_string())],
                (Some(core), Ok(base)) => {
                    let runtime = targets.runtime.ok_or_else(|| {
                        EvalError::Unsupported(format!(
                            "mode {} needs a model or provider",
                            mode.name()
                        ))
                    })?;
                    vec![run_one(runtime, item, mode, core, base, options)?]
                }
                (None, Ok(_)) if mode.fallback() => {
                    return Err(EvalError::Unsupported(
                        "mode fallback is for grammar tools (eval tools); BFCL has none".into(),
                    ));
                }
                (None, Ok(base)) => {
                    let peer = targets.peer.ok_or_else(|| {
                        EvalError::Unsupported(
                            "mode native needs --provider (a peer server)".into(),
                        )
                    })?;
                    peer.run(item, &base.tools, options)
                }
            };
            for mut r in records {
                r.stamp(options.protocol);
                sink(&r)?;
            }
        }
    }
    Ok(())
}

/// The tools of an item could not be compiled: scored as a miss in that mode.
fn refused(item: &Item, mode: EvalMode, why: &str) -> ItemRecord {
    ItemRecord {
        reason: Some(format!("tools refused: {why}")),
        refused: true,
        ..ItemRecord::new(
            &item.id,
            &item.category,
            mode.name(),
            item.scoring.call_due(),
        )
    }
}

/// What the model wrote before a run failed (a reply cut at `max_tokens`), when known.
pub(crate) fn partial_text(e: &RunError) -> String {
    e.details()
        .get("partial")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn run_one(
    runtime: &Runtime,
    item: &Item,
    mode: EvalMode,
    core: Mode,
    base: &Request,
    options: RunOptions,
) -> Result<ItemRecord, EvalError> {
    let mut req = base.clone();
    req.shape.choice = ToolChoice::Auto;
    req.shape.parallel = true;
    req.shape.mode = core;
    req.few_shot = mode.few_shot();
    req.sampling.max_tokens = options.embedded_max_tokens();
    req.shape.plan = options.plan;
    req.show_plan = true;
    req.sampling.call_bias = options.call_bias;
    req.sampling.count_bias = options.count_bias;
    req.sampling.stop_repeated_text = options.stop_repeated_text;
    req.votes = options.votes;
    req.retry = RetryPolicy {
        max_attempts: options.attempts(),
        consecutive_blocked: 2,
    };
    if options.protocol == Protocol::Bfcl {
        // BFCL's temperature; a fixed seed keeps a rerun's replies the same.
        req.sampling.temperature = fc::TEMPERATURE;
        req.sampling.seed = Some(0);
    }
    let name = mode.name();
    let t0 = Instant::now();
    let outcome = runtime.ready(req).and_then(|r| runtime.run(&r));
    let latency_ms = t0.elapsed().as_secs_f64() * 1e3;
    let record = match outcome {
        Ok(resp) => {
            let calls: Vec<Call> = resp
                .tool_calls
                .iter()
                .map(|c| Call {
                    name: c.name.clone(),
                    arguments: match &c.kind {
                        CallKind::Function { arguments } => {
                            arguments.as_object().cloned().unwrap_or_default()
                        }
                        CallKind::Custom { .. } => serde_json::Map::new(),
                    },
                })
                .collect();
            let mut r = scored(item, name, &calls);
            r.take_reply(&resp);
            r
        }
        Err(
            RunError::NoValidCall { message, failed } | RunError::RetryBlocked { message, failed },
        ) => {
            // No call was decoded: BFCL's verdict on that (a correct refusal on
            // `irrelevance`); the reason keeps the error for the strict column.
            let mut r = scored(item, name, &[]);
            r.reason = Some(format!("no valid call: {message}"));
            r.parsed = failed.first().is_some_and(|f| f.readable);
            r.valid = false;
            r.called = false;
            r.raw = failed.last().map(|f| f.raw.clone()).unwrap_or_default();
            r.attempts = failed.len();
            r
        }
        Err(e @ (RunError::Busy { .. } | RunError::Stopped(_) | RunError::ModelFetch(_))) => {
            return Err(e.into());
        }
        Err(e) => {
            let mut r = scored(item, name, &[]);
            r.reason = Some(format!("{}: {e}", e.kind()));
            r.raw = partial_text(&e);
            r.parsed = false;
            r.valid = false;
            r
        }
    };
    Ok(ItemRecord {
        latency_ms,
        ..record
    })
}
