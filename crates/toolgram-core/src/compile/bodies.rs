//! One call's body in each spelling ([`CallBody`]), as IR with slots for what each target
//! spells its own way (`XmlElements` in [`super::xml`], `Harmony` in [`super::harmony`]):
//!
//! - `Json` — `{"name": NAME, "<args_key>": ARGS}`;
//! - `JsonNamedKey` — `{"NAME": ARGS}`;
//! - `OpenAiJson` — `{"id": ID, "type": "function", "function": {"name": NAME, "arguments":
//!   ARGS}}`;
//! - `JsonKeyed` — `{"<id_key>": ID, "<name_key>": NAME, "<args_key>": ARGS}`, compact or
//!   pretty-printed (keys on indented lines, the arguments in any spacing);
//! - `NameThenArgs` — `[ID<id_first>]NAME[:N][<id_marker>ID]<name_end>ARGS`, ARGS optionally
//!   fenced;
//! - `Tagged` — the name tag (the name twice where a header names the tool first:
//!   `name_again`), then one tag per parameter (declared order; required ones
//!   always, optional ones may be left out; other keys only where the schema allows them),
//!   each value a [`Slot::Value`] that a writer fills by the parameter's schema;
//! - `Pythonic` — `NAME(key=VALUE, …)`, declared parameters in schema order (optional ones
//!   may be left out), each value a [`Slot::PyValue`]: a Python literal for the schema;
//! - `NameThenArgs` without JSON arguments (Gemma 4) — `call:NAME{key:VALUE,…}`, declared
//!   parameters in sorted order, values in Gemma's spelling (`<|"|>`-quoted strings).
//!
//! Templates differ in the newlines between tags, so a newline is optional after every tag
//! and closing marker; attributes a template adds to an opening tag (`string="true"`,
//! `index="1"`) are the entry's declared names, each `NAME="WORD"`. This module must not
//! spell a target or compile an argument schema: of a schema it reads the property names,
//! `required`, whether other keys are allowed, and how each value is spelled
//! ([`value_spelling`]: type, `enum`/`const`, a string's keywords); the writers compile it.

use super::slots::{Slot, Target, Union, property_pointer};
use crate::define::arguments::close_objects;
use crate::define::tool::ToolSet;
use crate::syntax::{CallBody, CallSyntax, JSON_FENCE, pyjson};
use serde_json::{Map, Value};
use toolgram_grammar::{CharClass, Expr};

/// The body of one call to tool `i`.
pub(crate) fn call_body(
    u: &mut Union,
    tools: &ToolSet,
    i: usize,
    syntax: &CallSyntax,
    target: Target,
) -> Expr {
    let name = &tools.tools()[i].name;
    let quoted = pyjson::to_string(&Value::String(name.clone()), None);
    let args_spaced = |u: &mut Union, loose: bool| {
        u.slot(
            &format!("args-{i}"),
            Slot::Args {
                tool: i,
                loose,
                again: false,
            },
        )
    };
    let args = |u: &mut Union| args_spaced(u, false);
    match syntax.body {
        CallBody::Json => {
            let id = if syntax.id_key.is_empty() {
                Expr::Seq(Vec::new())
            } else {
                let id = Expr::repeat(class(ID_CHARS), 1, Some(64));
                let key = format!(", \"{}\": \"", syntax.id_key);
                Expr::opt(Expr::seq(vec![Expr::lit(key), id, Expr::lit("\"")]))
            };
            Expr::seq(vec![
                Expr::lit(format!("{{\"name\": {quoted}, \"{}\": ", syntax.args_key)),
                args(u),
                id,
                Expr::lit("}"),
            ])
        }
        CallBody::JsonKeyed { name_key, id_key } => {
            // Templates lay these out in a JSON array, one per line (Command R7B) or
            // pretty-printed with the arguments too (Command R+): a gap between keys is a
            // space or an indented new line, and the arguments take any spacing.
            let indent = || {
                Expr::seq(vec![
                    Expr::lit("\n"),
                    Expr::repeat(Expr::lit(" "), 0, Some(12)),
                ])
            };
            let gap = || Expr::alt(vec![Expr::lit(" "), indent()]);
            let mut items = vec![Expr::opt(indent()), Expr::lit("{"), Expr::opt(indent())];
            if !id_key.is_empty() {
                items.push(Expr::lit(format!("\"{id_key}\": \"")));
                items.push(Expr::repeat(class(ID_CHARS), 1, Some(64)));
                items.extend([Expr::lit("\","), gap()]);
            }
            items.extend([
                Expr::lit(format!("\"{name_key}\": {quoted},")),
                gap(),
                Expr::lit(format!("\"{}\": ", syntax.args_key)),
                args_spaced(u, true),
                Expr::opt(indent()),
                Expr::lit("}"),
                newline(),
            ]);
            Expr::seq(items)
        }
        CallBody::OpenAiJson => Expr::seq(vec![
            Expr::lit("{\"id\": \""),
            Expr::repeat(class(ID_CHARS), 1, Some(64)),
            Expr::lit(format!(
                "\", \"type\": \"function\", \"function\": {{\"name\": {quoted}, \"arguments\": "
            )),
            args(u),
            Expr::lit("}}"),
        ]),
        CallBody::JsonNamedKey => Expr::seq(vec![
            Expr::lit(format!("{{{quoted}: ")),
            args(u),
            Expr::lit("}"),
        ]),
        CallBody::NameThenArgs {
            name_prefix,
            id_first,
            name_end,
            id_marker,
            name_is_id,
            quote: "",
        } => {
            let mut items = vec![Expr::lit(name_prefix)];
            if !id_first.is_empty() {
                items.push(Expr::repeat(class(ID_CHARS), 1, Some(64)));
                items.push(Expr::lit(id_first));
            }
            items.push(Expr::lit(name.as_str()));
            if name_is_id {
                items.push(Expr::lit(":"));
                items.push(Expr::repeat(class(&[('0', '9')]), 1, Some(4)));
            }
            if !id_marker.is_empty() {
                let id = Expr::repeat(class(ID_CHARS), 1, Some(64));
                items.push(Expr::opt(Expr::seq(vec![Expr::lit(id_marker), id])));
            }
            items.push(Expr::lit(name_end));
            let a = args(u);
            let fenced = Expr::seq(vec![
                Expr::lit(JSON_FENCE.0),
                a.clone(),
                Expr::lit(JSON_FENCE.1),
            ]);
            items.push(Expr::alt(vec![a, fenced]));
            Expr::seq(items)
        }
        CallBody::NameThenArgs {
            name_prefix, quote, ..
        } => gemma(u, tools, i, name_prefix, quote),
        CallBody::Tagged { .. } => tagged(u, tools, i, syntax.body),
        CallBody::Pythonic => pythonic(u, tools, i),
        CallBody::XmlElements { .. } => super::xml::call(u, tools, i, syntax.body),
        CallBody::Harmony => super::harmony::call(u, tools, i, target),
    }
}

/// What follows a section opener: a newline in the tagged and XML families' templates.
pub(crate) fn after_section_open(syntax: &CallSyntax) -> Expr {
    match syntax.body {
        CallBody::Tagged { .. } | CallBody::XmlElements { .. }
            if !syntax.section_open.is_empty() =>
        {
            newline()
        }
        _ => Expr::Seq(Vec::new()),
    }
}

/// What precedes a section closer: a newline, then the syntax's glue, where it has one
/// (MiniMax M3 writes `</invoke>\n]<]minimax[>[</tool_call>`).
pub(crate) fn before_section_close(syntax: &CallSyntax) -> Expr {
    match syntax.glue() {
        glue if !glue.is_empty() && !syntax.section_close.is_empty() => {
            Expr::seq(vec![newline(), Expr::lit(glue)])
        }
        _ => Expr::Seq(Vec::new()),
    }
}

const ID_CHARS: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_'), ('-', '-')];

fn class(ranges: &[(char, char)]) -> Expr {
    Expr::Class(CharClass {
        negated: false,
        ranges: ranges.to_vec(),
    })
}

fn newline() -> Expr {
    Expr::opt(Expr::lit("\n"))
}

/// The attributes a template adds to an opening tag (`NAME="WORD"`, declared names only),
/// then the tag's end.
fn tag_rest(tag_end: &str, attributes: &[&str]) -> Expr {
    if tag_end.is_empty() {
        return Expr::Seq(Vec::new());
    }
    let word = Expr::repeat(class(ID_CHARS), 1, Some(16));
    let one = Expr::alt(
        attributes
            .iter()
            .map(|a| {
                Expr::seq(vec![
                    Expr::lit(format!(" {a}=\"")),
                    word.clone(),
                    Expr::lit("\""),
                ])
            })
            .collect(),
    );
    let attrs = if attributes.is_empty() {
        Expr::Seq(Vec::new())
    } else {
        Expr::repeat(one, 0, Some(attributes.len() as u32))
    };
    Expr::seq(vec![attrs, Expr::lit(tag_end)])
}

fn tagged(u: &mut Union, tools: &ToolSet, i: usize, body: CallBody) -> Expr {
    let CallBody::Tagged {
        name_open,
        key_open,
        key_close,
        tag_end,
        value_open,
        value_close,
        attributes,
        call_end,
        ..
    } = body
    else {
        return Expr::Seq(Vec::new());
    };
    let tool = &tools.tools()[i];
    let shape = Shape::of(&tool.parameters);
    let value_gap = || {
        if value_open.is_empty() {
            Expr::Seq(Vec::new())
        } else {
            Expr::seq(vec![newline(), Expr::lit(value_open)])
        }
    };
    let mut items = vec![
        newline(),
        Expr::lit(body.name_tag(&tool.name)),
        tag_rest(tag_end, attributes),
        newline(),
    ];
    for (k, key) in shape.names.iter().enumerate() {
        let value = u.slot(
            &format!("value-{i}-{k}"),
            Slot::Value {
                tool: i,
                at: Some(property_pointer(key)),
                close: value_close.to_owned(),
                never: never_in_values(&[value_close, key_open, name_open, call_end]),
            },
        );
        let param = Expr::seq(vec![
            Expr::lit(format!("{key_open}{key}{key_close}")),
            tag_rest(tag_end, attributes),
            value_gap(),
            value,
            newline(),
        ]);
        items.push(if shape.required.contains(key) {
            param
        } else {
            Expr::opt(param)
        });
    }
    if shape.open {
        let value = u.slot(
            "value-any",
            Slot::Value {
                tool: i,
                at: None,
                close: value_close.to_owned(),
                never: never_in_values(&[value_close, key_open, name_open, call_end]),
            },
        );
        let key = Expr::repeat(
            class(&[
                ('a', 'z'),
                ('A', 'Z'),
                ('0', '9'),
                ('_', '_'),
                ('-', '-'),
                ('.', '.'),
            ]),
            1,
            Some(64),
        );
        let param = Expr::seq(vec![
            Expr::lit(key_open),
            key,
            Expr::lit(key_close),
            tag_rest(tag_end, attributes),
            value_gap(),
            value,
            newline(),
        ]);
        items.push(Expr::repeat(param, 0, None));
    }
    if !call_end.is_empty() {
        items.push(Expr::lit(call_end));
        items.push(newline());
    }
    Expr::seq(items)
}

fn pythonic(u: &mut Union, tools: &ToolSet, i: usize) -> Expr {
    let tool = &tools.tools()[i];
    let shape = Shape::of(&tool.parameters);
    let params = listed(u, &format!("py-{i}"), &shape, ", ", |u, k, key| {
        let value = u.slot(
            &format!("pyvalue-{i}-{k}"),
            Slot::PyValue {
                tool: i,
                key: key.to_owned(),
            },
        );
        Expr::seq(vec![Expr::lit(format!("{key}=")), value])
    });
    Expr::seq(vec![
        Expr::lit(format!("{}(", tool.name)),
        params,
        Expr::lit(")"),
    ])
}

/// Gemma 4's call: `call:NAME{key:VALUE,…}`, parameters in sorted order as its template's
/// `dictsort` writes them, strings between `<|"|>` quotes (raw text, under the string's
/// keywords), enum strings quoted, booleans bare, numbers as JSON for their schema; objects
/// and arrays in Gemma's spelling (bare keys, quoted strings), their shape left to the
/// validator (listed in [`Union::deferred`]).
fn gemma(u: &mut Union, tools: &ToolSet, i: usize, name_prefix: &str, quote: &str) -> Expr {
    let tool = &tools.tools()[i];
    let mut shape = Shape::of(&tool.parameters);
    shape.names.sort();
    let params = if shape.names.is_empty() && shape.open {
        let pairs = Expr::seq(vec![
            Expr::rule("gemma-pair"),
            Expr::repeat(
                Expr::seq(vec![Expr::lit(","), Expr::rule("gemma-pair")]),
                0,
                None,
            ),
        ]);
        gemma_rules(u, i, quote);
        Expr::opt(pairs)
    } else {
        let closed = close_objects(&tool.parameters);
        listed(u, &format!("gemma-{i}"), &shape, ",", |u, k, key| {
            let value = match value_spelling(&closed, &property_pointer(key)) {
                ValueSpelling::Text(_) => Expr::seq(vec![
                    Expr::lit(quote),
                    u.slot(
                        &format!("gemma-{i}-{k}"),
                        Slot::Value {
                            tool: i,
                            at: Some(property_pointer(key)),
                            close: quote.to_owned(),
                            never: vec![quote.to_owned()],
                        },
                    ),
                ]),
                ValueSpelling::OneOf(values) => Expr::seq(vec![
                    Expr::lit(quote),
                    Expr::alt(values.into_iter().map(Expr::lit).collect()),
                    Expr::lit(quote),
                ]),
                ValueSpelling::Bool => Expr::alt(vec![Expr::lit("true"), Expr::lit("false")]),
                ValueSpelling::Json(schema) if is_number(&schema) => u.slot(
                    &format!("gemma-{i}-{k}"),
                    Slot::Value {
                        tool: i,
                        at: Some(property_pointer(key)),
                        close: String::new(),
                        never: Vec::new(),
                    },
                ),
                ValueSpelling::Json(_) => {
                    gemma_rules(u, i, quote);
                    u.defer(i, property_pointer(key), "type");
                    Expr::rule("gemma-value")
                }
            };
            Expr::seq(vec![Expr::lit(format!("{key}:")), value])
        })
    };
    Expr::seq(vec![
        Expr::lit(format!("{name_prefix}{}{{", tool.name)),
        params,
        Expr::lit("}"),
    ])
}

fn is_number(schema: &Value) -> bool {
    matches!(
        schema.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    )
}

/// Any value in Gemma 4's spelling, once per grammar: a quoted string, a JSON number,
/// `true`/`false`, an object with bare keys, an array.
fn gemma_rules(u: &mut Union, i: usize, quote: &str) {
    if u.grammar.rules.iter().any(|r| r.name == "gemma-value") {
        return;
    }
    let text = u.slot(
        "gemma-text",
        Slot::Value {
            tool: i,
            at: None,
            close: quote.to_owned(),
            never: vec![quote.to_owned()],
        },
    );
    let digits = || Expr::repeat(class(&[('0', '9')]), 1, None);
    let number = Expr::seq(vec![
        Expr::opt(Expr::lit("-")),
        digits(),
        Expr::opt(Expr::seq(vec![Expr::lit("."), digits()])),
        Expr::opt(Expr::seq(vec![
            class(&[('e', 'e'), ('E', 'E')]),
            Expr::opt(class(&[('+', '+'), ('-', '-')])),
            digits(),
        ])),
    ]);
    let list = |item: Expr| {
        Expr::opt(Expr::seq(vec![
            item.clone(),
            Expr::repeat(Expr::seq(vec![Expr::lit(","), item]), 0, None),
        ]))
    };
    let value = Expr::alt(vec![
        Expr::seq(vec![Expr::lit(quote), text]),
        number,
        Expr::lit("true"),
        Expr::lit("false"),
        Expr::seq(vec![
            Expr::lit("{"),
            list(Expr::rule("gemma-pair")),
            Expr::lit("}"),
        ]),
        Expr::seq(vec![
            Expr::lit("["),
            list(Expr::rule("gemma-value")),
            Expr::lit("]"),
        ]),
    ]);
    u.rule("gemma-value", value);
    let key = Expr::seq(vec![
        class(&[('a', 'z'), ('A', 'Z'), ('_', '_')]),
        Expr::repeat(class(ID_CHARS), 0, Some(63)),
    ]);
    u.rule(
        "gemma-pair",
        Expr::seq(vec![key, Expr::lit(":"), Expr::rule("gemma-value")]),
    );
}

/// Declared parameters in `shape`'s order (required ones always, optional ones may be left
/// out), `comma` only between those present, each written by `present(u, k, key)`. Two rules
/// per parameter, `PREFIX-k-first`/`-more`: parameters k.. after none / after some.
fn listed(
    u: &mut Union,
    prefix: &str,
    shape: &Shape,
    comma: &str,
    mut present: impl FnMut(&mut Union, usize, &str) -> Expr,
) -> Expr {
    let rule = |k: usize, first: bool| {
        let tail = if first { "first" } else { "more" };
        format!("{prefix}-{k}-{tail}")
    };
    let n = shape.names.len();
    for k in (0..=n).rev() {
        let item = shape.names.get(k).map(|key| present(u, k, key));
        for first in [true, false] {
            let expr = match (shape.names.get(k), &item) {
                (Some(key), Some(item)) => {
                    let mut here = if first {
                        Vec::new()
                    } else {
                        vec![Expr::lit(comma)]
                    };
                    here.extend([item.clone(), Expr::rule(rule(k + 1, false))]);
                    let here = Expr::seq(here);
                    if shape.required.contains(key) {
                        here
                    } else {
                        Expr::alt(vec![here, Expr::rule(rule(k + 1, first))])
                    }
                }
                _ => Expr::Seq(Vec::new()),
            };
            u.rule(&rule(k, first), expr);
        }
    }
    Expr::rule(rule(0, true))
}

/// What a raw value never contains: its own closing marker (the parser reads a value up to
/// the first one), the family's other tags, and the special-token-like head (`<|open|>`,
/// `<｜DSML｜`) or tag name (`</parameter`) of each — a value that runs into the next tag is a
/// runaway.
fn never_in_values(markers: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in markers.iter().filter(|m| !m.is_empty()) {
        for w in [Some(*m), special_head(m), tag_head(m)]
            .into_iter()
            .flatten()
        {
            if !out.iter().any(|o| o == w) {
                out.push(w.to_owned());
            }
        }
    }
    // A word that holds another is already excluded by it.
    let held = |w: &String| out.iter().any(|o| o != w && w.contains(o.as_str()));
    out.iter().filter(|w| !held(w)).cloned().collect()
}

/// The leading special-token-like piece of a marker: `<|open|>` of `<|open|>call tool="`,
/// `<｜DSML｜` of `<｜DSML｜invoke name="`.
fn special_head(marker: &str) -> Option<&str> {
    if !marker.starts_with('<') {
        return None;
    }
    if let Some(i) = marker.find("|>") {
        return Some(&marker[..i + 2]);
    }
    let mut bars = marker.match_indices('｜').map(|(i, b)| i + b.len());
    bars.nth(1).map(|end| &marker[..end])
}

/// An XML-like marker's tag name with its `<` or `</`: `</parameter` of `</parameter>`,
/// `<atem:parameter` of `<atem:parameter name="` — a value that writes it is starting the
/// next tag, however it goes on.
fn tag_head(marker: &str) -> Option<&str> {
    if !marker.starts_with('<') || special_head(marker).is_some() {
        return None;
    }
    let end = marker.find([' ', '=', '>'])?;
    Some(&marker[..end]).filter(|h| h.trim_start_matches(['<', '/']).len() > 1)
}

/// The parameters a tagged body may name.
struct Shape {
    /// Declared properties, in order.
    names: Vec<String>,
    required: Vec<String>,
    /// Keys the schema does not name are allowed (no `properties`, or not closed).
    open: bool,
}

impl Shape {
    fn of(parameters: &Value) -> Self {
        let closed = close_objects(parameters);
        let names = closed
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let required = closed
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let open = closed.get("additionalProperties") != Some(&Value::Bool(false));
        Self {
            names,
            required,
            open,
        }
    }
}

/// How a tagged boolean may be written.
pub(crate) const BOOL_SPELLINGS: [&str; 4] = ["true", "false", "True", "False"];

/// How a tagged parameter's value is written, from its schema (after the keyword pass).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ValueSpelling {
    /// Raw text up to the closing marker, under the string's keywords (which a writer
    /// enforces or leaves to the validator).
    Text(StringRules),
    /// One of these strings, raw.
    OneOf(Vec<String>),
    /// A boolean: `true`/`false`, or Python's `True`/`False` as templates that stringify
    /// values write them.
    Bool,
    /// JSON for this schema (the property's, with the root's definitions attached).
    Json(Value),
}

/// A raw string value's keywords.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct StringRules {
    /// The property's JSON pointer in the arguments schema.
    pub(crate) pointer: String,
    pub(crate) pattern: Option<String>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) format: bool,
}

impl StringRules {
    /// The keywords present, by name.
    pub(crate) fn keywords(&self) -> Vec<&'static str> {
        let present = [
            (self.pattern.is_some(), "pattern"),
            (self.min_length.is_some(), "minLength"),
            (self.max_length.is_some(), "maxLength"),
            (self.format, "format"),
        ];
        present
            .into_iter()
            .filter(|(p, _)| *p)
            .map(|(_, k)| k)
            .collect()
    }
}

/// The spelling of the value at JSON pointer `at` (a parameter, or a value inside one) in
/// the arguments schema `params`.
pub(crate) fn value_spelling(params: &Value, at: &str) -> ValueSpelling {
    let prop = params
        .pointer(at)
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let strings = |v: Option<&Value>| -> Option<Vec<String>> {
        match v? {
            Value::Array(items) => items
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect(),
            Value::String(s) => Some(vec![s.clone()]),
            _ => None,
        }
    };
    let type_ = prop.get("type").and_then(Value::as_str);
    if type_ == Some("boolean") {
        return ValueSpelling::Bool;
    }
    let is_string = type_ == Some("string");
    if let Some(values) = strings(prop.get("enum")).or_else(|| {
        prop.get("const")
            .and_then(Value::as_str)
            .map(|s| vec![s.to_owned()])
    }) {
        return ValueSpelling::OneOf(values);
    }
    if is_string && prop.get("$ref").is_none() {
        return ValueSpelling::Text(StringRules {
            pointer: at.to_owned(),
            pattern: prop
                .get("pattern")
                .and_then(Value::as_str)
                .map(str::to_owned),
            min_length: prop.get("minLength").and_then(Value::as_u64),
            max_length: prop.get("maxLength").and_then(Value::as_u64),
            format: prop.get("format").is_some(),
        });
    }
    ValueSpelling::Json(property_schema(params, at))
}

/// The schema at JSON pointer `at` in `params`, with the root's definitions attached so
/// its references resolve on their own.
pub(crate) fn property_schema(params: &Value, at: &str) -> Value {
    let mut schema = params
        .pointer(at)
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if let Value::Object(m) = &mut schema {
        for defs in toolgram_grammar::schema::keywords::definition_containers() {
            if let Some(d) = params.get(defs) {
                m.entry(defs).or_insert_with(|| d.clone());
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{CompileOptions, compile, ir::compile_ir};
    use crate::define::tool::ToolChoice;
    use crate::syntax::{REGISTRY, by_name};
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
                "city":{"type":"string","pattern":"^[A-Z]"},"days":{"type":"integer"},
                "unit":{"enum":["celsius","fahrenheit"]}},"required":["city"]}}},
                {"type":"function","function":{"name":"anything","parameters":{"type":"object"}}}]"#,
        )
        .expect("valid tools")
    }

    #[test]
    fn every_body_compiles_for_both_targets() {
        for s in REGISTRY {
            for choice in [ToolChoice::Auto, ToolChoice::Required] {
                let opts = CompileOptions::default();
                let g = compile(&tools(), &choice, true, s, &opts)
                    .unwrap_or_else(|e| panic!("{}: {e}", s.name));
                assert!(g.lark.contains("get_weather"), "{}", s.name);
                let ir = compile_ir(&tools(), &choice, true, s, &opts, false)
                    .unwrap_or_else(|e| panic!("{}: {e}", s.name));
                assert!(
                    ir.grammar.undefined().is_empty(),
                    "{}: {:?}",
                    s.name,
                    ir.grammar.undefined()
                );
                let text = toolgram_grammar::gbnf::emit(&ir.grammar);
                toolgram_grammar::gbnf::parse(&text).unwrap_or_else(|e| {
                    panic!("{}: our GBNF reader refuses it: {e}\n{text}", s.name)
                });
            }
        }
    }

    #[test]
    fn tagged_values_follow_the_parameter_schema() {
        let coder = by_name("qwen3-coder").expect("registered");
        let g = compile(
            &tools(),
            &ToolChoice::Required,
            false,
            coder,
            &CompileOptions::default(),
        )
        .expect("compiles");
        // A string is raw text up to the closing tag, never the next tag, under its pattern.
        let city = r#"value_0_0[suffix="</parameter>"]: /(?s:.*)/ & ~/(?s:.*)(<\/parameter|<parameter|<function|<\/function)(?s:.*)/ & /(?:[A-Z])(?s:.*)/"#;
        assert!(g.lark.contains(city), "{}", g.lark);
        assert!(g.deferred.is_empty(), "{:?}", g.deferred);
        // A number is JSON; an enum is one of its strings, raw.
        assert!(
            g.lark
                .contains(r#"value_0_1_json: %json {"type":"integer""#),
            "{}",
            g.lark
        );
        assert!(
            g.lark.contains(r#"("celsius" | "fahrenheit")"#),
            "{}",
            g.lark
        );
        // Required parameters are not optional; an open object takes any key.
        assert!(g.lark.contains("value_any[suffix="), "{}", g.lark);
    }

    #[test]
    fn raw_values_never_hold_the_family_s_tags() {
        assert_eq!(
            never_in_values(&[
                "<|close|>argument<|sep|>",
                "<|open|>argument key=\"",
                "",
                "<|close|>call<|sep|>"
            ]),
            ["<|close|>", "<|open|>"],
            "the markers' special heads, which every marker holds"
        );
        assert_eq!(
            never_in_values(&["</parameter>", "<parameter=", "<function=", "</function>"]),
            ["</parameter", "<parameter", "<function", "</function"],
            "the tags' names, however a tag goes on"
        );
        assert_eq!(special_head("</｜DSML｜parameter>"), Some("</｜DSML｜"));
        assert_eq!(special_head("</parameter>"), None);
        assert_eq!(tag_head("</parameter>"), Some("</parameter"));
        assert_eq!(tag_head("<atem:parameter name=\""), Some("<atem:parameter"));
        assert_eq!(tag_head("<|open|>call tool=\""), None);
        assert_eq!(tag_head("<>"), None);
    }

    #[test]
    fn value_spellings_come_from_the_schema() {
        let params = json!({"properties": {
            "s": {"type": "string", "maxLength": 3},
            "e": {"type": "string", "enum": ["a", "b"]},
            "c": {"const": "x"},
            "n": {"type": ["integer", "null"]},
            "r": {"$ref": "#/$defs/u"}},
            "$defs": {"u": {"type": "integer"}}});
        let ValueSpelling::Text(s) = value_spelling(&params, "/properties/s") else {
            panic!("a string is raw text")
        };
        assert_eq!(
            (s.pointer.as_str(), s.keywords()),
            ("/properties/s", vec!["maxLength"])
        );
        assert_eq!(
            value_spelling(&params, "/properties/e"),
            ValueSpelling::OneOf(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            value_spelling(&params, "/properties/c"),
            ValueSpelling::OneOf(vec!["x".into()])
        );
        let ValueSpelling::Json(n) = value_spelling(&params, "/properties/n") else {
            panic!("a union of types is JSON")
        };
        assert_eq!(n["type"], json!(["integer", "null"]));
        let ValueSpelling::Json(r) = value_spelling(&params, "/properties/r") else {
            panic!("a reference is JSON")
        };
        assert_eq!(r["$defs"]["u"], json!({"type": "integer"}));
    }
}
