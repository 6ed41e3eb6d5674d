//! What each provider can enforce, and the path a request takes: the strongest constraint
//! the provider offers on the chain grammar → strict JSON Schema → prompt-based, with the
//! reason recorded. A downgrade is never silent: it is either reported with its reason or,
//! with fallback off, an error.

use crate::error::ProviderError;
use toolgram_core::define::request::Path;

/// A provider's request dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
    /// llama.cpp's `llama-server` (OpenAI-compatible endpoint plus `grammar`/`json_schema`).
    LlamaServer,
    /// vLLM's OpenAI-compatible server with structured outputs.
    Vllm,
    /// SGLang's OpenAI-compatible server with structured outputs.
    Sglang,
    /// Ollama's `/api/chat`.
    Ollama,
}

impl Kind {
    /// The provider for a CLI/config name.
    pub fn from_name(name: &str) -> Result<Self, ProviderError> {
        Ok(match name {
            "openai-chat" | "openai" => Self::OpenAiChat,
            "openai-responses" => Self::OpenAiResponses,
            "anthropic" => Self::Anthropic,
            "gemini" => Self::Gemini,
            "llama-server" => Self::LlamaServer,
            "vllm" => Self::Vllm,
            "sglang" => Self::Sglang,
            "ollama" => Self::Ollama,
            other => return Err(ProviderError::UnknownProvider(other.to_owned())),
        })
    }

    /// Where its API lives unless a base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => "https://api.openai.com",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Gemini => "https://generativelanguage.googleapis.com",
            Self::Ollama => "http://127.0.0.1:11434",
            Self::LlamaServer | Self::Vllm | Self::Sglang => "http://127.0.0.1:8080",
        }
    }

    /// The environment variable its key is read from unless another is named.
    pub fn api_key_env(self) -> Option<&'static str> {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => Some("OPENAI_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::Gemini => Some("GEMINI_API_KEY"),
            Self::LlamaServer | Self::Vllm | Self::Sglang | Self::Ollama => None,
        }
    }

    /// The CLI/config name.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::LlamaServer => "llama-server",
            Self::Vllm => "vllm",
            Self::Sglang => "sglang",
            Self::Ollama => "ollama",
        }
    }
}

/// What a provider can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Takes a grammar for the whole reply.
    pub grammar: bool,
    /// Enforces a JSON Schema (strict function tools or structured output).
    pub strict_json: bool,
}

impl Capabilities {
    /// The documented capabilities of a provider's API.
    pub fn of(kind: Kind) -> Self {
        match kind {
            Kind::LlamaServer | Kind::Vllm | Kind::Sglang => Self {
                grammar: true,
                strict_json: true,
            },
            Kind::OpenAiChat
            | Kind::OpenAiResponses
            | Kind::Anthropic
            | Kind::Gemini
            | Kind::Ollama => Self {
                grammar: false,
                strict_json: true,
            },
        }
    }
}

/// The strongest path at or below `wanted` that `caps` allow, and why; with `fallback`
/// false, anything weaker than `wanted` is [`ProviderError::NoFallback`].
pub fn choose_path(
    kind: Kind,
    caps: Capabilities,
    wanted: Path,
    fallback: bool,
) -> Result<(Path, String), ProviderError> {
    let chain = [Path::Grammar, Path::StrictJson, Path::Prompt];
    let mut skipped = Vec::new();
    for path in chain.into_iter().filter(|p| *p >= wanted) {
        let ok = match path {
            Path::Grammar => caps.grammar,
            Path::StrictJson => caps.strict_json,
            // The embedded engine's json mode is no provider path.
            Path::Json => false,
            Path::Prompt => true,
        };
        if ok {
            let why = if skipped.is_empty() {
                format!("{} supports {}", kind.name(), path.name())
            } else {
                format!(
                    "{} has no {} capability; fell back to {}",
                    kind.name(),
                    skipped.join(" or "),
                    path.name()
                )
            };
            if !skipped.is_empty() && !fallback {
                return Err(ProviderError::NoFallback {
                    provider: kind.name().to_owned(),
                    wanted: wanted.name().to_owned(),
                    why: format!("no {} capability", skipped.join(" or ")),
                });
            }
            return Ok((path, why));
        }
        skipped.push(path.name());
    }
    Err(ProviderError::Unsupported("no path".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_falls_back_with_a_reason_or_refuses() {
        let caps = Capabilities::of(Kind::OpenAiChat);
        let (p, why) = choose_path(Kind::OpenAiChat, caps, Path::Grammar, true).expect("path");
        assert_eq!(p, Path::StrictJson);
        assert!(why.contains("no grammar capability"), "{why}");
        assert!(matches!(
            choose_path(Kind::OpenAiChat, caps, Path::Grammar, false),
            Err(ProviderError::NoFallback { .. })
        ));
        let none = Capabilities {
            grammar: false,
            strict_json: false,
        };
        let (p, _) = choose_path(Kind::LlamaServer, none, Path::Grammar, true).expect("path");
        assert_eq!(p, Path::Prompt);
        let (p, _) = choose_path(
            Kind::LlamaServer,
            Capabilities::of(Kind::LlamaServer),
            Path::Grammar,
            false,
        )
        .expect("path");
        assert_eq!(p, Path::Grammar);
    }
}
