//! The path a request takes: the strongest constraint the provider offers (its
//! [`crate::Capabilities`], minus any switched off) on the chain grammar → strict JSON Schema →
//! prompt-based, with the reason recorded. A downgrade is never silent: it is either reported
//! with its reason or, with fallback off, an error.

use crate::error::ProviderError;
use crate::spec::{Capabilities, Kind};
use toolgram_core::define::request::Path;

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
    use crate::providers::lookup;

    #[test]
    fn the_chain_falls_back_with_a_reason_or_refuses() {
        let openai = lookup("openai-chat").expect("registered");
        let llama = lookup("llama-server").expect("registered");
        let caps = openai.capabilities();
        let (p, why) = choose_path(openai, caps, Path::Grammar, true).expect("path");
        assert_eq!(p, Path::StrictJson);
        assert!(why.contains("no grammar capability"), "{why}");
        assert!(matches!(
            choose_path(openai, caps, Path::Grammar, false),
            Err(ProviderError::NoFallback { .. })
        ));
        let none = Capabilities {
            grammar: false,
            strict_json: false,
        };
        let (p, _) = choose_path(llama, none, Path::Grammar, true).expect("path");
        assert_eq!(p, Path::Prompt);
        let (p, _) = choose_path(llama, llama.capabilities(), Path::Grammar, false).expect("path");
        assert_eq!(p, Path::Grammar);
    }
}
