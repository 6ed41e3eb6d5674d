//! A grammar moved inside a JSON string: the language of the JSON-escaped spellings of its
//! texts (`"` as `\"`, `\` as `\\`, control characters as `\n`, `\t`, `\u00XX`). A grammar
//! tool's call then stays ordinary JSON (`{"input": "…"}`) while the text inside the string
//! is constrained by the tool's own grammar. It rewrites expressions only; it must not
//! change which texts (once unescaped) the grammar accepts.

use crate::ir::{CharClass, Expr, Grammar, Rule};

/// How JSON spells `c` inside a string.
fn escaped(c: char) -> String {
    match c {
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\u{8}' => "\\b".into(),
        '\u{c}' => "\\f".into(),
        c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
        c => c.to_string(),
    }
}

/// Characters that need escaping: `"`, `\` and U+0000–U+001F.
const SPECIAL: [(char, char); 3] = [('\0', '\u{1f}'), ('"', '"'), ('\\', '\\')];

fn in_class(c: char, class: &CharClass) -> bool {
    class.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != class.negated
}

/// `class` minus the special characters, plus the escaped spellings of the special
/// characters it allowed.
fn class(c: &CharClass) -> Expr {
    let specials = SPECIAL
        .iter()
        .flat_map(|&(lo, hi)| (lo as u32..=hi as u32).filter_map(char::from_u32));
    let allowed: Vec<Expr> = specials
        .filter(|s| in_class(*s, c))
        .map(|s| Expr::lit(escaped(s)))
        .collect();
    let plain = if c.negated {
        let mut ranges = c.ranges.clone();
        ranges.extend(SPECIAL);
        CharClass {
            negated: true,
            ranges,
        }
    } else {
        let mut ranges = Vec::new();
        for &(lo, hi) in &c.ranges {
            let mut start = lo as u32;
            for s in SPECIAL {
                let (slo, shi) = (s.0 as u32, s.1 as u32);
                if slo > hi as u32 || shi < start {
                    continue;
                }
                if slo > start {
                    ranges.extend(char::from_u32(start).zip(char::from_u32(slo - 1)));
                }
                start = start.max(shi + 1);
            }
            if start <= hi as u32 {
                ranges.extend(char::from_u32(start).zip(Some(hi)));
            }
        }
        CharClass {
            negated: false,
            ranges,
        }
    };
    let mut alts = Vec::new();
    if plain.negated || !plain.ranges.is_empty() {
        alts.push(Expr::Class(plain));
    }
    alts.extend(allowed);
    Expr::alt(alts)
}

fn expr(e: &Expr) -> Expr {
    match e {
        Expr::Literal(s) => Expr::lit(s.chars().map(escaped).collect::<String>()),
        Expr::Class(c) => class(c),
        Expr::Any => class(&CharClass {
            negated: true,
            ranges: Vec::new(),
        }),
        Expr::Seq(items) => Expr::Seq(items.iter().map(expr).collect()),
        Expr::Alt(items) => Expr::Alt(items.iter().map(expr).collect()),
        Expr::Repeat { expr: x, min, max } => Expr::Repeat {
            expr: Box::new(expr(x)),
            min: *min,
            max: *max,
        },
        Expr::Ref(_) | Expr::Token(_) => e.clone(),
    }
}

/// `g` as the content of a JSON string.
pub fn inside_json_string(g: &Grammar) -> Grammar {
    Grammar {
        rules: g
            .rules
            .iter()
            .map(|r| Rule {
                name: r.name.clone(),
                expr: expr(&r.expr),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lark;
    use crate::tree::parse_tree;

    #[test]
    fn texts_match_exactly_in_their_json_spelling() {
        let g = lark::parse("start: \"say \" QUOTED\nQUOTED: /\"[^\"\\n]*\"/\n").expect("reads");
        let inside = inside_json_string(&g);
        for text in ["say \"hi\"", "say \"a\\\\b\"", "say \"\""] {
            assert!(parse_tree(&g, text).is_ok(), "{text}");
            let json = serde_json::to_string(text).expect("json");
            let spelled = &json[1..json.len() - 1];
            assert!(parse_tree(&inside, spelled).is_ok(), "{spelled}");
            assert!(
                parse_tree(&inside, text).is_err() || !text.contains('"'),
                "{text}"
            );
        }
        let multi = lark::parse("start: /(?s:.+)/\n").expect("reads");
        let inside = inside_json_string(&multi);
        assert!(parse_tree(&inside, "a\\nb\\tc\\u0001").is_ok());
        assert!(
            parse_tree(&inside, "a\nb").is_err(),
            "raw newlines are not JSON"
        );
    }
}
