//! The text guard: greedy decoding of a small model can fall into free text that repeats
//! itself verbatim until the token limit — a line written again and again
//! (`import org.truffle.api.TruffleSystemException;`), a phrase ("and the player who has the
//! most cards wins if …"), the prompt's `<tools>` block echoed, a run of newlines. Measured
//! on BFCL through `serve` (docs/eval.md, "Text that repeats itself"), such a reply costs
//! about 270 s of a 2-core machine and runs to its token limit.
//!
//! It watches the reply's tokens (every one: text, a think block, calls), one comparison per
//! candidate period per token (periods of 1 to [`MAX_PERIOD`] tokens; the last tokens and the
//! counters in buffers allocated once per reply), and finds where the last tokens are one span
//! written at least [`COPIES`] times in a row, the repeated part at least [`MIN_REPEATED`]
//! tokens long. At that bar the decode loop stops the reply only at a step where the grammar
//! may end it — so in free text, never inside a call or an open think block — keeping what was
//! written (a streamed reply has sent it already), and reports [`RepeatedText`]. It must not judge
//! what the text says: only verbatim repetition counts, so a list that counts up (`1. …`,
//! `2. …`) or changes a word in every item is never stopped. Output meant to repeat (rows of
//! zeros, a chorus) is stopped too once it passes the bar: `Sampling::stop_repeated_text` off
//! keeps it.
//!
//! Where the grammar cannot end the reply (a call's array cycling through the same items; not
//! an open think block, which its budget closes), a higher bar — [`HOPELESS_COPIES`] copies,
//! [`HOPELESS_REPEATED`] tokens — ends it as its token limit would (an incomplete call is the
//! typed `truncated` error it would have been), only sooner; nothing of a call is changed or
//! made up.

/// The longest span, in tokens, whose repetition is watched (a tool definition echoed from the
/// prompt is about 100–200 tokens).
pub(crate) const MAX_PERIOD: usize = 256;

/// How many copies of a span in a row make a runaway.
pub(crate) const COPIES: usize = 4;

/// The fewest tokens of repetition (after the first copy) that make a runaway: a short span
/// needs more copies (a newline, 128 more times).
pub(crate) const MIN_REPEATED: usize = 128;

/// How many copies of a span in a row, where the grammar cannot end the reply (inside a call;
/// an open think block is left to its budget), make it hopeless: it is ended there as its
/// token limit would end it.
pub(crate) const HOPELESS_COPIES: usize = 8;

/// The fewest repeated tokens that make a reply the grammar cannot end hopeless. Measured on
/// BFCL (docs/eval.md, "Text that repeats itself"): 10 of the default model's 22 replies that
/// ran to 2,048 tokens were one call's array cycling through the same items, ~270 s each.
pub(crate) const HOPELESS_REPEATED: usize = 512;

/// Text a reply repeated verbatim until decoding stopped it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedText {
    /// The span repeated (one copy, from where the first began).
    pub span: String,
    /// How many times it was written in a row, the first included.
    pub copies: usize,
}

/// Watches one reply's tokens for verbatim repetition.
pub(crate) struct TextGuard {
    /// The last [`MAX_PERIOD`] tokens, the `n`th of the reply at `n % MAX_PERIOD`.
    last: Vec<u32>,
    /// Tokens seen.
    seen: usize,
    /// `runs[p - 1]`: how many tokens in a row equal the token `p` before them.
    runs: Vec<usize>,
    /// The shortest period whose run makes a runaway, once one does.
    found: Option<usize>,
}

impl TextGuard {
    /// A guard for one reply (its buffers are allocated here, once).
    pub(crate) fn new() -> Self {
        Self {
            last: vec![0; MAX_PERIOD],
            seen: 0,
            runs: vec![0; MAX_PERIOD],
            found: None,
        }
    }

    /// The next token of the reply.
    pub(crate) fn push(&mut self, token: u32) {
        let n = self.seen;
        self.found = None;
        for p in 1..=MAX_PERIOD.min(n) {
            let run = &mut self.runs[p - 1];
            *run = if self.last[(n - p) % MAX_PERIOD] == token {
                *run + 1
            } else {
                0
            };
            if self.found.is_none() && *run >= MIN_REPEATED.max((COPIES - 1) * p) {
                self.found = Some(p);
            }
        }
        self.last[n % MAX_PERIOD] = token;
        self.seen += 1;
    }

    /// The period (in tokens) and the repeated tokens' count, where the reply's last tokens
    /// run away; `None` while they do not.
    pub(crate) fn runaway(&self) -> Option<(usize, usize)> {
        self.found.map(|p| (p, self.runs[p - 1]))
    }

    /// Whether a runaway of `period` tokens, `repeated` of them repeated, is hopeless where the
    /// grammar cannot end the reply: [`HOPELESS_COPIES`] and [`HOPELESS_REPEATED`].
    pub(crate) fn hopeless(period: usize, repeated: usize) -> bool {
        repeated >= HOPELESS_REPEATED.max((HOPELESS_COPIES - 1) * period)
    }

    /// One copy of the span of `period` tokens (at most [`MAX_PERIOD`]) repeated over the last
    /// `repeated` tokens, read from the last copy but starting where the first copy started.
    pub(crate) fn span(&self, period: usize, repeated: usize) -> impl Iterator<Item = u32> + '_ {
        let n = self.seen;
        let p = period.clamp(1, n.clamp(1, MAX_PERIOD));
        let offset = (p - repeated % p) % p;
        (0..p.min(n)).map(move |j| self.last[(n - p + (offset + j) % p) % MAX_PERIOD])
    }
}

/// A span's bytes as text, whole characters only: a copy's first and last tokens can split a
/// character that the tokens around the copy complete, and those bytes are left out, so the
/// text reported is verbatim in the reply (never a U+FFFD the reply does not have).
pub(crate) fn whole_chars(bytes: &[u8]) -> String {
    let start = bytes.iter().take_while(|&&b| b & 0xC0 == 0x80).count();
    let bytes = &bytes[start..];
    let end = match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_runaway_the_grammar_cannot_end_is_hopeless_only_past_the_higher_bar() {
        // A 40-token cycle (a call's array of colours): found at 4 copies, hopeless at 13.8.
        assert!(!TextGuard::hopeless(40, 120));
        assert!(!TextGuard::hopeless(40, 511));
        assert!(TextGuard::hopeless(40, 512));
        // A 100-token span needs 8 copies (700 repeated tokens).
        assert!(!TextGuard::hopeless(100, 600));
        assert!(TextGuard::hopeless(100, 700));
    }

    #[test]
    fn a_span_that_splits_a_character_reports_whole_characters_only() {
        // "é" is C3 A9: a copy that starts on A9 and ends on C3.
        assert_eq!(whole_chars(b"\xA9 caf\xC3"), " caf");
        assert_eq!(whole_chars("née".as_bytes()), "née");
        assert_eq!(whole_chars(b""), "");
    }

    fn fed(tokens: impl IntoIterator<Item = u32>) -> TextGuard {
        let mut g = TextGuard::new();
        for t in tokens {
            g.push(t);
        }
        g
    }

    #[test]
    fn a_line_written_again_and_again_is_found_once_it_repeats_enough() {
        let line = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19];
        let intro = [1, 2, 3, 4, 5];
        // 128 tokens of repetition after the first copy: 13 copies and 8 tokens.
        let copies = |n: usize| line.iter().copied().cycle().take(n);
        let almost = fed(intro.into_iter().chain(copies(10 + 127)));
        assert_eq!(almost.runaway(), None);
        let g = fed(intro.into_iter().chain(copies(10 + 128)));
        assert_eq!(g.runaway(), Some((10, 128)));
        // The span as the first copy began, not where the last was cut.
        let span: Vec<u32> = g.span(10, 128).collect();
        assert_eq!(span, line);
    }

    #[test]
    fn a_long_span_needs_four_copies_and_a_run_of_one_token_needs_129() {
        let block: Vec<u32> = (100..200).collect();
        let three = fed(block.iter().chain(&block).chain(&block).copied());
        assert_eq!(three.runaway(), None, "three copies of a long span");
        let four = fed(std::iter::repeat_n(&block, 4).flatten().copied());
        assert_eq!(four.runaway(), Some((100, 300)));
        assert_eq!(four.span(100, 300).collect::<Vec<_>>(), block);
        assert_eq!(fed(std::iter::repeat_n(7, 128)).runaway(), None);
        assert_eq!(fed(std::iter::repeat_n(7, 129)).runaway(), Some((1, 128)));
    }

    #[test]
    fn a_list_that_counts_up_is_never_found() {
        // "1. C Major\n2. D Major\n…": the number changes on every line.
        let list = (0..300u32).flat_map(|i| [1000 + i, 7, 8, 9, 5]);
        assert_eq!(fed(list).runaway(), None);
    }

    #[test]
    fn it_ends_when_the_repetition_does() {
        let mut g = fed(std::iter::repeat_n(7, 200));
        assert!(g.runaway().is_some());
        g.push(8);
        assert_eq!(g.runaway(), None);
    }

    proptest! {
        /// Text with no token twice is never found, whatever its length.
        #[test]
        fn text_without_repeated_tokens_is_never_found(start in 0u32..1000, len in 0u32..2000) {
            prop_assert_eq!(fed(start..start + len).runaway(), None);
        }

        /// Any span of at most `MAX_PERIOD` tokens, written enough times in a row, is found;
        /// what is found is a verbatim repetition of at least `MIN_REPEATED` tokens and
        /// `COPIES` copies.
        #[test]
        fn any_span_written_enough_times_is_found(
            span in proptest::collection::vec(0u32..50, 1..=MAX_PERIOD),
        ) {
            let p = span.len();
            let copies = COPIES.max(MIN_REPEATED.div_ceil(p) + 1);
            let tokens: Vec<u32> = span.iter().copied().cycle().take(p * copies).collect();
            let g = fed(tokens.iter().copied());
            let (period, repeated) = g.runaway().expect("found");
            prop_assert!(period <= p);
            prop_assert!(repeated >= MIN_REPEATED.max((COPIES - 1) * period));
            let n = tokens.len();
            prop_assert!((n - repeated..n).all(|i| tokens[i] == tokens[i - period]));
            // The span read is the first repeated copy, as written.
            let first = n - repeated - period;
            let span: Vec<u32> = g.span(period, repeated).collect();
            prop_assert_eq!(&span[..], &tokens[first..first + period]);
        }
    }
}
