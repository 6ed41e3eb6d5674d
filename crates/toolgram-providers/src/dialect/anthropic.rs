//! Anthropic Messages, as api.anthropic.com speaks it: `system` apart from `messages`, tool
//! results as `tool_result` blocks, strict tools with `input_schema` through the anthropic
//! profile, its `tool_choice` modes, `content` blocks back, `content_block_*` streams — each
//! mapping toolgram-wire's `anthropic` module, which the server reads and writes with too.
//! Shapes only: the URL, key and header are the `anthropic` row's in the registry.

use crate::dialect::request::{common_fields, note_fallbacks, profiled, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::stream::bad;
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_wire::anthropic::{messages, reply, stream, tools};

/// Anthropic Messages.
#[derive(Debug)]
pub(crate) struct Messages;

impl Dialect for Messages {
    fn profile(&self) -> Profile {
        Profile::Anthropic
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        let (_, msgs) = messages::write(input.messages);
        json!({"max_tokens": 1024, "system": prompt_system(input, pool), "messages": msgs})
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        strict(input, pool, notes)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, toolgram_wire::anthropic::envelope::MAX_TOKENS);
        "/v1/messages".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        reply::read_text(body).ok_or_else(|| ReadError::shape(kind, "no `content` array"))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        Ok(reply::read_calls(body))
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        reply::read_usage(body)
    }

    fn assemble(&self, kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        stream::assemble(chunks).map_err(|e| bad(kind, e.message))
    }
}

/// Messages with strict tools.
fn strict(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<Value, ProviderError> {
    let (system, messages) = messages::write(input.messages);
    let mut body = json!({"max_tokens": 1024, "messages": messages});
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    note_fallbacks(pool, false, notes);
    // Anthropic has no allowed_tools: the pool sent is the allowed subset.
    let items: Vec<Value> = profiled(pool, Profile::Anthropic, notes)?
        .into_iter()
        .map(|(name, description, schema)| tools::write(&name, &description, schema))
        .collect();
    if input.shape.choice != ToolChoice::None {
        body["tools"] = Value::Array(items);
    }
    body["tool_choice"] = tools::write_choice(&input.shape.choice, input.shape.parallel);
    Ok(body)
}
