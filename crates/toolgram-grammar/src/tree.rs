//! Parse trees from the grammar IR: the parser of grammar tools is the grammar itself, so a
//! tool's parser can never drift from the grammar the model was constrained by.
//!
//! A memoised, all-ends backtracking parser over the IR (context-free semantics for every
//! grammar without left recursion, which is refused up front). Nodes are the named rules
//! and terminals met; rules whose name starts with `_` are inlined (their children lifted),
//! as in Lark. Ambiguity is resolved deterministically: earlier alternatives and fewer
//! repetitions win. Its work is bounded: steps by `BUDGET`, rules entered at once by
//! [`MAX_DEPTH`]. It must not run a model or know about tools.

use crate::ir::{CharClass, Expr, Grammar};
use std::collections::HashMap;
use std::rc::Rc;
use thiserror::Error;

/// Most expression steps one parse may take (a guard against pathological ambiguity).
const BUDGET: usize = 5_000_000;

/// Most rules one parse may be inside at once: the parser recurses into each rule it enters,
/// and a right-recursive grammar (`start: "x" start | "x"`) enters one per item of the text.
/// Within a 2 MiB thread stack with room to spare.
pub const MAX_DEPTH: usize = 256;

/// A node of a parse: a named rule (or terminal) and the byte span it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseTree {
    /// The rule's name.
    pub name: String,
    /// Byte offset where it starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
    /// Named sub-rules, in order.
    pub children: Vec<ParseTree>,
}

impl ParseTree {
    /// The text this node matched.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start..self.end).unwrap_or("")
    }

    /// The first direct child named `name`.
    pub fn child(&self, name: &str) -> Option<&ParseTree> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every direct child named `name`, in order.
    pub fn children_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s ParseTree> + 's {
        self.children.iter().filter(move |c| c.name == name)
    }
}

/// Why a text has no parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TreeError {
    /// The text does not match; `offset` is how far the grammar could follow it.
    #[error("the text does not match the grammar after byte {offset}")]
    NoMatch {
        /// Bytes of the text the grammar could follow.
        offset: usize,
    },
    /// The grammar cannot be used for parsing.
    #[error("unusable grammar: {0}")]
    Grammar(String),
    /// The text is too ambiguous or long to parse within the step budget.
    #[error("the text needs more than {BUDGET} parsing steps")]
    TooComplex,
    /// The text nests rules deeper than [`MAX_DEPTH`].
    #[error("the text nests rules more than {MAX_DEPTH} deep")]
    TooDeep,
}

type Ends = Rc<Vec<(usize, Vec<ParseTree>)>>;

struct Parser<'g, 't> {
    rules: HashMap<&'g str, &'g Expr>,
    text: &'t str,
    memo: HashMap<(&'g str, usize), Ends>,
    furthest: usize,
    steps: usize,
    /// Rules entered and not yet left.
    depth: usize,
}

/// Parse all of `text` from the grammar's start rule.
pub fn parse_tree(grammar: &Grammar, text: &str) -> Result<ParseTree, TreeError> {
    let start = grammar
        .start()
        .ok_or_else(|| TreeError::Grammar("no rules".into()))?;
    if let Some(rule) = grammar.left_recursive() {
        return Err(TreeError::Grammar(format!(
            "rule `{rule}` is left-recursive"
        )));
    }
    let undefined = grammar.undefined();
    if let Some(name) = undefined.first() {
        return Err(TreeError::Grammar(format!("rule `{name}` is not defined")));
    }
    let mut p = Parser {
        rules: grammar
            .rules
            .iter()
            .map(|r| (r.name.as_str(), &r.expr))
            .collect(),
        text,
        memo: HashMap::new(),
        furthest: 0,
        steps: 0,
        depth: 0,
    };
    let ends = p.rule(start, 0)?;
    let full = ends.iter().find(|(end, _)| *end == text.len());
    match full {
        Some((_, nodes)) => Ok(match nodes.as_slice() {
            [one] if one.name == start => one.clone(),
            _ => ParseTree {
                name: start.to_owned(),
                start: 0,
                end: text.len(),
                children: nodes.clone(),
            },
        }),
        None => Err(TreeError::NoMatch { offset: p.furthest }),
    }
}

fn push_end(out: &mut Vec<(usize, Vec<ParseTree>)>, end: usize, nodes: Vec<ParseTree>) {
    if !out.iter().any(|(e, _)| *e == end) {
        out.push((end, nodes));
    }
}

fn in_class(c: char, class: &CharClass) -> bool {
    class.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != class.negated
}

impl<'g> Parser<'g, '_> {
    fn tick(&mut self) -> Result<(), TreeError> {
        self.steps += 1;
        if self.steps > BUDGET {
            Err(TreeError::TooComplex)
        } else {
            Ok(())
        }
    }

    fn matched(&mut self, end: usize) -> Vec<(usize, Vec<ParseTree>)> {
        self.furthest = self.furthest.max(end);
        vec![(end, Vec::new())]
    }

    fn rule(&mut self, name: &'g str, pos: usize) -> Result<Ends, TreeError> {
        if let Some(done) = self.memo.get(&(name, pos)) {
            return Ok(done.clone());
        }
        let Some(&expr) = self.rules.get(name) else {
            return Err(TreeError::Grammar(format!("rule `{name}` is not defined")));
        };
        if self.depth >= MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        self.depth += 1;
        let inner = self.expr(expr, pos);
        self.depth -= 1;
        let inner = inner?;
        let wrapped: Vec<(usize, Vec<ParseTree>)> = inner
            .into_iter()
            .map(|(end, kids)| {
                if name.starts_with('_') {
                    (end, kids)
                } else {
                    let node = ParseTree {
                        name: name.to_owned(),
                        start: pos,
                        end,
                        children: kids,
                    };
                    (end, vec![node])
                }
            })
            .collect();
        let ends = Rc::new(wrapped);
        self.memo.insert((name, pos), ends.clone());
        Ok(ends)
    }

    fn expr(&mut self, e: &'g Expr, pos: usize) -> Result<Vec<(usize, Vec<ParseTree>)>, TreeError> {
        self.tick()?;
        let rest = self.text.get(pos..).unwrap_or("");
        Ok(match e {
            Expr::Literal(s) if rest.starts_with(s.as_str()) => self.matched(pos + s.len()),
            Expr::Literal(_) | Expr::Token(_) => Vec::new(),
            Expr::Class(class) => match rest.chars().next() {
                Some(c) if in_class(c, class) => self.matched(pos + c.len_utf8()),
                _ => Vec::new(),
            },
            Expr::Any => match rest.chars().next() {
                Some(c) => self.matched(pos + c.len_utf8()),
                None => Vec::new(),
            },
            Expr::Ref(name) => self.rule(name, pos)?.as_ref().clone(),
            Expr::Alt(items) => {
                let mut out = Vec::new();
                for item in items {
                    for (end, kids) in self.expr(item, pos)? {
                        push_end(&mut out, end, kids);
                    }
                }
                out
            }
            Expr::Seq(items) => {
                let mut current = vec![(pos, Vec::new())];
                for item in items {
                    let mut next = Vec::new();
                    for (at, kids) in current {
                        for (end, more) in self.expr(item, at)? {
                            let mut all = kids.clone();
                            all.extend(more);
                            push_end(&mut next, end, all);
                        }
                    }
                    current = next;
                    if current.is_empty() {
                        break;
                    }
                }
                current
            }
            Expr::Repeat { expr, min, max } => {
                let mut out = Vec::new();
                let mut current = vec![(pos, Vec::new())];
                if *min == 0 {
                    out.push((pos, Vec::new()));
                }
                let mut count = 0u32;
                while !current.is_empty() && max.is_none_or(|m| count < m) {
                    count += 1;
                    let mut next = Vec::new();
                    for (at, kids) in current {
                        for (end, more) in self.expr(expr, at)? {
                            // An empty step cannot make progress: stop there.
                            if end == at {
                                continue;
                            }
                            let mut all = kids.clone();
                            all.extend(more);
                            push_end(&mut next, end, all);
                        }
                    }
                    if count >= *min {
                        for (end, kids) in &next {
                            push_end(&mut out, *end, kids.clone());
                        }
                    }
                    current = next;
                }
                out
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lark;

    fn tree(grammar: &str, text: &str) -> Result<ParseTree, TreeError> {
        parse_tree(&lark::parse(grammar).expect("grammar reads"), text)
    }

    #[test]
    fn right_recursion_past_the_depth_limit_is_an_error_not_an_overflow() {
        let g = "start: \"x\" start | \"x\"\n";
        assert!(tree(g, &"x".repeat(MAX_DEPTH - 1)).is_ok());
        // 100,000 nested rules overflowed the stack.
        assert_eq!(tree(g, &"x".repeat(100_000)), Err(TreeError::TooDeep));
    }

    #[test]
    fn named_rules_and_terminals_become_nodes_and_underscore_rules_are_inlined() {
        let g = "start: pair (\",\" pair)*\npair: KEY _eq VALUE\n_eq: \"=\"\nKEY: /[a-z]+/\nVALUE: /[0-9]+/\n";
        let t = tree(g, "a=1,bc=22").expect("parses");
        assert_eq!(t.name, "start");
        let pairs: Vec<&ParseTree> = t.children_named("pair").collect();
        assert_eq!(pairs.len(), 2);
        let src = "a=1,bc=22";
        assert_eq!(pairs[1].child("KEY").map(|k| k.text(src)), Some("bc"));
        assert_eq!(pairs[1].child("VALUE").map(|k| k.text(src)), Some("22"));
        assert_eq!(pairs[0].children.len(), 2, "the `_eq` rule leaves no node");
    }

    #[test]
    fn mismatches_report_how_far_the_grammar_followed() {
        let g = "start: \"select \" NAME \" from \" NAME\nNAME: /[a-z]+/\n";
        assert_eq!(
            tree(g, "select a frm b"),
            Err(TreeError::NoMatch { offset: 8 })
        );
        assert!(tree(g, "select a from b").is_ok());
    }

    #[test]
    fn ambiguity_and_nesting_resolve_deterministically() {
        let g =
            "start: expr\nexpr: term (\"+\" term)*\nterm: NUM | \"(\" expr \")\"\nNUM: /[0-9]+/\n";
        let src = "(1+2)+3";
        let t = tree(g, src).expect("parses");
        let expr = t.child("expr").expect("expr");
        assert_eq!(expr.children_named("term").count(), 2);
        assert_eq!(tree(g, src), tree(g, src));
    }

    #[test]
    fn left_recursion_is_refused_not_looped() {
        let g = "start: start \"a\" | \"a\"\n";
        assert!(matches!(tree(g, "aa"), Err(TreeError::Grammar(_))));
    }
}
