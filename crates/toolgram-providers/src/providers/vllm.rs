//! `vllm`: vLLM's OpenAI-compatible server (default `http://127.0.0.1:8080`, no key): strict
//! function tools, and our GBNF for the whole reply as `structured_outputs.grammar`. The wire
//! shapes are `dialect::openai_chat`'s; this file must only say which of them vLLM takes.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::render::{common_fields, unsupported};
use crate::reply::restored_calls;
use crate::spec::{Capabilities, ProviderSpec, ReadError, RenderInput, ReplyShape};
use serde_json::{Value, json};
use toolgram_core::ToolSet;
use toolgram_core::define::request::Path;
use toolgram_retry::ModelReply;

/// vLLM's OpenAI-compatible server.
#[derive(Debug)]
pub(crate) struct Vllm;

impl ProviderSpec for Vllm {
    fn name(&self) -> &'static str {
        "vllm"
    }

    fn default_base_url(&self) -> &'static str {
        "http://127.0.0.1:8080"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            grammar: true,
            strict_json: true,
        }
    }

    fn request(
        &self,
        input: &RenderInput,
        pool: &ToolSet,
        notes: &mut Vec<String>,
    ) -> Result<(String, Value), ProviderError> {
        let mut body = match input.path {
            Path::Prompt => chat::prompt(input, pool),
            Path::StrictJson => chat::strict_tools(input, pool, false, notes)?,
            Path::Grammar => {
                let (mut body, grammar) = chat::grammar(input, notes)?;
                body["structured_outputs"] = json!({"grammar": grammar});
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
        body: &Value,
        tools: &ToolSet,
    ) -> Result<ModelReply, ReadError> {
        restored_calls(self, text, body, tools, Profile::OpenAiStrict)
    }

    fn replies(&self) -> &'static dyn ReplyShape {
        &chat::ChatCompletions
    }
}
