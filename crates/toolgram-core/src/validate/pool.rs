//! Pool filter: escape-hatch tools (a "talk to a human", "give up" tool) stay out of the pool
//! unless the request itself says one of their trigger words, so a constrained model cannot
//! fall back on them.
//!
//! A pure function: it reads the request and the pool and returns the indices to keep; it
//! must not call a model or change tools.

use crate::define::message::ChatMessage;
use crate::define::tool::{ToolChoice, ToolSet};

/// Indices of the tools to offer for `messages`: every ordinary tool, each escape hatch whose
/// trigger word occurs in a user message (whole words, case-insensitive, Unicode-aware), and
/// the tool `choice` names, if any (naming it is asking for it).
pub fn filter_pool(tools: &ToolSet, messages: &[ChatMessage], choice: &ToolChoice) -> Vec<usize> {
    let request: Vec<String> = messages
        .iter()
        .filter(|m| m.role == "user")
        .filter_map(|m| m.content.as_deref())
        .map(str::to_lowercase)
        .collect();
    tools
        .tools()
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            matches!(choice, ToolChoice::Named(n) if *n == t.name)
                || t.escape_hatch.is_empty()
                || t.escape_hatch
                    .iter()
                    .any(|w| request.iter().any(|r| contains_word(r, &w.to_lowercase())))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Whether `word` occurs in `text` with no letter or digit directly before or after it.
fn contains_word(text: &str, word: &str) -> bool {
    let word = word.trim();
    if word.is_empty() {
        return false;
    }
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"search"}},
                {"type":"function","function":{"name":"handoff","x-toolgram":{"escape_hatch":["human","Mitarbeiter","live agent"]}}},
                {"type":"function","function":{"name":"abort","x-toolgram":{"escape_hatch":["cancel"]}}}]"#,
        )
        .expect("valid tools")
    }

    fn kept(text: &str) -> Vec<usize> {
        filter_pool(
            &tools(),
            &[ChatMessage::text("user", text)],
            &ToolChoice::Auto,
        )
    }

    #[test]
    fn escape_hatches_need_their_words() {
        assert_eq!(kept("find me a hotel"), vec![0]);
        assert_eq!(kept("Let me talk to a HUMAN please"), vec![0, 1]);
        assert_eq!(kept("I want a live agent, or cancel."), vec![0, 1, 2]);
    }

    #[test]
    fn words_match_whole_words_only_unicode_aware() {
        assert_eq!(kept("humanity is great; cancellation policy?"), vec![0]);
        assert_eq!(kept("Bitte einen MITARBEITER."), vec![0, 1]);
        assert_eq!(kept("Mitarbeiterin gesucht"), vec![0]);
        assert_eq!(kept("éhuman"), vec![0]);
    }

    #[test]
    fn only_user_words_count() {
        let msgs = [
            ChatMessage::text("system", "a human may help"),
            ChatMessage::text("user", "weather?"),
        ];
        assert_eq!(filter_pool(&tools(), &msgs, &ToolChoice::Auto), vec![0]);
        assert_eq!(
            filter_pool(&tools(), &msgs, &ToolChoice::Named("abort".into())),
            vec![0, 2]
        );
    }

    #[test]
    fn malformed_triggers_are_refused_when_read() {
        let e = ToolSet::from_json_str(r#"[{"type":"function","function":{"name":"h","x-toolgram":{"escape_hatch":"human"}}}]"#)
            .expect_err("must be an array");
        assert_eq!(e.pointer, "/0/function/x-toolgram/escape_hatch");
    }
}
