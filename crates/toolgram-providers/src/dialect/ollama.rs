//! Ollama's `/api/chat`: OpenAI-shaped messages, sampling under `options`, `stream` always
//! sent, replies and JSON-line streams of `message` chunks. Its strict path is the
//! `json_object` reply under `format` (the `ollama` row says so); the prompt path's messages
//! are `dialect::openai_chat`'s, the shapes toolgram-wire's `ollama` module's: this file must
//! not copy them.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Dialect, Kind, ReadError, RenderInput};
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolSet};
use toolgram_wire::ollama;

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
        if let Some(opts) = ollama::options(input.temperature, input.max_tokens) {
            body["options"] = opts;
        }
        body["stream"] = json!(input.stream);
        "/api/chat".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        ollama::read_text(body).ok_or_else(|| ReadError::shape(kind, "no `message.content`"))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        ollama::read_calls(body).map_err(|e| ReadError::body(body, e.message))
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        ollama::read_usage(body)
    }

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        Ok(ollama::assemble(chunks))
    }
}
