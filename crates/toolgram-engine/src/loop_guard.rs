//! The loop guard: a constrained reply that may hold several calls and writes a call it has
//! already written has entered the loop greedy decoding of a small model does not leave (`A`,
//! `A`, `A`, … or `A`, `B`, `C`, `A`, … until the token limit, then an error), so decoding
//! stops right after the repeat — where the grammar accepts, so the reply is complete, and
//! the repeat stays in it (the run stage lists it in `repeated_calls`; `refuse_repeats`
//! refuses it). Text generated under a user grammar (`generate_text`) is never watched.
//!
//! A call ends where the grammar accepts again after not accepting, or after a step that
//! forced tokens (fast-forward can write a whole call in one step: `\n` sampled, then
//! `<tool_call>…</tool_call>` forced, so no step in between sees it unfinished). Free text
//! accepts all along and forces nothing, so it has no such ends. The text since the last end,
//! without its surrounding whitespace, also ending the text before an earlier end is the
//! loop. A call whose last token also holds a newline (Qwen's `}}\n`) is seen: the grammar
//! lets a newline end calls that have no closing marker, and whitespace around a call is
//! ignored. Not seen: calls
//! wrapped in one section (Mistral's `[TOOL_CALLS][…]`, a ```` ```json ```` fence), between
//! which the grammar never accepts.
//! It reads only the text and the grammar's acceptance: it must not parse calls, and must not
//! allocate per token (it keeps one offset per call end).

/// Watches one constrained reply.
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    /// Where each call ended so far (byte offsets in the reply).
    ends: Vec<usize>,
    /// Whether the grammar accepted the text at the last step.
    accepting: bool,
}

impl LoopGuard {
    /// At each step, before a token is chosen: whether the grammar accepts `text` as a whole
    /// reply, and whether the step before forced tokens. Returns `true` when the call that
    /// just ended repeats one before it.
    pub(crate) fn repeats(&mut self, text: &[u8], accepting: bool, forced: bool) -> bool {
        let rising = accepting && (!self.accepting || forced);
        self.accepting = accepting;
        if !rising {
            return false;
        }
        let end = text.len();
        let looped = self.ends.last().is_some_and(|&last| {
            let call = text[last..end].trim_ascii();
            !call.is_empty()
                && self
                    .ends
                    .iter()
                    .any(|&e| text[..e].trim_ascii_end().ends_with(call))
        });
        self.ends.push(end);
        looped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `steps` (text so far, accepting, forced) and say at which step the guard fired.
    fn fired_at(steps: &[(&str, bool, bool)]) -> Option<usize> {
        let mut g = LoopGuard::default();
        steps
            .iter()
            .position(|(t, a, f)| g.repeats(t.as_bytes(), *a, *f))
    }

    const A: &str = r#"{"name": "f", "arguments": {}}"#;

    #[test]
    fn the_second_identical_call_in_a_row_stops_the_reply() {
        let one = format!("Sure.\n{A}");
        let two = format!("{one}\n{A}");
        let steps = [
            ("Sure.", true, false),
            ("Sure.\n{", false, false),
            (one.as_str(), true, true),
            (&format!("{one}\n"), true, false),
            (&format!("{one}\n{{"), false, true),
            (two.as_str(), true, false),
        ];
        assert_eq!(fired_at(&steps), Some(5));
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
        assert_eq!(fired_at(&steps), Some(2));
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
        assert_eq!(fired_at(&steps), Some(4));
    }

    #[test]
    fn a_call_repeating_an_earlier_one_stops_a_cycle() {
        let b = r#"{"name": "f", "arguments": {"x": 1}}"#;
        let c = r#"{"name": "g", "arguments": {}}"#;
        let mut text = String::new();
        let mut steps = vec![("".to_owned(), true, false)];
        for call in [A, b, c, b] {
            text.push('{');
            steps.push((text.clone(), false, false));
            text.pop();
            text.push_str(call);
            text.push('\n');
            steps.push((text.clone(), true, false));
        }
        let steps: Vec<(&str, bool, bool)> =
            steps.iter().map(|(t, a, f)| (t.as_str(), *a, *f)).collect();
        assert_eq!(fired_at(&steps), Some(8));
    }

    #[test]
    fn different_calls_text_and_think_blocks_never_stop_it() {
        let b = r#"{"name": "f", "arguments": {"x": 1}}"#;
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
        assert_eq!(fired_at(&steps), None);
    }
}
