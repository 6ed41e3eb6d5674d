//! What the CLI prints: replies and streamed events on stdout, `{"error":{…}}` on stderr
//! (a run-stage error prints as the runtime spells it; other errors are read here).

use serde_json::{Value, json};
use toolgram_bench::BenchError;
use toolgram_engine::EngineError;
use toolgram_eval::EvalError;
use toolgram_providers::ProviderError;
use toolgram_providers::profile::ProfileError;
use toolgram_runtime::{
    Checked, Event, RunError, engine_details, profile_error_kind, provider_error_kind,
};

/// A line on stdout, as `println!` writes it but returning the error instead of panicking
/// when stdout is closed early (`toolgram model list | head -1`); `main` ends such a run
/// quietly ([`stdout_closed`]).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use say;

/// Text on stdout with no newline added, as [`say`] does.
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use say_raw;

/// Whether `e` is stdout closed under us (a reader that stopped early): nothing to report.
pub(crate) fn stdout_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Warnings and notes of a request checked before the model loads, on stderr.
pub(crate) fn print_checked(checked: &Checked) {
    for w in &checked.warnings {
        eprintln!("warning: {w}");
    }
    for n in &checked.notes {
        eprintln!("note: {n}");
    }
}

/// One streamed event as a JSON line (`None` for nothing to print); a failure is returned
/// as the error it is.
pub(crate) fn event_line(event: Event) -> anyhow::Result<Option<Value>> {
    Ok(Some(match event {
        Event::ReasoningDelta(t) => json!({"type": "reasoning", "delta": t}),
        Event::ContentDelta(t) => json!({"type": "content", "delta": t}),
        Event::ToolCallStart {
            index,
            id,
            name,
            custom,
        } => json!({"type": "tool_call_start", "index": index, "id": id, "name": name,
            "custom": custom}),
        Event::ToolCallDelta {
            index, arguments, ..
        } => json!({"type": "tool_call_delta", "index": index, "delta": arguments}),
        Event::ToolCallEnd { index } => json!({"type": "tool_call_end", "index": index}),
        Event::Retry { attempt } => json!({"type": "retry", "attempt": attempt}),
        Event::ToolStep(s) => json!({"type": "tool_step", "id": s.id, "server": s.server,
            "tool": s.tool, "arguments": s.arguments, "result": s.result,
            "is_error": s.is_error, "ms": s.ms}),
        Event::Done(r) => r.to_json(),
        Event::Failed(e) => return Err(e.into()),
    }))
}

/// Print an error as one JSON line on stderr.
pub(crate) fn print_error(e: &anyhow::Error) {
    // An evaluation or benchmark passes the run stage's and the engine's errors through:
    // they print as those errors do.
    let eval = e.downcast_ref::<EvalError>();
    let run = e.downcast_ref::<RunError>().or(match eval {
        Some(EvalError::Run(r)) => Some(r),
        _ => None,
    });
    if let Some(run) = run {
        eprintln!("{}", json!({"error": run.to_json()}));
        return;
    }
    let bench = e.downcast_ref::<BenchError>();
    let engine = e.downcast_ref::<EngineError>().or(match bench {
        Some(BenchError::Engine(x)) => Some(x),
        _ => None,
    });
    let fetch = matches!(bench, Some(BenchError::Fetch(_)))
        || e.downcast_ref::<toolgram_engine::models::FetchError>()
            .is_some();
    let (kind, extra) = match engine {
        Some(e) => (e.kind(), engine_details(e)),
        None if fetch => ("model_fetch_error", Value::Null),
        None => match e.downcast_ref::<CliError>() {
            Some(c) => (c.kind, Value::Null),
            None => match e.downcast_ref::<ProfileError>() {
                Some(p) => (profile_error_kind(p), Value::Null),
                None => match e.downcast_ref::<ProviderError>() {
                    Some(p) => (provider_error_kind(p), Value::Null),
                    None => ("error", Value::Null),
                },
            },
        },
    };
    let mut err = json!({"type": kind, "message": message(e)});
    if let (Value::Object(o), Value::Object(x)) = (&mut err, extra) {
        o.extend(x);
    }
    eprintln!("{}", json!({"error": err}));
}

/// The error chain, leaving out causes their parent already spells out.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

/// A text file the user named, or an `io_error` saying which (`what`) could not be read.
pub(crate) fn read_text(path: &std::path::Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read {what} {}: {e}", path.display()),
        )
        .into()
    })
}

/// An error found by the CLI itself (bad arguments, unreadable files).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct CliError {
    /// Machine-readable kind.
    pub kind: &'static str,
    /// Message.
    pub message: String,
}

impl CliError {
    /// A new error.
    pub(crate) fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}
