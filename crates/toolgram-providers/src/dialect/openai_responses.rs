//! The OpenAI Responses API, as api.openai.com speaks it: `instructions` + `input` items, flat
//! strict function tools (freeform custom tools for the models that take them), `output`
//! items back, the `response.completed` stream event — the shapes toolgram-wire's `responses`
//! module's, which the server reads and writes with too. Which tools go and OpenAI's Lark
//! come from `dialect::openai_chat`; this file must not copy them. Shapes only: the URL and
//! key are the `openai-responses` row's in the registry.

use crate::dialect::openai_chat as chat;
use crate::dialect::request::{common_fields, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::stream::bad;
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolSet};
use toolgram_wire::responses::input as input_items;
use toolgram_wire::responses::{reply, stream, tools};

/// OpenAI Responses.
#[derive(Debug)]
pub(crate) struct Responses;

impl Dialect for Responses {
    fn profile(&self) -> Profile {
        Profile::OpenAiStrict
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        json!({
            "instructions": prompt_system(input, pool),
            "input": input_items::write(input.messages),
        })
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        let mut body = json!({"input": input_items::write(input.messages)});
        let freeform = chat::freeform_model(input.model);
        if let Some(items) = chat::openai_tools(input, pool, freeform, notes, &FLAT_TOOLS)? {
            body["tools"] = Value::Array(items);
            body["tool_choice"] = tools::write_choice(&input.shape.choice);
            body["parallel_tool_calls"] = json!(input.shape.parallel);
        }
        Ok(body)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, toolgram_wire::responses::envelope::MAX_TOKENS);
        "/v1/responses".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        reply::read_text(body).ok_or_else(|| ReadError::shape(kind, "no `output` array"))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        reply::read_calls(body).map_err(|e| ReadError::body(body, e.message))
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        reply::read_usage(body)
    }

    fn assemble(&self, kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        stream::assemble(chunks).map_err(|e| bad(kind, e.message))
    }
}

/// The Responses API's tools: flat.
const FLAT_TOOLS: chat::ToolShape = chat::ToolShape {
    function: tools::write_function,
    custom: tools::write_custom,
};
