//! The registry: every provider toolgram speaks, listed here one line each: a file of its own
//! implementing [`ProviderSpec`], or a row of a file that holds providers differing only in
//! data (`grammar_servers.rs`: vLLM and SGLang). Adding a provider is one of those and its
//! line in [`REGISTRY`]. Name lookup only: a provider's behaviour lives in its own file, never here.

mod anthropic;
mod gemini;
mod grammar_servers;
mod llama_server;
mod ollama;
mod openai_chat;
mod openai_responses;

use crate::error::ProviderError;
use crate::spec::{Kind, ProviderSpec};

/// Every provider, in the order they are listed to users.
pub static REGISTRY: &[&dyn ProviderSpec] = &[
    &openai_chat::OpenAiChat,
    &openai_responses::OpenAiResponses,
    &anthropic::Anthropic,
    &gemini::Gemini,
    &llama_server::LlamaServer,
    &grammar_servers::VLLM,
    &grammar_servers::SGLANG,
    &ollama::Ollama,
];

/// The provider called `name` (its name or an alias).
pub fn lookup(name: &str) -> Result<Kind, ProviderError> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name() == name || p.aliases().contains(&name))
        .ok_or_else(|| ProviderError::UnknownProvider {
            name: name.to_owned(),
            known: names().join(", "),
        })
}

/// The registered names, in registry order (aliases left out).
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name()).collect()
}

#[cfg(test)]
mod tests;
