//! Value slots ([`super::slots::Slot::Value`]: tagged parameters, XML elements, Gemma 4
//! values, each at a JSON pointer of its tool's schema) written as llguidance Lark: raw text as a lazy lexeme ending at the closing marker, narrowed by the string's
//! `pattern` and length and kept from running into the family's next tag; one of an enum's
//! strings; a boolean as templates write it; JSON for any other schema (`%json`, or the
//! schema compiler's rules when llguidance refused a schema); a grammar tool's text in its
//! own grammar.
//!
//! This module must not choose between a value's spellings (raw, enum, boolean, JSON: the
//! schema does, in [`super::bodies::value_spelling`]) nor run a grammar; it writes the one
//! chosen, a pythonic string in either of Python's quotes.

use super::CompileOptions;
use super::bodies::{BOOL_SPELLINGS, StringRules, ValueSpelling, property_schema, value_spelling};
use super::keyword_pass::{KeywordPass, grammar_schema, json_style};
use super::slots::property_pointer;
use crate::define::arguments::close_objects;
use crate::define::request::Mode;
use crate::define::tool::ToolSet;
use crate::error::CompileError;
use crate::syntax::pyjson;
use serde_json::Value;
use std::collections::HashMap;
use toolgram_grammar::lark::{self, Extern, LarkDialect, Rhs, Rule};
use toolgram_grammar::schema::{SchemaOptions, to_grammar};

/// One value slot.
pub(super) struct ValueSlot<'a> {
    /// The slot's rule name.
    pub(super) name: &'a str,
    /// The tool's index.
    pub(super) tool: usize,
    /// The value's JSON pointer in the arguments schema; `None`: a key the schema does not
    /// name.
    pub(super) at: Option<&'a str>,
    /// The value's closing marker, as text.
    pub(super) close: &'a str,
    /// Texts a raw value never contains.
    pub(super) never: &'a [String],
}

/// The value and its closing marker. Schemas pass the keyword pass once per tool.
pub(super) fn value(
    slot: &ValueSlot,
    tools: &ToolSet,
    opts: &CompileOptions,
    (pass, schemas): (&mut KeywordPass, &mut HashMap<usize, Value>),
) -> Result<Extern, CompileError> {
    let i = slot.tool;
    let tool = &tools.tools()[i];
    let close = Rhs::lit(slot.close);
    let lark_name = slot.name.replace('-', "_");
    let lazy = |rules: &StringRules| Extern {
        suffix: Some(slot.close.to_owned()),
        ..Extern::new(slot.name, raw_text(slot, rules))
    };
    let (Some(at), Mode::Grammar) = (slot.at, opts.mode) else {
        return Ok(lazy(&StringRules::default()));
    };
    if let Some(spec) = tool.grammar.as_ref().filter(|s| !s.checked_after) {
        let g =
            lark::parse(&spec.definition).map_err(|e| CompileError::ToolGrammar(e.to_string()))?;
        let start = format!("gt{i}_start");
        let rules = g.prefixed(&format!("gt{i}_"));
        let defs = lark::emit_named(&rules, LarkDialect::Llguidance, &start);
        let body = Rhs::Seq(vec![Rhs::rule(start), close]);
        return Ok(Extern::new(slot.name, body).with_defs(defs));
    }
    let params = schemas
        .entry(i)
        .or_insert_with(|| {
            let (params, _) =
                crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
            grammar_schema(&tool.name, &params, pass)
        })
        .clone();
    // The value between optional newlines, then the closing text.
    let framed = |value: Rhs| {
        let newline = Rhs::lit("\n").opt();
        Rhs::Seq(vec![newline.clone(), value, newline, close.clone()])
    };
    let one_of = |values: &[&str]| framed(Rhs::Alt(values.iter().map(|v| Rhs::lit(*v)).collect()));
    let x = match value_spelling(&params, at) {
        ValueSpelling::Text(rules) => {
            let mut deferred = vec!["format"];
            if rules
                .pattern
                .as_deref()
                .is_some_and(|p| pattern_regex(p).is_none())
            {
                deferred.push("pattern");
            }
            for keyword in rules
                .keywords()
                .into_iter()
                .filter(|k| deferred.contains(k))
            {
                pass.defer(&tool.name, &rules.pointer, keyword);
            }
            lazy(&rules)
        }
        ValueSpelling::OneOf(values) => Extern::new(
            slot.name,
            one_of(&values.iter().map(String::as_str).collect::<Vec<_>>()),
        ),
        ValueSpelling::Bool => Extern::new(slot.name, one_of(&BOOL_SPELLINGS)),
        ValueSpelling::Json(schema) if opts.args_from_ir => {
            let sopts = SchemaOptions {
                tool: Some(tool.name.clone()),
                lenient: opts.lenient,
                closed_objects: true,
                ..SchemaOptions::default()
            };
            let (ir, _) = to_grammar(&schema, &sopts)?;
            let start = format!("{lark_name}_json");
            let rules = ir.prefixed(&format!("{lark_name}_"));
            let defs = lark::emit_named(&rules, LarkDialect::Llguidance, &start);
            Extern::new(slot.name, framed(Rhs::rule(start))).with_defs(defs)
        }
        ValueSpelling::Json(schema) => {
            let (start, defs) = json_slot(&lark_name, schema);
            Extern::new(slot.name, framed(start)).with_defs(defs)
        }
    };
    Ok(x)
}

/// The `%json` lexeme `{lark_name}_json` for `schema` in the template spelling: a reference
/// to it, and its definition.
fn json_slot(lark_name: &str, mut schema: Value) -> (Rhs, String) {
    if let Value::Object(map) = &mut schema {
        map.insert("x-guidance".into(), json_style());
    }
    let name = format!("{lark_name}_json");
    let defs = Rule::new(&name, Rhs::Json(schema)).to_string();
    (Rhs::rule(name), defs)
}

/// Parameter `key` of tool `i` as a Python literal: `True`/`False` for a boolean, a quoted
/// string of an enum, JSON for the rest (strings and numbers are spelled alike; nested
/// booleans and nulls stay JSON's).
pub(super) fn py_value(
    name: &str,
    i: usize,
    key: &str,
    tools: &ToolSet,
    opts: &CompileOptions,
    (pass, schemas): (&mut KeywordPass, &mut HashMap<usize, Value>),
) -> Result<Extern, CompileError> {
    let tool = &tools.tools()[i];
    let lark_name = name.replace('-', "_");
    let params = match opts.mode {
        Mode::Grammar => schemas
            .entry(i)
            .or_insert_with(|| {
                let (params, _) =
                    crate::validate::with_rules(&tool.rules, &close_objects(&tool.parameters));
                grammar_schema(&tool.name, &params, pass)
            })
            .clone(),
        Mode::Json | Mode::Prompt => Value::Null,
    };
    // A string as JSON writes it, or as Python's repr does.
    let quoted = |v: &str| {
        let json = Value::String(v.to_owned()).to_string();
        [Rhs::lit(json), Rhs::lit(pyjson::repr(v))]
    };
    let at = property_pointer(key);
    let spelling = value_spelling(&params, &at);
    let (mut alts, defs) = match &spelling {
        ValueSpelling::Bool => (vec![Rhs::lit("True"), Rhs::lit("False")], String::new()),
        ValueSpelling::OneOf(values) => (
            values.iter().flat_map(|v| quoted(v)).collect(),
            String::new(),
        ),
        ValueSpelling::Text(_) | ValueSpelling::Json(_) => {
            let (start, defs) = json_slot(&lark_name, property_schema(&params, &at));
            (vec![start], defs)
        }
    };
    // A string may also be Python's single-quoted literal (LFM2's template writes `repr`);
    // its keywords are then the validator's.
    if let ValueSpelling::Text(rules) = spelling {
        alts.push(Rhs::regex(SINGLE_QUOTED));
        for keyword in rules.keywords() {
            pass.defer(&tool.name, &rules.pointer, keyword);
        }
    }
    Ok(Extern::new(name, Rhs::Alt(alts)).with_defs(defs))
}

/// A Python string literal in single quotes, as a Lark regex (escapes allowed).
const SINGLE_QUOTED: &str = r"'([^'\\\n]|\\.)*'";

/// Raw text (the lexeme before its suffix): any text, without the family's next tags, and
/// within the string's pattern and length.
fn raw_text(slot: &ValueSlot, rules: &StringRules) -> Rhs {
    let mut parts = vec![Rhs::regex("(?s:.*)")];
    let words: Vec<String> = slot
        .never
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| regex_escape(w))
        .collect();
    if !words.is_empty() {
        parts.push(Rhs::regex(format!("(?s:.*)({})(?s:.*)", words.join("|"))).negated());
    }
    if let Some(p) = rules.pattern.as_deref().and_then(pattern_regex) {
        parts.push(Rhs::regex(p));
    }
    if rules.min_length.is_some() || rules.max_length.is_some() {
        let min = rules.min_length.unwrap_or(0);
        let max = rules.max_length.map(|m| m.to_string()).unwrap_or_default();
        parts.push(Rhs::regex(format!("(?s:.{{{min},{max}}})")));
    }
    Rhs::And(parts)
}

/// A JSON Schema `pattern` (a search, anchored only where it says so) as a whole-text
/// regex for a Lark lexeme; `None` when the pattern does not parse.
fn pattern_regex(pattern: &str) -> Option<String> {
    toolgram_grammar::regex::parse(pattern).ok()?;
    let (start, rest) = match pattern.strip_prefix('^') {
        Some(r) => ("", r),
        None => ("(?s:.*)", pattern),
    };
    let escaped_end = rest.ends_with("\\$") && !rest.ends_with("\\\\$");
    let (core, end) = match rest.strip_suffix('$') {
        Some(c) if !escaped_end => (c, ""),
        _ => (rest, "(?s:.*)"),
    };
    Some(format!("{start}(?:{core}){end}").replace('/', "\\/"))
}

/// `s` with the characters that are special in a Lark regex escaped (newlines as `\n`).
pub(super) fn regex_escape(s: &str) -> String {
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

    #[test]
    fn patterns_search_unless_anchored() {
        assert_eq!(pattern_regex("^[a-z]+$").as_deref(), Some("(?:[a-z]+)"));
        assert_eq!(pattern_regex("ab").as_deref(), Some("(?s:.*)(?:ab)(?s:.*)"));
        assert_eq!(pattern_regex("^a/b").as_deref(), Some("(?:a\\/b)(?s:.*)"));
        assert_eq!(
            pattern_regex("x\\$").as_deref(),
            Some("(?s:.*)(?:x\\$)(?s:.*)")
        );
        assert_eq!(pattern_regex("(unclosed"), None);
    }
}
