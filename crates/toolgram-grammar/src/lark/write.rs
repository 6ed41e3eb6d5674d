//! The Lark writer: IR → Lark rules (`start` first, only reachable rules), literals as
//! one-character strings, character classes as one-character regexes; in the OpenAI dialect
//! JSON string tokens are written whole (see `strings`).
//!
//! It must not use constructs outside the chosen dialect (see [`LarkDialect`]).

use super::LarkDialect;
use super::build::{Rhs, Rule, literal};
use super::strings::{self, class_body};
use crate::ir::{CharClass, Expr, Grammar, TokenName};
use crate::lower::{is_atom, lower};
use crate::names::{Namer, Target};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Write `g` as Lark; the start rule is named `start`.
pub fn emit(g: &Grammar, dialect: LarkDialect) -> String {
    emit_named(g, dialect, "start")
}

/// Write `g` as Lark rules to embed in a larger grammar: its start rule is named
/// `start_name` (give the grammar's rules a unique prefix first, [`Grammar::prefixed`]).
pub fn emit_named(g: &Grammar, dialect: LarkDialect, start_name: &str) -> String {
    emit_with(
        g,
        &Emit {
            dialect,
            start_name,
            whole_literals: false,
            externs: &[],
        },
    )
}

/// A rule the IR refers to but does not define: a construct of the target that the IR has
/// no node for (llguidance's `%json` slot, a lexeme built with `&`/`~`, a lazy lexeme with a
/// suffix), built with [`Rhs`].
#[derive(Debug, Clone)]
pub struct Extern {
    /// The IR name it is referenced by (written under the writer's name for it).
    pub name: String,
    /// The text it ends at, for a lazy lexeme (`name[suffix="…"]`).
    pub suffix: Option<String>,
    /// The rule's right-hand side.
    pub body: Rhs,
    /// Further definitions it needs, written after it: [`Rule`]s, or rules this writer wrote
    /// for an embedded grammar.
    pub defs: String,
}

impl Extern {
    /// `name: body`, needing nothing more.
    pub fn new(name: impl Into<String>, body: Rhs) -> Self {
        Self {
            name: name.into(),
            suffix: None,
            body,
            defs: String::new(),
        }
    }

    /// With the definitions `defs` written after it.
    #[must_use]
    pub fn with_defs(self, defs: String) -> Self {
        Self { defs, ..self }
    }
}

/// How [`emit_with`] writes.
#[derive(Debug, Clone)]
pub struct Emit<'a> {
    /// The Lark dialect.
    pub dialect: LarkDialect,
    /// The start rule's name.
    pub start_name: &'a str,
    /// Literals as one lexeme each instead of one per character: for grammars whose
    /// literals are markers and call heads that free text must be able to run into
    /// (llguidance lexes without backtracking, so a marker split into characters could not
    /// end a free-text lexeme).
    pub whole_literals: bool,
    /// Rules written as given.
    pub externs: &'a [Extern],
}

/// Write `g` as Lark with the options in `how`; externs follow the IR's rules.
pub fn emit_with(g: &Grammar, how: &Emit) -> String {
    let rules = lower(g);
    let Some(first) = rules.first() else {
        return String::new();
    };
    let mut w = W {
        namer: Namer::new(Target::Lark, &first.name, how.start_name),
        d: how.dialect,
        whole: how.whole_literals,
        rules: rules.iter().map(|r| (r.name.as_str(), &r.expr)).collect(),
        refs: Vec::new(),
        budget: strings::MAX_TOTAL,
    };
    // Bodies first: a rule whose only uses were folded into a string regex is not written.
    let mut written: Vec<(String, String, Vec<String>)> = Vec::new();
    for r in &rules {
        let name = w.namer.name(&r.name);
        let mut body = String::new();
        expr(&r.expr, &mut w, &mut body, true);
        written.push((name, body, std::mem::take(&mut w.refs)));
    }
    let index: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut reached = vec![false; rules.len()];
    let mut todo = vec![0];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut reached[i], true) {
            continue;
        }
        todo.extend(
            written[i]
                .2
                .iter()
                .filter_map(|n| index.get(n.as_str()).copied()),
        );
    }
    let mut out = String::new();
    for ((name, body, _), keep) in written.iter().zip(reached) {
        if keep {
            let _ = writeln!(out, "{name}: {body}");
        }
    }
    for x in how.externs {
        let rule = Rule {
            name: w.namer.name(&x.name),
            suffix: x.suffix.clone(),
            rhs: x.body.clone(),
        };
        out.push_str(&rule.to_string());
        out.push_str(&x.defs);
        if !x.defs.is_empty() && !x.defs.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The writer's state: names, dialect, the rules (for folding), refs written so far.
struct W<'a> {
    namer: Namer,
    d: LarkDialect,
    whole: bool,
    rules: HashMap<&'a str, &'a Expr>,
    refs: Vec<String>,
    /// Regex bytes string tokens may still build (see `strings`).
    budget: usize,
}

fn expr(e: &Expr, w: &mut W, out: &mut String, top: bool) {
    match e {
        Expr::Seq(v) if v.is_empty() => out.push_str("\"\""),
        Expr::Seq(v) => {
            let mut i = 0;
            let mut first = true;
            while i < v.len() {
                if !first {
                    out.push(' ');
                }
                first = false;
                // OpenAI dialect: a JSON string token as one lexeme (see `strings`).
                if w.d == LarkDialect::OpenAi
                    && let Some(whole) = strings::whole_string(&v[i..], &w.rules, &mut w.budget)
                {
                    out.push_str(&whole.lexeme);
                    if !whole.rest.is_empty() {
                        out.push(' ');
                        out.push_str(&chars(&whole.rest));
                    }
                    i += whole.consumed;
                    continue;
                }
                expr(&v[i], w, out, false);
                i += 1;
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
                expr(x, w, out, true);
            }
            if !top {
                out.push(')');
            }
        }
        Expr::Literal(s) => {
            let whole = (w.d == LarkDialect::OpenAi)
                .then(|| strings::whole_string(std::slice::from_ref(e), &w.rules, &mut w.budget))
                .flatten()
                .filter(|whole| whole.rest.is_empty());
            match whole {
                Some(whole) => out.push_str(&whole.lexeme),
                None if w.whole => out.push_str(&literal(s)),
                None => out.push_str(&chars(s)),
            }
        }
        Expr::Class(c) => class(c, out),
        Expr::Any => out.push_str("/(?s:.)/"),
        Expr::Ref(n) => {
            w.refs.push(n.clone());
            out.push_str(&w.namer.name(n));
        }
        Expr::Token(t) => {
            let _ = match (&t.token, t.negated) {
                (TokenName::Id(id), false) => write!(out, "<[{id}]>"),
                (TokenName::Id(id), true) => write!(out, "<[^{id}]>"),
                (TokenName::Text(s), _) => write!(out, "{s}"),
            };
        }
        Expr::Repeat {
            expr: inner,
            min,
            max,
        } => {
            let mut item = String::new();
            let one_char = |s: &str| s.chars().count() == 1;
            if is_atom(inner) && !matches!(&**inner, Expr::Literal(s) if !one_char(s)) {
                expr(inner, w, &mut item, false);
            } else {
                item.push('(');
                expr(inner, w, &mut item, true);
                item.push(')');
            }
            out.push_str(&quantified(&item, *min, *max, w.d));
        }
    }
}

fn quantified(item: &str, min: u32, max: Option<u32>, d: LarkDialect) -> String {
    match (min, max, d) {
        (0, Some(1), _) => format!("{item}?"),
        (0, None, _) => format!("{item}*"),
        (1, None, _) => format!("{item}+"),
        (m, None, LarkDialect::Llguidance) => format!("{item}{{{m},}}"),
        (m, Some(n), LarkDialect::Llguidance) if m == n => format!("{item}{{{m}}}"),
        (m, Some(n), LarkDialect::Llguidance) => format!("{item}{{{m},{n}}}"),
        (m, None, LarkDialect::OpenAi) => format!("({item} ~ {m} {item}*)"),
        (m, Some(n), LarkDialect::OpenAi) if m == n => format!("({item} ~ {m})"),
        (m, Some(n), LarkDialect::OpenAi) => format!("({item} ~ {m}..{n})"),
    }
}

/// A literal as one-character strings: llguidance's lexer does not backtrack across
/// lexemes, so a longer literal sharing a prefix with another lexeme (a declared key and
/// "any other key") could make it miss a match. One-character lexemes never overlap.
fn chars(s: &str) -> String {
    if s.is_empty() {
        return literal(s);
    }
    let parts: Vec<String> = s.chars().map(|c| literal(&c.to_string())).collect();
    parts.join(" ")
}

fn class(c: &CharClass, out: &mut String) {
    out.push('/');
    class_body(c, out);
    out.push('/');
}
