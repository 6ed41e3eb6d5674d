//! `openai-chat` (alias `openai`): OpenAI Chat Completions at api.openai.com, key from
//! `OPENAI_API_KEY` as a bearer token; strict function tools, no whole-reply grammar; GPT-5
//! models get grammar tools as freeform custom tools. The wire shapes are
//! `dialect::openai_chat`'s; this file must only say which of them OpenAI takes.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::render::{common_fields, unsupported};
use crate::reply::restored_calls;
use crate::spec::{
    Auth, Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape,
};
use serde_json::Value;
use toolgram_core::ToolSet;
use toolgram_core::define::request::Path;
use toolgram_retry::ModelReply;

/// OpenAI Chat Completions.
#[derive(Debug)]
pub(crate) struct OpenAiChat;

/// Its row.
static INFO: ProviderInfo = ProviderInfo {
    name: "openai-chat",
    aliases: &["openai"],
    default_base_url: "https://api.openai.com",
    api_key_env: Some("OPENAI_API_KEY"),
    auth: Auth::Bearer,
    capabilities: Capabilities {
        grammar: false,
        strict_json: true,
    },
};

impl ProviderSpec for OpenAiChat {
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
                chat::strict_tools(input, pool, chat::freeform_model(input.model), notes)?
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
