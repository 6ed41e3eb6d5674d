//! The registry: every provider toolgram speaks, one file each, listed here one line each.
//! Adding a provider is a new file implementing [`ProviderSpec`] and its line in
//! [`REGISTRY`]. Name lookup only: a provider's behaviour lives in its own file, never here.

mod anthropic;
mod gemini;
mod llama_server;
mod ollama;
mod openai_chat;
mod openai_responses;
mod sglang;
mod vllm;

use crate::error::ProviderError;
use crate::spec::{Kind, ProviderSpec};

/// Every provider, in the order they are listed to users.
pub static REGISTRY: &[&dyn ProviderSpec] = &[
    &openai_chat::OpenAiChat,
    &openai_responses::OpenAiResponses,
    &anthropic::Anthropic,
    &gemini::Gemini,
    &llama_server::LlamaServer,
    &vllm::Vllm,
    &sglang::Sglang,
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
