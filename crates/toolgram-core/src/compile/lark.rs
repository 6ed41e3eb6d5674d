//! The llguidance target: the call union ([`super::union`]) written as llguidance Lark.
//! Argument slots are `%json` blocks (the schema after the [`super::keyword_pass`]), a
//! grammar tool's own rules inside a JSON string, or — when llguidance refused a schema —
//! toolgram's schema compiler's rules; free text is one lexeme (`&`/`~` keep it from
//! starting like a call), or the response format's `%json` where one is sent beside the
//! tools; the reasoning text is a lazy lexeme ending at its marker.
//!
//! This module must not run a grammar: the engine checks what it writes with llguidance.

use super::keyword_pass::{KeywordPass, grammar_schema, json_style, loose_json_style};
use super::lark_values::{ValueSlot, py_value, regex_escape, value};
use super::slots::{Slot, Target, Text, Union};
use super::union;
use super::{CompileOptions, CompiledGrammar};
use crate::define::arguments::close_objects;
use crate::define::request::Mode;
use crate::define::tool::{ToolChoice, ToolSet};
use crate::error::CompileError;
use crate::syntax::{CallSyntax, Piece, Reasoning};
use serde_json::{Value, json};
use std::collections::HashMap;
use toolgram_grammar::lark::{self, Emit, Extern, LarkDialect, Rhs, Rule};
use toolgram_grammar::schema::{NoteKind, SchemaOptions, to_grammar};

/// Compile the request into an llguidance grammar.
pub fn compile(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    opts: &CompileOptions,
) -> Result<CompiledGrammar, CompileError> {
    let target = Target {
        special_tokens: &opts.special_tokens,
        lexed: true,
    };
    let u = union::build(tools, choice, parallel, syntax, opts, target)?;
    let mut pass = KeywordPass::default();
    let mut externs = Vec::new();
    let mut schemas = HashMap::new();
    for (name, slot) in &u.slots {
        externs.push(match slot {
            Slot::Args { tool, loose, again } => {
                args(name, *tool, (*loose, *again), tools, opts, &mut pass)?
            }
            Slot::Value {
                tool,
                at,
                close,
                never,
            } => {
                let slot = ValueSlot {
                    name,
                    tool: *tool,
                    at: at.as_deref(),
                    close,
                    never,
                };
                value(&slot, tools, opts, (&mut pass, &mut schemas))?
            }
            Slot::PyValue { tool, key } => {
                py_value(name, *tool, key, tools, opts, (&mut pass, &mut schemas))?
            }
            Slot::Text(t) => match &opts.answer {
                // The answer a response format asks for, wherever the reply has text.
                Some(schema) => Extern::new(name, Rhs::Json(schema.clone())),
                None => text(name, t),
            },
            Slot::ThinkBody(reasoning) => think_body(name, opts, reasoning),
            Slot::Answer => Extern::new(name, Rhs::lit("")),
        });
    }
    for (i, pointer, keyword) in &u.deferred {
        pass.defer(&tools.tools()[*i].name, pointer, keyword);
    }
    if let (false, Some(k)) = (opts.lenient, pass.unknown.first()) {
        return Err(CompileError::UnsupportedKeyword {
            tool: k.tool.clone(),
            pointer: if k.pointer.is_empty() {
                "/".into()
            } else {
                k.pointer.clone()
            },
            keyword: k.keyword.clone(),
        });
    }
    let planned = union::planned(opts, parallel, syntax, &u.callable).is_some();
    Ok(CompiledGrammar {
        lark: write(&u, &externs),
        planned,
        choice: choice.clone(),
        callable: u.callable,
        parallel,
        deferred: pass.deferred,
        ignored: pass.unknown,
        args_fallback: None,
    })
}

/// A grammar whose answer is the nested grammar `nested` (`@nested`), after the reasoning
/// block `opts.think` asks for.
pub fn around_answer(opts: &CompileOptions, nested: &str) -> String {
    let answer = Rhs::Nested(nested.to_owned());
    let target = Target {
        special_tokens: &opts.special_tokens,
        lexed: true,
    };
    let u = union::around_answer(opts.think, target);
    let externs: Vec<Extern> = u
        .slots
        .iter()
        .map(|(name, slot)| match slot {
            Slot::ThinkBody(reasoning) => think_body(name, opts, reasoning),
            _ => Extern::new(name, answer.clone()),
        })
        .collect();
    write(&u, &externs)
}

fn write(u: &Union, externs: &[Extern]) -> String {
    let body = lark::emit_with(
        &u.grammar,
        &Emit {
            dialect: LarkDialect::Llguidance,
            start_name: "start",
            whole_literals: true,
            externs,
        },
    );
    format!("%llguidance {{}}\n\n{body}")
}

/// Tool `i`'s arguments: `%json` with the keyword pass's schema in the template spelling
/// (or any spacing when `loose`), a grammar tool's text in its own grammar, or the schema
/// compiler's rules when the engine fell back to them; `again` as in [`Slot::Args`].
fn args(
    name: &str,
    i: usize,
    (loose, again): (bool, bool),
    tools: &ToolSet,
    opts: &CompileOptions,
    pass: &mut KeywordPass,
) -> Result<Extern, CompileError> {
    let tool = &tools.tools()[i];
    let grammar_tool = tool
        .grammar
        .as_ref()
        .filter(|spec| opts.mode == Mode::Grammar && !spec.checked_after);
    if again && (grammar_tool.is_some() || opts.args_from_ir && opts.mode == Mode::Grammar) {
        // Text inside a grammar tool's string, or the schema compiler's rules, have one
        // spelling: the bare call reuses the same slot (named as the Lark writer names
        // `args-{i}`).
        return Ok(Extern::new(name, Rhs::rule(format!("args_{i}"))));
    }
    if let Some(spec) = grammar_tool {
        let start = format!("gt{i}_start");
        let body = Rhs::Seq(vec![
            Rhs::lit("{\"input\": \""),
            Rhs::rule(&start),
            Rhs::lit("\"}"),
        ]);
        let defs = grammar_tool_rules(i, &spec.definition, &start)?;
        return Ok(Extern::new(name, body).with_defs(defs));
    }
    if opts.args_from_ir && opts.mode == Mode::Grammar {
        let (params, _) =
            crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
        let sopts = SchemaOptions {
            tool: Some(tool.name.clone()),
            lenient: opts.lenient,
            closed_objects: true,
            ..SchemaOptions::default()
        };
        let (ir, notes) = to_grammar(&params, &sopts)?;
        // What our compiler leaves to the validator is listed too.
        for n in notes.iter().filter(|n| n.kind == NoteKind::Deferred) {
            pass.defer(&tool.name, &n.pointer, &n.keyword);
        }
        let start = format!("ir{i}_args");
        let defs = lark::emit_named(
            &ir.prefixed(&format!("ir{i}_")),
            LarkDialect::Llguidance,
            &start,
        );
        return Ok(Extern::new(name, Rhs::rule(start)).with_defs(defs));
    }
    let mut schema = match opts.mode {
        Mode::Grammar if !again => {
            let (params, _) =
                crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
            grammar_schema(&tool.name, &params, pass)
        }
        // The bare form's schema: the same, its keywords already listed by the call slot.
        Mode::Grammar => {
            let (params, _) =
                crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
            grammar_schema(&tool.name, &params, &mut KeywordPass::default())
        }
        Mode::Json | Mode::Prompt => json!({"type": "object"}),
    };
    if let Value::Object(map) = &mut schema {
        let style = if loose {
            loose_json_style()
        } else {
            json_style()
        };
        map.insert("x-guidance".into(), style);
    }
    Ok(Extern::new(name, Rhs::Json(schema)))
}

/// Free text as one lexeme.
fn text(name: &str, t: &Text) -> Extern {
    let lexeme = name.to_uppercase().replace('-', "_");
    let any = Rhs::regex("(?s:.+)");
    let regex = match t {
        Text::Any => any,
        Text::NotStarting { words, after_ws } => {
            let alts: Vec<String> = words.iter().map(|w| regex_escape(w)).collect();
            let ws = if *after_ws { "[ \\t\\n\\r]*" } else { "" };
            let start = Rhs::regex(format!("{ws}({})(?s:.*)", alts.join("|")));
            Rhs::And(vec![any, start.negated()])
        }
        Text::NotContaining(w) => {
            let inside = Rhs::regex(format!("(?s:.*){}(?s:.*)", regex_escape(w)));
            Rhs::And(vec![any, inside.negated()])
        }
    };
    Extern::new(name, Rhs::rule(&lexeme)).with_defs(Rule::new(lexeme, regex).to_string())
}

/// The reasoning text and its closing markers: text then the first marker's token and the
/// rest, or a lazy lexeme that ends at the markers' text.
fn think_body(name: &str, opts: &CompileOptions, reasoning: &Reasoning) -> Extern {
    let token = |p: &Piece| match p {
        Piece::Token(t) => opts.special_tokens.get(*t).copied(),
        Piece::Text(_) => None,
    };
    match reasoning.close.split_first() {
        Some((first, _)) if token(first).is_some() => {
            let text = "THINK_TEXT";
            let mut body = vec![Rhs::rule(text).opt()];
            body.extend(
                reasoning
                    .close
                    .iter()
                    .map(|p| token(p).map_or_else(|| Rhs::lit(p.text()), Rhs::Token)),
            );
            let defs = Rule::new(text, Rhs::regex("(?s:.+)")).to_string();
            Extern::new(name, Rhs::Seq(body)).with_defs(defs)
        }
        _ => Extern {
            suffix: Some(reasoning.close_text()),
            ..Extern::new(name, Rhs::regex("(?s:.*)"))
        },
    }
}

/// The Lark rules of grammar tool `i`'s grammar moved inside a JSON string, named `gt{i}_…`
/// with `start` first.
fn grammar_tool_rules(i: usize, definition: &str, start: &str) -> Result<String, CompileError> {
    use toolgram_grammar::json_string;
    let g = lark::parse(definition).map_err(|e| CompileError::ToolGrammar(e.to_string()))?;
    let inside = json_string::inside_json_string(&g).prefixed(&format!("gt{i}_"));
    Ok(lark::emit_named(&inside, LarkDialect::Llguidance, start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define::request::Think;
    use crate::syntax::by_name;
    use std::collections::HashMap;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}},
                {"type":"function","function":{"name":"b","parameters":{"type":"object"}}}]"#,
        )
        .expect("valid tools")
    }

    fn hermes() -> &'static CallSyntax {
        by_name("hermes").expect("registered")
    }

    #[test]
    fn think_wraps_the_answer_only_when_asked() {
        let off = compile(
            &tools(),
            &ToolChoice::Auto,
            false,
            hermes(),
            &Default::default(),
        )
        .expect("compiles");
        assert!(!off.lark.contains("think"), "{}", off.lark);
        assert!(off.lark.contains("start: text? | calls\n"), "{}", off.lark);
        let opts = CompileOptions {
            think: Think::Required,
            ..Default::default()
        };
        let req = compile(&tools(), &ToolChoice::Auto, false, hermes(), &opts).expect("compiles");
        assert!(
            req.lark
                .contains("start: \"<think>\" think_body /[\\x{20}\\x{a}]/{0,4} (text? | calls)\n"),
            "{}",
            req.lark
        );
        assert!(
            req.lark
                .contains("think_body[suffix=\"</think>\"]: /(?s:.*)/")
        );
        let opts = CompileOptions {
            think: Think::Optional,
            special_tokens: HashMap::from([("<think>".into(), 7), ("</think>".into(), 8)]),
            ..Default::default()
        };
        let opt = compile(&tools(), &ToolChoice::Auto, false, hermes(), &opts).expect("compiles");
        assert!(opt.lark.contains("start: <[7]> think_body"), "{}", opt.lark);
        assert!(
            opt.lark.contains("think_body: THINK_TEXT? <[8]>"),
            "{}",
            opt.lark
        );
    }

    #[test]
    fn think_opens_the_block_each_family_writes() {
        let opts = CompileOptions {
            think: Think::Required,
            special_tokens: HashMap::from([("[THINK]".into(), 7), ("[/THINK]".into(), 8)]),
            ..Default::default()
        };
        let mistral = by_name("mistral").expect("registered");
        let g = compile(&tools(), &ToolChoice::Auto, false, mistral, &opts).expect("compiles");
        assert!(g.lark.contains("start: <[7]> think_body"), "{}", g.lark);
        assert!(
            g.lark.contains("think_body: THINK_TEXT? <[8]>"),
            "{}",
            g.lark
        );
        assert!(!g.lark.contains("<think>"), "{}", g.lark);
        // A marker spelled as tokens and text, the vocabulary lacking the tokens: all text.
        let opts = CompileOptions {
            think: Think::Required,
            ..Default::default()
        };
        for syntax in crate::syntax::REGISTRY {
            let Some(r) = syntax.think else { continue };
            let g = compile(&tools(), &ToolChoice::Auto, false, syntax, &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", syntax.name));
            let open = format!("start: {}", lark::literal(&r.open_text()));
            let close = format!("[suffix={}]", lark::literal(&r.close_text()));
            assert!(g.lark.contains(&open), "{}: {}", syntax.name, g.lark);
            assert!(g.lark.contains(&close), "{}: {}", syntax.name, g.lark);
        }
    }

    /// A grammar tool is decoded under its own grammar, unless its text is to be checked after
    /// parsing: then its call is the JSON fallback with that schema enforced and the text free.
    #[test]
    fn a_grammar_tool_checked_after_decodes_as_its_strict_json_fallback() {
        let doc = r#"[{"type":"custom","name":"calc","format":{"type":"grammar","syntax":"lark","definition":"start: NUM (\"+\" NUM)*\nNUM: /[0-9]+/\n"}}]"#;
        let mut pool = ToolSet::from_json_str(doc).expect("a grammar tool");
        let choice = ToolChoice::Required;
        let opts = CompileOptions::default();
        let constrained = compile(&pool, &choice, false, hermes(), &opts).expect("compiles");
        assert!(
            constrained.lark.contains("gt0_start"),
            "{}",
            constrained.lark
        );
        assert!(pool.set_text_checked_after("calc"));
        assert!(!pool.set_text_checked_after("nope"));
        let fallback = compile(&pool, &choice, false, hermes(), &opts).expect("compiles");
        assert!(!fallback.lark.contains("gt0_"), "{}", fallback.lark);
        let args = fallback
            .lark
            .lines()
            .find(|l| l.starts_with("args_0: %json "))
            .expect("the fallback schema");
        assert!(
            args.contains(r#""required":["input"]"#) && args.contains(r#""type":"string""#),
            "{args}"
        );
    }

    #[test]
    fn named_choice_compiles_only_that_tool() {
        let g = compile(
            &tools(),
            &ToolChoice::Named("b".into()),
            false,
            hermes(),
            &Default::default(),
        )
        .expect("compiles");
        assert_eq!(g.callable, vec![1]);
        assert!(g.lark.contains("call: call_1\n"), "{}", g.lark);
        assert!(!g.lark.contains("call_0"));
    }

    #[test]
    fn special_markers_become_token_references() {
        let opts = CompileOptions {
            special_tokens: HashMap::from([
                ("<tool_call>".to_owned(), 7),
                ("</tool_call>".to_owned(), 8),
            ]),
            ..CompileOptions::default()
        };
        let g = compile(&tools(), &ToolChoice::Auto, true, hermes(), &opts).expect("compiles");
        assert!(
            g.lark.contains("start: text? calls? | bare_calls\n"),
            "{}",
            g.lark
        );
        assert!(
            g.lark
                .contains("call_0: <[7]> \"\\n\" body_0 \"\\n\" <[8]>\n"),
            "{}",
            g.lark
        );
        // A bare call spelled as inside the markers is that same body; an indented one is
        // spaced freely.
        assert!(
            g.lark.contains("bare_call_0: body_0 | \"{\" /"),
            "{}",
            g.lark
        );
        assert!(g.lark.contains("calls_1: \"\\n\"? call\n"), "{}", g.lark);
    }

    #[test]
    fn json_mode_keeps_names_but_not_argument_schemas() {
        let opts = CompileOptions {
            mode: Mode::Json,
            ..Default::default()
        };
        let g = compile(&tools(), &ToolChoice::Required, false, hermes(), &opts).expect("compiles");
        assert!(
            g.lark.contains("\"name\\\": \\\"a\\\"") || g.lark.contains("{\\\"name\\\": \\\"a\\\""),
            "{}",
            g.lark
        );
        assert!(
            g.lark
                .contains("args_0: %json {\"type\":\"object\",\"x-guidance\""),
            "{}",
            g.lark
        );
        assert!(!g.lark.contains("integer"), "{}", g.lark);
    }

    #[test]
    fn none_never_compiles_a_call() {
        let g = compile(
            &tools(),
            &ToolChoice::None,
            false,
            hermes(),
            &Default::default(),
        )
        .expect("compiles");
        assert!(!g.lark.contains("call"), "{}", g.lark);
    }

    #[test]
    fn unknown_keywords_are_refused_by_name_or_listed_when_lenient() {
        let tools = ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object",
                "properties":{"a":{"type":"string","frobnicate":1}}}}}]"#,
        )
        .expect("valid tools");
        let hermes = by_name("hermes").expect("hermes");
        let err = compile(
            &tools,
            &ToolChoice::Auto,
            false,
            hermes,
            &CompileOptions::default(),
        )
        .expect_err("refused");
        assert!(
            matches!(&err, CompileError::UnsupportedKeyword { tool, pointer, keyword }
                if tool == "f" && pointer == "/properties/a" && keyword == "frobnicate"),
            "{err}"
        );
        let lenient = CompileOptions {
            lenient: true,
            ..CompileOptions::default()
        };
        let g = compile(&tools, &ToolChoice::Auto, false, hermes, &lenient).expect("lenient");
        assert_eq!(g.ignored.len(), 1);
        assert!(!g.lark.contains("frobnicate"), "{}", g.lark);
    }

    /// A response format beside the tools: the answer in its schema or calls, as the choice
    /// allows; never free prose.
    #[test]
    fn a_response_format_beside_tools_is_the_answer_branch() {
        let opts = CompileOptions {
            answer: Some(json!({"type": "object", "properties": {"cold": {"type": "boolean"}}})),
            ..CompileOptions::default()
        };
        let grammar = |choice: ToolChoice| {
            compile(&tools(), &choice, false, hermes(), &opts)
                .expect("compiles")
                .lark
        };
        let auto = grammar(ToolChoice::Auto);
        assert!(auto.contains("start: text | calls\n"), "{auto}");
        assert!(auto.contains("text: %json"), "{auto}");
        assert!(auto.contains("\"cold\""), "{auto}");
        assert!(!auto.contains("TEXT"), "no free prose: {auto}");
        let none = grammar(ToolChoice::None);
        assert!(none.contains("start: text\n"), "{none}");
        assert!(!none.contains("calls"), "{none}");
        let required = grammar(ToolChoice::Required);
        assert!(required.contains("start: calls\n"), "{required}");
        assert!(!required.contains("\"cold\""), "{required}");
    }

    /// Plan, then calls: the count first, then exactly that many calls; 0 (text) only where
    /// the choice allows no call; no plan where one call at most may be made.
    #[test]
    fn a_planned_reply_states_its_count_then_makes_exactly_that_many_calls() {
        let opts = CompileOptions {
            plan: true,
            max_calls: Some(3),
            ..CompileOptions::default()
        };
        let auto = compile(&tools(), &ToolChoice::Auto, true, hermes(), &opts)
            .expect("compiles")
            .lark;
        assert!(
            auto.contains(
                "start: \"Number of tool calls needed: \" (\"0\\n\" text? | \"1\\n\" calls_1 | \"2\\n\" calls_2 | \"3\\n\" calls_3)\n"
            ),
            "{auto}"
        );
        assert!(
            auto.contains("calls_2: call \"\\n\"? call \"\\n\"?\n"),
            "{auto}"
        );
        let required = compile(&tools(), &ToolChoice::Required, true, hermes(), &opts)
            .expect("compiles")
            .lark;
        assert!(!required.contains("\"0\\n\""), "{required}");
        let one = compile(&tools(), &ToolChoice::Auto, false, hermes(), &opts)
            .expect("compiles")
            .lark;
        assert!(!one.contains("Number of tool calls"), "{one}");
        // Under Qwen's bare-call rule, text after a plan of 0 cannot open as a call either.
        let special = CompileOptions {
            special_tokens: HashMap::from([
                ("<tool_call>".to_owned(), 7),
                ("</tool_call>".to_owned(), 8),
            ]),
            ..opts
        };
        let bare = compile(&tools(), &ToolChoice::Auto, true, hermes(), &special)
            .expect("compiles")
            .lark;
        assert!(bare.contains("(\"0\\n\" text? |"), "{bare}");
        assert!(
            bare.contains("TEXT: /(?s:.+)/ & ~/[ \\t\\n\\r]*(\\{|```json)(?s:.*)/\n"),
            "{bare}"
        );
    }
}
