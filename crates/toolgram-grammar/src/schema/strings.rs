//! JSON strings in the grammar: the character rule, patterns (regex → IR with anchors
//! honoured, characters spelled as JSON escapes where JSON requires), and formats.
//!
//! Escape policy: a plain string admits every JSON escape; text from a pattern, format or
//! constant admits the spelling `serde_json`/`json.dumps` write (raw characters, `\"`, `\\`,
//! short escapes for controls). This module must not decide what is deferred.

use crate::ir::{CharClass, Expr};
use crate::regex::{self, Unsupported};
use regex_syntax::hir::{Hir, HirKind};

/// Name of the shared rule for one JSON string character.
pub const CHAR_RULE: &str = "char";

/// Name of the shared rule for what follows a backslash in a JSON string.
pub const ESCAPE_RULE: &str = "escape";

/// What may follow a backslash: a short escape or `u` and four hex digits.
pub fn escape_rule() -> Expr {
    Expr::alt(vec![
        Expr::class(&[
            ('"', '"'),
            ('\\', '\\'),
            ('/', '/'),
            ('b', 'b'),
            ('f', 'f'),
            ('n', 'n'),
            ('r', 'r'),
            ('t', 't'),
        ]),
        Expr::seq(vec![
            Expr::lit("u"),
            Expr::repeat(
                Expr::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]),
                4,
                Some(4),
            ),
        ]),
    ])
}

/// The JSON string character: unescaped, or any escape.
pub fn char_rule() -> Expr {
    Expr::alt(vec![
        Expr::Class(CharClass {
            negated: true,
            ranges: vec![('"', '"'), ('\\', '\\'), ('\0', '\u{1f}')],
        }),
        Expr::seq(vec![Expr::lit("\\"), Expr::rule(ESCAPE_RULE)]),
    ])
}

/// How `c` is written inside a JSON string.
pub fn escaped(c: char) -> String {
    let s = serde_json::to_string(&c.to_string()).unwrap_or_default();
    s.get(1..s.len().saturating_sub(1)).unwrap_or("").to_owned()
}

/// Characters of a pattern re-spelled as JSON string content.
pub fn jsonize(e: Expr) -> Expr {
    match e {
        Expr::Literal(s) => Expr::Literal(s.chars().map(escaped).collect()),
        Expr::Class(c) if !c.negated => {
            // Characters JSON writes raw, as three ranges around `"`, `\` and controls.
            const RAW: [(char, char); 3] = [('\u{20}', '!'), ('#', '['), (']', '\u{10FFFF}')];
            let mut plain = Vec::new();
            let mut alts = Vec::new();
            for (lo, hi) in c.ranges {
                for (a, b) in RAW {
                    let (x, y) = (lo.max(a), hi.min(b));
                    if x <= y {
                        plain.push((x, y));
                    }
                }
                for e in ('\0'..='\u{1f}').chain(['"', '\\']) {
                    if lo <= e && e <= hi {
                        alts.push(Expr::lit(escaped(e)));
                    }
                }
            }
            if !plain.is_empty() {
                alts.insert(
                    0,
                    Expr::Class(CharClass {
                        negated: false,
                        ranges: plain,
                    }),
                );
            }
            Expr::alt(alts)
        }
        Expr::Seq(v) => Expr::Seq(v.into_iter().map(jsonize).collect()),
        Expr::Alt(v) => Expr::Alt(v.into_iter().map(jsonize).collect()),
        Expr::Repeat { expr, min, max } => Expr::repeat(jsonize(*expr), min, max),
        other => other,
    }
}

/// The string content (between the quotes) matched by a JSON-Schema `pattern`: a search,
/// so unanchored ends admit any characters.
pub fn pattern(p: &str) -> Result<Expr, Unsupported> {
    let hir = regex::parse(p)?;
    anchored(&hir)
}

fn anchored(h: &Hir) -> Result<Expr, Unsupported> {
    let any = || Expr::repeat(Expr::rule(CHAR_RULE), 0, None);
    match h.kind() {
        HirKind::Alternation(v) => Ok(Expr::alt(v.iter().map(anchored).collect::<Result<_, _>>()?)),
        HirKind::Capture(c) => anchored(&c.sub),
        HirKind::Concat(v) => {
            let mut items: &[Hir] = v;
            let mut start = false;
            let mut end = false;
            if let Some((first, rest)) = items.split_first()
                && matches!(first.kind(), HirKind::Look(l) if regex::is_start(l))
            {
                start = true;
                items = rest;
            }
            if let Some((last, rest)) = items.split_last()
                && matches!(last.kind(), HirKind::Look(l) if regex::is_end(l))
            {
                end = true;
                items = rest;
            }
            let mut seq = Vec::new();
            if !start {
                seq.push(any());
            }
            for x in items {
                seq.push(jsonize(regex::hir_to_expr(x)?));
            }
            if !end {
                seq.push(any());
            }
            Ok(Expr::seq(seq))
        }
        HirKind::Look(l) if regex::is_start(l) || regex::is_end(l) => Ok(any()),
        _ => Ok(Expr::seq(vec![
            any(),
            jsonize(regex::hir_to_expr(h)?),
            any(),
        ])),
    }
}

/// A format's regex and whether it is exact (otherwise the grammar over-approximates and
/// the keyword is deferred too).
pub fn format(name: &str) -> Option<(&'static str, bool)> {
    const DATE: &str = r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])";
    const TIME: &str = r"([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
    Some(match name {
        "date" => (DATE, false),
        "time" => (TIME, true),
        "date-time" => (
            r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])",
            false,
        ),
        "uuid" => (
            r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            true,
        ),
        "ipv4" => (
            r"((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
            true,
        ),
        "duration" => (r"P([0-9]+[YMWD])*(T([0-9]+(\.[0-9]+)?[HMS])+)?", false),
        "email" => (r"[^\s@]+@[^\s@]+", false),
        "hostname" => (
            r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?",
            false,
        ),
        "uri" => (r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*", false),
        "ipv6" => (r"[0-9A-Fa-f:.]{2,45}", false),
        _ => return None,
    })
}

/// A quoted JSON string that is none of `keys` (as `serde_json` spells them): extra object
/// keys cannot repeat a declared property.
pub fn key_except(keys: &[&str]) -> Expr {
    let spelled: Vec<Vec<char>> = keys
        .iter()
        .map(|k| k.chars().map(escaped).collect::<String>().chars().collect())
        .collect();
    let refs: Vec<&[char]> = spelled.iter().map(Vec::as_slice).collect();
    Expr::seq(vec![Expr::lit("\""), not_in(&refs), Expr::lit("\"")])
}

/// String content that differs from every word in `words` (a trie walk).
fn not_in(words: &[&[char]]) -> Expr {
    let any = || Expr::repeat(Expr::rule(CHAR_RULE), 0, None);
    let mut firsts: Vec<char> = words.iter().filter_map(|w| w.first().copied()).collect();
    firsts.sort_unstable();
    firsts.dedup();
    let mut alts = Vec::new();
    for &c in &firsts {
        let tails: Vec<&[char]> = words
            .iter()
            .filter(|w| w.first() == Some(&c))
            .map(|w| &w[1..])
            .collect();
        alts.push(Expr::seq(vec![Expr::lit(c.to_string()), not_in(&tails)]));
    }
    // A first character no word starts with: anything may follow.
    let mut excluded: Vec<(char, char)> = vec![('"', '"'), ('\\', '\\'), ('\0', '\u{1f}')];
    excluded.extend(firsts.iter().filter(|c| **c != '\\').map(|&c| (c, c)));
    let escape_ok = !firsts.contains(&'\\');
    let mut other = vec![Expr::Class(CharClass {
        negated: true,
        ranges: excluded,
    })];
    if escape_ok {
        other.push(Expr::seq(vec![Expr::lit("\\"), Expr::rule(ESCAPE_RULE)]));
    }
    alts.push(Expr::seq(vec![Expr::alt(other), any()]));
    if !words.iter().any(|w| w.is_empty()) {
        alts.push(Expr::Seq(Vec::new()));
    }
    Expr::alt(alts)
}
