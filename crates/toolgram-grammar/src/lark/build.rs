//! A small builder for the Lark that the IR has no node for: the right-hand sides and rules
//! of a call union's slots (`%json` schemas, special-token references, lexemes built with
//! `&`/`~`, nested grammars, lazy lexemes with a suffix), built through calls and written by
//! [`std::fmt::Display`], with string literals escaped in one place ([`literal`], which the
//! IR writer uses too). It writes text only: it must not check a grammar.

use serde_json::Value;
use std::fmt::{self, Display, Write as _};

/// A Lark string literal for `s`: quotes, backslashes, and control characters escaped.
pub fn literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let _ = match c {
            '"' => write!(out, "\\\""),
            '\\' => write!(out, "\\\\"),
            '\n' => write!(out, "\\n"),
            '\t' => write!(out, "\\t"),
            '\r' => write!(out, "\\r"),
            c if c.is_control() => write!(out, "\\u{:04x}", c as u32),
            c => write!(out, "{c}"),
        };
    }
    out.push('"');
    out
}

/// A Lark right-hand side.
#[derive(Debug, Clone, PartialEq)]
pub enum Rhs {
    /// A rule or lexeme, by its Lark name.
    Rule(String),
    /// A string literal (escaped when written).
    Lit(String),
    /// A special token, by its id: `<[id]>`.
    Token(u32),
    /// A regex lexeme, `/…/`, its source as given (a `/` in it escaped by the caller).
    Regex(String),
    /// llguidance's JSON slot: `%json {schema}`.
    Json(Value),
    /// A nested grammar: `@name`.
    Nested(String),
    /// One after another.
    Seq(Vec<Rhs>),
    /// One of them (in parentheses inside a sequence or an intersection).
    Alt(Vec<Rhs>),
    /// Optional: `x?`.
    Opt(Box<Rhs>),
    /// Lexemes intersected: `a & b`.
    And(Vec<Rhs>),
    /// A lexeme negated: `~x`.
    Not(Box<Rhs>),
}

impl Rhs {
    /// The rule or lexeme `name`.
    pub fn rule(name: impl Into<String>) -> Self {
        Self::Rule(name.into())
    }

    /// The literal `text`.
    pub fn lit(text: impl Into<String>) -> Self {
        Self::Lit(text.into())
    }

    /// The regex lexeme `/source/`.
    pub fn regex(source: impl Into<String>) -> Self {
        Self::Regex(source.into())
    }

    /// This, optional.
    #[must_use]
    pub fn opt(self) -> Self {
        Self::Opt(Box::new(self))
    }

    /// This lexeme, negated.
    #[must_use]
    pub fn negated(self) -> Self {
        Self::Not(Box::new(self))
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, top: bool) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, items: &[Rhs], sep: &str, top: bool| {
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                x.write(f, top)?;
            }
            Ok(())
        };
        match self {
            Self::Rule(n) => f.write_str(n),
            Self::Lit(s) => f.write_str(&literal(s)),
            Self::Token(id) => write!(f, "<[{id}]>"),
            Self::Regex(r) => write!(f, "/{r}/"),
            Self::Json(schema) => write!(f, "%json {schema}"),
            Self::Nested(n) => write!(f, "@{n}"),
            Self::Seq(v) => list(f, v, " ", false),
            Self::Alt(_) | Self::And(_) if !top => {
                f.write_str("(")?;
                self.write(f, true)?;
                f.write_str(")")
            }
            Self::Alt(v) => list(f, v, " | ", true),
            Self::And(v) => list(f, v, " & ", false),
            Self::Opt(x) => {
                x.atom(f)?;
                f.write_str("?")
            }
            Self::Not(x) => {
                f.write_str("~")?;
                x.atom(f)
            }
        }
    }
}

impl Rhs {
    /// Written as one item (a sequence in parentheses).
    fn atom(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Seq(v) if v.len() > 1 => {
                f.write_str("(")?;
                self.write(f, true)?;
                f.write_str(")")
            }
            _ => self.write(f, false),
        }
    }
}

impl Display for Rhs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

/// A rule or lexeme definition: `name: rhs`, or `name[suffix="…"]: rhs` for a lazy lexeme
/// that ends at `suffix`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its Lark name.
    pub name: String,
    /// The text a lazy lexeme ends at.
    pub suffix: Option<String>,
    /// What it matches.
    pub rhs: Rhs,
}

impl Rule {
    /// `name: rhs`.
    pub fn new(name: impl Into<String>, rhs: Rhs) -> Self {
        Self {
            name: name.into(),
            suffix: None,
            rhs,
        }
    }
}

impl Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(s) = &self.suffix {
            write!(f, "[suffix={}]", literal(s))?;
        }
        writeln!(f, ": {}", self.rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sides_are_written_with_parentheses_only_where_needed() {
        let close = Rhs::lit("</x>");
        let nl = Rhs::lit("\n").opt();
        let one_of = Rhs::Seq(vec![
            nl.clone(),
            Rhs::Alt(vec![Rhs::lit("a"), Rhs::lit("b\"c")]),
            nl,
            close,
        ]);
        assert_eq!(one_of.to_string(), r#""\n"? ("a" | "b\"c") "\n"? "</x>""#);
        let lexeme = Rhs::And(vec![
            Rhs::regex("(?s:.+)"),
            Rhs::regex("(?s:.*)(a|b)(?s:.*)").negated(),
        ]);
        assert_eq!(lexeme.to_string(), "/(?s:.+)/ & ~/(?s:.*)(a|b)(?s:.*)/");
        let think = Rhs::Seq(vec![Rhs::rule("THINK_TEXT").opt(), Rhs::Token(8)]);
        assert_eq!(think.to_string(), "THINK_TEXT? <[8]>");
        let rule = Rule {
            suffix: Some("</think>".into()),
            ..Rule::new("think_body", Rhs::regex("(?s:.*)"))
        };
        assert_eq!(
            rule.to_string(),
            "think_body[suffix=\"</think>\"]: /(?s:.*)/\n"
        );
        let slot = Rule::new("a_json", Rhs::Json(json!({"type": "integer"})));
        assert_eq!(slot.to_string(), "a_json: %json {\"type\":\"integer\"}\n");
        assert_eq!(Rhs::Nested("user".into()).to_string(), "@user");
        let pair = Rhs::Seq(vec![Rhs::rule("a"), Rhs::rule("b")]);
        assert_eq!(pair.opt().to_string(), "(a b)?");
    }

    #[test]
    fn literals_escape_quotes_backslashes_and_controls() {
        assert_eq!(literal("a\"b\\c\nd\te\u{8}"), r#""a\"b\\c\nd\te\u0008""#);
    }
}
