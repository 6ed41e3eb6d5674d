//! How an item is run ([`EvalMode`]): the modes by name, and which a run gets when it names
//! none or names one its protocol cannot honour.
//!
//! This module must not run anything.

use crate::{EvalError, Protocol};
use toolgram_core::define::request::Mode;

/// How an item is run. `grammar`, `json` and `fallback` are given prompt mode's
/// instructions (the tool-choice rule and example calls in the model's syntax), so against
/// `prompt` only what is enforced while decoding differs; their `-template` forms get the chat
/// template's own tool block instead, as `toolgram call` and `serve` do by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalMode {
    /// Call and arguments decoded under the grammar.
    Grammar,
    /// `Grammar` with the template's tool block for a prompt.
    GrammarTemplate,
    /// Call shape and tool name enforced; arguments validated after.
    Json,
    /// `Json` with the template's tool block for a prompt.
    JsonTemplate,
    /// Nothing enforced: lenient parse, validation, retries.
    Prompt,
    /// `eval tools`: a grammar tool as its JSON fallback function under strict JSON (the
    /// `{"input": …}` schema enforced, the text free), the text checked after parsing — what a
    /// provider without grammars but with strict function calling gets.
    Fallback,
    /// `Fallback` with the template's tool block for a prompt.
    FallbackTemplate,
    /// A peer server's own tool calling (no toolgram grammar); scored strictly (`tool_calls`
    /// only, mode `native`) and leniently (its text read by toolgram's parser,
    /// `native-lenient`).
    Native,
}

/// Every mode, in the order `--mode` lists them.
const ALL: [EvalMode; 8] = [
    EvalMode::Grammar,
    EvalMode::GrammarTemplate,
    EvalMode::Json,
    EvalMode::JsonTemplate,
    EvalMode::Prompt,
    EvalMode::Fallback,
    EvalMode::FallbackTemplate,
    EvalMode::Native,
];

impl EvalMode {
    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Self::Grammar => "grammar",
            Self::GrammarTemplate => "grammar-template",
            Self::Json => "json",
            Self::JsonTemplate => "json-template",
            Self::Prompt => "prompt",
            Self::Fallback => "fallback",
            Self::FallbackTemplate => "fallback-template",
            Self::Native => "native",
        }
    }

    /// Read a mode name.
    pub fn parse(s: &str) -> Result<Self, EvalError> {
        ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = ALL.iter().map(|m| m.name()).collect();
            EvalError::Unsupported(format!(
                "unknown mode `{s}` ({}; the fallback ones are for eval tools)",
                names.join(", ")
            ))
        })
    }

    /// Whether prompt mode's instructions go into the system prompt in a constrained mode.
    pub fn few_shot(self) -> bool {
        matches!(self, Self::Grammar | Self::Json | Self::Fallback)
    }

    /// A grammar tool's JSON fallback function, the text checked after parsing.
    pub fn fallback(self) -> bool {
        matches!(self, Self::Fallback | Self::FallbackTemplate)
    }

    /// The modes `names` name, or `default` when it names none.
    pub fn parse_list(names: &[String], default: &[Self]) -> Result<Vec<Self>, EvalError> {
        if names.is_empty() {
            return Ok(default.to_vec());
        }
        names.iter().map(|m| Self::parse(m)).collect()
    }

    /// The modes of a BFCL run: those `names` name, or by default a peer's own tool calling
    /// with a provider, `grammar-template` under BFCL's protocol, else grammar, json and prompt.
    /// Refused: the fallback modes (BFCL has no grammar tools) and, under BFCL's protocol, a
    /// mode that adds toolgram's instructions to the prompt.
    pub fn for_bfcl(
        names: &[String],
        provider: bool,
        protocol: Protocol,
    ) -> Result<Vec<Self>, EvalError> {
        let default = match (provider, protocol) {
            (true, _) => &[Self::Native][..],
            (false, Protocol::Bfcl) => &[Self::GrammarTemplate][..],
            (false, Protocol::Toolgram) => &[Self::Grammar, Self::Json, Self::Prompt][..],
        };
        let modes = Self::parse_list(names, default)?;
        if modes.iter().any(|m| m.fallback()) {
            return Err(EvalError::Unsupported(
                "mode fallback is for grammar tools (`toolgram eval tools`); BFCL has none".into(),
            ));
        }
        if protocol == Protocol::Bfcl
            && let Some(m) = modes.iter().find(|m| m.few_shot() || **m == Self::Prompt)
        {
            return Err(EvalError::Unsupported(format!(
                "mode {} adds toolgram's instructions to the prompt, which BFCL's protocol does \
                 not: use grammar-template, json-template or native with --protocol bfcl",
                m.name()
            )));
        }
        Ok(modes)
    }

    /// Refuse `modes` on a provider where one gives the model prompt mode's instructions:
    /// providers are not sent them outside prompt mode.
    pub fn refuse_few_shot_on_provider(modes: &[Self]) -> Result<(), EvalError> {
        let names: Vec<&str> = modes
            .iter()
            .filter(|m| m.few_shot())
            .map(|m| m.name())
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        Err(EvalError::Unsupported(format!(
            "mode {} gives the model prompt mode's instructions, which providers are not sent \
             outside prompt mode: run it on the embedded model, or use its -template form (the \
             provider renders the tools itself)",
            names.join(", ")
        )))
    }

    pub(crate) fn core(self) -> Option<Mode> {
        match self {
            Self::Grammar | Self::GrammarTemplate => Some(Mode::Grammar),
            Self::Json | Self::JsonTemplate => Some(Mode::Json),
            Self::Prompt => Some(Mode::Prompt),
            Self::Fallback | Self::FallbackTemplate | Self::Native => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_reads_back_from_its_name_and_only_template_forms_skip_the_instructions() {
        for m in ALL {
            assert_eq!(EvalMode::parse(m.name()).ok(), Some(m));
            let template = m.name().ends_with("-template");
            let constrained = m.core().is_some_and(|c| c != Mode::Prompt) || m.fallback();
            assert_eq!(m.few_shot(), constrained && !template, "{}", m.name());
        }
        let e = EvalMode::parse("grammar-fewshot").expect_err("renamed");
        assert!(e.to_string().contains("grammar-template"), "{e}");
    }

    #[test]
    fn bfcl_modes_default_by_target_and_refuse_what_bfcl_cannot_measure() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let pick =
            |n: &[&str], provider, protocol| EvalMode::for_bfcl(&names(n), provider, protocol);
        assert_eq!(pick(&[], true, Protocol::Bfcl).unwrap(), [EvalMode::Native]);
        assert_eq!(
            pick(&[], false, Protocol::Bfcl).unwrap(),
            [EvalMode::GrammarTemplate]
        );
        assert_eq!(pick(&[], false, Protocol::Toolgram).unwrap().len(), 3);
        assert_eq!(
            pick(&["json-template"], false, Protocol::Bfcl).unwrap(),
            [EvalMode::JsonTemplate]
        );
        assert!(pick(&["fallback"], false, Protocol::Toolgram).is_err());
        let err = pick(&["grammar"], false, Protocol::Bfcl).unwrap_err();
        assert!(
            err.to_string()
                .contains("mode grammar adds toolgram's instructions"),
            "{err}"
        );
        assert!(pick(&["prompt"], false, Protocol::Bfcl).is_err());
        assert!(pick(&["nope"], false, Protocol::Bfcl).is_err());
        assert!(EvalMode::refuse_few_shot_on_provider(&[EvalMode::GrammarTemplate]).is_ok());
        let err = EvalMode::refuse_few_shot_on_provider(&[EvalMode::Json, EvalMode::Prompt]);
        assert!(err.unwrap_err().to_string().starts_with("mode json gives"));
    }
}
