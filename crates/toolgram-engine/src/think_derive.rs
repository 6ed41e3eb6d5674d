//! The markers a chat template writes around an assistant's reasoning, read from what it
//! renders: the same conversation with and without `reasoning_content` on the assistant's
//! answer, and the text the reasoning adds around it (`<think>\n…\n</think>`, a template's
//! own `<|plamo:begin_think:plamo|>`), trimmed.
//!
//! This module must not decide which syntax to use ([`crate::syntax_detect`] does) and must
//! not guess: a template that drops the reasoning, writes it with no opener (a delimiter
//! after it), writes probe text into a marker, or whose difference does not start and end
//! as a `<…>`/`[…]` marker does gives nothing.

use crate::template::ChatTemplate;
use serde_json::json;
use toolgram_core::ChatMessage;
use toolgram_core::syntax::{self, Piece, Reasoning};

const ANSWER: &str = "Zq7 plain reply";
const THOUGHT: &str = "Rk4 probe reasoning";

/// The reasoning markers `t` writes: (opener, closer) as text.
pub(crate) fn markers(t: &ChatTemplate) -> Option<(String, String)> {
    let tools = crate::syntax_probe::probe_tools()?;
    let render = |reasoning: Option<&str>| {
        let mut assistant = json!({"role": "assistant", "content": ANSWER});
        if let Some(r) = reasoning {
            assistant["reasoning_content"] = json!(r);
        }
        let user = json!({"role": "user", "content": "What will the weather be?"});
        let msgs: Vec<ChatMessage> = serde_json::from_value(json!([user, assistant])).ok()?;
        t.render_with(&msgs, &tools, syntax::detect(""), false).ok()
    };
    let plain = render(None)?;
    let with = render(Some(THOUGHT))?;
    let at = with.find(THOUGHT)?;
    let prefix = whole_marker_before(&with, common_prefix_len(&plain, &with).min(at));
    let suffix_len = common_suffix_len(&plain, &with).min(with.len() - at - THOUGHT.len());
    let end = whole_marker_after(&with, with.len() - suffix_len);
    let open = with[prefix..at].trim();
    let close = with[at + THOUGHT.len()..end].trim();
    let clean = |m: &str| !m.is_empty() && !m.contains(ANSWER) && !m.contains(THOUGHT);
    // Markers start and end as markers do: a cut inside a header (` to=self<|message|>`
    // against ` to=user…`) is not one.
    let whole = open.starts_with(['<', '[']) && close.ends_with(['>', ']']);
    (clean(open) && clean(close) && whole).then(|| (open.to_owned(), close.to_owned()))
}

/// `markers` as a syntax's reasoning block (leaked: it lives for the process).
pub(crate) fn reasoning(open: &str, close: &str) -> Reasoning {
    Reasoning {
        open: crate::syntax_derive::pieces(open),
        close: crate::syntax_derive::pieces(close),
    }
}

/// A cut at `at` moved back to the start of a `<…>` or `[…]` marker it falls inside (the
/// shared start of `<|START_RESPONSE|>` and `<|START_THINKING|>` is no marker).
fn whole_marker_before(text: &str, at: usize) -> usize {
    let head = &text[..at];
    [('<', '>'), ('[', ']')]
        .iter()
        .filter_map(|&(o, c)| head.rfind(o).filter(|&i| !head[i..].contains(c)))
        .min()
        .unwrap_or(at)
}

/// A cut at `at` moved forward past the end of a marker it falls inside.
fn whole_marker_after(text: &str, at: usize) -> usize {
    let tail = &text[at..];
    [('<', '>'), ('[', ']')]
        .iter()
        .filter_map(|&(o, c)| {
            let close = tail.find(c)?;
            tail.find(o)
                .is_none_or(|open| close < open)
                .then_some(at + close + 1)
        })
        .max()
        .unwrap_or(at)
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

fn common_suffix_len(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(c, _)| c.len_utf8())
        .sum()
}

/// Whether a syntax's reasoning block is spelled `open`…`close`.
pub(crate) fn same(r: &Reasoning, open: &str, close: &str) -> bool {
    let text = |p: &[Piece]| syntax::text_of(p);
    text(r.open) == open && text(r.close) == close
}
