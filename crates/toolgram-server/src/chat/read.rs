//! The Chat Completions request: its body read into a runtime [`Request`] (messages, tools
//! and choice through `params.rs`'s pool, sampling and notes; earlier custom-tool calls in the
//! function shape the conversation renders), with what the reply must say. This module must
//! not build replies or run anything.

use crate::app::{App, Served};
use crate::error::ApiError;
use crate::params::{self, Notes};
use serde_json::{Value, json};
use toolgram_core::ChatMessage;
use toolgram_runtime::Request;

/// A request read from the body, with what the reply needs to say; `Q` is the runtime
/// request, then what its check made of it.
pub struct ChatRequest<Q = Request> {
    /// The model it runs on.
    pub served: Served,
    /// The runtime request.
    pub req: Q,
    /// Stream the reply as chunks.
    pub stream: bool,
    /// Send a last chunk with the usage.
    pub include_usage: bool,
    /// What was not done as asked.
    pub notes: Notes,
}

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "logit_bias",
    "max_attempts",
    "plan",
    "call_bias",
    "votes",
    "repeats",
    "strict_schemas",
    "stream",
    "stream_options",
    "n",
];

/// Fields accepted that change nothing a single local model does.
const ACCEPTED: &[&str] = &[
    "user",
    "metadata",
    "store",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
];

/// The roles a Chat Completions message may have.
const ROLES: &[&str] = &["system", "developer", "user", "assistant", "tool"];

/// Read a Chat Completions body.
pub fn read(app: &App, served: Served, body: &Value) -> Result<ChatRequest, ApiError> {
    let o = params::object(body)?;
    let messages = match o.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(ApiError::invalid("messages", "`messages` is empty")),
        _ => return Err(ApiError::invalid("messages", "`messages` must be an array")),
    };
    let messages: Vec<ChatMessage> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            if !ROLES.contains(&role) {
                return Err(ApiError::invalid(
                    &format!("messages[{i}].role"),
                    format!("unknown role `{role}`: one of {}", ROLES.join(", ")),
                ));
            }
            serde_json::from_value(with_custom_calls_as_functions(m))
                .map_err(|e| ApiError::invalid(&format!("messages[{i}]"), e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    if let Some(n) = params::opt_uint(o, "n")?
        && n != 1
    {
        return Err(ApiError::invalid("n", "only `n` = 1 is supported"));
    }
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    let pool = params::tools(o, app.config.hosted_tools)?;
    let has_tools = !pool.tools.tools().is_empty();
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.tool_choice = params::tool_choice(o, has_tools)?;
    req.parallel_tool_calls = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format = params::response_format(o.get("response_format"), "response_format")?;
    req.sampling = params::sampling(
        o,
        &["max_completion_tokens", "max_tokens"],
        &app.config,
        served.max_tokens,
        &mut notes,
    )?;
    req.votes = params::votes(o, app.config.votes)?;
    req.retry = params::retry(o)?;
    req.repeats = params::repeats(o, app.config.repeats)?;
    req.strict_schemas = params::strict_schemas(o, app.config.strict_schemas)?;
    let stream = params::opt_bool(o, "stream")?.unwrap_or(false);
    let include_usage = o
        .get("stream_options")
        .and_then(|s| s.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    app.log_notes("/v1/chat/completions", &notes);
    Ok(ChatRequest {
        served,
        req,
        stream,
        include_usage,
        notes,
    })
}

/// An earlier assistant message's custom-tool calls (`{"type":"custom","custom":{"name",
/// "input"}}`) in the function shape the conversation renders (`{"input": …}` arguments), and
/// `developer` as `system`.
fn with_custom_calls_as_functions(m: &Value) -> Value {
    let mut m = m.clone();
    if m.get("role").and_then(Value::as_str) == Some("developer") {
        m["role"] = json!("system");
    }
    if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for c in calls {
            if let Some(custom) = c.get("custom").cloned() {
                let input = custom.get("input").and_then(Value::as_str).unwrap_or("");
                *c = json!({"id": c.get("id").cloned().unwrap_or(Value::Null), "type": "function",
                    "function": {"name": custom.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": json!({ "input": input }).to_string()}});
            }
        }
    }
    m
}
