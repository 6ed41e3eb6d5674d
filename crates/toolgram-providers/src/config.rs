//! `toolgram.toml`: named provider entries (kind, base URL, model, the environment variable
//! holding the key, fallback policy, capabilities switched off). Keys themselves never go in
//! the file. Reading only; flags given on the command line win over the file.

use crate::error::ProviderError;
use crate::providers::lookup;
use crate::spec::{Capabilities, Kind};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Whether a missing capability may fall back to a weaker path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// Fall back along grammar → strict JSON → prompt, and say so.
    #[default]
    Allowed,
    /// A missing capability is an error.
    Never,
}

/// One provider entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The provider kind (`llama-server`, `openai-chat`, …).
    pub kind: String,
    /// Base URL of its API.
    pub base_url: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Environment variable holding the key.
    pub api_key_env: Option<String>,
    /// Fallback policy.
    #[serde(default)]
    pub fallback: Fallback,
    /// Capabilities switched off: `grammar`, `strict-json`.
    #[serde(default)]
    pub disable: Vec<String>,
}

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Entries by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
}

impl Config {
    /// Read and check a config file.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Config(format!("{}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| ProviderError::Config(format!("{}: {e}", path.display())))
    }

    /// Parse and check config text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let cfg: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        for (name, p) in &cfg.providers {
            lookup(&p.kind).map_err(|e| format!("provider `{name}`: {e}"))?;
            if let Some(bad) = p
                .disable
                .iter()
                .find(|d| !matches!(d.as_str(), "grammar" | "strict-json"))
            {
                return Err(format!(
                    "provider `{name}`: cannot disable `{bad}` (grammar, strict-json)"
                ));
            }
        }
        Ok(cfg)
    }
}

/// Settings given on a command line or in a request, which win over a config entry.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Base URL.
    pub base_url: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Environment variable holding the key.
    pub api_key_env: Option<String>,
    /// Capabilities switched off: `grammar`, `strict-json`.
    pub disable: Vec<String>,
    /// A missing capability is an error instead of a fallback.
    pub no_fallback: bool,
}

/// A provider with its config entry, the overrides and the provider's defaults (its row in
/// the registry) merged.
#[derive(Clone)]
pub struct Resolved {
    /// The provider.
    pub kind: Kind,
    /// Base URL.
    pub base_url: String,
    /// Model id.
    pub model: Option<String>,
    /// The key, read from its environment variable (never printed).
    pub api_key: Option<String>,
    /// What it can enforce, minus what was switched off.
    pub capabilities: Capabilities,
    /// Whether a missing capability may fall back to a weaker path.
    pub fallback: bool,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("capabilities", &self.capabilities)
            .field("fallback", &self.fallback)
            .finish()
    }
}

impl Config {
    /// The provider called `name` (a config entry, else a kind name), with `o` applied.
    pub fn resolve(&self, name: &str, o: &Overrides) -> Result<Resolved, ProviderError> {
        let entry = self.providers.get(name);
        let kind = lookup(entry.map_or(name, |e| e.kind.as_str()))?;
        if let Some(bad) = o
            .disable
            .iter()
            .find(|d| !matches!(d.as_str(), "grammar" | "strict-json"))
        {
            return Err(ProviderError::Config(format!(
                "cannot disable `{bad}` (grammar, strict-json)"
            )));
        }
        let disabled = |word: &str| {
            o.disable.iter().any(|d| d == word)
                || entry.is_some_and(|e| e.disable.iter().any(|d| d == word))
        };
        let mut capabilities = kind.capabilities();
        capabilities.grammar &= !disabled("grammar");
        capabilities.strict_json &= !disabled("strict-json");
        let key_env = o
            .api_key_env
            .clone()
            .or_else(|| entry.and_then(|e| e.api_key_env.clone()))
            .or_else(|| kind.api_key_env().map(str::to_owned));
        Ok(Resolved {
            kind,
            base_url: o
                .base_url
                .clone()
                .or_else(|| entry.and_then(|e| e.base_url.clone()))
                .unwrap_or_else(|| kind.default_base_url().to_owned()),
            model: o
                .model
                .clone()
                .or_else(|| entry.and_then(|e| e.model.clone())),
            api_key: key_env.and_then(|v| std::env::var(v).ok()),
            capabilities,
            fallback: !o.no_fallback && entry.is_none_or(|e| e.fallback == Fallback::Allowed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_when_read() {
        let cfg = Config::parse(
            "[providers.local]\nkind = \"llama-server\"\nbase_url = \"http://127.0.0.1:8080\"\nfallback = \"never\"\ndisable = [\"grammar\"]\n",
        )
        .expect("valid");
        let local = &cfg.providers["local"];
        assert_eq!(local.fallback, Fallback::Never);
        assert_eq!(local.disable, vec!["grammar".to_owned()]);
        assert!(Config::parse("[providers.x]\nkind = \"nope\"\n").is_err());
        assert!(
            Config::parse("[providers.x]\nkind = \"gemini\"\napi_key = \"sk-…\"\n").is_err(),
            "keys never go in the file"
        );
        assert!(
            Config::parse("[providers.x]\nkind = \"gemini\"\ndisable = [\"prompt\"]\n").is_err()
        );
    }
}
