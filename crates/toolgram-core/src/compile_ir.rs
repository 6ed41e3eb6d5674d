//! A tool pool + `tool_choice` compiled to the grammar IR, for targets that do not run
//! llguidance: GBNF (llama.cpp, llama-server) and the Lark OpenAI accepts for custom tools.
//!
//! The shape is the one [`crate::compile::compile`] gives the embedded engine — optional think
//! block, text that never spells the call opener, then the calls in the model's syntax, each a
//! literal tool name selecting that tool's argument grammar — but every argument schema goes
//! through toolgram's own schema compiler ([`toolgram_grammar::schema::to_grammar`]) and markers are
//! plain text. This module must not emit any target's spelling (the writers do) or run a
//! grammar.

use crate::compile::CompileOptions;

use crate::define::arguments::close_objects;
use crate::define::request::{Mode, Think};
use crate::define::tool::{ToolChoice, ToolSet};
use crate::error::CompileError;
use crate::syntax::{CallSyntax, Piece, THINK};
use thiserror::Error;
use toolgram_grammar::schema::{Note, SchemaError, SchemaOptions, to_grammar};
use toolgram_grammar::{Expr, Grammar, Rule};

/// Why a pool did not compile to the IR.
#[derive(Debug, Error)]
pub enum IrCompileError {
    /// The request itself (choice, pool, syntax).
    #[error(transparent)]
    Request(#[from] CompileError),
    /// A tool's argument schema.
    #[error("{0}")]
    Schema(#[from] SchemaError),
}

/// The compiled pool.
#[derive(Debug)]
pub struct IrGrammar {
    /// The grammar; its first rule is the start rule.
    pub grammar: Grammar,
    /// Indices of the tools a call may name.
    pub callable: Vec<usize>,
    /// Keywords enforced after parse, and unknown keywords ignored under `lenient`.
    pub notes: Vec<(String, Note)>,
    /// The text every call section starts with (for lazily applied grammars, e.g.
    /// llama-server's `grammar_triggers`); empty when the syntax has none.
    pub trigger: String,
}

/// Compile the request. `lenient` turns unknown schema keywords into notes instead of errors.
pub fn compile_ir(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    opts: &CompileOptions,
    lenient: bool,
) -> Result<IrGrammar, IrCompileError> {
    if !syntax.is_compilable() {
        return Err(CompileError::UnsupportedSyntax(syntax.name.to_owned()).into());
    }
    let callable = choice.callable(tools)?;
    let mut rules = vec![Rule {
        name: "root".into(),
        expr: Expr::Seq(Vec::new()),
    }];
    let opener = syntax.opener();
    let answer = if callable.is_empty() {
        Expr::repeat(Expr::Any, 0, None)
    } else if choice.requires_call() {
        Expr::rule("calls")
    } else if opener.is_empty() {
        // Bare JSON calls: text is anything that does not start like one.
        Expr::alt(vec![
            Expr::opt(Expr::seq(vec![
                Expr::Class(toolgram_grammar::CharClass {
                    negated: true,
                    ranges: vec![('{', '{')],
                }),
                Expr::repeat(Expr::Any, 0, None),
            ])),
            Expr::rule("calls"),
        ])
    } else {
        rules.extend(not_containing("prose", &opener));
        Expr::seq(vec![Expr::rule("prose"), Expr::opt(Expr::rule("calls"))])
    };
    let think = || {
        let (open, close) = (text(&[THINK.0]), text(&[THINK.1]));
        Expr::seq(vec![
            Expr::lit(open),
            Expr::rule("think-text"),
            Expr::lit(close),
            Expr::repeat(Expr::class(&[(' ', ' '), ('\n', '\n')]), 0, Some(4)),
        ])
    };
    rules[0].expr = match opts.think {
        Think::Off => answer,
        Think::Optional => Expr::seq(vec![Expr::opt(think()), answer]),
        Think::Required => Expr::seq(vec![think(), answer]),
    };
    if opts.think != Think::Off {
        rules.extend(not_containing("think-text", &text(&[THINK.1])));
    }
    let mut notes = Vec::new();
    if !callable.is_empty() {
        let sep = Expr::lit(text(syntax.separator));
        let more = if parallel {
            Expr::repeat(Expr::seq(vec![sep, Expr::rule("call")]), 0, None)
        } else {
            Expr::Seq(Vec::new())
        };
        rules.push(Rule {
            name: "calls".into(),
            expr: Expr::seq(vec![
                Expr::lit(text(syntax.section_open)),
                Expr::rule("call"),
                more,
                Expr::lit(text(syntax.section_close)),
            ]),
        });
        rules.push(Rule {
            name: "call".into(),
            expr: Expr::alt(
                callable
                    .iter()
                    .map(|i| Expr::rule(format!("call-{i}")))
                    .collect(),
            ),
        });
        for &i in &callable {
            let tool = &tools.tools()[i];
            let head = format!(
                "{{\"name\": {}, \"{}\": ",
                crate::pyjson::to_string(&tool.name, None),
                syntax.args_key
            );
            let params = match opts.mode {
                Mode::Grammar => {
                    let closed = close_objects(&tool.parameters);
                    crate::validate::with_rules(&tool.rules, &closed).0
                }
                Mode::Json | Mode::Prompt => serde_json::json!({"type": "object"}),
            };
            let schema_opts = SchemaOptions {
                tool: Some(tool.name.clone()),
                lenient,
                closed_objects: true,
                ..SchemaOptions::default()
            };
            let (args, tool_notes) = match (&tool.grammar, opts.mode) {
                (Some(spec), Mode::Grammar) if !spec.checked_after => {
                    (grammar_tool_args(&spec.definition)?, Vec::new())
                }
                _ => to_grammar(&params, &schema_opts)?,
            };
            notes.extend(tool_notes.into_iter().map(|n| (tool.name.clone(), n)));
            let prefix = format!("t{i}-");
            let args_start = args.start().map(|s| format!("{prefix}{s}"));
            rules.push(Rule {
                name: format!("call-{i}"),
                expr: Expr::seq(vec![
                    Expr::lit(text(syntax.call_open)),
                    Expr::lit(head),
                    args_start.map_or(Expr::Seq(Vec::new()), Expr::rule),
                    Expr::lit("}"),
                    Expr::lit(text(syntax.call_close)),
                ]),
            });
            rules.extend(args.prefixed(&prefix).rules);
        }
    }
    Ok(IrGrammar {
        grammar: Grammar { rules },
        callable,
        notes,
        trigger: opener,
    })
}

/// A grammar tool's arguments `{"input": "<text>"}` with the text in the tool's grammar,
/// JSON-escaped.
fn grammar_tool_args(definition: &str) -> Result<Grammar, IrCompileError> {
    let g = toolgram_grammar::lark::parse(definition)
        .map_err(|e| IrCompileError::Request(CompileError::ToolGrammar(e.to_string())))?;
    let inside = toolgram_grammar::json_string::inside_json_string(&g);
    let start = inside.start().unwrap_or("start").to_owned();
    let mut rules = vec![Rule {
        name: "__args".into(),
        expr: Expr::seq(vec![
            Expr::lit("{\"input\": \""),
            Expr::rule(start),
            Expr::lit("\"}"),
        ]),
    }];
    rules.extend(inside.rules);
    Ok(Grammar { rules })
}

/// Markers spelled as plain text.
fn text(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Token(t) | Piece::Text(t) => *t,
        })
        .collect()
}

/// Rules `{name}` (and `{name}-N` helpers) matching any text that does not contain `word`:
/// a right-linear grammar with one rule per matched prefix of `word` (the KMP automaton), so
/// targets without negation can still say "until the marker".
pub fn not_containing(name: &str, word: &str) -> Vec<Rule> {
    let w: Vec<char> = word.chars().collect();
    let state = |i: usize| {
        if i == 0 {
            name.to_owned()
        } else {
            format!("{name}-{i}")
        }
    };
    let mut alphabet: Vec<char> = w.clone();
    alphabet.sort_unstable();
    alphabet.dedup();
    let next = |i: usize, c: char| -> usize {
        let mut seen: Vec<char> = w[..i].to_vec();
        seen.push(c);
        (0..=seen.len().min(w.len()))
            .rev()
            .find(|&k| seen.ends_with(&w[..k]))
            .unwrap_or(0)
    };
    (0..w.len().max(1))
        .map(|i| {
            let mut alts = vec![Expr::Seq(Vec::new())];
            for &c in &alphabet {
                let n = next(i, c);
                if n < w.len() {
                    alts.push(Expr::seq(vec![
                        Expr::lit(c.to_string()),
                        Expr::rule(state(n)),
                    ]));
                }
            }
            alts.push(Expr::seq(vec![
                Expr::Class(toolgram_grammar::CharClass {
                    negated: true,
                    ranges: alphabet.iter().map(|&c| (c, c)).collect(),
                }),
                Expr::rule(state(0)),
            ]));
            Rule {
                name: state(i),
                expr: Expr::Alt(alts),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::by_name;
    use toolgram_grammar::gbnf;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
                "properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city"]}}},
                {"type":"function","function":{"name":"noop","parameters":{"type":"object"}}}]"#,
        )
        .expect("valid tools")
    }

    fn gbnf_for(choice: ToolChoice, think: Think) -> String {
        let syntax = by_name("hermes").expect("hermes");
        let opts = CompileOptions {
            think,
            ..CompileOptions::default()
        };
        let ir = compile_ir(&tools(), &choice, true, syntax, &opts, false).expect("compiles");
        assert!(
            ir.grammar.undefined().is_empty(),
            "{:?}",
            ir.grammar.undefined()
        );
        gbnf::emit(&ir.grammar)
    }

    #[test]
    fn the_pool_compiles_to_one_gbnf_union_that_reads_back() {
        let text = gbnf_for(ToolChoice::Required, Think::Off);
        assert!(text.contains("<tool_call>"), "{text}");
        assert!(text.contains(r#"\"name\": \"get_weather\""#), "{text}");
        let names = text
            .lines()
            .filter_map(|l| l.split_once("::="))
            .map(|(n, _)| n.trim());
        assert!(names.clone().all(|n| !n.contains('_')), "{text}");
        assert_eq!(names.clone().next(), Some("root"), "{text}");
        gbnf::parse(&text).expect("our GBNF reader takes our GBNF");
        let auto = gbnf_for(ToolChoice::Auto, Think::Optional);
        gbnf::parse(&auto).expect("auto + think reads back");
        assert!(auto.contains("</think>"), "{auto}");
    }

    #[test]
    fn named_choice_offers_only_that_tool() {
        let text = gbnf_for(ToolChoice::Named("noop".into()), Think::Off);
        assert!(
            text.contains("noop") && !text.contains("get_weather"),
            "{text}"
        );
    }

    #[test]
    fn not_containing_is_the_kmp_automaton() {
        let rules = not_containing("t", "abab");
        assert_eq!(rules.len(), 4);
        // After "aba", reading "b" would complete the word: no such alternative.
        let Expr::Alt(alts) = &rules[3].expr else {
            panic!("alternation")
        };
        assert!(
            !alts
                .iter()
                .any(|a| matches!(a, Expr::Seq(s) if s.first() == Some(&Expr::lit("b"))))
        );
        // After "aba", reading "a" falls back to state 1 ("a").
        assert!(alts.contains(&Expr::seq(vec![Expr::lit("a"), Expr::rule("t-1")])));
    }
}
