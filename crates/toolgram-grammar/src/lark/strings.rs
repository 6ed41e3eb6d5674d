//! JSON string tokens written whole for the OpenAI dialect: a run that opens with a quote
//! and closes at the next unescaped quote becomes one Lark string (a fixed key or enum
//! value) or one regex (any other string: character classes, repetitions, the trie of
//! "any key but the listed ones"). Spelled character by character, large schemas overflow
//! llguidance's symbol table; whole tokens start and end with a quote, so no token is a
//! proper prefix of another and llguidance's greedy lexer cannot take the wrong one.
//!
//! It must not change the language: a run it cannot write exactly (a recursive rule, a
//! special token) is left to the character-by-character writer, and so is one past its
//! bounds (references inlined more than [`MAX_INLINE`] deep, a regex over [`MAX_REGEX`]
//! bytes, more than [`MAX_TOTAL`] bytes of regex built for one grammar).

use super::build::literal as string_literal;
use crate::CharClass;
use crate::ir::Expr;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Longest regex written for one string token (JSON strings never come near it; a longer run
/// is written character by character).
const MAX_REGEX: usize = 1 << 20;

/// Most regex bytes built while writing one grammar, kept or not: inlining references can
/// grow a regex exponentially, and every sequence that opens with a quote tries once.
pub(super) const MAX_TOTAL: usize = 1 << 24;

/// Deepest chain of rule references inlined into one regex.
const MAX_INLINE: usize = 64;

/// One string token found at the start of a sequence.
pub(super) struct Whole {
    /// The Lark string or `/regex/`.
    pub lexeme: String,
    /// How many items of the sequence it covers.
    pub consumed: usize,
    /// Text of the last literal after the closing quote, still to write.
    pub rest: String,
}

/// Byte index of the first `"` in `s` at or after `from` not escaped by a backslash.
fn closing_quote(s: &str, from: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        match b {
            b'\\' if !escaped => escaped = true,
            b'"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// The string token that `items` opens with, if they open with one; `budget` is what is
/// left of [`MAX_TOTAL`] for the grammar, and the regex built here is taken from it.
pub(super) fn whole_string(
    items: &[Expr],
    rules: &HashMap<&str, &Expr>,
    budget: &mut usize,
) -> Option<Whole> {
    let Some(Expr::Literal(open)) = items.first() else {
        return None;
    };
    if !open.starts_with('"') {
        return None;
    }
    if let Some(end) = closing_quote(open, 1) {
        return Some(Whole {
            lexeme: string_literal(&open[..=end]),
            consumed: 1,
            rest: open[end + 1..].to_owned(),
        });
    }
    let mut w = Regex {
        rules,
        stack: Vec::new(),
        out: String::from("/"),
        limit: MAX_REGEX.min(*budget),
    };
    literal(open, &mut w.out);
    let found = whole_regex(items, &mut w);
    *budget = budget.saturating_sub(w.out.len());
    found
}

/// The rest of [`whole_string`]: the items after the opening quote, up to the closing one.
fn whole_regex(items: &[Expr], w: &mut Regex) -> Option<Whole> {
    for (j, item) in items.iter().enumerate().skip(1) {
        if let Expr::Literal(t) = item
            && let Some(end) = closing_quote(t, 0)
        {
            literal(&t[..=end], &mut w.out);
            w.out.push('/');
            return Some(Whole {
                lexeme: std::mem::take(&mut w.out),
                consumed: j + 1,
                rest: t[end + 1..].to_owned(),
            });
        }
        if !regex(item, w) || w.out.len() > w.limit {
            return None;
        }
    }
    None
}

/// A regex being built: the rules references name, the references being inlined, the text.
struct Regex<'r, 'e> {
    rules: &'r HashMap<&'e str, &'e Expr>,
    stack: Vec<&'e str>,
    out: String,
    limit: usize,
}

fn literal(s: &str, out: &mut String) {
    for c in s.chars() {
        if "\\.+*?()|[]{}^$/".contains(c) {
            out.push('\\');
            out.push(c);
        } else {
            regex_char(c, out);
        }
    }
}

/// `e` as a regex; false where it cannot be one (recursion, special tokens, past a bound).
fn regex(e: &Expr, w: &mut Regex) -> bool {
    if w.out.len() > w.limit {
        return false;
    }
    let out = &mut w.out;
    match e {
        Expr::Literal(s) => {
            out.push_str("(?:");
            literal(s, out);
            out.push(')');
            true
        }
        Expr::Class(c) => {
            class_body(c, out);
            true
        }
        Expr::Any => {
            out.push_str("(?s:.)");
            true
        }
        Expr::Seq(v) => {
            out.push_str("(?:");
            let ok = v.iter().all(|x| regex(x, w));
            w.out.push(')');
            ok
        }
        Expr::Alt(v) => {
            out.push_str("(?:");
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    w.out.push('|');
                }
                if !regex(x, w) {
                    return false;
                }
            }
            w.out.push(')');
            true
        }
        Expr::Repeat { expr, min, max } => {
            out.push_str("(?:");
            if !regex(expr, w) {
                return false;
            }
            w.out.push(')');
            match max {
                Some(n) => w.out.push_str(&format!("{{{min},{n}}}")),
                None => w.out.push_str(&format!("{{{min},}}")),
            }
            true
        }
        Expr::Ref(n) => {
            let rules = w.rules;
            let Some((&name, &body)) = rules.get_key_value(n.as_str()) else {
                return false;
            };
            if w.stack.len() >= MAX_INLINE || w.stack.contains(&name) {
                return false;
            }
            w.stack.push(name);
            let ok = regex(body, w);
            w.stack.pop();
            ok
        }
        Expr::Token(_) => false,
    }
}
/// `[…]` for a class, as inside a regex.
pub(super) fn class_body(c: &CharClass, out: &mut String) {
    out.push('[');
    if c.negated {
        out.push('^');
    }
    for &(lo, hi) in &c.ranges {
        regex_char(lo, out);
        if hi != lo {
            out.push('-');
            regex_char(hi, out);
        }
    }
    out.push(']');
}

pub(super) fn regex_char(c: char, out: &mut String) {
    let _ = if "\\]-[^/&~".contains(c) {
        write!(out, "\\{c}")
    } else if c.is_control() || c.is_whitespace() {
        write!(out, "\\x{{{:x}}}", c as u32)
    } else {
        write!(out, "{c}")
    };
}
