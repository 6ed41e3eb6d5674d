//! The bounds on a Lark grammar the reader takes: group nesting, rule count, and how deep
//! rule references lead from `start`. Grammars come from clients (custom tools), and every
//! consumer of a read grammar — our writers, llguidance's compiler, the tree parser — walks
//! groups and references recursively, so a grammar within these bounds is one no consumer
//! overflows its stack on. The reference walk here is iterative.
//!
//! This module must not read grammar text (the reader does) or change a grammar.

use crate::GrammarError;
use std::collections::{HashMap, HashSet};

/// Deepest nesting of `( )` and `[ ]` groups. Hand-written Lark rarely nests 10 deep, and the
/// writers hoist groups nested more than 12 deep into rules of their own; 64 leaves room for
/// generated grammars while every recursive walk over a rule body stays a few hundred frames.
pub const MAX_NESTING: usize = 64;

/// Most rules and terminals in one grammar (`%import`s included). Real tool grammars have
/// tens to a few hundred; the checks over all rules (nullable rules, left recursion) are
/// quadratic in the worst case, and 4,096 keeps them in milliseconds.
pub const MAX_RULES: usize = 4096;

/// Longest chain of references from `start`, counted as llguidance's compiler follows them
/// (depth first, each rule once, in the order written): one step per rule entered plus one
/// per group the reference sits in. llguidance compiles a rule by recursing into the rules it
/// references, so this is its stack depth; 512 is under what a 2 MiB thread stack holds and
/// above the 500-rule chains that worked before the limit.
pub const MAX_REF_DEPTH: usize = 512;

/// A reference to a rule from a rule body: the name, its byte offset, and how many groups
/// it sits in.
pub(super) struct Use {
    pub(super) name: String,
    pub(super) at: usize,
    pub(super) nesting: usize,
}

/// The references of rule `name` (none for a rule the grammar does not define).
fn body<'u>(uses: &'u HashMap<String, Vec<Use>>, name: &str) -> &'u [Use] {
    uses.get(name).map_or(&[], Vec::as_slice)
}

/// Refuse a grammar whose references lead deeper than [`MAX_REF_DEPTH`] from `start`,
/// naming the reference where the chain gets too deep.
pub(super) fn check_ref_depth(
    src: &str,
    start: &str,
    uses: &HashMap<String, Vec<Use>>,
) -> Result<(), GrammarError> {
    let mut entered: HashSet<&str> = HashSet::from([start]);
    // (the rule's references, the next one to follow, the depth of the rule)
    let mut stack: Vec<(&[Use], usize, usize)> = vec![(body(uses, start), 0, 0)];
    while let Some(top) = stack.last_mut() {
        let (refs, next, depth) = (top.0, top.1, top.2);
        let Some(u) = refs.get(next) else {
            stack.pop();
            continue;
        };
        top.1 += 1;
        if !entered.insert(u.name.as_str()) {
            continue;
        }
        let deeper = depth + 1 + u.nesting;
        if deeper > MAX_REF_DEPTH {
            return Err(GrammarError::at(
                src,
                u.at,
                format!(
                    "rule references lead more than {MAX_REF_DEPTH} deep from `start` (the limit on reference depth)"
                ),
            ));
        }
        stack.push((body(uses, &u.name), 0, deeper));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, Grammar, Rule};
    use crate::lark::{self, LarkDialect};

    /// `start` and a chain of `n` rules, each a `y` and a reference to the next.
    fn chain(n: usize) -> String {
        let mut g = format!("start: a{n}\na0: \"x\"\n");
        for k in 1..=n {
            g.push_str(&format!("a{k}: \"y\" a{}\n", k - 1));
        }
        g
    }

    #[test]
    fn groups_nested_past_the_limit_are_refused_with_where() {
        // The request: 500,000 groups, which overflowed the reader's stack.
        let n = 500_000;
        let src = format!("start: {}\"a\"{}", "(".repeat(n), ")".repeat(n));
        let e = lark::parse(&src).expect_err("too deep");
        assert!(e.message.contains("limit on nesting depth"), "{e}");
        assert_eq!((e.line, e.column), (1, 8 + MAX_NESTING));
        let ok = format!(
            "start: {}\"a\"{}",
            "[".repeat(MAX_NESTING),
            "]".repeat(MAX_NESTING)
        );
        assert!(lark::parse(&ok).is_ok());
    }

    #[test]
    fn reference_chains_past_the_limit_are_refused() {
        assert!(
            lark::parse(&chain(500)).is_ok(),
            "a 500-rule chain still reads"
        );
        let e = lark::parse(&chain(1000)).expect_err("too deep");
        assert!(e.message.contains("limit on reference depth"), "{e}");
        // Groups count towards the depth: 400 rules each nesting its reference 2 deep.
        let mut nested = String::from("start: a400\na0: \"x\"\n");
        for k in 1..=400 {
            nested.push_str(&format!("a{k}: \"y\" ((a{}))\n", k - 1));
        }
        assert!(lark::parse(&nested).is_err());
        // A rule reached twice is entered once: a wide grammar is not deep.
        let mut wide = String::from("start: ");
        for k in 0..2000 {
            wide.push_str(&format!("w{k} "));
        }
        wide.push('\n');
        for k in 0..2000 {
            wide.push_str(&format!("w{k}: \"z\" start?\n"));
        }
        assert!(lark::parse(&wide).is_ok());
    }

    #[test]
    fn comments_with_multibyte_characters_are_skipped_whole() {
        // Found by the fuzzer (`tests/lark_fuzz.rs`): the comment skipper stepped one byte at
        // a time and left the reader inside a character, which then panicked.
        let g = lark::parse("// a ᝃ comment\nstart: \"a\" # é\n%llguidance {\"x\": \"é\"}\n");
        assert!(g.is_ok(), "{g:?}");
        assert!(lark::parse("start: \"a\"\n// ᝃ\nx").is_err());
    }

    #[test]
    fn rule_counts_past_the_limit_are_refused_quickly() {
        // 80,000 rules took 9.9 s in the old quadratic duplicate check.
        let mut src = String::from("start: \"a\"\n");
        for k in 0..80_000 {
            src.push_str(&format!("r{k}: \"b\"\n"));
        }
        let t = std::time::Instant::now();
        let e = lark::parse(&src).expect_err("too many rules");
        assert!(e.message.contains("limit on rules"), "{e}");
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
        let dup = lark::parse("start: a\na: \"x\"\na: \"y\"\n").expect_err("twice");
        assert!(dup.message.contains("defined twice"));
    }

    #[test]
    fn string_tokens_inline_references_only_so_deep() {
        // A JSON string token through a chain of 50,000 rules (built as IR: the reader refuses
        // such a chain) overflowed the OpenAI writer's stack; it is written rule by rule.
        let n = 50_000;
        let mut rules = vec![Rule {
            name: "start".into(),
            expr: Expr::seq(vec![
                Expr::lit("\""),
                Expr::rule(format!("c{n}")),
                Expr::lit("\""),
            ]),
        }];
        rules.push(Rule {
            name: "c0".into(),
            expr: Expr::lit("x"),
        });
        for k in 1..=n {
            rules.push(Rule {
                name: format!("c{k}"),
                expr: Expr::seq(vec![Expr::lit("y"), Expr::rule(format!("c{}", k - 1))]),
            });
        }
        let out = lark::emit(&Grammar { rules }, LarkDialect::OpenAi);
        assert!(out.contains("c1"), "written rule by rule");
        // A shallow chain is still one string token.
        let short =
            lark::parse("start: \"\\\"\" b \"\\\"\"\nb: \"y\" c\nc: \"x\"\n").expect("reads");
        let out = lark::emit(&short, LarkDialect::OpenAi);
        assert!(out.starts_with("start: /\"(?:"), "{out}");
    }
}
