//! The registry: every provider toolgram speaks, as a row of data ([`ProviderInfo`]): its
//! names, default base URL, key variable and auth, the dialect it speaks (`dialect/`), its
//! strict path and the field its grammar goes in. Adding a provider that speaks a known
//! dialect is one row here; a new wire shape is one file under `dialect/` first. Data only:
//! no request is built or reply read here.

use crate::dialect::anthropic::Messages;
use crate::dialect::gemini::GenerateContent;
use crate::dialect::ollama::OllamaChat;
use crate::dialect::openai_chat::ChatCompletions;
use crate::dialect::openai_responses::Responses;
use crate::error::ProviderError;
use crate::spec::{Auth, Kind, ProviderInfo, Strict};

/// Chat Completions as OpenAI speaks it: grammar tools as freeform custom tools for the
/// models that take them.
const OPENAI_CHAT: ChatCompletions = ChatCompletions { freeform: true };
/// Chat Completions as the inference servers speak it: grammar tools as their JSON fallback.
const SERVER_CHAT: ChatCompletions = ChatCompletions { freeform: false };

/// Every provider, in the order they are listed to users.
pub static REGISTRY: &[ProviderInfo] = &[
    ProviderInfo::hosted(
        "openai-chat",
        "https://api.openai.com",
        "OPENAI_API_KEY",
        Auth::Bearer,
        &OPENAI_CHAT,
    )
    .with_aliases(&["openai"])
    .with_strict(Strict::Tools),
    ProviderInfo::hosted(
        "openai-responses",
        "https://api.openai.com",
        "OPENAI_API_KEY",
        Auth::Bearer,
        &Responses,
    )
    .with_strict(Strict::Tools),
    ProviderInfo::hosted(
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
        Auth::Header {
            name: "x-api-key",
            extra: &[("anthropic-version", "2023-06-01")],
        },
        &Messages,
    )
    .with_strict(Strict::Tools),
    ProviderInfo::hosted(
        "gemini",
        "https://generativelanguage.googleapis.com",
        "GEMINI_API_KEY",
        Auth::Header {
            name: "x-goog-api-key",
            extra: &[],
        },
        &GenerateContent,
    )
    .with_strict(Strict::Tools),
    ProviderInfo::local("llama-server", "http://127.0.0.1:8080", &SERVER_CHAT)
        .with_strict(Strict::ResponseSchema("json_schema"))
        .with_grammar(&["grammar"]),
    ProviderInfo::local("vllm", "http://127.0.0.1:8080", &SERVER_CHAT)
        .with_strict(Strict::Tools)
        .with_grammar(&["structured_outputs", "grammar"]),
    ProviderInfo::local("sglang", "http://127.0.0.1:8080", &SERVER_CHAT)
        .with_strict(Strict::Tools)
        .with_grammar(&["ebnf"]),
    ProviderInfo::local("ollama", "http://127.0.0.1:11434", &OllamaChat)
        .with_strict(Strict::ResponseSchema("format")),
];

/// The provider called `name` (its name or an alias).
pub fn lookup(name: &str) -> Result<Kind, ProviderError> {
    REGISTRY
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
        .ok_or_else(|| ProviderError::UnknownProvider {
            name: name.to_owned(),
            known: names().join(", "),
        })
}

/// The registered names, in registry order (aliases left out).
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name).collect()
}

#[cfg(test)]
mod tests;
