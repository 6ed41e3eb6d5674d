//! Compile a tool pool + `tool_choice` + `parallel_tool_calls` into ONE Lark grammar in a
//! model family's native call syntax.
//!
//! The grammar is a discriminated union: each callable tool gets its own call rule whose
//! literal name selects that tool's argument schema (an llguidance `%json` block). Under
//! `auto` the model writes free text and then, optionally, calls; under `none` it can only
//! write text; under `required`/named it must call. This module emits text only; it must not
//! run a parser or a model (the engine checks the grammar with llguidance).

use crate::define::arguments::{DeferredKeyword, close_objects};
use crate::define::request::{Mode, Think};
use crate::define::tool::{ToolChoice, ToolSet};
use crate::error::CompileError;
use crate::syntax::{CallSyntax, JSON_FENCE, Piece, THINK};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use toolgram_grammar::schema::keywords::{self, GRAMMAR_FORMATS, VALIDATOR_FORMATS};

/// Facts about the target vocabulary that change how the grammar is spelled.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Marker texts that the vocabulary holds as one special token, with that token's id.
    /// They are emitted as token references, so free text can never spell them.
    pub special_tokens: HashMap<String, u32>,
    /// How much of each call the grammar enforces.
    pub mode: Mode,
    /// Whether a `<think>…</think>` block may or must come first.
    pub think: Think,
    /// Unknown schema keywords are listed ([`CompiledGrammar::ignored`]) instead of refused.
    pub lenient: bool,
    /// Argument grammars come from toolgram's own schema compiler (Lark rules) instead of
    /// llguidance's `%json`: the engine's fallback for a schema llguidance refuses (its
    /// whitespace is then the IR's bounded policy, not `json.dumps` spacing).
    pub args_from_ir: bool,
}

/// The result of compiling a request.
#[derive(Debug, Clone)]
pub struct CompiledGrammar {
    /// llguidance Lark grammar text.
    pub lark: String,
    /// The choice it was compiled for.
    pub choice: ToolChoice,
    /// Indices (into the tool set) of the tools that may be called.
    pub callable: Vec<usize>,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// Keywords the grammar does not express and the validator enforces after parsing.
    pub deferred: Vec<DeferredKeyword>,
    /// Unknown keywords left out under `lenient` (without it they are an error).
    pub ignored: Vec<DeferredKeyword>,
    /// Set by the engine when llguidance refused an argument schema as `%json` and the
    /// argument grammars come from toolgram's own schema compiler: llguidance's message.
    pub args_fallback: Option<String>,
}

/// The schema the grammar uses for `parameters`: objects closed (see [`close_objects`]),
/// keywords the llguidance path enforces after parse
/// ([`keywords::llguidance_after_parse`]) moved out (recorded in `deferred`), annotations
/// llguidance does not know removed.
pub fn grammar_schema(tool: &str, parameters: &Value, pass: &mut KeywordPass) -> Value {
    let mut s = close_objects(parameters);
    let legacy = legacy_ref(parameters);
    strip(&mut s, "", tool, legacy, pass);
    s
}

/// What the keyword pass took out of a schema for the llguidance path.
#[derive(Debug, Default)]
pub struct KeywordPass {
    /// Keywords enforced after parsing instead of by the grammar.
    pub deferred: Vec<DeferredKeyword>,
    /// Keywords toolgram does not know (not in `schema::keywords`): an error unless lenient.
    pub unknown: Vec<DeferredKeyword>,
}

/// Whether the schema declares a draft (4, 6 or 7, or 3) in which `$ref` overrides its
/// sibling keywords; in 2019-09 and later (and without `$schema`) siblings apply too.
fn legacy_ref(schema: &Value) -> bool {
    schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|d| {
            ["draft-03", "draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|v| d.contains(v))
        })
}

/// The schema the grammar uses for a bare JSON Schema (not a tool's arguments): as
/// [`grammar_schema`] but objects keep JSON Schema's default of allowing other keys.
pub fn bare_grammar_schema(schema: &Value, pass: &mut KeywordPass) -> Value {
    let mut s = schema.clone();
    strip(&mut s, "", "", legacy_ref(schema), pass);
    s
}

fn strip(v: &mut Value, at: &str, tool: &str, legacy: bool, pass: &mut KeywordPass) {
    let Value::Object(map) = v else { return };
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| keywords::lookup(k).is_none())
        .cloned()
        .collect();
    for k in unknown {
        map.shift_remove(&k);
        pass.unknown.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: k,
        });
    }
    if let Some(n) = toolgram_grammar::schema::openapi_numeric_format(map) {
        *map = n;
    }
    // llguidance cannot build an integer range reaching -2^63 (its bound overflows when
    // negated); such a bound is left to the validator.
    for k in ["minimum", "exclusiveMinimum"] {
        if map
            .get(k)
            .and_then(Value::as_f64)
            .is_some_and(|b| b <= -9.223_372_036_854_775e18)
        {
            map.shift_remove(k);
            pass.deferred.push(DeferredKeyword {
                tool: tool.to_owned(),
                pointer: at.to_owned(),
                keyword: k.to_owned(),
            });
        }
    }
    // A format nobody enforces would be dropped silently by llguidance on non-strings.
    if let Some(f) = map.get("format").and_then(Value::as_str)
        && !GRAMMAR_FORMATS.contains(&f)
        && !VALIDATOR_FORMATS.contains(&f)
    {
        pass.unknown.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: format!("format: {f}"),
        });
        map.shift_remove("format");
    }
    let deferred = &mut pass.deferred;
    if legacy && map.contains_key("$ref") {
        // Drafts 3–7: `$ref` replaces the schema it sits in; only the containers that
        // references may point into are kept.
        map.retain(|k, _| {
            matches!(
                k.as_str(),
                "$ref" | "definitions" | "$defs" | "$schema" | "$id" | "id"
            )
        });
    }
    for k in keywords::llguidance_after_parse() {
        if map.shift_remove(k).is_some() {
            deferred.push(DeferredKeyword {
                tool: tool.to_owned(),
                pointer: at.to_owned(),
                keyword: k.to_owned(),
            });
        }
    }
    for k in keywords::llguidance_unknown_annotations() {
        map.shift_remove(k);
    }
    let defer = |keyword: &str, deferred: &mut Vec<DeferredKeyword>| {
        deferred.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: keyword.to_owned(),
        })
    };
    // oneOf: the grammar enforces "at least one" (anyOf); "exactly one" is checked after.
    // Rewritten where it stands: llguidance orders properties by keyword position.
    if map.contains_key("oneOf") {
        defer("oneOf", deferred);
        let as_key = if !map.contains_key("anyOf") {
            "anyOf"
        } else if !map.contains_key("allOf") {
            "allOf"
        } else {
            ""
        };
        let mut pending = None;
        for (k, v) in std::mem::take(map) {
            match (k.as_str(), as_key) {
                ("oneOf", "anyOf") => {
                    map.insert("anyOf".into(), v);
                }
                ("oneOf", "allOf") => {
                    map.insert("allOf".into(), json!([{"anyOf": v}]));
                }
                ("oneOf", _) => pending = Some(v),
                _ => {
                    map.insert(k, v);
                }
            }
        }
        if let (Some(v), Some(Value::Array(all))) = (pending, map.get_mut("allOf")) {
            all.push(json!({"anyOf": v}));
        }
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| VALIDATOR_FORMATS.contains(&f))
    {
        map.shift_remove("format");
        defer("format", deferred);
    }
    // llguidance bounds the number of keys only when every listed key is required.
    let all_required = map
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|props| {
            let req = map.get("required").and_then(Value::as_array);
            props
                .keys()
                .all(|k| req.is_some_and(|r| r.iter().any(|x| x == k.as_str())))
        });
    if !all_required {
        for k in ["minProperties", "maxProperties"] {
            if map.shift_remove(k).is_some() {
                defer(k, deferred);
            }
        }
    }
    // llguidance intersects a pattern with the length bounds into one automaton, which
    // exceeds its lexer limits for patterns with counted repetition (measured on MaskBench):
    // with a pattern, length bounds are enforced after parsing.
    if map.contains_key("pattern") {
        for k in ["minLength", "maxLength"] {
            if map.shift_remove(k).is_some() {
                defer(k, deferred);
            }
        }
    }
    map.retain(|k, _| !k.starts_with("x-"));
    for (key, child) in map.iter_mut() {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(m) = child {
                    for (name, sub) in m.iter_mut() {
                        strip(
                            sub,
                            &format!("{here}/{}", name.replace('~', "~0").replace('/', "~1")),
                            tool,
                            legacy,
                            pass,
                        );
                    }
                }
            }
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "prefixItems"
            | "anyOf"
            | "oneOf"
            | "allOf" => match child {
                Value::Array(a) => {
                    for (i, sub) in a.iter_mut().enumerate() {
                        strip(sub, &format!("{here}/{i}"), tool, legacy, pass);
                    }
                }
                other => strip(other, &here, tool, legacy, pass),
            },
            _ => {}
        }
    }
}

/// The whitespace and separator policy for arguments: exactly the spelling of Python's
/// `json.dumps` (what chat templates were trained on), no free whitespace.
pub fn json_style() -> Value {
    json!({"whitespace_flexible": false, "key_separator": ": ", "item_separator": ", "})
}

/// The whitespace policy of bare calls: any spacing, at most 16 characters per gap.
pub fn loose_json_style() -> Value {
    json!({"whitespace_pattern": "[ \\t\\n\\r]{1,16}", "key_separator": ":", "item_separator": ","})
}

/// Compile the request into a grammar.
pub fn compile(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    opts: &CompileOptions,
) -> Result<CompiledGrammar, CompileError> {
    if !syntax.is_compilable() {
        return Err(CompileError::UnsupportedSyntax(syntax.name.to_owned()));
    }
    let callable = choice.callable(tools)?;
    let mut pass = KeywordPass::default();
    let mut g = String::from("%llguidance {}\n\n");
    let opener_is_token = matches!(syntax.first_piece(), Some(Piece::Token(t)) if opts.special_tokens.contains_key(t));
    let bare = opener_is_token && syntax.bare_calls && !callable.is_empty();
    let start = if callable.is_empty() {
        "TEXT?"
    } else if choice.requires_call() {
        "calls"
    } else if bare {
        "PROSE? calls?\n     | bare_calls"
    } else if opener_is_token {
        "TEXT? calls?"
    } else {
        "PROSE?\n     | calls"
    };
    let _ = writeln!(g, "{}", think_rules(opts));
    let _ = writeln!(g, "answer: {start}");
    if start.contains("TEXT") {
        let _ = writeln!(g, "TEXT: /(?s:.+)/");
    }
    if start.contains("PROSE") {
        let opener = syntax.opener();
        if bare {
            // llguidance's lexer does not backtrack across lexemes, so text and a bare call
            // cannot share a prefix: under `auto`, a reply that opens with `{` or a ```json
            // fence is a call (parse::parse_output applies the same rule).
            let _ = writeln!(
                g,
                "PROSE: /(?s:.+)/ & ~/[ \\t\\n\\r]*(\\{{|```json)(?s:.*)/"
            );
            let _ = writeln!(g, "WS: /[ \\t\\n\\r]{{1,16}}/");
        } else if opener.is_empty() {
            let _ = writeln!(g, "PROSE: /[^{{](?s:.*)/");
        } else {
            let _ = writeln!(g, "PROSE: /(?s:.+)/ & ~/{}(?s:.*)/", regex_escape(&opener));
        }
    }
    if !callable.is_empty() {
        let pieces = |p: &[Piece]| spell(p, opts);
        let (open, close, sep) = (
            pieces(syntax.section_open),
            pieces(syntax.section_close),
            pieces(syntax.separator),
        );
        let repeat = if parallel {
            format!(" ({sep} call)*")
        } else {
            String::new()
        };
        let _ = writeln!(g, "calls: {open} call{repeat} {close}");
        let alts: Vec<String> = callable.iter().map(|i| format!("call_{i}")).collect();
        let _ = writeln!(g, "call: {}", alts.join(" | "));
        if bare {
            let bodies: Vec<String> = callable.iter().map(|i| format!("bare_body_{i}")).collect();
            let repeat = if parallel {
                format!(" ({sep} bare_call)*")
            } else {
                String::new()
            };
            let (fo, fc) = (lark_string(JSON_FENCE.0), lark_string(JSON_FENCE.1));
            let _ = writeln!(g, "bare_calls: bare_list | {fo} bare_list {fc}");
            let _ = writeln!(g, "bare_list: bare_call{repeat}");
            let _ = writeln!(g, "bare_call: {}", bodies.join(" | "));
        }
        for &i in &callable {
            let tool = &tools.tools()[i];
            let head = format!(
                "{{\"name\": {}, \"{}\": ",
                crate::pyjson::to_string(&tool.name, None),
                syntax.args_key
            );
            let _ = writeln!(
                g,
                "call_{i}: {} body_{i} {}",
                pieces(syntax.call_open),
                pieces(syntax.call_close)
            );
            let _ = writeln!(g, "body_{i}: {} args_{i} \"}}\"", lark_string(&head));
            let mut schema = match opts.mode {
                Mode::Grammar => {
                    let (params, _) =
                        crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
                    grammar_schema(&tool.name, &params, &mut pass)
                }
                Mode::Json | Mode::Prompt => json!({"type": "object"}),
            };
            if let Value::Object(map) = &mut schema {
                map.insert("x-guidance".into(), json_style());
            }
            // A grammar tool: the call stays JSON, `{"input": "<text>"}`, and the text inside
            // the string is the tool's own grammar (JSON-escaped).
            let grammar_tool = match (&tool.grammar, opts.mode) {
                (Some(spec), Mode::Grammar) if !spec.checked_after => {
                    Some(grammar_tool_rules(i, &spec.definition)?)
                }
                _ => None,
            };
            match &grammar_tool {
                Some(rules) => {
                    let _ = writeln!(
                        g,
                        "args_{i}: \"{{\\\"input\\\": \\\"\" gt{i}_start \"\\\"}}\"\n{rules}"
                    );
                }
                None if opts.args_from_ir && opts.mode == Mode::Grammar => {
                    let (params, _) =
                        crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
                    let sopts = toolgram_grammar::schema::SchemaOptions {
                        tool: Some(tool.name.clone()),
                        lenient: opts.lenient,
                        closed_objects: true,
                        ..toolgram_grammar::schema::SchemaOptions::default()
                    };
                    let (ir, notes) = toolgram_grammar::schema::to_grammar(&params, &sopts)?;
                    // What our compiler leaves to the validator is listed too.
                    for n in notes {
                        let d = DeferredKeyword {
                            tool: tool.name.clone(),
                            pointer: n.pointer,
                            keyword: n.keyword,
                        };
                        if n.kind == toolgram_grammar::schema::NoteKind::Deferred
                            && !pass.deferred.contains(&d)
                        {
                            pass.deferred.push(d);
                        }
                    }
                    g.push_str(&toolgram_grammar::lark::emit_named(
                        &ir.prefixed(&format!("ir{i}_")),
                        toolgram_grammar::lark::LarkDialect::Llguidance,
                        &format!("args_{i}"),
                    ));
                }
                None => {
                    let _ = writeln!(g, "args_{i}: %json {schema}");
                }
            }
            if bare {
                let lit = |t: &str| lark_string(t);
                let _ = writeln!(
                    g,
                    "bare_body_{i}: \"{{\" WS? {} WS? \":\" WS? {} WS? \",\" WS? {} WS? \":\" WS? bare_args_{i} WS? \"}}\"",
                    lit("\"name\""),
                    lit(&crate::pyjson::to_string(&tool.name, None)),
                    lit(&format!("\"{}\"", syntax.args_key)),
                );
                if let Value::Object(map) = &mut schema {
                    map.insert("x-guidance".into(), loose_json_style());
                }
                if grammar_tool.is_some() || opts.args_from_ir {
                    let _ = writeln!(g, "bare_args_{i}: args_{i}");
                } else {
                    let _ = writeln!(g, "bare_args_{i}: %json {schema}");
                }
            }
        }
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
    Ok(CompiledGrammar {
        lark: g,
        choice: choice.clone(),
        callable,
        parallel,
        deferred: pass.deferred,
        ignored: pass.unknown,
        args_fallback: None,
    })
}

/// The Lark rules of grammar tool `i`'s grammar moved inside a JSON string, named `gt{i}_…`
/// with `gt{i}_start` first.
fn grammar_tool_rules(i: usize, definition: &str) -> Result<String, CompileError> {
    use toolgram_grammar::{json_string, lark};
    let g = lark::parse(definition).map_err(|e| CompileError::ToolGrammar(e.to_string()))?;
    let inside = json_string::inside_json_string(&g).prefixed(&format!("gt{i}_"));
    Ok(lark::emit_named(
        &inside,
        lark::LarkDialect::Llguidance,
        &format!("gt{i}_start"),
    ))
}

/// The `start` rule and, when thinking is on, the reasoning block before the answer: the
/// block's text may not contain the closing marker; up to four newlines/spaces may follow it.
pub fn think_rules(opts: &CompileOptions) -> String {
    let (open, close) = (spell(&[THINK.0], opts), spell(&[THINK.1], opts));
    let close_is_token = matches!(THINK.1, Piece::Token(t) if opts.special_tokens.contains_key(t));
    let body = if close_is_token {
        format!("think: {open} THINK_TEXT? {close}\nTHINK_TEXT: /(?s:.+)/")
    } else {
        format!("think: {open} think_text\nthink_text[suffix={close}]: /(?s:.*)/")
    };
    match opts.think {
        Think::Off => "start: answer".to_owned(),
        Think::Optional => format!("start: think THINK_GAP? answer | answer\n{body}\n{THINK_GAP}"),
        Think::Required => format!("start: think THINK_GAP? answer\n{body}\n{THINK_GAP}"),
    }
}

const THINK_GAP: &str = "THINK_GAP: /[ \\n]{1,4}/";

fn spell(pieces: &[Piece], opts: &CompileOptions) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Token(t) => match opts.special_tokens.get(*t) {
                Some(id) => format!("<[{id}]>"),
                None => lark_string(t),
            },
            Piece::Text(t) => lark_string(t),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Lark string literal for `s`.
pub fn lark_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~/".contains(c) {
            out.push('\\');
        }
        match c {
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define::arguments::post_parse_validator;
    use crate::syntax::by_name;

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
        assert!(off.lark.contains("start: answer\n") && !off.lark.contains("think"));
        let opts = CompileOptions {
            think: Think::Required,
            ..Default::default()
        };
        let req = compile(&tools(), &ToolChoice::Auto, false, hermes(), &opts).expect("compiles");
        assert!(req.lark.contains("start: think THINK_GAP? answer\n"));
        assert!(req.lark.contains("think_text[suffix=\"</think>\"]"));
        let opts = CompileOptions {
            think: Think::Optional,
            special_tokens: HashMap::from([("<think>".into(), 7), ("</think>".into(), 8)]),
            ..Default::default()
        };
        let opt = compile(&tools(), &ToolChoice::Auto, false, hermes(), &opts).expect("compiles");
        assert!(opt.lark.contains("| answer\n"));
        assert!(opt.lark.contains("think: <[7]> THINK_TEXT? <[8]>"));
    }

    #[test]
    fn syntaxes_without_a_grammar_are_a_typed_error() {
        for s in crate::syntax::REGISTRY
            .iter()
            .filter(|s| !s.is_compilable())
        {
            assert_eq!(
                compile(&tools(), &ToolChoice::Auto, true, s, &Default::default()).map(|_| ()),
                Err(CompileError::UnsupportedSyntax(s.name.to_owned())),
            );
        }
        assert!(by_name("lfm2").is_some_and(|s| !s.is_compilable()));
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
            g.lark.contains("answer: PROSE? calls?\n     | bare_calls"),
            "{}",
            g.lark
        );
        assert!(g.lark.contains("<[7]> \"\\n\""), "{}", g.lark);
        assert!(g.lark.contains("(\"\\n\" call)*"), "{}", g.lark);
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
    fn keywords_the_grammar_cannot_express_are_deferred_not_dropped() {
        let mut pass = KeywordPass::default();
        let s = grammar_schema(
            "t",
            &json!({"type":"object","properties":{"tags":{"type":"array","uniqueItems":true,"deprecated":true,"x-ui":1}},
                "dependentRequired":{"a":["b"]}}),
            &mut pass,
        );
        assert_eq!(s["properties"]["tags"], json!({"type":"array"}));
        assert!(pass.unknown.is_empty());
        let got: Vec<(&str, &str)> = pass
            .deferred
            .iter()
            .map(|d| (d.pointer.as_str(), d.keyword.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("", "dependentRequired"),
                ("/properties/tags", "uniqueItems")
            ]
        );
    }

    #[test]
    fn rewrites_keep_keyword_order_because_llguidance_orders_properties_by_it() {
        let schema = json!({"description": "d", "oneOf": [{"required": ["a"]}],
            "properties": {"b": {}, "a": {}}, "format": "email", "type": "object"});
        let s = grammar_schema("t", &schema, &mut KeywordPass::default());
        let keys: Vec<&str> = s
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "description",
                "anyOf",
                "properties",
                "format",
                "type",
                "additionalProperties"
            ]
        );
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

    /// OpenAPI `int64`'s lower bound (-2^63) is beyond what llguidance's range grammar
    /// takes: it leaves the grammar schema and is listed for the validator, which reads
    /// `int32`/`int64` as bounds too.
    #[test]
    fn openapi_integer_formats_are_bounds_for_grammar_and_validator() {
        let schema = json!({"type": "object", "properties": {
            "big": {"type": "integer", "format": "int64"},
            "small": {"type": "integer", "format": "int32"}}});
        let mut pass = KeywordPass::default();
        let g = bare_grammar_schema(&schema, &mut pass);
        assert!(g["properties"]["big"].get("minimum").is_none(), "{g}");
        assert_eq!(g["properties"]["big"]["maximum"], json!(i64::MAX));
        assert_eq!(g["properties"]["small"]["minimum"], json!(i32::MIN));
        assert!(
            pass.deferred
                .iter()
                .any(|d| d.pointer == "/properties/big" && d.keyword == "minimum"),
            "{:?}",
            pass.deferred
        );
        let v = post_parse_validator(&schema).expect("builds");
        assert!(v.is_valid(&json!({"small": 2_147_483_647, "big": i64::MIN})));
        assert!(!v.is_valid(&json!({"small": 2_147_483_648_i64})));
        // A property named like a data keyword is still a schema.
        let named = json!({"type": "object", "properties": {
            "default": {"type": "integer", "format": "int32"}}});
        let v = post_parse_validator(&named).expect("builds");
        assert!(!v.is_valid(&json!({"default": 2_147_483_648_i64})));
        // …while a `const` that looks like a schema is data.
        let data = json!({"const": {"format": "int32"}});
        let v = post_parse_validator(&data).expect("builds");
        assert!(v.is_valid(&json!({"format": "int32"})));
    }
}
