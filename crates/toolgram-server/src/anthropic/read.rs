//! Reading an Anthropic Messages body into a runtime [`Request`]: `system` and `messages`,
//! `tools` with `input_schema` (Anthropic's server tools left out and listed) and
//! `tool_choice` with `disable_parallel_tool_use` read by toolgram-wire's `anthropic` module
//! (the provider writes them with the same module), `max_tokens`, `temperature`,
//! `top_p`, `stop_sequences`, `thinking`, structured output (`output_config.format` or
//! `output_format`, beside the tools or alone), the MCP connector's `mcp_servers` and
//! `mcp_toolset` tools naming servers declared at start ([`crate::mcp`]). Fields the server
//! does not use are accepted and named in the reply's notes. This module must not run
//! anything or write replies.

use crate::app::App;
use crate::error::ApiError;
use crate::handler::Read;
use crate::mcp::{self, McpUse};
use crate::params::{self, ModelAsks};
use serde_json::{Map, Value};
use std::sync::Arc;
use toolgram_runtime::{Request, ResponseFormat};
use toolgram_wire::anthropic::{envelope, messages, tools};

/// What a Messages reply needs from its request besides the runtime request.
pub struct MessagesFields {
    /// Stream the reply as SSE.
    pub stream: bool,
    /// The declared MCP servers its `mcp_servers` name (`None`: none): the server runs the
    /// loop.
    pub mcp: Option<Arc<McpUse>>,
}

/// A Messages request as read.
pub type MessagesRequest = Read<MessagesFields>;

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "messages",
    "system",
    "max_tokens",
    "temperature",
    "top_p",
    "stop_sequences",
    "stream",
    "tools",
    "tool_choice",
    "thinking",
    "output_format",
    "mcp_servers",
];

/// Fields accepted that change nothing a single local model does.
const ACCEPTED: &[&str] = &[
    "metadata",
    "service_tier",
    "context_management",
    "container",
    "output_config",
    "inference_geo",
    "cache_control",
    "speed",
    "diagnostics",
];

/// `thinking` ([`envelope::thinking`]) as the model's reasoning block, with its token budget:
/// whether the model's template has one is settled once it is loaded ([`ModelAsks::apply`]).
fn think(o: &Map<String, Value>) -> ModelAsks {
    match envelope::thinking(o) {
        Some((think, budget)) => ModelAsks {
            think: Some(("thinking", think)),
            think_budget: budget,
            ..ModelAsks::default()
        },
        None => ModelAsks::default(),
    }
}

/// Structured output where [`envelope::output_format`] finds it.
fn output_format(o: &Map<String, Value>) -> Result<Option<ResponseFormat>, ApiError> {
    let (format, param) = envelope::output_format(o);
    params::response_format(format, param)
}

/// Read a Messages body (also `count_tokens`', which has no `max_tokens`).
pub fn read(app: &App, body: &Value) -> Result<MessagesRequest, ApiError> {
    let o = params::object(body)?;
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    let messages = messages::read(o, &mut notes)?;
    let mut tools = match o.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(ApiError::invalid("tools", "`tools` must be an array")),
    };
    let mut left_out = Vec::new();
    let mcp = mcp::anthropic_servers(app, o, &mut tools, &mut left_out, &mut notes)?;
    let pool = params::pool(&tools, app.config.hosted_tools, "tools", tools::read)?;
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.not_offered.append(&mut left_out);
    let mut mcp = mcp.filter(|m| !m.servers.is_empty());
    if let Some(m) = &mut mcp {
        mcp::offer(app, m, &mut req)?;
    }
    let has_tools = !req.tools.tools().is_empty();
    (req.shape.choice, req.shape.parallel) = tools::read_choice(o, has_tools)?;
    let mut asks = think(o);
    let mut sampling = params::sampling(o, &[envelope::MAX_TOKENS], &app.config, &mut asks)?;
    let stop = envelope::stop_sequences(o)?;
    sampling.stop = params::bounded_stop("stop_sequences", stop)?;
    req.sampling = sampling;
    params::toolgram_fields(o, &app.config, &mut req, &mut asks, &mut notes)?;
    req.response_format = output_format(o)?;
    let stream = params::opt_bool(o, "stream")?.unwrap_or(false);
    Ok(Read {
        req,
        asks,
        notes,
        api: MessagesFields {
            stream,
            mcp: mcp.map(Arc::new),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::HostedTools;
    use serde_json::json;

    /// A Messages tool reads with its own `input_schema`; a server tool is hosted.
    #[test]
    fn messages_tools_read_with_their_input_schema_and_server_tools_are_hosted() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let items = vec![
            json!({"name": "search", "input_schema": schema}),
            json!({"type": "custom", "name": "bare"}),
            json!({"type": "web_search_20250305", "name": "web_search"}),
        ];
        let p = params::pool(&items, HostedTools::Filter, "tools", tools::read).expect("reads");
        let tools = p.tools.tools();
        assert_eq!(tools[0].parameters, schema);
        assert_eq!(tools[1].parameters, json!({"type": "object"}));
        assert_eq!(p.not_offered.len(), 1);
        let bad = vec![json!({"input_schema": schema})];
        let m = params::tests::pool_refusal(&bad, tools::read);
        assert!(m.contains("/0/name"), "{m}");
    }
}
