//! Test support: texts generated FROM a tool's grammar (random derivations of its IR, depth
//! bounded by each rule's shortest derivation), and the round-trip checks every grammar tool
//! must pass: `parse(emit(parse(t))) == parse(t)`, the JSON fallback carries the same typed
//! input, and the typed input survives serde.

use crate::definition::GrammarTool;
use proptest::prelude::*;
use std::collections::HashMap;
use toolgram_grammar::{CharClass, Expr, Grammar};

/// Depth after which derivations take their shortest way out.
const DEPTH: u32 = 6;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

/// Shortest derivation height of every rule (fixpoint).
fn heights(g: &Grammar) -> HashMap<String, u32> {
    let mut h: HashMap<String, u32> = g.rules.iter().map(|r| (r.name.clone(), u32::MAX)).collect();
    for _ in 0..g.rules.len() + 2 {
        let mut changed = false;
        for r in &g.rules {
            let v = height(&r.expr, &h);
            if v < h[&r.name] {
                h.insert(r.name.clone(), v);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    h
}

fn height(e: &Expr, h: &HashMap<String, u32>) -> u32 {
    match e {
        Expr::Literal(_) | Expr::Class(_) | Expr::Any | Expr::Token(_) => 0,
        Expr::Seq(items) => items.iter().map(|x| height(x, h)).max().unwrap_or(0),
        Expr::Alt(items) => items.iter().map(|x| height(x, h)).min().unwrap_or(0),
        Expr::Repeat { min: 0, .. } => 0,
        Expr::Repeat { expr, .. } => height(expr, h),
        Expr::Ref(n) => h.get(n).copied().unwrap_or(u32::MAX).saturating_add(1),
    }
}

fn pick_char(class: &CharClass, rng: &mut Rng) -> Option<char> {
    if class.negated {
        let pool: Vec<char> = ('a'..='z')
            .chain('0'..='9')
            .chain([' ', '.', '_'])
            .collect();
        let ok: Vec<char> = pool
            .into_iter()
            .filter(|c| !class.ranges.iter().any(|&(lo, hi)| lo <= *c && *c <= hi))
            .collect();
        return ok.get(rng.below(ok.len())).copied();
    }
    let &(lo, hi) = class.ranges.get(rng.below(class.ranges.len()))?;
    // Keep to printable ASCII where the range allows it.
    let hi = if lo.is_ascii() { hi.min('~') } else { hi };
    let (lo, hi) = (lo as u32, hi as u32);
    // A range of chars may span the surrogate code points, which are no chars: count past them.
    const SURROGATES: std::ops::RangeInclusive<u32> = 0xD800..=0xDFFF;
    let gap = if lo < *SURROGATES.start() && hi > *SURROGATES.end() {
        0x800
    } else {
        0
    };
    let span = hi.saturating_sub(lo).saturating_sub(gap) as usize + 1;
    let mut v = lo + rng.below(span) as u32;
    if gap > 0 && v >= *SURROGATES.start() {
        v += gap;
    }
    char::from_u32(v)
}

fn derive(
    e: &Expr,
    g: &HashMap<&str, &Expr>,
    h: &HashMap<String, u32>,
    depth: u32,
    rng: &mut Rng,
    out: &mut String,
) {
    match e {
        Expr::Literal(s) => out.push_str(s),
        Expr::Class(c) => out.extend(pick_char(c, rng)),
        Expr::Any => out.push((b'a' + rng.below(26) as u8) as char),
        Expr::Token(_) => {}
        Expr::Seq(items) => items.iter().for_each(|x| derive(x, g, h, depth, rng, out)),
        Expr::Alt(items) => {
            let choice = if depth > DEPTH {
                items.iter().min_by_key(|x| height(x, h))
            } else {
                items.get(rng.below(items.len()))
            };
            if let Some(x) = choice {
                derive(x, g, h, depth, rng, out);
            }
        }
        Expr::Repeat { expr, min, max } => {
            let extra = if depth > DEPTH {
                0
            } else {
                rng.below(3) as u32
            };
            let n = max.map_or(min + extra, |m| (min + extra).min(m));
            (0..n).for_each(|_| derive(expr, g, h, depth + 1, rng, out));
        }
        Expr::Ref(n) => {
            if let Some(x) = g.get(n.as_str()) {
                derive(x, g, h, depth + 1, rng, out);
            }
        }
    }
}

/// Random texts in the tool's grammar.
pub(crate) fn texts<T: GrammarTool>(tool: &T) -> impl Strategy<Value = String> + use<T> {
    let grammar = tool.grammar().expect("the tool's grammar reads");
    any::<u64>().prop_map(move |seed| {
        let h = heights(&grammar);
        let rules: HashMap<&str, &Expr> = grammar
            .rules
            .iter()
            .map(|r| (r.name.as_str(), &r.expr))
            .collect();
        let mut out = String::new();
        if let Some(start) = grammar.rules.first() {
            derive(&start.expr, &rules, &h, 0, &mut Rng(seed), &mut out);
        }
        out
    })
}

/// The round trips every grammar tool must pass on `text` (a text in its grammar).
pub(crate) fn check_round_trip<T: GrammarTool>(tool: &T, text: &str) {
    let input = tool
        .parse(text)
        .unwrap_or_else(|e| panic!("generated text {text:?} does not parse: {e}"));
    let emitted = tool.emit(&input);
    let again = tool
        .parse(&emitted)
        .unwrap_or_else(|e| panic!("emitted text {emitted:?} does not parse: {e}"));
    assert_eq!(
        again, input,
        "parse(emit(parse({text:?}))) differs: {emitted:?}"
    );
    let json = serde_json::json!({ "input": emitted });
    assert_eq!(
        tool.input_from_json(&json).ok().as_ref(),
        Some(&input),
        "JSON fallback"
    );
    let through_serde: T::Input =
        serde_json::from_value(serde_json::to_value(&input).expect("serialises"))
            .expect("deserialises");
    assert_eq!(through_serde, input, "serde round trip");
}
