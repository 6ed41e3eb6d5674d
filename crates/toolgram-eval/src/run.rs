//! Items × modes on one run stage: the model is loaded once, and items run item by item with
//! every mode in turn, so the tool prefix evaluated for one mode is reused by the next (the
//! runtime's session cache); the modes take turns going first so none always pays the cold
//! prompt, and each record says how many prompt tokens came from the cache. Each run is scored at once and handed to the caller (who appends
//! it to `items.jsonl`); items already recorded are skipped.
//!
//! Modes: `grammar`, `json`, `prompt` on the run stage (embedded or a provider) with
//! `tool_choice: auto` and parallel calls allowed, as BFCL asks; `native` sends the items to a
//! peer server's own tool calling ([`crate::peer`]).
//!
//! This module must not print or write files.

use crate::EvalError;
use crate::RunOptions;
use crate::bfcl::checker::Call;
use crate::bfcl::{Item, scored};
use crate::peer::Peer;
use crate::record::ItemRecord;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Instant;
use toolgram_core::define::request::Mode;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_runtime::{CallKind, Request, RetryPolicy, RunError, Runtime};

/// How an item is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalMode {
    /// Call and arguments decoded under the grammar.
    Grammar,
    /// Grammar mode given prompt mode's instructions (tool-choice rule, an example call for each of the
    /// first three tools): the same prompt as `prompt`, the constraint on — the grammar's effect alone.
    GrammarFewShot,
    /// Call shape and tool name enforced; arguments validated after.
    Json,
    /// Nothing enforced: lenient parse, validation, retries.
    Prompt,
    /// `eval tools`: a grammar tool as its JSON fallback function under strict JSON (the
    /// `{"input": …}` schema enforced, the text free), the text checked after parsing — what a
    /// provider without grammars but with strict function calling gets.
    Fallback,
    /// A peer server's own tool calling (no toolgram grammar); scored strictly (`tool_calls`
    /// only, mode `native`) and leniently (its text read by toolgram's parser,
    /// `native-lenient`).
    Native,
}

impl EvalMode {
    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Self::Grammar => "grammar",
            Self::GrammarFewShot => "grammar-fewshot",
            Self::Json => "json",
            Self::Prompt => "prompt",
            Self::Fallback => "fallback",
            Self::Native => "native",
        }
    }

    /// Read a mode name.
    pub fn parse(s: &str) -> Result<Self, EvalError> {
        Ok(match s {
            "grammar" => Self::Grammar,
            "grammar-fewshot" => Self::GrammarFewShot,
            "json" => Self::Json,
            "prompt" => Self::Prompt,
            "fallback" => Self::Fallback,
            "native" => Self::Native,
            other => {
                return Err(EvalError::Unsupported(format!(
                    "unknown mode `{other}` (grammar, grammar-fewshot, json, prompt, native; fallback for eval tools)"
                )));
            }
        })
    }

    /// Whether prompt mode's instructions go into the system prompt in a constrained mode.
    pub fn few_shot(self) -> bool {
        self == Self::GrammarFewShot
    }

    pub(crate) fn core(self) -> Option<Mode> {
        match self {
            Self::Grammar | Self::GrammarFewShot => Some(Mode::Grammar),
            Self::Json => Some(Mode::Json),
            Self::Prompt => Some(Mode::Prompt),
            Self::Fallback | Self::Native => None,
        }
    }
}

/// What runs the items.
pub struct Targets<'a> {
    /// The run stage, for `grammar`, `json`, `prompt`.
    pub runtime: Option<&'a Runtime>,
    /// The peer, for `native`.
    pub peer: Option<&'a Peer>,
}

/// Records already made: `(category, mode, id)`.
pub type Done = HashSet<(String, String, String)>;

fn key(item: &Item, mode: EvalMode) -> (String, String, String) {
    (
        item.category.clone(),
        mode.name().to_owned(),
        item.id.clone(),
    )
}

/// How many item × mode runs are still to do.
pub fn pending(items: &[Item], modes: &[EvalMode], done: &Done) -> usize {
    items
        .iter()
        .flat_map(|i| modes.iter().map(move |m| key(i, *m)))
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
            .filter(|m| !done.contains(&key(item, *m)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        // Modes take turns going first: the first pays the cold prompt, the ones after it may
        // find the same prefix in the session cache (grammar and json render the same prompt).
        let turn = index % todo.len();
        todo.rotate_left(turn);
        let base = ToolSet::from_value(&Value::Array(item.tools.clone()))
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
                (None, Ok(_)) if mode == EvalMode::Fallback => {
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
            for r in &records {
                sink(r)?;
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
    req.tool_choice = ToolChoice::Auto;
    req.parallel_tool_calls = true;
    req.mode = core;
    req.few_shot = mode.few_shot();
    req.sampling.max_tokens = options.max_tokens;
    req.retry = RetryPolicy {
        max_attempts: options.max_attempts.max(1),
        consecutive_blocked: 2,
    };
    let name = mode.name();
    let t0 = Instant::now();
    let outcome = runtime.run(&req);
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
            let mut r = scored(item, name, &[]);
            r.correct = false;
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
            r.correct = false;
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
