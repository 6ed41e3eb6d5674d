//! The tokens of a model's vocabulary that open a call, found once per model: the syntax's first
//! opener piece (its special token, or tokens spelling it), `{` where calls may be bare JSON,
//! and the counts 1–9 of a plan (`Number of tool calls needed: N`). The call-or-text choice
//! (`decode/call_bias.rs`) biases them. This module must not read logits.

use toolgram_core::CallSyntax;

/// The tokens of one model's vocabulary that open a call.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct CallStarts {
    /// Tokens that begin the syntax's call opener.
    pub(crate) opener: Vec<u32>,
    /// Tokens that begin a plan's non-zero count (`1`–`9`).
    pub(crate) counts: Vec<u32>,
    /// Those of [`Self::counts`] that begin a count of more than one (`2`–`9`).
    pub(crate) more: Vec<u32>,
}

impl CallStarts {
    /// The call-starting tokens among `pieces` (each token's display bytes, by id) for
    /// `syntax`, where `special` finds a special token's id by its text. An opener the
    /// vocabulary has as a special token is that token alone; one spelled as text is any
    /// token spelling it or the start of it (two bytes at least); a syntax whose calls may
    /// be bare JSON after a special opener adds the tokens that start with `{`. A code
    /// fence is left out, on the other side: the grammar reads a reply opening with
    /// ```` ```json ```` as a bare call but one opening ```` ```python ```` as text, and a
    /// coding model asked for a file writes the file in a fence (measured on Claude Code's
    /// first turn: the fence led by 1.5 logits over everything else and the reply was a
    /// ```` ```python ```` block), so a bias on the fence would lift text as much as calls.
    pub(crate) fn find<'p>(
        pieces: impl Iterator<Item = &'p [u8]>,
        special: impl Fn(&str) -> Option<u32>,
        syntax: &CallSyntax,
    ) -> Self {
        let opener = syntax.first_piece().map(|p| p.text());
        let special_opener = opener.and_then(&special);
        let text_opener = match (opener, special_opener) {
            (_, Some(_)) => None,
            (Some(o), None) => Some(o.as_bytes()),
            (None, None) => Some(b"{".as_slice()),
        };
        // The grammar allows bare calls only after a special-token opener (`compile::union`).
        let bare = syntax.bare_calls && special_opener.is_some();
        let mut starts = Self::default();
        for (id, piece) in pieces.enumerate() {
            let Ok(id) = u32::try_from(id) else { break };
            let trimmed = piece.trim_ascii_start();
            let spells = |o: &[u8]| {
                !trimmed.is_empty()
                    && (trimmed.starts_with(o) || (trimmed.len() >= 2 && o.starts_with(trimmed)))
            };
            let opens = special_opener == Some(id)
                || text_opener.is_some_and(spells)
                || (bare && trimmed.starts_with(b"{"));
            if opens {
                starts.opener.push(id);
            }
            if matches!(piece.first(), Some(b'1'..=b'9')) {
                starts.counts.push(id);
            }
            if matches!(piece.first(), Some(b'2'..=b'9')) {
                starts.more.push(id);
            }
        }
        starts
    }
}
