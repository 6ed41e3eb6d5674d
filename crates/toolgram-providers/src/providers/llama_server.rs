//! `llama-server`: llama.cpp's server (default `http://127.0.0.1:8080`, no key), OpenAI Chat
//! Completions plus our GBNF for the whole reply as `grammar` (never with `tools`) and, on the
//! strict path, the call union as `json_schema` with the reply read as one JSON object. The
//! wire shapes are `dialect::openai_chat`'s and `dialect::json_object`'s; this file must only
//! say which of them llama-server takes.

use crate::dialect::json_object;
use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::render::{common_fields, unsupported};
use crate::spec::{Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape};
use serde_json::{Value, json};
use toolgram_core::ToolSet;
use toolgram_core::define::request::Path;
use toolgram_retry::ModelReply;

/// llama.cpp's `llama-server`.
#[derive(Debug)]
pub(crate) struct LlamaServer;

/// Its row.
static INFO: ProviderInfo = ProviderInfo::local(
    "llama-server",
    "http://127.0.0.1:8080",
    Capabilities {
        grammar: true,
        strict_json: true,
    },
);

impl ProviderSpec for LlamaServer {
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
                json!({"messages": messages, "json_schema": schema})
            }
            Path::Grammar => {
                let (mut body, grammar) = chat::grammar(input, notes)?;
                body["grammar"] = json!(grammar);
                body
            }
            path => return Err(unsupported(self, path)),
        };
        common_fields(input, &mut body, "max_tokens");
        Ok((chat::ENDPOINT.to_owned(), body))
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
        &chat::ChatCompletions
    }
}
