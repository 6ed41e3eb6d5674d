//! One scored item, and `items.jsonl`: one line per item × mode, appended as each finishes so a
//! run can stop at any time and `--resume` where it stopped. A truncated last line (a run
//! killed mid-write) is skipped on reading.
//!
//! This module must not score or run anything.

use crate::EvalError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// One item run in one mode, scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    /// BFCL item id.
    pub id: String,
    /// Its category.
    pub category: String,
    /// The mode (`grammar`, `json`, `prompt`, `native`, `native-lenient`).
    pub mode: String,
    /// BFCL's AST checker accepted the calls.
    pub correct: bool,
    /// Why not (BFCL's error type and message, or the run's error).
    pub reason: Option<String>,
    /// The tools were refused before any model ran (a definition no call can satisfy): no
    /// reply, so the item is left out of the parsed and valid rates (it is still a miss).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// The first attempt's reply could be read as text and calls.
    pub parsed: bool,
    /// The first attempt's calls were all valid for their schemas (a reply without calls is
    /// valid).
    pub valid: bool,
    /// A call was due (every category but irrelevance).
    pub call_due: bool,
    /// At least one structured call was made.
    pub called: bool,
    /// The first call names an expected tool.
    pub first_tool_match: bool,
    /// The calls scored: `{name, arguments}`.
    pub calls: Vec<Value>,
    /// What the model wrote (the accepted attempt, or the last failed one).
    pub raw: String,
    /// Generated tokens over all attempts, when counted.
    pub output_tokens: Option<usize>,
    /// Prompt tokens found in the session cache (not evaluated again), when counted.
    #[serde(default)]
    pub cached_tokens: Option<usize>,
    /// Wall clock of the item, all attempts.
    pub latency_ms: f64,
    /// Attempts made.
    pub attempts: usize,
    /// What running the accepted call gave (`eval tools`: the tool's result or refusal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
    /// The protocol it ran under ([`crate::Protocol`]; `toolgram` in records made before
    /// protocols were named).
    #[serde(default = "toolgram_protocol")]
    pub protocol: String,
    /// The model's lean at the reply's call-or-text choice, in logits (the runtime's
    /// `Response::call_margin`); absent where the reply had no such choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_margin: Option<f32>,
    /// The plan's lean at its count, more than one call against one, in logits (the
    /// runtime's `Response::count_margin`); absent where no plan counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_margin: Option<f32>,
    /// What ran it: the commit and the CPU ([`provenance`]); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

fn toolgram_protocol() -> String {
    crate::Protocol::Toolgram.name().to_owned()
}

/// The commit this eval was built from and the machine's CPU, as `commit · cpu` — what a
/// table says when it pools records of several runs.
pub fn provenance() -> String {
    let commit = option_env!("TOOLGRAM_COMMIT")
        .filter(|c| !c.is_empty())
        .unwrap_or("unknown commit");
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    format!("{commit} · {cpu}")
}

/// The mode as `--resume` and the tables tell records apart: the mode, and the protocol when
/// it is not toolgram's (`native@bfcl`).
pub fn mode_key(mode: &str, protocol: &str) -> String {
    if protocol == crate::Protocol::Toolgram.name() {
        mode.to_owned()
    } else {
        format!("{mode}@{protocol}")
    }
}

impl ItemRecord {
    /// A record of `id` in `category` and `mode` before anything is known: no call, not
    /// correct, not parsed, no attempt.
    pub fn new(id: &str, category: &str, mode: &str, call_due: bool) -> Self {
        Self {
            id: id.to_owned(),
            category: category.to_owned(),
            mode: mode.to_owned(),
            correct: false,
            reason: None,
            refused: false,
            parsed: false,
            valid: false,
            call_due,
            called: false,
            first_tool_match: false,
            calls: Vec::new(),
            raw: String::new(),
            output_tokens: None,
            cached_tokens: None,
            latency_ms: 0.0,
            attempts: 0,
            outcome: None,
            protocol: toolgram_protocol(),
            call_margin: None,
            count_margin: None,
            run: None,
        }
    }

    /// Name the protocol and the run that made it.
    pub fn stamp(&mut self, protocol: crate::Protocol) {
        self.protocol = protocol.name().to_owned();
        self.run = Some(provenance());
    }

    /// What a reply the run stage accepted says about its attempts: the first one read and
    /// valid, the accepted text, tokens, cached prompt tokens, attempts.
    pub fn take_reply(&mut self, resp: &toolgram_runtime::Response) {
        self.parsed = resp.failed_attempts.first().is_none_or(|f| f.readable);
        self.valid = resp.failed_attempts.is_empty();
        self.raw = resp.raw.clone();
        self.output_tokens = resp.usage.map(|u| u.completion_tokens);
        self.cached_tokens = resp.usage.map(|u| u.cached_prompt_tokens);
        self.attempts = resp.attempts;
        self.call_margin = resp.call_margin;
        self.count_margin = resp.count_margin;
    }

    /// The key `--resume` skips on.
    pub fn key(&self) -> (String, String, String) {
        (
            self.category.clone(),
            mode_key(&self.mode, &self.protocol),
            self.id.clone(),
        )
    }
}

/// Every record in `path` (none when it does not exist).
pub fn read_records(path: &Path) -> Result<Vec<ItemRecord>, EvalError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EvalError::io(path, e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// The keys already in `path`.
pub fn done_keys(path: &Path) -> Result<HashSet<(String, String, String)>, EvalError> {
    Ok(read_records(path)?.iter().map(ItemRecord::key).collect())
}

/// Appends records to `items.jsonl`, one flushed line each.
pub struct RecordWriter {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl RecordWriter {
    /// Open `path` for appending (`fresh`: truncate it first).
    pub fn open(path: &Path, fresh: bool) -> Result<Self, EvalError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(!fresh)
            .write(true)
            .truncate(fresh)
            .open(path)
            .map_err(|e| EvalError::io(path, e))?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Append one record.
    pub fn write(&mut self, r: &ItemRecord) -> Result<(), EvalError> {
        let line = serde_json::to_string(r).map_err(|e| EvalError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|e| EvalError::io(&self.path, e))
    }
}
