//! The grammar IR every reader produces and every writer consumes: named rules over
//! characters (literals, classes, repetition, alternation), rule references and special
//! tokens.
//!
//! The IR is target-neutral: it must not hold any target's spelling (escapes, name rules);
//! writers translate. The first rule is the start rule.

use std::collections::{BTreeSet, HashMap};

/// A grammar: rules by name; `rules[0]` is the start rule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grammar {
    /// The rules, start rule first.
    pub rules: Vec<Rule>,
}

/// One named rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule's name (any text; writers make it legal for their target).
    pub name: String,
    /// What it matches.
    pub expr: Expr,
}

/// A grammar expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// Each in turn (empty: the empty string).
    Seq(Vec<Expr>),
    /// Any one of them (never empty).
    Alt(Vec<Expr>),
    /// Exactly this text.
    Literal(String),
    /// One character from (or, negated, outside) a set.
    Class(CharClass),
    /// Any one character.
    Any,
    /// `expr` between `min` and `max` (`None`: unbounded) times.
    Repeat {
        /// What repeats.
        expr: Box<Expr>,
        /// Fewest times.
        min: u32,
        /// Most times; `None` for no limit.
        max: Option<u32>,
    },
    /// Another rule, by name.
    Ref(String),
    /// A special token (or, negated, any token but it).
    Token(TokenRef),
}

/// A set of characters as inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharClass {
    /// Matches characters outside the ranges instead.
    pub negated: bool,
    /// Inclusive ranges.
    pub ranges: Vec<(char, char)>,
}

/// A special token reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRef {
    /// Any token except this one.
    pub negated: bool,
    /// The token.
    pub token: TokenName,
}

/// How a special token is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenName {
    /// By vocabulary id: `<[123]>`.
    Id(u32),
    /// By its text: `<|im_end|>`.
    Text(String),
}

impl Expr {
    /// A sequence, flattened, adjacent literals joined: one element stays itself.
    pub fn seq(items: Vec<Expr>) -> Expr {
        let mut out: Vec<Expr> = Vec::new();
        let push = |e: Expr, out: &mut Vec<Expr>| match (out.last_mut(), e) {
            (_, Expr::Literal(s)) if s.is_empty() => {}
            (Some(Expr::Literal(prev)), Expr::Literal(s)) => prev.push_str(&s),
            (_, e) => out.push(e),
        };
        for e in items {
            match e {
                Expr::Seq(inner) => inner.into_iter().for_each(|x| push(x, &mut out)),
                e => push(e, &mut out),
            }
        }
        if out.len() == 1 {
            out.pop().unwrap_or(Expr::Seq(Vec::new()))
        } else {
            Expr::Seq(out)
        }
    }

    /// An alternation; one alternative stays itself.
    pub fn alt(mut items: Vec<Expr>) -> Expr {
        if items.len() == 1 {
            items.pop().unwrap_or(Expr::Seq(Vec::new()))
        } else {
            Expr::Alt(items)
        }
    }

    /// `expr{min,max}`; `{0}` is the empty sequence and `{1}` the expression itself.
    pub fn repeat(expr: Expr, min: u32, max: Option<u32>) -> Expr {
        match (min, max) {
            (_, Some(0)) => return Expr::Seq(Vec::new()),
            (1, Some(1)) => return expr,
            _ => {}
        }
        Expr::Repeat {
            expr: Box::new(expr),
            min,
            max,
        }
    }

    /// `expr?`.
    pub fn opt(expr: Expr) -> Expr {
        Self::repeat(expr, 0, Some(1))
    }

    /// A literal.
    pub fn lit(s: impl Into<String>) -> Expr {
        Expr::Literal(s.into())
    }

    /// A reference to a rule.
    pub fn rule(name: impl Into<String>) -> Expr {
        Expr::Ref(name.into())
    }

    /// A class of ranges.
    pub fn class(ranges: &[(char, char)]) -> Expr {
        Expr::Class(CharClass {
            negated: false,
            ranges: ranges.to_vec(),
        })
    }

    /// Calls `f` on each rule name referenced inside.
    pub fn visit_refs<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|e| e.visit_refs(f)),
            Expr::Repeat { expr, .. } => expr.visit_refs(f),
            Expr::Ref(n) => f(n),
            Expr::Literal(_) | Expr::Class(_) | Expr::Any | Expr::Token(_) => {}
        }
    }
}

impl Grammar {
    /// The same grammar with every rule name (and reference) prefixed, to embed it in
    /// another grammar without name clashes.
    pub fn prefixed(&self, prefix: &str) -> Grammar {
        fn rename(e: &Expr, prefix: &str) -> Expr {
            match e {
                Expr::Ref(r) => Expr::Ref(format!("{prefix}{r}")),
                Expr::Seq(items) => Expr::Seq(items.iter().map(|x| rename(x, prefix)).collect()),
                Expr::Alt(items) => Expr::Alt(items.iter().map(|x| rename(x, prefix)).collect()),
                Expr::Repeat { expr, min, max } => Expr::Repeat {
                    expr: Box::new(rename(expr, prefix)),
                    min: *min,
                    max: *max,
                },
                other => other.clone(),
            }
        }
        Grammar {
            rules: self
                .rules
                .iter()
                .map(|r| Rule {
                    name: format!("{prefix}{}", r.name),
                    expr: rename(&r.expr, prefix),
                })
                .collect(),
        }
    }

    /// The start rule's name.
    pub fn start(&self) -> Option<&str> {
        self.rules.first().map(|r| r.name.as_str())
    }

    /// The rule called `name`.
    pub fn get(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }

    /// Rules reachable from the start rule, in first-reference order (start first).
    pub fn reachable(&self) -> Vec<&Rule> {
        let index: HashMap<&str, &Rule> = self.rules.iter().map(|r| (r.name.as_str(), r)).collect();
        let mut seen = BTreeSet::new();
        let mut order = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        if let Some(r) = self.rules.first() {
            seen.insert(r.name.as_str());
            queue.push_back(r);
        }
        while let Some(r) = queue.pop_front() {
            order.push(r);
            r.expr.visit_refs(&mut |n| {
                if let Some(next) = index.get(n)
                    && seen.insert(n)
                {
                    queue.push_back(next);
                }
            });
        }
        order
    }

    /// Names referenced but never defined.
    pub fn undefined(&self) -> Vec<String> {
        let defined: BTreeSet<&str> = self.rules.iter().map(|r| r.name.as_str()).collect();
        let mut missing = BTreeSet::new();
        for r in &self.rules {
            r.expr.visit_refs(&mut |n| {
                if !defined.contains(n) {
                    missing.insert(n.to_owned());
                }
            });
        }
        missing.into_iter().collect()
    }

    /// The first rule that can reach itself without consuming input (left recursion), which
    /// llama.cpp refuses.
    pub fn left_recursive(&self) -> Option<&str> {
        let nullable = self.nullable();
        let index: HashMap<&str, &Expr> = self
            .rules
            .iter()
            .map(|r| (r.name.as_str(), &r.expr))
            .collect();
        for r in &self.rules {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&str> = Vec::new();
            first_refs(&r.expr, &nullable, &mut |n| stack.push(n));
            while let Some(n) = stack.pop() {
                if n == r.name {
                    return Some(&r.name);
                }
                if seen.insert(n)
                    && let Some(e) = index.get(n)
                {
                    first_refs(e, &nullable, &mut |m| stack.push(m));
                }
            }
        }
        None
    }

    /// Rules that match the empty string.
    pub fn nullable(&self) -> BTreeSet<String> {
        let mut set = BTreeSet::new();
        loop {
            let before = set.len();
            for r in &self.rules {
                if !set.contains(&r.name) && is_nullable(&r.expr, &set) {
                    set.insert(r.name.clone());
                }
            }
            if set.len() == before {
                return set;
            }
        }
    }
}

/// Whether `e` matches the empty string, given the nullable rules.
pub fn is_nullable(e: &Expr, rules: &BTreeSet<String>) -> bool {
    match e {
        Expr::Seq(v) => v.iter().all(|x| is_nullable(x, rules)),
        Expr::Alt(v) => v.iter().any(|x| is_nullable(x, rules)),
        Expr::Literal(s) => s.is_empty(),
        Expr::Class(_) | Expr::Any | Expr::Token(_) => false,
        Expr::Repeat { expr, min, .. } => *min == 0 || is_nullable(expr, rules),
        Expr::Ref(n) => rules.contains(n),
    }
}

fn first_refs<'a>(e: &'a Expr, nullable: &BTreeSet<String>, f: &mut impl FnMut(&'a str)) {
    match e {
        Expr::Seq(v) => {
            for x in v {
                first_refs(x, nullable, f);
                if !is_nullable(x, nullable) {
                    break;
                }
            }
        }
        Expr::Alt(v) => v.iter().for_each(|x| first_refs(x, nullable, f)),
        Expr::Repeat { expr, max, .. } => {
            if *max != Some(0) {
                first_refs(expr, nullable, f)
            }
        }
        Expr::Ref(n) => f(n),
        Expr::Literal(_) | Expr::Class(_) | Expr::Any | Expr::Token(_) => {}
    }
}
