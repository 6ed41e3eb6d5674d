//! Ollama's `/api/chat`: OpenAI-shaped messages, sampling under `options`, `stream` always
//! sent, replies and JSON-line streams of `message` chunks. Its strict path is the
//! `json_object` reply under `format` (the `ollama` row says so); the prompt path's messages
//! and the call lists are `dialect::openai_chat`'s: this file must not copy them.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Dialect, Kind, ReadError, RenderInput};
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolSet};

/// Ollama's chat API.
#[derive(Debug)]
pub(crate) struct OllamaChat;

impl Dialect for OllamaChat {
    fn profile(&self) -> Profile {
        Profile::OpenAiStrict
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        chat::prompt(input, pool)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        if let (Some(model), Value::Object(map)) = (input.model, &mut *body) {
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
        "/api/chat".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        Ok(body
            .pointer("/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| ReadError::shape(kind, "no `message.content`"))?
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

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
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
