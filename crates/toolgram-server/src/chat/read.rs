//! The Chat Completions request: its body read into a runtime [`Request`] (messages and
//! `tool_choice` by toolgram-wire's `chat` module, which the providers write them with; tools
//! through `params.rs`'s pool; sampling and notes), with what the reply must say. This module
//! must not build replies or run anything.

use crate::app::App;
use crate::error::ApiError;
use crate::handler::Read;
use crate::params::{self, ModelAsks};
use serde_json::Value;
use toolgram_runtime::Request;
use toolgram_wire::chat::{envelope, messages, tools};

/// What a Chat Completions reply needs from its request besides the runtime request.
pub struct ChatFields {
    /// Stream the reply as chunks.
    pub stream: bool,
    /// Send a last chunk with the usage.
    pub include_usage: bool,
}

/// A Chat Completions request as read.
pub type ChatRequest = Read<ChatFields>;

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

/// Read a Chat Completions body.
pub fn read(app: &App, body: &Value) -> Result<ChatRequest, ApiError> {
    let o = params::object(body)?;
    let messages = messages::read(o)?;
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
    req.shape.choice = tools::read_choice(o, has_tools)?;
    req.shape.parallel = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format = params::response_format(o.get("response_format"), "response_format")?;
    let mut asks = ModelAsks::default();
    req.sampling = params::sampling(o, envelope::MAX_TOKENS_KEYS, &app.config, &mut asks)?;
    params::toolgram_fields(o, &app.config, &mut req, &mut asks, &mut notes)?;
    let stream = params::opt_bool(o, "stream")?.unwrap_or(false);
    let include_usage = o
        .get("stream_options")
        .and_then(|s| s.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Read {
        req,
        asks,
        notes,
        api: ChatFields {
            stream,
            include_usage,
        },
    })
}
