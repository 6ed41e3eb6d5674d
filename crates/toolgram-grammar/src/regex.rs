//! Regular expressions → IR, through `regex-syntax`'s HIR (the parser the `regex` crate
//! uses), so character classes, Unicode classes and counted repetition mean what they mean
//! there.
//!
//! Look-around assertions other than the anchors a caller strips are refused, never
//! approximated; laziness is irrelevant to the language and dropped.

use crate::ir::{CharClass, Expr};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// A regex the IR cannot express exactly, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// Parse `pattern` into HIR (Unicode mode; `\d` and `\w` are ASCII, as in ECMA-262 and
/// Python's `re.ASCII`-free defaults for JSON Schema).
pub fn parse(pattern: &str) -> Result<Hir, Unsupported> {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(&ascii_perl_classes(pattern))
        .map_err(|e| Unsupported(e.to_string()))
}

/// `\d`, `\D`, `\w`, `\W` spelled as ASCII classes (nested classes are valid inside `[…]`).
fn ascii_perl_classes(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut it = p.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The IR for a whole-match of `pattern`.
pub fn to_expr(pattern: &str) -> Result<Expr, Unsupported> {
    hir_to_expr(&parse(pattern)?)
}

/// The IR for HIR without look-around.
pub fn hir_to_expr(h: &Hir) -> Result<Expr, Unsupported> {
    Ok(match h.kind() {
        HirKind::Empty => Expr::Seq(Vec::new()),
        HirKind::Literal(l) => Expr::Literal(
            String::from_utf8(l.0.to_vec())
                .map_err(|_| Unsupported("a byte literal that is not UTF-8".into()))?,
        ),
        HirKind::Class(Class::Unicode(c)) => {
            if c.ranges().is_empty() {
                return Err(Unsupported("an empty character class".into()));
            }
            Expr::Class(CharClass {
                negated: false,
                ranges: c.ranges().iter().map(|r| (r.start(), r.end())).collect(),
            })
        }
        HirKind::Class(Class::Bytes(c)) => {
            let ranges: Vec<(char, char)> = c
                .ranges()
                .iter()
                .filter(|r| r.start() < 0x80)
                .map(|r| (char::from(r.start()), char::from(r.end().min(0x7F))))
                .collect();
            if ranges.is_empty() {
                return Err(Unsupported("a byte class outside ASCII".into()));
            }
            Expr::Class(CharClass {
                negated: false,
                ranges,
            })
        }
        HirKind::Look(l) => return Err(Unsupported(format!("the assertion {l:?}"))),
        HirKind::Repetition(r) => Expr::repeat(hir_to_expr(&r.sub)?, r.min, r.max),
        HirKind::Capture(c) => hir_to_expr(&c.sub)?,
        HirKind::Concat(v) => Expr::seq(v.iter().map(hir_to_expr).collect::<Result<_, _>>()?),
        HirKind::Alternation(v) => Expr::alt(v.iter().map(hir_to_expr).collect::<Result<_, _>>()?),
    })
}

/// Whether `l` anchors at the start of the text.
pub fn is_start(l: &Look) -> bool {
    matches!(l, Look::Start | Look::StartLF | Look::StartCRLF)
}

/// Whether `l` anchors at the end of the text (`$` in JSON Schema means the end).
pub fn is_end(l: &Look) -> bool {
    matches!(l, Look::End | Look::EndLF | Look::EndCRLF)
}
