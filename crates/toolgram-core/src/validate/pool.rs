//! Pool filter: escape-hatch tools (a "talk to a human", "give up" tool) stay out of the pool
//! unless the request itself says one of their trigger words, so a constrained model cannot
//! fall back on them.
//!
//! A pure function: it reads the request and the pool and returns the indices to keep; it
//! must not call a model or change tools. Its work is linear in the user text: every trigger
//! word is looked for in one pass over each message (Aho-Corasick), and the words are
//! bounded when the tools are read (`MAX_ESCAPE_WORDS`, `MAX_ESCAPE_WORD_BYTES`).

use crate::define::message::ChatMessage;
use crate::define::tool::{ToolChoice, ToolSet};
use aho_corasick::AhoCorasick;

/// Indices of the tools to offer for `messages`: every ordinary tool, each escape hatch whose
/// trigger word occurs in a user message (whole words, case-insensitive, Unicode-aware), and
/// the tool `choice` names, if any (naming it is asking for it).
pub fn filter_pool(tools: &ToolSet, messages: &[ChatMessage], choice: &ToolChoice) -> Vec<usize> {
    let mut words = Vec::new();
    let mut owners = Vec::new();
    for (i, t) in tools.tools().iter().enumerate() {
        for w in &t.escape_hatch {
            let w = w.to_lowercase().trim().to_owned();
            if !w.is_empty() {
                words.push(w);
                owners.push(i);
            }
        }
    }
    let mut triggered = vec![false; tools.tools().len()];
    if !words.is_empty() {
        let request: Vec<String> = messages
            .iter()
            .filter(|m| m.role == "user")
            .filter_map(|m| m.content.as_deref())
            .map(str::to_lowercase)
            .collect();
        for (said, owner) in said(&words, &request).into_iter().zip(owners) {
            triggered[owner] |= said;
        }
    }
    tools
        .tools()
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            matches!(choice, ToolChoice::Named(n) if *n == t.name)
                || t.escape_hatch.is_empty()
                || triggered[*i]
        })
        .map(|(i, _)| i)
        .collect()
}

/// For each of `words`, whether it occurs as a whole word in one of `texts`.
fn said(words: &[String], texts: &[String]) -> Vec<bool> {
    let mut found = vec![false; words.len()];
    let Ok(ac) = AhoCorasick::new(words) else {
        // Past the automaton's own size limit (the words are bounded far below it): word by word.
        for (f, w) in found.iter_mut().zip(words) {
            *f = texts.iter().any(|t| {
                t.match_indices(w.as_str())
                    .any(|(at, m)| whole_word(t, at, at + m.len()))
            });
        }
        return found;
    };
    for text in texts {
        for m in ac.find_overlapping_iter(text.as_str()) {
            let f = &mut found[m.pattern().as_usize()];
            *f = *f || whole_word(text, m.start(), m.end());
        }
    }
    found
}

/// Whether `text[start..end]` has no letter or digit directly before or after it.
fn whole_word(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
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
    fn escape_hatch_words_are_bounded_when_read() {
        let tool = |words: Vec<String>| {
            ToolSet::from_value(&serde_json::json!([{"type": "function", "function":
                {"name": "h", "x-toolgram": {"escape_hatch": words}}}]))
        };
        let many = (0..=crate::define::read_tools::MAX_ESCAPE_WORDS)
            .map(|i| format!("w{i}"))
            .collect();
        let e = tool(many).expect_err("too many words");
        assert!(e.message.contains("limit on escape-hatch words"), "{e}");
        let long = vec!["x".repeat(crate::define::read_tools::MAX_ESCAPE_WORD_BYTES + 1)];
        assert!(tool(long).is_err());
        assert!(tool(vec!["help".into()]).is_ok());
    }

    #[test]
    fn overlapping_words_are_each_found() {
        let set = ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"a","x-toolgram":{"escape_hatch":["agent"]}}},
                {"type":"function","function":{"name":"b","x-toolgram":{"escape_hatch":["live agent now"]}}},
                {"type":"function","function":{"name":"c","x-toolgram":{"escape_hatch":["gent"]}}}]"#,
        )
        .expect("valid tools");
        let kept =
            |text: &str| filter_pool(&set, &[ChatMessage::text("user", text)], &ToolChoice::Auto);
        assert_eq!(kept("a LIVE AGENT NOW!"), vec![0, 1]);
        assert_eq!(kept("agents, gent"), vec![2]);
    }

    #[test]
    fn malformed_triggers_are_refused_when_read() {
        let e = ToolSet::from_json_str(r#"[{"type":"function","function":{"name":"h","x-toolgram":{"escape_hatch":"human"}}}]"#)
            .expect_err("must be an array");
        assert_eq!(e.pointer, "/0/function/x-toolgram/escape_hatch");
    }
}
