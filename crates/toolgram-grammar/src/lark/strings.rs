//! JSON string tokens written whole for the OpenAI dialect: a run that opens with a quote
//! and closes at the next unescaped quote becomes one Lark string (a fixed key or enum
//! value) or one regex (any other string: character classes, repetitions, the trie of
//! "any key but the listed ones"). Spelled character by character, large schemas overflow
//! llguidance's symbol table; whole tokens start and end with a quote, so no token is a
//! proper prefix of another and llguidance's greedy lexer cannot take the wrong one.
//!
//! It must not change the language: a run it cannot write exactly (a recursive rule, a
//! special token) is left to the character-by-character writer.

use super::build::literal as string_literal;
use super::write::{class_body, regex_char};
use crate::ir::Expr;
use std::collections::HashMap;

/// Longest regex written for one string token (a guard: JSON strings never come near it, and
/// a grammar too big for llguidance is refused by llguidance with its own message).
const MAX_REGEX: usize = 1 << 26;

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

/// The string token that `items` opens with, if they open with one.
pub(super) fn whole_string(items: &[Expr], rules: &HashMap<&str, &Expr>) -> Option<Whole> {
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
    let mut re = String::from("/");
    literal(open, &mut re);
    let mut stack = Vec::new();
    for (j, item) in items.iter().enumerate().skip(1) {
        if let Expr::Literal(t) = item
            && let Some(end) = closing_quote(t, 0)
        {
            literal(&t[..=end], &mut re);
            re.push('/');
            return Some(Whole {
                lexeme: re,
                consumed: j + 1,
                rest: t[end + 1..].to_owned(),
            });
        }
        if !regex(item, rules, &mut stack, &mut re) || re.len() > MAX_REGEX {
            return None;
        }
    }
    None
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

/// `e` as a regex; false where it cannot be one (recursion, special tokens).
fn regex(
    e: &Expr,
    rules: &HashMap<&str, &Expr>,
    stack: &mut Vec<String>,
    out: &mut String,
) -> bool {
    if out.len() > MAX_REGEX {
        return false;
    }
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
            let ok = v.iter().all(|x| regex(x, rules, stack, out));
            out.push(')');
            ok
        }
        Expr::Alt(v) => {
            out.push_str("(?:");
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                if !regex(x, rules, stack, out) {
                    return false;
                }
            }
            out.push(')');
            true
        }
        Expr::Repeat { expr, min, max } => {
            out.push_str("(?:");
            if !regex(expr, rules, stack, out) {
                return false;
            }
            out.push(')');
            match max {
                Some(n) => out.push_str(&format!("{{{min},{n}}}")),
                None => out.push_str(&format!("{{{min},}}")),
            }
            true
        }
        Expr::Ref(n) => {
            if stack.contains(n) {
                return false;
            }
            let Some(body) = rules.get(n.as_str()) else {
                return false;
            };
            stack.push(n.clone());
            let ok = regex(body, rules, stack, out);
            stack.pop();
            ok
        }
        Expr::Token(_) => false,
    }
}
