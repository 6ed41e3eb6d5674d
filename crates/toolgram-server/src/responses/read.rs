//! The Responses request as coding agents send it — `input` as a string or items (read by
//! toolgram-wire's `responses::input`, which the provider writes them with; items of hosted
//! tools skipped with a note), `instructions`, `previous_response_id` (the stored conversation), `namespace` tool groups,
//! hosted tools left out and listed, `reasoning` mapped to the model's reasoning block where
//! its template has one — read into a runtime [`Request`]. This module must not build replies
//! or run anything.

use crate::app::App;
use crate::error::ApiError;
use crate::handler::{self, Read};
use crate::mcp::{self, McpUse};
use crate::params::{self, ModelAsks};
use serde_json::{Map, Value};
use std::sync::Arc;
use toolgram_core::ChatMessage;
use toolgram_core::define::request::Think;
use toolgram_runtime::Request;
use toolgram_wire::chat::tools;
use toolgram_wire::responses::reply::Asked;
use toolgram_wire::responses::{envelope, input};

/// What a Responses reply needs from its request besides the runtime request.
pub struct ResponsesFields {
    /// Stream the reply as typed events.
    pub stream: bool,
    /// What it asked of its reply: kept or not, the echoed fields, tool namespaces, reasoning
    /// carried back.
    pub asked: Asked,
    /// The declared MCP servers its `mcp` tools name (`None`: no `mcp` tool): the server
    /// runs the loop.
    pub mcp: Option<Arc<McpUse>>,
}

/// A Responses request as read.
pub type ResponsesRequest = Read<ResponsesFields>;

/// A Responses request ready to run.
pub type Checked = handler::Checked<ResponsesFields>;

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "input",
    "instructions",
    "previous_response_id",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "stream",
    "store",
    "reasoning",
    "include",
    "prompt_cache_key",
];

/// Fields accepted that change nothing a single local model does (the session cache keys
/// on the prompt itself, so `prompt_cache_key` needs no more than the prompt).
const ACCEPTED: &[&str] = &[
    "metadata",
    "client_metadata",
    "user",
    "service_tier",
    "truncation",
    "safety_identifier",
    "stream_options",
    "background",
    "top_logprobs",
];

/// OpenAI's bounds on `metadata`: pairs, key characters, value characters.
pub const METADATA_LIMITS: (usize, usize, usize) = (16, 64, 512);

/// `metadata` within OpenAI's bounds (it is stored with the response): an object of at most
/// 16 string values, keys of at most 64 characters, values of at most 512; else a 400 naming
/// the bound.
fn check_metadata(metadata: Option<&Value>) -> Result<(), ApiError> {
    let (pairs, key_chars, value_chars) = METADATA_LIMITS;
    let o = match metadata {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(ApiError::invalid(
                "metadata",
                "`metadata` must be an object of string values",
            ));
        }
    };
    if o.len() > pairs {
        return Err(ApiError::invalid(
            "metadata",
            format!(
                "`metadata` has {} pairs; at most {pairs} are allowed",
                o.len()
            ),
        ));
    }
    for (k, v) in o {
        let key = crate::clip::cut(k, key_chars * 4);
        if k.chars().count() > key_chars {
            return Err(ApiError::invalid(
                "metadata",
                format!("`metadata` key `{key}` is longer than {key_chars} characters"),
            ));
        }
        match v.as_str() {
            Some(s) if s.chars().count() <= value_chars => {}
            Some(_) => {
                return Err(ApiError::invalid(
                    "metadata",
                    format!("`metadata.{key}` is longer than {value_chars} characters"),
                ));
            }
            None => {
                return Err(ApiError::invalid(
                    "metadata",
                    format!("`metadata.{key}` must be a string"),
                ));
            }
        }
    }
    Ok(())
}

/// Read a Responses body.
pub fn read(app: &App, body: &Value) -> Result<ResponsesRequest, ApiError> {
    let o = params::object(body)?;
    let mut messages = match params::opt_str(o, "previous_response_id")? {
        Some(id) => {
            app.stored(id)
                .ok_or_else(|| {
                    ApiError::invalid("previous_response_id", format!("no stored response `{id}`"))
                })?
                .messages
        }
        None => Vec::new(),
    };
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    check_metadata(o.get("metadata"))?;
    let input = o
        .get("input")
        .ok_or_else(|| ApiError::invalid("input", "`input` is required"))?;
    let tools = match o.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(ApiError::invalid("tools", "`tools` must be an array")),
    };
    let mut extras = input::InputExtras {
        tools,
        ..input::InputExtras::default()
    };
    messages.extend(input::read(input, &mut extras)?);
    let tools = extras.tools;
    notes.append(&mut extras.notes);
    if let Some(instructions) = params::opt_str(o, "instructions")? {
        messages.retain(|m| m.role != "system");
        messages.insert(0, ChatMessage::text("system", instructions));
    }
    let mut mcp_left_out = Vec::new();
    let (kept, mut mcp) =
        mcp::responses_tools(app, tools, extras.approvals, &mut mcp_left_out, &mut notes)?;
    let pool = params::pool(&kept, app.config.hosted_tools, "tools", tools::read)?;
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.not_offered.append(&mut mcp_left_out);
    if let Some(m) = &mut mcp {
        mcp::offer(app, m, &mut req)?;
    }
    let has_tools = !req.tools.tools().is_empty();
    let mut asks = ModelAsks {
        think: envelope::reasoning_asked(o)?
            .filter(|asked| *asked)
            .map(|_| ("reasoning", Think::Required)),
        ..ModelAsks::default()
    };
    req.shape.choice = tools::read_choice(o, has_tools)?;
    req.shape.parallel = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format = params::response_format(envelope::format(o), envelope::FORMAT_PARAM)?;
    req.sampling = params::sampling(o, &[envelope::MAX_TOKENS], &app.config, &mut asks)?;
    params::toolgram_fields(o, &app.config, &mut req, &mut asks, &mut notes)?;
    let encrypted_reasoning = match o.get("include") {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => a
            .iter()
            .any(|v| v.as_str() == Some("reasoning.encrypted_content")),
        Some(_) => return Err(ApiError::invalid("include", "`include` must be an array")),
    };
    let echo: Map<String, Value> = [
        "instructions",
        "previous_response_id",
        "tool_choice",
        "tools",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "max_output_tokens",
        "text",
        "metadata",
        "reasoning",
    ]
    .iter()
    .map(|k| ((*k).to_owned(), o.get(*k).cloned().unwrap_or(Value::Null)))
    .collect();
    Ok(Read {
        req,
        asks,
        notes,
        api: ResponsesFields {
            stream: params::opt_bool(o, "stream")?.unwrap_or(false),
            asked: Asked {
                store: params::opt_bool(o, "store")?.unwrap_or(true),
                echo: Value::Object(echo),
                namespaces: pool.namespaces,
                encrypted_reasoning,
            },
            mcp: mcp.map(Arc::new),
        },
    })
}
