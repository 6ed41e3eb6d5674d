//! The call union's vocabulary: the [`Union`] under construction (skeleton rules, named slots,
//! deferred keywords), what a slot must match ([`Slot`], [`Text`]), what the target's engine can
//! do ([`Target`]) and the small expressions every call body uses (markers, character classes,
//! a property's JSON pointer).
//!
//! The call bodies ([`super::bodies`], [`super::xml`], [`super::harmony`]) and the writers build
//! on it; it must not import them, spell a target or compile an argument schema.

use crate::syntax::{Piece, Reasoning};
use std::collections::HashMap;
use toolgram_grammar::{CharClass, Expr, Grammar, Rule, TokenRef, ir::TokenName};

/// The construction: the skeleton (its first rule is the start rule; slot rules are
/// referenced, not defined) and the slots to fill.
#[derive(Debug)]
pub(crate) struct Union {
    /// Rules of the skeleton.
    pub(crate) grammar: Grammar,
    /// Slot rule name → what it must match.
    pub(crate) slots: Vec<(String, Slot)>,
    /// Indices of the tools a call may name.
    pub(crate) callable: Vec<usize>,
    /// Keywords the skeleton spells values without (tool, JSON pointer, keyword): the
    /// validator checks them after parsing.
    pub(crate) deferred: Vec<(usize, String, &'static str)>,
}

/// What a slot rule must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Tool `tool`'s arguments object: in the template's spelling (Python's `json.dumps`),
    /// or with any spacing when `loose` (a bare call, as models write JSON without a
    /// template's help; a template that pretty-prints arguments). `again` when another slot
    /// spells the same tool's arguments (the bare form beside the one inside markers): its
    /// keywords are listed there, and a writer whose spelling does not depend on the spacing
    /// refers to that slot.
    Args {
        tool: usize,
        loose: bool,
        again: bool,
    },
    /// One value in a tagged body, an XML element or a Gemma 4 call, then `close` (the
    /// value's closing marker, possibly empty): the value at JSON pointer `at` in tool
    /// `tool`'s arguments schema (`/properties/city`), or any text when `at` is `None` (a
    /// key the schema does not name). Raw text never contains `close` or any of `never`
    /// (llguidance: a lexeme's negation; GBNF and OpenAI's Lark: `ir::not_containing`'s
    /// automaton).
    Value {
        tool: usize,
        at: Option<String>,
        close: String,
        never: Vec<String>,
    },
    /// Parameter `key` of tool `tool` as a Python literal (`True`, `None`, JSON strings and
    /// numbers), in a Python call.
    PyValue { tool: usize, key: String },
    /// Free text (non-empty; the skeleton makes it optional).
    Text(Text),
    /// The reasoning block's text followed by its closing markers.
    ThinkBody(Reasoning),
    /// Whatever the caller supplies as the answer (free generation under a user grammar).
    Answer,
}

/// Which free text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Text {
    /// Any text.
    Any,
    /// Text that does not start with any of `words` (after leading whitespace when
    /// `after_ws`).
    NotStarting { words: Vec<String>, after_ws: bool },
    /// Text that does not contain `word` anywhere.
    NotContaining(String),
}

/// What the target's engine can do, which decides how text and calls meet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    /// Marker texts that are one special token, with its id (empty for text-only targets).
    pub(crate) special_tokens: &'a HashMap<String, u32>,
    /// The engine lexes without backtracking (llguidance): free text cannot end where a
    /// call opener begins, so under `auto` text and calls are alternatives unless the
    /// opener is a special token. Character-level engines (GBNF, OpenAI Lark) let text run
    /// up to the first opener.
    pub(crate) lexed: bool,
}

impl Union {
    /// A reference to slot `name`, registered once.
    pub(crate) fn slot(&mut self, name: &str, slot: Slot) -> Expr {
        if !self.slots.iter().any(|(n, _)| n == name) {
            self.slots.push((name.to_owned(), slot));
        }
        Expr::rule(name)
    }

    /// Note that `keyword` at `pointer` in tool `tool`'s arguments is left to the validator.
    pub(crate) fn defer(&mut self, tool: usize, pointer: String, keyword: &'static str) {
        let d = (tool, pointer, keyword);
        if !self.deferred.contains(&d) {
            self.deferred.push(d);
        }
    }

    pub(crate) fn rule(&mut self, name: &str, expr: Expr) {
        self.grammar.rules.push(Rule {
            name: name.to_owned(),
            expr,
        });
    }
}

/// Marker pieces: a special token by id where the target's vocabulary has one, else text.
pub(crate) fn marker(pieces: &[Piece], target: Target) -> Expr {
    Expr::seq(
        pieces
            .iter()
            .map(|p| match p {
                Piece::Token(t) => match target.special_tokens.get(*t) {
                    Some(&id) => Expr::Token(TokenRef {
                        negated: false,
                        token: TokenName::Id(id),
                    }),
                    None => Expr::lit(*t),
                },
                Piece::Text(t) => Expr::lit(*t),
            })
            .collect(),
    )
}

/// A class of the characters in `chars`, negated or not.
pub(crate) fn chars_class(negated: bool, chars: impl IntoIterator<Item = char>) -> Expr {
    Expr::Class(CharClass {
        negated,
        ranges: chars.into_iter().map(|c| (c, c)).collect(),
    })
}

/// The JSON pointer of parameter `key` in an arguments schema: `/properties/KEY`.
pub(crate) fn property_pointer(key: &str) -> String {
    format!(
        "/properties/{}",
        toolgram_grammar::schema::refs::escape_token(key)
    )
}
