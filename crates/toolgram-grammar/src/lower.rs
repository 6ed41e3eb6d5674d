//! Lowering shared by the writers: repetitions whose operand is not a single item are
//! hoisted into their own rules, and counts above [`MAX_COUNT`] are split into blocks, so
//! llama.cpp's repetition limit (rules repeated × count ≤ 2000) always holds.
//!
//! Lowering must not change the language a grammar matches.

use crate::ir::{Expr, Grammar, Rule};
use std::collections::HashMap;

/// The largest count a lowered repetition uses.
pub(crate) const MAX_COUNT: u32 = 1000;

/// The reachable rules of `g` with repetitions made simple, start first, then in
/// first-reference order.
pub(crate) fn lower(g: &Grammar) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    let mut extra: Vec<Rule> = Vec::new();
    let mut used: std::collections::BTreeSet<String> =
        g.rules.iter().map(|r| r.name.clone()).collect();
    for r in g.reachable() {
        let mut ctx = Ctx {
            base: &r.name,
            n: 0,
            extra: &mut extra,
            used: &mut used,
        };
        let expr = ctx.expr(&r.expr);
        out.push(Rule {
            name: r.name.clone(),
            expr,
        });
        out.append(&mut extra);
    }
    let lowered = Grammar {
        rules: merge_identical(out),
    };
    lowered.reachable().into_iter().cloned().collect()
}

/// Rules with the same body become one (the first), to a fixpoint: a schema repeating an
/// object shape would otherwise write (and make engines build) every copy — llguidance's
/// symbol table overflowed on such schemas.
fn merge_identical(mut rules: Vec<Rule>) -> Vec<Rule> {
    loop {
        let mut first: HashMap<String, String> = HashMap::new();
        let mut alias: HashMap<String, String> = HashMap::new();
        for r in &rules {
            let body = format!("{:?}", r.expr);
            match first.get(&body) {
                Some(kept) => {
                    alias.insert(r.name.clone(), kept.clone());
                }
                None => {
                    first.insert(body, r.name.clone());
                }
            }
        }
        if alias.is_empty() {
            return rules;
        }
        rules.retain(|r| !alias.contains_key(&r.name));
        for r in &mut rules {
            r.expr = renamed(&r.expr, &alias);
        }
    }
}

fn renamed(e: &Expr, alias: &HashMap<String, String>) -> Expr {
    match e {
        Expr::Ref(n) => Expr::Ref(alias.get(n).cloned().unwrap_or_else(|| n.clone())),
        Expr::Seq(v) => Expr::Seq(v.iter().map(|x| renamed(x, alias)).collect()),
        Expr::Alt(v) => Expr::Alt(v.iter().map(|x| renamed(x, alias)).collect()),
        Expr::Repeat { expr, min, max } => Expr::Repeat {
            expr: Box::new(renamed(expr, alias)),
            min: *min,
            max: *max,
        },
        other => other.clone(),
    }
}

/// Deepest nesting of groups written inside one rule.
const MAX_NESTING: usize = 12;

struct Ctx<'a> {
    base: &'a str,
    n: usize,
    extra: &'a mut Vec<Rule>,
    used: &'a mut std::collections::BTreeSet<String>,
}

/// Whether `e` is one item for a quantifier (llama.cpp repeats it as one symbol).
pub(crate) fn is_atom(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal(_) | Expr::Class(_) | Expr::Any | Expr::Ref(_) | Expr::Token(_)
    )
}

impl Ctx<'_> {
    fn hoist(&mut self, expr: Expr) -> Expr {
        loop {
            self.n += 1;
            let name = format!("{}-{}", self.base, self.n);
            if self.used.insert(name.clone()) {
                self.extra.push(Rule {
                    name: name.clone(),
                    expr,
                });
                return Expr::Ref(name);
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        self.nested(e, 0)
    }

    /// `e` lowered at nesting `depth`: deeper groups become rules of their own, as engines
    /// parse grammars recursively and refuse deep nesting (llguidance: "lark grammar too
    /// deeply nested" on a 30-character property-name trie).
    fn nested(&mut self, e: &Expr, depth: usize) -> Expr {
        if depth >= MAX_NESTING && matches!(e, Expr::Seq(v) | Expr::Alt(v) if v.len() > 1) {
            let lowered = self.nested(e, 0);
            return self.hoist(lowered);
        }
        match e {
            Expr::Seq(v) => Expr::seq(v.iter().map(|x| self.nested(x, depth + 1)).collect()),
            Expr::Alt(v) => Expr::alt(v.iter().map(|x| self.nested(x, depth + 1)).collect()),
            Expr::Repeat { expr, min, max } => {
                let mut inner = self.nested(expr, depth + 1);
                // llama.cpp refuses `X*` for an X that matches the empty string (its
                // synthesised repetition rule is left-recursive): repeat X without ε instead.
                if max.is_none()
                    && let Some(ne) = non_empty(&inner)
                {
                    inner = ne;
                }
                let atom = if is_atom(&inner) {
                    inner
                } else {
                    self.hoist(inner)
                };
                self.repeat(atom, *min, *max)
            }
            other => other.clone(),
        }
    }

    /// `atom{min,max}` with every count at most [`MAX_COUNT`].
    fn repeat(&mut self, atom: Expr, min: u32, max: Option<u32>) -> Expr {
        if min <= MAX_COUNT && max.is_none_or(|m| m <= MAX_COUNT) {
            return Expr::repeat(atom, min, max);
        }
        let exact = self.exact(atom.clone(), min);
        let rest = match max {
            None => Expr::repeat(atom, 0, None),
            Some(m) => self.upto(atom, m.saturating_sub(min)),
        };
        Expr::seq(vec![exact, rest])
    }

    fn block(&mut self, atom: Expr) -> Expr {
        self.hoist(Expr::repeat(atom, MAX_COUNT, Some(MAX_COUNT)))
    }

    fn exact(&mut self, atom: Expr, n: u32) -> Expr {
        if n <= MAX_COUNT {
            return Expr::repeat(atom, n, Some(n));
        }
        let block = self.block(atom.clone());
        let q = self.exact(block, n / MAX_COUNT);
        Expr::seq(vec![
            q,
            Expr::repeat(atom, n % MAX_COUNT, Some(n % MAX_COUNT)),
        ])
    }

    fn upto(&mut self, atom: Expr, n: u32) -> Expr {
        if n <= MAX_COUNT {
            return Expr::repeat(atom, 0, Some(n));
        }
        let (q, r) = (n / MAX_COUNT, n % MAX_COUNT);
        let block = self.block(atom.clone());
        let fewer = self.upto(block.clone(), q - 1);
        let all = self.exact(block, q);
        Expr::alt(vec![
            Expr::seq(vec![
                fewer,
                Expr::repeat(atom.clone(), 0, Some(MAX_COUNT - 1)),
            ]),
            Expr::seq(vec![all, Expr::repeat(atom, 0, Some(r))]),
        ])
    }
}

/// `e` without the empty string, where that is easy to spell: empty alternatives dropped,
/// optional repetitions made mandatory. `None` if `e` does not match ε or is not one of those.
fn non_empty(e: &Expr) -> Option<Expr> {
    let none = std::collections::BTreeSet::new();
    if !crate::ir::is_nullable(e, &none) {
        return None;
    }
    match e {
        Expr::Alt(v) => {
            let alts: Vec<Expr> = v
                .iter()
                .filter_map(|x| {
                    if crate::ir::is_nullable(x, &none) {
                        non_empty(x)
                    } else {
                        Some(x.clone())
                    }
                })
                .collect();
            (!alts.is_empty()).then(|| Expr::alt(alts))
        }
        Expr::Repeat { expr, min: 0, max } if !crate::ir::is_nullable(expr, &none) => {
            Some(Expr::repeat((**expr).clone(), 1, *max))
        }
        _ => None,
    }
}
