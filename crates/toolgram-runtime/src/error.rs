//! [`RunError`]: every way a run can fail, typed, with a stable [`RunError::kind`] string
//! and a [`Status`] class, so the CLI and an HTTP server map errors without downcasting.
//! This module must not print or choose exit codes; front ends do.

use crate::response::failed_json;
use serde_json::{Value, json};
use std::path::PathBuf;
use toolgram_core::validate::RepeatedCall;
use toolgram_engine::EngineError;
use toolgram_engine::models::FetchError;
use toolgram_providers::ProviderError;
use toolgram_providers::profile::ProfileError;
use toolgram_retry::FailedAttempt;

/// Who can fix it: the caller, the service, or nobody right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The request as given cannot succeed (HTTP 4xx).
    Client,
    /// The model or toolgram failed (HTTP 5xx).
    Server,
    /// A dependency is busy or unreachable; the same request may succeed later (HTTP 503).
    Unavailable,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tools are unusable (unreadable file, bad definition, unknown keyword).
    #[error("{0}")]
    InvalidTools(String),
    /// A `response_format` schema is unusable.
    #[error("{0}")]
    InvalidSchema(String),
    /// A grammar file cannot be read as a grammar (its format unknown, GBNF that does not
    /// parse).
    #[error("{0}")]
    InvalidGrammar(String),
    /// The request is inconsistent or asks for something this path cannot do.
    #[error("{0}")]
    InvalidRequest(String),
    /// A file could not be read.
    #[error("{0}")]
    Io(String),
    /// A models file names a path outside its own folder, and paths outside were not allowed.
    #[error(
        "the models file's `{key}` {} resolves to {}, outside the file's folder {}: keep it inside that folder, or allow paths outside it",
        path.display(),
        resolved.display(),
        folder.display()
    )]
    PathOutsideFolder {
        /// The key that names it (`model`, `chat_template`).
        key: &'static str,
        /// The path as the file gives it.
        path: PathBuf,
        /// Where it leads (`..` taken out, symlinks followed where it exists).
        resolved: PathBuf,
        /// The models file's folder.
        folder: PathBuf,
    },
    /// The embedded engine failed (typed; its kind is kept).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A provider failed or refused (typed; its kind is kept).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The model could not be fetched.
    #[error(transparent)]
    ModelFetch(#[from] FetchError),
    /// Every attempt failed validation.
    #[error("{message}")]
    NoValidCall {
        /// The retry loop's summary.
        message: String,
        /// Every failed attempt.
        failed: Vec<FailedAttempt>,
    },
    /// The model repeated the same mistake until the loop stopped it.
    #[error("{message}")]
    RetryBlocked {
        /// The retry loop's summary.
        message: String,
        /// Every failed attempt.
        failed: Vec<FailedAttempt>,
    },
    /// `refuse_repeats` was set and the reply repeats earlier calls.
    #[error("{}", repeats_text(.0))]
    RepeatedCall(Vec<RepeatedCall>),
    /// The text breaks a `response_format` keyword checked after generation.
    #[error("{message}")]
    InvalidOutput {
        /// What is wrong.
        message: String,
        /// The text.
        content: String,
    },
    /// The queue in front of the embedded model is full.
    #[error("the model is busy: {queued} request(s) already queued")]
    Busy {
        /// The queue's bound.
        queued: usize,
    },
    /// A model could not be loaded before the request's deadline: the bound on loaded models
    /// leaves no room yet (a model to unload still runs requests, or has not been loaded for
    /// its minimum residency), or other loads were ahead of it. Nothing was unloaded.
    #[error("the model `{model}` cannot be loaded now: {why}; try again shortly")]
    ModelSwap {
        /// The model asked for.
        model: String,
        /// Why not now.
        why: String,
    },
    /// Every ballot of a request failed: the first ballot's error, with the tokens every
    /// ballot used.
    #[error("{first} (every one of {cast} ballots failed)")]
    Ballots {
        /// The first ballot's error (its kind and status are the reply's).
        first: Box<RunError>,
        /// Ballots cast.
        cast: usize,
        /// The tokens of every ballot, summed.
        usage: Option<toolgram_retry::Usage>,
    },
    /// The engine's worker has stopped.
    #[error("the engine is not running: {0}")]
    Stopped(String),
    /// An MCP server the tool loop calls failed: it could not start, exited, answered with
    /// an error or not within its timeout.
    #[error(transparent)]
    ToolSource(#[from] toolgram_mcp::McpError),
    /// The lane running the request failed (a bug): its slot was released and it runs the
    /// next request on a fresh session.
    #[error("lane {lane} failed while running the request: {message}")]
    LaneFailed {
        /// The lane.
        lane: usize,
        /// What it said when it failed.
        message: String,
    },
}

fn repeats_text(repeats: &[RepeatedCall]) -> String {
    repeats
        .iter()
        .map(|r| format!("call {} to `{}` repeats {}", r.index, r.tool, r.first_seen))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The kind of a provider-profile error (for front ends that meet one outside a run).
pub fn profile_error_kind(p: &ProfileError) -> &'static str {
    match p {
        ProfileError::UnknownProfile(_) => "invalid_request",
        ProfileError::OverLimit { .. } => "over_provider_limit",
        _ => "unsupported_by_profile",
    }
}

/// The kind of a provider error (for front ends that meet one outside a run).
pub fn provider_error_kind(p: &ProviderError) -> &'static str {
    match p {
        ProviderError::UnknownProvider { .. } | ProviderError::Unsupported(_) => "invalid_request",
        ProviderError::Config(_) => "invalid_config",
        ProviderError::NoFallback { .. } => "capability_missing",
        ProviderError::Profile(p) => profile_error_kind(p),
        ProviderError::Compile(_) => "invalid_tools",
        ProviderError::Http(_) | ProviderError::Reply { .. } => "provider_error",
    }
}

impl RunError {
    /// The stable machine-readable kind (`invalid_tools`, `truncated`, `no_valid_call`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidTools(_) => "invalid_tools",
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidSchema(_) => "invalid_schema",
            Self::InvalidGrammar(_) => "invalid_grammar",
            Self::Io(_) => "io_error",
            Self::PathOutsideFolder { .. } => "invalid_request",
            Self::Engine(e) => e.kind(),
            Self::Provider(p) => provider_error_kind(p),
            Self::ModelFetch(_) => "model_fetch_error",
            Self::NoValidCall { .. } => "no_valid_call",
            Self::RetryBlocked { .. } => "retry_blocked",
            Self::RepeatedCall(_) => "repeated_call",
            Self::InvalidOutput { .. } => "invalid_output",
            Self::Busy { .. } => "busy",
            Self::ModelSwap { .. } => "model_swap",
            Self::Ballots { first, .. } => first.kind(),
            Self::Stopped(_) => "engine_stopped",
            Self::LaneFailed { .. } => "lane_failed",
            // A declaration the server cannot be started from is the operator's request.
            Self::ToolSource(toolgram_mcp::McpError::Declaration { .. }) => "invalid_request",
            Self::ToolSource(_) => "tool_source_error",
        }
    }

    /// Who can fix it.
    pub fn status(&self) -> Status {
        match self.kind() {
            "invalid_tools"
            | "invalid_request"
            | "invalid_schema"
            | "invalid_grammar"
            | "io_error"
            | "context_overflow"
            | "truncated"
            | "repeated_call"
            | "capability_missing"
            | "invalid_config"
            | "unsupported_by_profile"
            | "over_provider_limit"
            | "template_error"
            | "grammar_error"
            | "grammar_limit"
            | "gpu_unavailable" => Status::Client,
            "provider_error" | "busy" | "model_swap" | "model_fetch_error" | "engine_stopped"
            | "tool_source_error" | "worker_unavailable" => Status::Unavailable,
            _ => Status::Server,
        }
    }

    /// The tokens a run cut by its token limit (`truncated`) or cancelled while decoding used;
    /// every ballot's when all of a request's ballots failed.
    pub fn usage(&self) -> Option<toolgram_retry::Usage> {
        match self {
            Self::Ballots { usage, .. } => *usage,
            Self::Engine(
                EngineError::Truncated { usage, .. } | EngineError::Cancelled { usage, .. },
            ) => *usage,
            _ => None,
        }
    }

    /// Extra fields for the error object (`partial` of a truncated call, every failed
    /// attempt, …); `Null` when there are none.
    pub fn details(&self) -> Value {
        match self {
            Self::Ballots { first, cast, usage } => {
                let mut details = match first.details() {
                    Value::Object(o) => o,
                    _ => serde_json::Map::new(),
                };
                details.insert("ballots".into(), json!(cast));
                details.insert("usage".into(), usage.map_or(Value::Null, usage_json));
                Value::Object(details)
            }
            Self::Engine(e) => engine_details(e),
            Self::NoValidCall { failed, .. } | Self::RetryBlocked { failed, .. } => {
                json!({"attempts": failed_json(failed)})
            }
            Self::RepeatedCall(repeats) => json!({"repeated_calls": repeats.iter()
                .map(|r| json!({"index": r.index, "tool": r.tool, "first_seen": r.first_seen}))
                .collect::<Vec<_>>()}),
            Self::InvalidOutput { content, .. } => json!({"content": content}),
            _ => Value::Null,
        }
    }

    /// `{"type","message",…details}`: the error object every front end prints.
    pub fn to_json(&self) -> Value {
        let mut err = json!({"type": self.kind(), "message": self.to_string()});
        if let (Value::Object(o), Value::Object(x)) = (&mut err, self.details()) {
            o.extend(x);
        }
        err
    }
}

impl From<toolgram_core::DefinitionError> for RunError {
    fn from(e: toolgram_core::DefinitionError) -> Self {
        Self::Engine(EngineError::Definition(e))
    }
}

impl<E: std::fmt::Display + Into<RunError>> From<toolgram_retry::RetryError<E>> for RunError {
    fn from(e: toolgram_retry::RetryError<E>) -> Self {
        let message = e.to_string();
        match e {
            toolgram_retry::RetryError::Model { error, .. } => error.into(),
            toolgram_retry::RetryError::Blocked { failed } => {
                Self::RetryBlocked { message, failed }
            }
            toolgram_retry::RetryError::Exhausted { failed } => {
                Self::NoValidCall { message, failed }
            }
        }
    }
}

/// What an engine error adds to its `{"type","message"}` object: the text decoded before a
/// cut or a cancel (and a cancel's usage), a prompt's length against the context; `null`
/// for the others. Also for front ends that meet an engine error outside a run (benchmarks).
pub fn engine_details(e: &EngineError) -> Value {
    match e {
        EngineError::Truncated {
            partial, repeated, ..
        } => match repeated {
            Some(r) => json!({"partial": partial,
                "repeated_text": {"span": r.span, "copies": r.copies,
                    "action": "cut as at the token limit; no call was complete"}}),
            None => json!({"partial": partial}),
        },
        EngineError::Cancelled { partial, usage } => {
            json!({"partial": partial, "usage": usage.map(usage_json)})
        }
        EngineError::ContextOverflow {
            prompt_tokens,
            n_ctx,
        } => json!({"prompt_tokens": prompt_tokens, "n_ctx": n_ctx}),
        _ => Value::Null,
    }
}

/// A usage as the error objects spell it.
fn usage_json(u: toolgram_retry::Usage) -> Value {
    json!({"prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "cached_prompt_tokens": u.cached_prompt_tokens})
}
