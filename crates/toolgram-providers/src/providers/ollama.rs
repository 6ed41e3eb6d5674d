//! `ollama`: Ollama's `/api/chat` (default `http://127.0.0.1:11434`, no key): OpenAI-shaped
//! messages, the call union as `format` on the strict path (the reply read as one JSON
//! object), sampling under `options`, `stream` always sent, replies and JSON-line streams of
//! `message` chunks. Shared shapes come from `dialect/`; this file must not copy them.

use crate::dialect::json_object;
use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::render::unsupported;
use crate::spec::{Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape};
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::request::Path;
use toolgram_core::{ToolCall, ToolSet};
use toolgram_retry::ModelReply;

/// Ollama's chat API.
#[derive(Debug)]
pub(crate) struct Ollama;

/// Its row.
static INFO: ProviderInfo = ProviderInfo::local(
    "ollama",
    "http://127.0.0.1:11434",
    Capabilities {
        grammar: false,
        strict_json: true,
    },
);

impl ProviderSpec for Ollama {
    fn info(&self) -> &ProviderInfo {
        &INFO
    }

    fn request(
        &self,
        input: &RenderInput,
        pool: &ToolSet,
        notes: &mut Vec<String>,
    ) -> Result<(String, Value), ProviderError> {
        let mut body = match input.path {
            Path::Prompt => chat::prompt(input, pool),
            Path::StrictJson => {
                let (messages, schema) = json_object::request(input, pool, notes)?;
                json!({"messages": messages, "format": schema})
            }
            path => return Err(unsupported(self, path)),
        };
        if let (Some(model), Value::Object(map)) = (input.model, &mut body) {
            map.insert("model".into(), json!(model));
        }
        let mut opts = serde_json::Map::new();
        if let Some(t) = input.temperature {
            opts.insert("temperature".into(), json!(t));
        }
        if let Some(n) = input.max_tokens {
            opts.insert("num_predict".into(), json!(n));
        }
        if !opts.is_empty() {
            body["options"] = Value::Object(opts);
        }
        body["stream"] = json!(input.stream);
        Ok(("/api/chat".to_owned(), body))
    }

    fn strict_calls(
        &self,
        text: String,
        _body: &Value,
        tools: &ToolSet,
    ) -> Result<ModelReply, ReadError> {
        json_object::read(&text, tools)
    }

    fn replies(&self) -> &'static dyn ReplyShape {
        &Ollama
    }
}

impl ReplyShape for Ollama {
    fn reply_text(&self, _kind: &dyn ProviderSpec, body: &Value) -> Result<String, ReadError> {
        Ok(body
            .pointer("/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| ReadError::shape(self, "no `message.content`"))?
            .to_owned())
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        chat::tool_calls(body, "/message/tool_calls")
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        (
            count(body, "/prompt_eval_count"),
            count(body, "/eval_count"),
            None,
        )
    }

    fn assemble(&self, chunks: &[Value]) -> Result<Value, ProviderError> {
        let mut content = String::new();
        let mut calls: Vec<Value> = Vec::new();
        for c in chunks {
            content.push_str(
                c.pointer("/message/content")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            );
            calls.extend(
                c.pointer("/message/tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
        Ok(json!({"message": {"role": "assistant", "content": content, "tool_calls": calls}}))
    }
}
