//! `vllm` and `sglang`: OpenAI-compatible inference servers (default `http://127.0.0.1:8080`, no
//! key) with strict function tools and our GBNF for the whole reply, each in its own request
//! field (vLLM: `structured_outputs.grammar`; SGLang: `ebnf`). A row of [`GrammarServer`] each:
//! the wire shapes are `dialect::openai_chat`'s; this file must only say which of them these
//! servers take and where their grammar goes.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::render::{common_fields, unsupported};
use crate::reply::restored_calls;
use crate::spec::{Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape};
use serde_json::{Value, json};
use toolgram_core::ToolSet;
use toolgram_core::define::request::Path;
use toolgram_retry::ModelReply;

/// An OpenAI-compatible server that takes a whole-reply grammar in a field of its own.
#[derive(Debug)]
pub(crate) struct GrammarServer {
    info: ProviderInfo,
    /// The request field the GBNF goes in, outermost key first.
    grammar_field: &'static [&'static str],
}

const GRAMMAR_AND_STRICT: Capabilities = Capabilities {
    grammar: true,
    strict_json: true,
};

/// vLLM's OpenAI-compatible server.
pub(crate) static VLLM: GrammarServer = GrammarServer {
    info: ProviderInfo::local("vllm", "http://127.0.0.1:8080", GRAMMAR_AND_STRICT),
    grammar_field: &["structured_outputs", "grammar"],
};

/// SGLang's OpenAI-compatible server.
pub(crate) static SGLANG: GrammarServer = GrammarServer {
    info: ProviderInfo::local("sglang", "http://127.0.0.1:8080", GRAMMAR_AND_STRICT),
    grammar_field: &["ebnf"],
};

impl ProviderSpec for GrammarServer {
    fn info(&self) -> &ProviderInfo {
        &self.info
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
                let slot = self
                    .grammar_field
                    .iter()
                    .fold(&mut body, |at, key| &mut at[*key]);
                *slot = json!(grammar);
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
