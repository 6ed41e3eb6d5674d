//! What the CLI prints: the OpenAI assistant message on stdout, `{"error":{…}}` on stderr.

use serde_json::{Value, json};
use toolgram_core::profile::ProfileError;
use toolgram_engine::{CallResponse, EngineError};
use toolgram_providers::ProviderError;

/// The assistant message for a reply, with toolgram's extension fields.
pub fn assistant_message(r: &CallResponse, syntax: &str, model: &str) -> Value {
    let mut msg = json!({
        "role": "assistant",
        "content": r.content,
    });
    if let Some(reasoning) = &r.reasoning_content {
        msg["reasoning_content"] = json!(reasoning);
    }
    if !r.tool_calls.is_empty() {
        msg["tool_calls"] = Value::Array(r.tool_calls.iter().map(|c| c.to_openai()).collect());
    }
    msg["finish_reason"] = json!(r.finish_reason.as_str());
    msg["usage"] = json!({
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "total_tokens": r.prompt_tokens + r.completion_tokens,
    });
    msg["toolgram"] =
        json!({"path": r.mode.as_str(), "syntax": syntax, "model": model, "attempts": 1});
    if !r.deferred.is_empty() {
        let deferred: Vec<Value> = r
            .deferred
            .iter()
            .map(|d| json!({"tool": d.tool, "pointer": d.pointer, "keyword": d.keyword}))
            .collect();
        msg["toolgram"]["enforced_after_parse"] = Value::Array(deferred);
    }
    msg
}

/// Print an error as one JSON line on stderr.
pub fn print_error(e: &anyhow::Error) {
    let (kind, extra) = match e.downcast_ref::<EngineError>() {
        Some(EngineError::Truncated { partial, .. }) => ("truncated", json!({"partial": partial})),
        Some(EngineError::ContextOverflow {
            prompt_tokens,
            n_ctx,
        }) => (
            "context_overflow",
            json!({"prompt_tokens": prompt_tokens, "n_ctx": n_ctx}),
        ),
        Some(other) => (other.kind(), Value::Null),
        None => match e.downcast_ref::<toolgram_engine::models::FetchError>() {
            Some(_) => ("model_fetch_error", Value::Null),
            None => match e.downcast_ref::<CliError>() {
                Some(c) => (c.kind, c.details.clone()),
                None => match e.downcast_ref::<ProfileError>() {
                    Some(p) => (profile_kind(p), Value::Null),
                    None => match e.downcast_ref::<ProviderError>() {
                        Some(p) => (provider_kind(p), Value::Null),
                        None => ("error", Value::Null),
                    },
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

fn profile_kind(p: &ProfileError) -> &'static str {
    match p {
        ProfileError::UnknownProfile(_) => "invalid_request",
        ProfileError::OverLimit { .. } => "over_provider_limit",
        _ => "unsupported_by_profile",
    }
}

fn provider_kind(p: &ProviderError) -> &'static str {
    match p {
        ProviderError::UnknownProvider(_) | ProviderError::Unsupported(_) => "invalid_request",
        ProviderError::Config(_) => "invalid_config",
        ProviderError::NoFallback { .. } => "capability_missing",
        ProviderError::Profile(p) => profile_kind(p),
        ProviderError::Compile(_) => "invalid_tools",
        ProviderError::Http(_) | ProviderError::Reply { .. } => "provider_error",
    }
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

/// An error found by the CLI itself (bad arguments, unreadable files).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// Machine-readable kind.
    pub kind: &'static str,
    /// Message.
    pub message: String,
    /// Extra fields for the error object.
    pub details: Value,
}

impl CliError {
    /// A new error.
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// The same error with extra fields (an object) in its JSON.
    pub fn with(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}
