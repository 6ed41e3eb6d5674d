//! The GBNF writer: IR → text llama.cpp's parser accepts. `root` first, then rules in
//! first-reference order; only reachable rules; names from `[a-zA-Z0-9-]`.
//!
//! It must not emit anything llama.cpp would read differently from the IR: escapes are
//! explicit and repetition counts stay inside llama.cpp's limits (see `lower`).

use crate::ir::{CharClass, Expr, Grammar, TokenName, TokenRef};
use crate::lower::{is_atom, lower};
use crate::names::{Namer, Target};
use std::fmt::Write as _;

/// Write `g` as GBNF; the start rule is named `root`.
pub fn emit(g: &Grammar) -> String {
    let rules = lower(g);
    let Some(start) = rules.first() else {
        return String::new();
    };
    let mut namer = Namer::new(Target::Gbnf, &start.name, "root");
    let mut out = String::new();
    for r in &rules {
        let name = namer.name(&r.name);
        let mut body = String::new();
        expr(&r.expr, &mut namer, &mut body, true);
        let _ = writeln!(out, "{name} ::= {body}");
    }
    out
}

fn expr(e: &Expr, namer: &mut Namer, out: &mut String, top: bool) {
    match e {
        Expr::Seq(v) if v.is_empty() => out.push_str("\"\""),
        Expr::Seq(v) => {
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                expr(x, namer, out, false);
            }
        }
        Expr::Alt(v) => {
            if !top {
                out.push('(');
            }
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                expr(x, namer, out, true);
            }
            if !top {
                out.push(')');
            }
        }
        Expr::Literal(s) => {
            out.push('"');
            for c in s.chars() {
                escape(c, out, &['"', '\\']);
            }
            out.push('"');
        }
        Expr::Class(c) => class(c, out),
        Expr::Any => out.push('.'),
        Expr::Ref(n) => out.push_str(&namer.name(n)),
        Expr::Token(t) => token(t, out),
        Expr::Repeat {
            expr: inner,
            min,
            max,
        } => {
            if is_atom(inner) {
                expr(inner, namer, out, false);
            } else {
                out.push('(');
                expr(inner, namer, out, true);
                out.push(')');
            }
            let _ = match (min, max) {
                (0, Some(1)) => write!(out, "?"),
                (0, None) => write!(out, "*"),
                (1, None) => write!(out, "+"),
                (m, None) => write!(out, "{{{m},}}"),
                (m, Some(n)) if m == n => write!(out, "{{{m}}}"),
                (m, Some(n)) => write!(out, "{{{m},{n}}}"),
            };
        }
    }
}

fn token(t: &TokenRef, out: &mut String) {
    if t.negated {
        out.push('!');
    }
    match &t.token {
        TokenName::Id(id) => {
            let _ = write!(out, "<[{id}]>");
        }
        TokenName::Text(s) => out.push_str(s),
    }
}

fn class(c: &CharClass, out: &mut String) {
    out.push('[');
    if c.negated {
        out.push('^');
    }
    let special = ['\\', ']', '[', '-', '^', '"'];
    for &(lo, hi) in &c.ranges {
        escape(lo, out, &special);
        if hi != lo {
            out.push('-');
            escape(hi, out, &special);
        }
    }
    out.push(']');
}

/// One character in GBNF spelling; `special` characters are written as hex escapes.
fn escape(c: char, out: &mut String, special: &[char]) {
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\t' => write!(out, "\\t"),
        '\r' => write!(out, "\\r"),
        '\\' => write!(out, "\\\\"),
        '"' => write!(out, "\\\""),
        c if special.contains(&c) || c.is_control() || (c as u32) < 0x20 => {
            let v = c as u32;
            if v <= 0xFF {
                write!(out, "\\x{v:02X}")
            } else if v <= 0xFFFF {
                write!(out, "\\u{v:04X}")
            } else {
                write!(out, "\\U{v:08X}")
            }
        }
        c => write!(out, "{c}"),
    };
}
