//! The markers a chat template writes around an assistant's reasoning and around its text,
//! read from what it renders:
//! - reasoning ([`reasoning_markers`]): the same answer with and without
//!   `reasoning_content`; the text the reasoning adds around it (`<think>\n…\n</think>`, a
//!   template's own `<|plamo:begin_think:plamo|>`);
//! - text ([`content_markers`]): a text answer against a call; what the text answer has
//!   around its text that the call has not (`<|START_RESPONSE|>…<|END_RESPONSE|>`).
//!
//! Both trimmed. This module must not decide which syntax to use ([`super::detect`]
//! does) and must not guess: a template that drops the part, writes it with a marker on one
//! side only, writes probe text into a marker, or whose difference does not start and end
//! as a `<…>`/`[…]` marker does gives nothing.

use super::TemplateRenderer;
use super::derive::{common_prefix, common_suffix};
use super::probe::{PROBE_ANSWER as ANSWER, PROBE_ID, PROBE_TOOL, probe_args, probe_id};
use crate::ChatMessage;
use crate::syntax::{self, Piece, Reasoning};
use serde_json::{Value, json};

const THOUGHT: &str = "Rk4 probe reasoning";
const USER: &str = "What will the weather be?";

/// `[user, assistant]` rendered through `t`, the assistant's message given.
fn render(t: &dyn TemplateRenderer, assistant: Value) -> Option<String> {
    let tools = super::probe::probe_tools()?;
    let user = json!({"role": "user", "content": USER});
    let msgs: Vec<ChatMessage> = serde_json::from_value(json!([user, assistant])).ok()?;
    t.render_turns(&msgs, &tools, false).ok()
}

/// The reasoning markers `t` writes: (opener, closer) as text.
pub(crate) fn reasoning_markers(t: &dyn TemplateRenderer) -> Option<(String, String)> {
    let plain = render(t, json!({"role": "assistant", "content": ANSWER}))?;
    let with = render(
        t,
        json!({"role": "assistant", "content": ANSWER, "reasoning_content": THOUGHT}),
    )?;
    around(&with, &plain, THOUGHT)
}

/// Whether `t` writes an assistant turn's `reasoning_content` at all (its markers may be
/// written with or without it, as Qwen3's empty `<think>\n\n</think>` is).
pub fn writes_reasoning(t: &dyn TemplateRenderer) -> bool {
    render(
        t,
        json!({"role": "assistant", "content": ANSWER, "reasoning_content": THOUGHT}),
    )
    .is_some_and(|r| r.contains(THOUGHT))
}

/// The markers `t` writes around an assistant's text and not around its calls: (opener,
/// closer) as text.
pub(crate) fn content_markers(t: &dyn TemplateRenderer) -> Option<(String, String)> {
    let text = render(t, json!({"role": "assistant", "content": ANSWER}))?;
    let call = json!([{"id": probe_id(0), "type": "function", "function": {
        "name": PROBE_TOOL, "arguments": probe_args(0).to_string()}}]);
    let calls = [json!(""), Value::Null].into_iter().find_map(|content| {
        render(
            t,
            json!({"role": "assistant", "content": content, "tool_calls": call}),
        )
    })?;
    around(&text, &calls, ANSWER)
}

/// The markers around `needle` in `with` that `without` does not share: cut at whole
/// markers, trimmed, both present and marker-shaped.
fn around(with: &str, without: &str, needle: &str) -> Option<(String, String)> {
    let at = with.find(needle)?;
    let prefix = whole_marker_before(with, common_prefix(with, without).len().min(at));
    let suffix_len = common_suffix(with, without)
        .len()
        .min(with.len() - at - needle.len());
    let end = whole_marker_after(with, with.len() - suffix_len);
    let open = with[prefix..at].trim();
    let close = with[at + needle.len()..end].trim();
    let data = [ANSWER, THOUGHT, USER, PROBE_TOOL, PROBE_ID];
    // A marker is short and on one line: a longer difference is a turn that renders
    // differently (templates that look at other messages), not a marker.
    let clean = |m: &str| {
        !m.is_empty() && m.len() <= 64 && !m.contains('\n') && !data.iter().any(|d| m.contains(d))
    };
    // Markers start and end as markers do: a cut inside a header (` to=self<|message|>`
    // against ` to=user…`) is not one.
    let whole = open.starts_with(['<', '[']) && close.ends_with(['>', ']']);
    (clean(open) && clean(close) && whole).then(|| (open.to_owned(), close.to_owned()))
}

/// Reasoning markers as a syntax's reasoning block (leaked: it lives for the process).
pub(crate) fn reasoning(open: &str, close: &str) -> Reasoning {
    Reasoning {
        open: super::derive::pieces(open),
        close: super::derive::pieces(close),
    }
}

/// A cut at `at` moved back to the start of the nearest `<…>` or `[…]` marker it falls
/// inside (the shared start of `<|START_RESPONSE|>` and `<|START_THINKING|>` is no marker).
fn whole_marker_before(text: &str, at: usize) -> usize {
    let head = &text[..at];
    [('<', '>'), ('[', ']')]
        .iter()
        .filter_map(|&(o, c)| head.rfind(o).filter(|&i| !head[i..].contains(c)))
        .max()
        .unwrap_or(at)
}

/// A cut at `at` moved forward past the end of the nearest marker it falls inside.
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
        .min()
        .unwrap_or(at)
}

/// Whether a syntax's reasoning block is spelled `open`…`close`.
pub(crate) fn same(r: &Reasoning, open: &str, close: &str) -> bool {
    let text = |p: &[Piece]| syntax::text_of(p);
    text(r.open) == open && text(r.close) == close
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut is moved out of a marker two spellings share the start or end of, and only
    /// a marker-shaped, short, one-line difference is one.
    #[test]
    fn differences_are_cut_at_whole_markers() {
        let plain = "<|CHATBOT|><|START_RESPONSE|>A<|END_RESPONSE|>";
        let with =
            "<|CHATBOT|><|START_THINKING|>Rz9<|END_THINKING|><|START_RESPONSE|>A<|END_RESPONSE|>";
        assert_eq!(
            around(with, plain, "Rz9"),
            Some(("<|START_THINKING|>".into(), "<|END_THINKING|>".into()))
        );
        let plain = "[INST]q[/INST]A";
        let with = "[INST]q[/INST][THINK]Rz9[/THINK]A";
        assert_eq!(
            around(with, plain, "Rz9"),
            Some(("[THINK]".into(), "[/THINK]".into()))
        );
        // A header that differs mid-word is no marker.
        let plain = "<|start|>assistant to=user<|message|>A<|end|>";
        let with = "<|start|>assistant to=self<|message|>Rz9<|end|><|start|>assistant to=user<|message|>A<|end|>";
        assert_eq!(around(with, plain, "Rz9"), None);
        // A difference spanning lines (a turn rendered otherwise) is no marker.
        let plain = "<u>q</u>A";
        let with = "<u>q</u><x>\n<r>Rz9</r>A";
        assert_eq!(around(with, plain, "Rz9"), None);
    }
}
