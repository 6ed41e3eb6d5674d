//! The loop guard: a constrained reply that may hold several calls and writes a call that
//! adds nothing to the ones before it has entered the loop greedy decoding of a small model
//! does not leave (`A`, `A`, `A`, … or `A`, `B`, `C`, `A`, … or `height: 7`, `8`, `9`, … until
//! the token limit). At the end of each call the reply so far is read and its last call held
//! against the others ([`toolgram_core::validate::runaway`]: a repeat, or a counter of numbers
//! the conversation never wrote); on a runaway, decoding stops where the grammar accepts, so
//! the reply is complete. With [`Sampling::cut_runaways`](crate::Sampling::cut_runaways) the
//! runaway call is cut from the reply (the text ends where the call before it ended) and
//! reported as [`CutCall`]; without it only a repeat stops the reply and it stays (the run
//! stage lists it in `repeated_calls`). Text generated under a user grammar (`generate_text`)
//! is never watched.
//!
//! A call ends where the grammar accepts again after not accepting, or after a step that
//! forced tokens (fast-forward can write a whole call in one step: `\n` sampled, then
//! `<tool_call>…</tool_call>` forced, so no step in between sees it unfinished). Free text
//! accepts all along and forces nothing, so it has no such ends. A call whose last token also
//! holds a newline (Qwen's `}}\n`) is seen: the grammar lets a newline end calls that have no
//! closing marker. Not seen: calls wrapped in one section (Mistral's `[TOOL_CALLS][…]`, a
//! ```` ```json ```` fence), between which the grammar never accepts.
//! It reads the reply once per call end, never per token, and keeps one offset per call end.

use serde_json::Value;
use toolgram_core::define::request::Think;
use toolgram_core::parse::{parse_output, split_reasoning};
use toolgram_core::validate::{RunawayKind, Written, runaway};
use toolgram_core::{CallSyntax, ChatMessage, ToolCall, ToolChoice, ToolSet};

/// A call the loop guard cut from a reply: what the model wrote, and why it was cut.
#[derive(Debug, Clone, PartialEq)]
pub struct CutCall {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
    /// Which call of the reply it ran away from, and how.
    pub reason: String,
}

/// What the guard needs to read a reply's calls as the final parse will.
pub(crate) struct Reading<'a> {
    pub syntax: &'static CallSyntax,
    pub tools: &'a ToolSet,
    pub choice: &'a ToolChoice,
    pub think: Think,
}

/// Watches one constrained reply.
pub(crate) struct LoopGuard<'a> {
    reading: Reading<'a>,
    written: Written,
    cut_runaways: bool,
    /// Where each call ended so far (byte offsets in the reply).
    ends: Vec<usize>,
    /// Whether the grammar accepted the text at the last step.
    accepting: bool,
    /// The call cut, once one was.
    pub(crate) cut: Option<CutCall>,
}

impl<'a> LoopGuard<'a> {
    pub(crate) fn new(reading: Reading<'a>, messages: &[ChatMessage], cut_runaways: bool) -> Self {
        Self {
            reading,
            written: Written::from_messages(messages),
            cut_runaways,
            ends: Vec::new(),
            accepting: false,
            cut: None,
        }
    }

    /// At each step, before a token is chosen: whether the grammar accepts `text` as a whole
    /// reply, and whether the step before forced tokens. Returns where the reply must end
    /// (its length in bytes) when the call that just ended runs away: `text`'s length to
    /// keep the call, the end of the call before it to cut it.
    pub(crate) fn stop_at(&mut self, text: &[u8], accepting: bool, forced: bool) -> Option<usize> {
        let rising = accepting && (!self.accepting || forced);
        self.accepting = accepting;
        if !rising {
            return None;
        }
        self.ends.push(text.len());
        let before = self.ends.len().checked_sub(2).map(|i| self.ends[i])?;
        let calls = self.calls(text);
        let (last, earlier) = calls.split_last()?;
        let found = runaway(earlier, last, &self.written)?;
        let repeat = found.kind == RunawayKind::Repeat;
        if !self.cut_runaways {
            return repeat.then_some(text.len());
        }
        tracing::debug!(tool = %last.name, reason = %found.reason(), "runaway call cut (loop guard)");
        self.cut = Some(CutCall {
            name: last.name.clone(),
            arguments: last.arguments.clone(),
            reason: found.reason(),
        });
        Some(before)
    }

    /// The calls of the reply so far, which the grammar accepts as a whole (none when it
    /// cannot be read).
    fn calls(&self, text: &[u8]) -> Vec<ToolCall> {
        let r = &self.reading;
        let text = String::from_utf8_lossy(text);
        let (_, answer) = split_reasoning(&text, r.think, r.syntax.reasoning());
        parse_output(answer, r.syntax, r.tools, r.choice)
            .map_or_else(|_| Vec::new(), |o| o.tool_calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `steps` (text so far, accepting, forced) and say at which step the guard stopped
    /// the reply, and where it ends it.
    fn stopped(steps: &[(&str, bool, bool)], cut: bool) -> Option<(usize, usize)> {
        stopped_after("", steps, cut).0
    }

    fn stopped_after(
        said: &str,
        steps: &[(&str, bool, bool)],
        cut: bool,
    ) -> (Option<(usize, usize)>, Option<CutCall>) {
        let tools = ToolSet::from_value(&serde_json::json!([
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}
        ]))
        .expect("tools");
        let reading = Reading {
            syntax: toolgram_core::syntax::by_name("hermes").expect("hermes"),
            tools: &tools,
            choice: &ToolChoice::Auto,
            think: Think::Optional,
        };
        let mut g = LoopGuard::new(reading, &[ChatMessage::text("user", said)], cut);
        let at = steps
            .iter()
            .enumerate()
            .find_map(|(i, (t, a, f))| g.stop_at(t.as_bytes(), *a, *f).map(|end| (i, end)));
        (at, g.cut)
    }

    const A: &str = r#"{"name": "f", "arguments": {}}"#;

    #[test]
    fn the_second_identical_call_in_a_row_stops_the_reply() {
        let call = format!("<tool_call>\n{A}\n</tool_call>");
        let one = format!("Sure.\n{call}");
        let two = format!("{one}\n{call}");
        let steps = [
            ("Sure.", true, false),
            ("Sure.\n<tool_call>", false, false),
            (one.as_str(), true, true),
            (&format!("{one}\n"), true, false),
            (&format!("{one}\n<tool_call>"), false, false),
            (two.as_str(), true, true),
        ];
        assert_eq!(stopped(&steps, false), Some((5, two.len())));
        assert_eq!(stopped(&steps, true), Some((5, one.len())));
    }

    #[test]
    fn a_call_forced_whole_in_one_step_still_ends() {
        let tag = |c: &str| format!("<tool_call>\n{c}\n</tool_call>");
        let one = tag(A);
        let two = format!("{one}\n{}", tag(A));
        // `<tool_call>` sampled, the rest forced; then `\n` sampled and the call forced.
        let steps = [
            ("", false, false),
            (one.as_str(), true, true),
            (two.as_str(), true, true),
        ];
        assert_eq!(stopped(&steps, true), Some((2, one.len())));
    }

    #[test]
    fn a_call_whose_last_token_holds_the_newline_still_ends() {
        // Qwen's `}}\n`: the grammar accepts only after the newline, on both calls.
        let one = format!("{A}\n");
        let two = format!("{one}{A}\n");
        let steps = [
            ("", true, false),
            ("{", false, false),
            (one.as_str(), true, false),
            (&format!("{one}{{"), false, false),
            (two.as_str(), true, false),
        ];
        assert_eq!(stopped(&steps, false), Some((4, two.len())));
    }

    /// Calls written one after another, each a step that opens it and one that ends it.
    fn steps_of(calls: &[&str]) -> Vec<(String, bool, bool)> {
        let mut text = String::new();
        let mut steps = vec![(String::new(), true, false)];
        for call in calls {
            text.push('{');
            steps.push((text.clone(), false, false));
            text.pop();
            text.push_str(call);
            text.push('\n');
            steps.push((text.clone(), true, false));
        }
        steps
    }

    fn borrowed(steps: &[(String, bool, bool)]) -> Vec<(&str, bool, bool)> {
        steps.iter().map(|(t, a, f)| (t.as_str(), *a, *f)).collect()
    }

    #[test]
    fn a_call_repeating_an_earlier_one_stops_a_cycle() {
        let b = r#"{"name": "f", "arguments": {"x": "1"}}"#;
        let c = r#"{"name": "g", "arguments": {}}"#;
        let steps = steps_of(&[A, b, c, b]);
        let kept = steps[6].0.len();
        assert_eq!(stopped(&borrowed(&steps), true), Some((8, kept)));
    }

    #[test]
    fn a_counter_of_numbers_never_given_is_cut_and_reported() {
        let calls = [
            r#"{"name": "f", "arguments": {"h": 6, "w": 80}}"#,
            r#"{"name": "f", "arguments": {"h": 5.6, "w": 60}}"#,
            r#"{"name": "f", "arguments": {"h": 7, "w": 70}}"#,
        ];
        let steps = steps_of(&calls);
        let said = "6 feet and 80 kg, 5.6 feet and 60 kg";
        let (at, cut) = stopped_after(said, &borrowed(&steps), true);
        assert_eq!(at, Some((6, steps[4].0.len())));
        let cut = cut.expect("cut");
        assert_eq!(cut.name, "f");
        assert_eq!(cut.arguments, serde_json::json!({"h": 7, "w": 70}));
        assert!(cut.reason.contains("/h, /w"), "{}", cut.reason);
        // Kept, a counter does not stop the reply: only a repeat does.
        assert_eq!(stopped_after(said, &borrowed(&steps), false).0, None);
        // Numbers the user gave are not a counter.
        assert_eq!(
            stopped_after("6 80 5.6 60 7 70", &borrowed(&steps), true).0,
            None
        );
    }

    #[test]
    fn different_calls_text_and_think_blocks_never_stop_it() {
        let b = r#"{"name": "f", "arguments": {"x": "1"}}"#;
        let two = format!("<think>f</think>{A}\n{b}");
        let steps = [
            ("<think>f", false, false),
            ("<think>f</think>", true, true),
            ("<think>f</think>{", false, false),
            (&format!("<think>f</think>{A}"), true, true),
            (&format!("<think>f</think>{A}\n{{"), false, false),
            (two.as_str(), true, true),
            // Text accepts at every step and forces nothing: no call ends in it, whatever
            // repeats.
            (&format!("{two} ha"), true, false),
            (&format!("{two} ha ha"), true, false),
        ];
        assert_eq!(stopped(&steps, true), None);
    }
}
