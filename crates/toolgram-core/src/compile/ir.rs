//! The plain-IR target: the call union ([`super::union`]) with every slot filled by IR
//! rules, for engines that do not run llguidance — GBNF (llama.cpp, llama-server) and the
//! Lark OpenAI accepts for custom tools. Argument schemas go through toolgram's own schema
//! compiler ([`toolgram_grammar::schema::to_grammar`]); free text is a right-linear grammar
//! that stops before the call opener; markers are plain text.
//!
//! This module must not emit any target's spelling (the writers do) or run a grammar.

use super::CompileOptions;
use super::bodies::{BOOL_SPELLINGS, ValueSpelling, property_schema, value_spelling};
use super::slots::{Slot, Target, Text, chars_class, property_pointer};
use super::union;
use crate::define::arguments::close_objects;
use crate::define::request::Mode;
use crate::define::tool::{Tool, ToolChoice, ToolSet};
use crate::error::CompileError;
use crate::syntax::{CallSyntax, pyjson};
use std::collections::HashMap;
use thiserror::Error;
use toolgram_grammar::schema::{Note, NoteKind, SchemaError, SchemaOptions, to_grammar};
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
    let no_tokens = HashMap::new();
    let target = Target {
        special_tokens: &no_tokens,
        lexed: false,
    };
    let u = union::build(tools, choice, parallel, syntax, opts, target)?;
    let mut rules = u.grammar.rules;
    let mut notes = Vec::new();
    for (name, slot) in &u.slots {
        let expr = match slot {
            Slot::Args { tool: i, .. } => {
                let tool = &tools.tools()[*i];
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
                let start = args.start().map(|s| format!("{prefix}{s}"));
                rules.extend(args.prefixed(&prefix).rules);
                start.map_or(Expr::Seq(Vec::new()), Expr::rule)
            }
            Slot::Value {
                tool: i,
                at,
                close,
                never,
            } => {
                let (expr, value_rules, value_notes) = value(
                    name,
                    (*i, &tools.tools()[*i]),
                    at.as_deref(),
                    (close, never),
                    opts,
                    lenient,
                )?;
                rules.extend(value_rules);
                notes.extend(value_notes);
                expr
            }
            Slot::PyValue { tool: i, key } => {
                let (expr, value_rules, value_notes) =
                    py_value(name, &tools.tools()[*i], key, opts, lenient)?;
                rules.extend(value_rules);
                notes.extend(value_notes);
                expr
            }
            Slot::Text(_) if opts.answer.is_some() => {
                // The answer a response format asks for, in toolgram's schema grammar.
                let schema = opts.answer.as_ref().unwrap_or(&serde_json::Value::Null);
                let schema_opts = SchemaOptions {
                    lenient,
                    closed_objects: true,
                    ..SchemaOptions::default()
                };
                let (answer, answer_notes) = to_grammar(schema, &schema_opts)?;
                notes.extend(answer_notes.into_iter().map(|n| (String::new(), n)));
                let start = answer.start().map(|s| format!("answer-{s}"));
                rules.extend(answer.prefixed("answer-").rules);
                start.map_or(Expr::Seq(Vec::new()), Expr::rule)
            }
            Slot::Text(Text::Any) => Expr::repeat(Expr::Any, 1, None),
            Slot::Text(Text::NotStarting { words, after_ws }) => {
                let ws = [' ', '\t', '\n', '\r'];
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let rest = not_starting(&words, if *after_ws { &ws } else { &[] });
                if *after_ws {
                    Expr::seq(vec![Expr::repeat(chars_class(false, ws), 0, None), rest])
                } else {
                    rest
                }
            }
            Slot::Text(Text::NotContaining(word)) => {
                rules.extend(not_containing(name, &[word]));
                continue;
            }
            Slot::ThinkBody(reasoning) => {
                let first = reasoning.close.first().map_or("", |p| p.text());
                let inner = format!("{name}-text");
                rules.extend(not_containing(&inner, &[first]));
                Expr::seq(vec![Expr::rule(inner), Expr::lit(reasoning.close_text())])
            }
            Slot::Answer => Expr::repeat(Expr::Any, 0, None),
        };
        rules.push(Rule {
            name: name.clone(),
            expr,
        });
    }
    for (i, pointer, keyword) in &u.deferred {
        let note = Note {
            pointer: pointer.clone(),
            keyword: (*keyword).into(),
            kind: NoteKind::Deferred,
        };
        notes.push((tools.tools()[*i].name.clone(), note));
    }
    Ok(IrGrammar {
        grammar: Grammar { rules },
        callable: u.callable,
        notes,
        trigger: syntax.opener(),
    })
}

/// A value's expression, the rules it needs, and notes on keywords left to the validator.
type ValueRules = (Expr, Vec<Rule>, Vec<(String, Note)>);

/// A tagged parameter's value then its closing marker, as IR: raw text up to the marker
/// that holds neither it nor any of `never` (the family's next tags), one of the schema's
/// strings, JSON for the schema, or a grammar tool's text.
fn value(
    name: &str,
    (i, tool): (usize, &Tool),
    at: Option<&str>,
    (close, never): (&str, &[String]),
    opts: &CompileOptions,
    lenient: bool,
) -> Result<ValueRules, IrCompileError> {
    let text_rule = format!("{name}-text");
    let raw = || {
        let mut words: Vec<&str> = never.iter().map(String::as_str).collect();
        words.push(close);
        (
            Expr::seq(vec![Expr::rule(&text_rule), Expr::lit(close)]),
            not_containing(&text_rule, &words),
        )
    };
    let newline = || Expr::opt(Expr::lit("\n"));
    let (Some(at), Mode::Grammar) = (at, opts.mode) else {
        let (e, r) = raw();
        return Ok((e, r, Vec::new()));
    };
    if let Some(spec) = tool.grammar.as_ref().filter(|s| !s.checked_after) {
        let g = toolgram_grammar::lark::parse(&spec.definition)
            .map_err(|e| IrCompileError::Request(CompileError::ToolGrammar(e.to_string())))?;
        let prefix = format!("t{i}-");
        let start = g.start().unwrap_or("start").to_owned();
        let rules = g.prefixed(&prefix).rules;
        let expr = Expr::seq(vec![
            Expr::rule(format!("{prefix}{start}")),
            Expr::lit(close),
        ]);
        return Ok((expr, rules, Vec::new()));
    }
    let closed = close_objects(&tool.parameters);
    let params = crate::validate::with_rules(&tool.rules, &closed).0;
    Ok(match value_spelling(&params, at) {
        ValueSpelling::Text(rules) => {
            // Raw text here is "anything up to the marker"; the string's keywords are the
            // validator's.
            let (e, r) = raw();
            let notes = rules
                .keywords()
                .into_iter()
                .map(|keyword| {
                    let note = Note {
                        pointer: rules.pointer.clone(),
                        keyword: keyword.to_owned(),
                        kind: NoteKind::Deferred,
                    };
                    (tool.name.clone(), note)
                })
                .collect();
            (e, r, notes)
        }
        ValueSpelling::Bool => {
            let alts = Expr::alt(BOOL_SPELLINGS.map(Expr::lit).to_vec());
            (
                Expr::seq(vec![newline(), alts, newline(), Expr::lit(close)]),
                Vec::new(),
                Vec::new(),
            )
        }
        ValueSpelling::OneOf(values) => {
            let alts = Expr::alt(values.into_iter().map(Expr::lit).collect());
            (
                Expr::seq(vec![newline(), alts, newline(), Expr::lit(close)]),
                Vec::new(),
                Vec::new(),
            )
        }
        ValueSpelling::Json(schema) => {
            let schema_opts = SchemaOptions {
                tool: Some(tool.name.clone()),
                lenient,
                closed_objects: true,
                ..SchemaOptions::default()
            };
            let (g, tool_notes) = to_grammar(&schema, &schema_opts)?;
            let prefix = format!("{name}-");
            let start = g.start().map(|s| format!("{prefix}{s}"));
            let value = start.map_or(Expr::Seq(Vec::new()), Expr::rule);
            let notes = tool_notes
                .into_iter()
                .map(|n| (tool.name.clone(), n))
                .collect();
            let expr = Expr::seq(vec![newline(), value, newline(), Expr::lit(close)]);
            (expr, g.prefixed(&prefix).rules, notes)
        }
    })
}

/// A Python call's parameter value as IR: `True`/`False`, a quoted enum string, or JSON.
fn py_value(
    name: &str,
    tool: &Tool,
    key: &str,
    opts: &CompileOptions,
    lenient: bool,
) -> Result<ValueRules, IrCompileError> {
    let params = match opts.mode {
        Mode::Grammar => {
            let closed = close_objects(&tool.parameters);
            crate::validate::with_rules(&tool.rules, &closed).0
        }
        Mode::Json | Mode::Prompt => serde_json::Value::Null,
    };
    let quoted = |v: &str| {
        Expr::alt(vec![
            Expr::lit(serde_json::Value::String(v.to_owned()).to_string()),
            Expr::lit(pyjson::repr(v)),
        ])
    };
    let at = property_pointer(key);
    Ok(match value_spelling(&params, &at) {
        ValueSpelling::Bool => (
            Expr::alt(vec![Expr::lit("True"), Expr::lit("False")]),
            Vec::new(),
            Vec::new(),
        ),
        ValueSpelling::OneOf(values) => (
            Expr::alt(values.iter().map(|v| quoted(v)).collect()),
            Vec::new(),
            Vec::new(),
        ),
        spelling @ (ValueSpelling::Text(_) | ValueSpelling::Json(_)) => {
            let schema_opts = SchemaOptions {
                tool: Some(tool.name.clone()),
                lenient,
                closed_objects: true,
                ..SchemaOptions::default()
            };
            let (g, tool_notes) = to_grammar(&property_schema(&params, &at), &schema_opts)?;
            let prefix = format!("{name}-");
            let start = g.start().map(|s| format!("{prefix}{s}"));
            let mut notes: Vec<(String, Note)> = tool_notes
                .into_iter()
                .map(|n| (tool.name.clone(), n))
                .collect();
            let mut value = start.map_or(Expr::Seq(Vec::new()), Expr::rule);
            // A string may also be Python's single-quoted literal (LFM2's template writes
            // `repr`); its keywords are then the validator's.
            if let ValueSpelling::Text(rules) = spelling {
                value = Expr::alt(vec![value, single_quoted()]);
                notes.extend(rules.keywords().into_iter().map(|keyword| {
                    let note = Note {
                        pointer: rules.pointer.clone(),
                        keyword: keyword.to_owned(),
                        kind: NoteKind::Deferred,
                    };
                    (tool.name.clone(), note)
                }));
            }
            (value, g.prefixed(&prefix).rules, notes)
        }
    })
}

/// A Python string literal in single quotes (escapes allowed).
fn single_quoted() -> Expr {
    let plain = chars_class(true, ['\'', '\\', '\n']);
    let escaped = Expr::seq(vec![Expr::lit("\\"), Expr::Any]);
    Expr::seq(vec![
        Expr::lit("'"),
        Expr::repeat(Expr::alt(vec![plain, escaped]), 0, None),
        Expr::lit("'"),
    ])
}

/// Text (possibly empty) that does not start with any of `words` (all non-empty), and
/// whose first character is none of `skip` (the leading characters a caller strips).
fn not_starting(words: &[&str], skip: &[char]) -> Expr {
    let mut firsts: Vec<char> = words.iter().filter_map(|w| w.chars().next()).collect();
    firsts.sort_unstable();
    firsts.dedup();
    let mut alts = vec![
        Expr::Seq(Vec::new()),
        Expr::seq(vec![
            chars_class(true, firsts.iter().chain(skip).copied()),
            Expr::repeat(Expr::Any, 0, None),
        ]),
    ];
    for c in firsts {
        let rest: Vec<&str> = words.iter().filter_map(|w| w.strip_prefix(c)).collect();
        if rest.iter().all(|r| !r.is_empty()) {
            alts.push(Expr::seq(vec![
                Expr::lit(c.to_string()),
                not_starting(&rest, &[]),
            ]));
        }
    }
    Expr::Alt(alts)
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

/// Rules `{name}` (and `{name}-N` helpers) matching any text that contains none of `words`:
/// a right-linear grammar with one rule per prefix of a word that holds no word (the
/// Aho-Corasick automaton; for one word, KMP's), so targets without negation can still say
/// "until the marker, and never these tags". Empty words are ignored.
pub fn not_containing(name: &str, words: &[&str]) -> Vec<Rule> {
    let words: Vec<Vec<char>> = words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().collect())
        .collect();
    let holds_word = |s: &[char]| words.iter().any(|w| s.windows(w.len()).any(|x| x == w));
    // States: the prefixes of the words that hold no word, by word then length ("" first).
    let mut states: Vec<&[char]> = vec![&[]];
    for w in &words {
        for k in 1..w.len() {
            let p = &w[..k];
            if !states.contains(&p) && !holds_word(p) {
                states.push(p);
            }
        }
    }
    let state = |i: usize| {
        if i == 0 {
            name.to_owned()
        } else {
            format!("{name}-{i}")
        }
    };
    let mut alphabet: Vec<char> = words.iter().flatten().copied().collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    // After `seen`, reading `c`: `None` if a word ends there, else the longest suffix that is
    // a state.
    let next = |seen: &[char], c: char| -> Option<usize> {
        let mut s = seen.to_vec();
        s.push(c);
        if words.iter().any(|w| s.ends_with(w)) {
            return None;
        }
        (0..=s.len())
            .find_map(|k| states.iter().position(|p| *p == &s[k..]))
            .or(Some(0))
    };
    states
        .iter()
        .enumerate()
        .map(|(i, seen)| {
            let mut alts = vec![Expr::Seq(Vec::new())];
            for &c in &alphabet {
                if let Some(n) = next(seen, c) {
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
    use crate::define::request::Think;
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
        let rules = not_containing("t", &["abab"]);
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

    /// The tags a MiniMax value must never hold, with one word inside another's prefix
    /// (`</q` in `</query>`) and one that overlaps itself.
    const TAGS: [&str; 4] = ["</query>", "</q", "<glue>", "aab"];

    #[test]
    fn several_words_share_one_automaton() {
        let g = Grammar {
            rules: not_containing("t", &TAGS),
        };
        let accepts = |text: &str| toolgram_grammar::tree::parse_tree(&g, text).is_ok();
        assert!(accepts("a value with <q and </x and aa b"));
        assert!(!accepts("up to </query> then more"));
        assert!(!accepts("only </q"));
        assert!(!accepts("xx<glue>"));
        assert!(!accepts("aaab"));
        // States: "", then "<" and "</" ("</query>"'s longer prefixes hold "</q"), "<g" to
        // "<glue", "a" and "aa".
        assert_eq!(g.rules.len(), 1 + 2 + 4 + 2);
    }

    proptest::proptest! {
        /// Texts made of the words, their prefixes and stray characters, so every word
        /// (and near miss) turns up often.
        #[test]
        fn the_automaton_accepts_exactly_the_texts_without_a_word(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "</query>", "</q", "<glue>", "aab", "</qu", "<glu", "aa", "<", "/", ">", "q", "a", "b", "x",
            ]),
            0..10,
        )) {
            let text = parts.concat();
            let g = Grammar { rules: not_containing("t", &TAGS) };
            let accepted = toolgram_grammar::tree::parse_tree(&g, &text).is_ok();
            proptest::prop_assert_eq!(accepted, !TAGS.iter().any(|w| text.contains(w)), "{:?}", text);
        }
    }
}
