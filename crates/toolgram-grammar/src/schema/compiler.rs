//! The schema walk: one subschema at a time to an IR expression, `$ref` targets and
//! helpers as named rules, keywords classified through [`super::keywords`].
//!
//! It must not drop a keyword silently: each is enforced, noted as deferred, ignored as an
//! annotation, or refused.

use super::keywords::{self, Class};
use super::merge::merge_into;
use super::numbers::{self, Sign};
use super::strings::{self, CHAR_RULE};
use super::{Note, NoteKind, SchemaError, SchemaOptions, WS_RULE};
use crate::ir::{Expr, Grammar, Rule};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Compile `schema` to a grammar whose start rule matches exactly the JSON texts the
/// grammar enforces, plus the notes (deferred keywords, warnings).
pub fn to_grammar(
    schema: &Value,
    opts: &SchemaOptions,
) -> Result<(Grammar, Vec<Note>), SchemaError> {
    Compiler::new(schema, opts).run()
}

pub(super) struct Compiler<'a> {
    root: &'a Value,
    opts: &'a SchemaOptions,
    rules: Vec<Rule>,
    refs: HashMap<String, String>,
    notes: Vec<Note>,
    depth: usize,
    /// `$ref`s whose targets are being merged inline, innermost last.
    inlining: Vec<String>,
    visited: usize,
}

type R<T> = Result<T, SchemaError>;

/// A numeric bound and whether it is exclusive.
type Bound = (f64, bool);

/// Most subschemas one compilation visits (inline merging can multiply them).
const BUDGET: usize = 20_000;

const TYPES: [&str; 6] = ["object", "array", "string", "number", "boolean", "null"];

fn ws() -> Expr {
    Expr::rule(WS_RULE)
}

impl<'a> Compiler<'a> {
    pub(super) fn new(root: &'a Value, opts: &'a SchemaOptions) -> Self {
        Self {
            root,
            opts,
            rules: Vec::new(),
            refs: HashMap::new(),
            notes: Vec::new(),
            depth: 0,
            inlining: Vec::new(),
            visited: 0,
        }
    }

    pub(super) fn run(mut self) -> R<(Grammar, Vec<Note>)> {
        let body = self.schema(self.root, "")?;
        self.rules.insert(
            0,
            Rule {
                name: "root".into(),
                expr: Expr::seq(vec![ws(), body, ws()]),
            },
        );
        let ws_body = Expr::opt(Expr::alt(vec![
            Expr::lit(" "),
            Expr::seq(vec![
                Expr::lit("\n"),
                Expr::repeat(Expr::class(&[(' ', ' '), ('\t', '\t')]), 0, Some(40)),
            ]),
        ]));
        self.define(WS_RULE, ws_body);
        self.define(CHAR_RULE, strings::char_rule());
        self.define(strings::ESCAPE_RULE, strings::escape_rule());
        self.define("string", {
            let chars = Expr::repeat(Expr::rule(CHAR_RULE), 0, None);
            Expr::seq(vec![Expr::lit("\""), chars, Expr::lit("\"")])
        });
        self.define("number", numbers::number(Sign::Any));
        self.define("value", self.any_value());
        let mut notes = self.notes;
        notes.dedup();
        // Only what the root reaches: a branch given up on may have left helper rules.
        let all = Grammar { rules: self.rules };
        let grammar = Grammar {
            rules: all.reachable().into_iter().cloned().collect(),
        };
        if let Some(name) = grammar.undefined().first() {
            let message = format!("internal: rule `{name}` referenced but not defined");
            return Err(SchemaError {
                tool: self.opts.tool.clone(),
                pointer: String::new(),
                keyword: "$ref".into(),
                message,
            });
        }
        Ok((grammar, notes))
    }

    fn define(&mut self, name: &str, expr: Expr) {
        if !self.rules.iter().any(|r| r.name == name) {
            self.rules.push(Rule {
                name: name.to_owned(),
                expr,
            });
        }
    }

    fn err(&self, pointer: &str, keyword: &str, message: impl Into<String>) -> SchemaError {
        SchemaError {
            tool: self.opts.tool.clone(),
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            message: message.into(),
        }
    }

    fn defer(&mut self, pointer: &str, keyword: &str) {
        self.notes.push(Note {
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            kind: NoteKind::Deferred,
        });
    }

    /// Any JSON value.
    fn any_value(&self) -> Expr {
        let item = Expr::rule("value");
        let sep = Expr::seq(vec![ws(), Expr::lit(","), ws()]);
        let kv = Expr::seq(vec![
            Expr::rule("string"),
            ws(),
            Expr::lit(":"),
            ws(),
            item.clone(),
        ]);
        let list = |x: Expr| {
            Expr::opt(Expr::seq(vec![
                x.clone(),
                Expr::repeat(Expr::seq(vec![sep.clone(), x]), 0, None),
                ws(),
            ]))
        };
        Expr::alt(vec![
            Expr::seq(vec![Expr::lit("{"), ws(), list(kv), Expr::lit("}")]),
            Expr::seq(vec![
                Expr::lit("["),
                ws(),
                list(item.clone()),
                Expr::lit("]"),
            ]),
            Expr::rule("string"),
            Expr::rule("number"),
            Expr::lit("true"),
            Expr::lit("false"),
            Expr::lit("null"),
        ])
    }

    fn schema(&mut self, s: &Value, ptr: &str) -> R<Expr> {
        self.depth += 1;
        self.visited += 1;
        let out = if self.visited > BUDGET {
            Err(self.err(ptr, "", format!("expands to more than {BUDGET} subschemas")))
        } else if self.depth > self.opts.max_depth {
            Err(self.err(
                ptr,
                "",
                format!("nested deeper than {} levels", self.opts.max_depth),
            ))
        } else {
            self.schema_inner(s, ptr)
        };
        self.depth -= 1;
        out
    }

    #[allow(
        clippy::too_many_lines,
        reason = "the dispatch over JSON-Schema keywords, one arm each"
    )]
    fn schema_inner(&mut self, s: &Value, ptr: &str) -> R<Expr> {
        let map = match s {
            Value::Bool(true) => return Ok(Expr::rule("value")),
            Value::Bool(false) => return Err(self.err(ptr, "false", "no value is valid here")),
            Value::Object(m) => m,
            _ => return Err(self.err(ptr, "", "a schema must be an object or a boolean")),
        };
        let normalized;
        let map = match super::openapi_numeric_format(map) {
            Some(n) => {
                normalized = n;
                &normalized
            }
            None => map,
        };
        self.classify(map, ptr)?;
        self.check_format(map, ptr)?;
        if let Some(r) = map.get("$ref") {
            return self.reference(map, r, ptr);
        }
        if let Some(Value::Array(members)) = map.get("allOf") {
            // A member that is only a `$ref` to a schema with branches is seen through, so
            // its branches are distributed too (each reference inlined once on this path).
            let mut seen_through = Vec::new();
            let members_seen: Vec<Value> = members
                .iter()
                .map(|m| match m.get("$ref").and_then(Value::as_str) {
                    Some(r)
                        if m.as_object().is_some_and(|o| o.len() == 1)
                            && !self.inlining.iter().any(|i| i == r) =>
                    {
                        match self.target(r, ptr) {
                            Ok(t) if t.get("anyOf").is_some() || t.get("oneOf").is_some() => {
                                seen_through.push(r.to_owned());
                                t.clone()
                            }
                            _ => m.clone(),
                        }
                    }
                    _ => m.clone(),
                })
                .collect();
            if let Some(distributed) = distribute_branches(map, &members_seen) {
                if distributed.1 {
                    self.defer(ptr, "oneOf");
                }
                let mark = self.inlining.len();
                self.inlining.extend(seen_through);
                let out = self.schema(&distributed.0, ptr);
                self.inlining.truncate(mark);
                return out;
            }
            // Merged in keyword order, so properties come out in the order llguidance (and
            // the schema's text) gives them: members' keys where `allOf` stands.
            let mut merged = Map::new();
            let mark = self.inlining.len();
            for (k, v) in map {
                if k != "allOf" {
                    merge_into(&mut merged, &Map::from_iter([(k.clone(), v.clone())]));
                    continue;
                }
                for (i, m) in members.iter().enumerate() {
                    let here = format!("{ptr}/allOf/{i}");
                    for part in self.flatten_member(m, &here, 0)? {
                        if !merge_into(&mut merged, &part) {
                            self.defer(ptr, "allOf");
                        }
                    }
                }
            }
            let out = self.schema(&Value::Object(merged), ptr);
            self.inlining.truncate(mark);
            return out;
        }
        for key in keywords::alternatives() {
            if let Some(Value::Array(branches)) = map.get(key) {
                if key == "oneOf" && branches.len() > 1 {
                    self.defer(ptr, "oneOf");
                }
                let mut base = map.clone();
                base.shift_remove(key);
                let mut alts = Vec::new();
                let plain = base.keys().all(|k| {
                    matches!(
                        keywords::lookup(k).map(|r| r.ours),
                        Some(Class::Annotation) | None
                    ) || k == "$defs"
                        || k == "definitions"
                });
                for (i, b) in branches.iter().enumerate() {
                    let here = format!("{ptr}/{key}/{i}");
                    let mark = self.inlining.len();
                    if plain {
                        let compiled = self.schema(b, &here);
                        self.inlining.truncate(mark);
                        push_branch(&mut alts, compiled)?;
                        continue;
                    }
                    // The branch joins the schema where the keyword stands; a branch with
                    // branches of its own is flattened first, so each of its alternatives
                    // joins whole (llguidance compiles the branch before intersecting).
                    let resolved = self.resolve_member(b, &here)?;
                    let pieces = match expand_nested(&resolved, MAX_DISTRIBUTED) {
                        Some((pieces, one_of)) => {
                            if one_of {
                                self.defer(&here, "oneOf");
                            }
                            pieces
                        }
                        None => vec![resolved],
                    };
                    for resolved in pieces {
                        let mut merged = Map::new();
                        let mut exact = true;
                        for (k, v) in map {
                            if k == key {
                                exact &= merge_into(&mut merged, &resolved);
                                continue;
                            }
                            // As llguidance does, `additionalProperties` brings the keys of
                            // `properties` with it (property order follows).
                            if k == "additionalProperties"
                                && let Some(props) = map.get("properties")
                            {
                                let own =
                                    Map::from_iter([("properties".to_owned(), props.clone())]);
                                merge_into(&mut merged, &own);
                            }
                            merge_into(&mut merged, &Map::from_iter([(k.clone(), v.clone())]));
                        }
                        if !exact {
                            self.defer(&here, key);
                        }
                        let compiled = self.schema(&Value::Object(merged), &here);
                        push_branch(&mut alts, compiled)?;
                    }
                    self.inlining.truncate(mark);
                }
                if alts.is_empty() {
                    return Err(self.err(ptr, key, "unsatisfiable: no branch admits a value"));
                }
                return Ok(Expr::alt(alts));
            }
        }
        if let Some(c) = map.get("const") {
            return Ok(self.literal(c));
        }
        if let Some(e) = map.get("enum") {
            let Value::Array(values) = e else {
                return Err(self.err(ptr, "enum", "must be an array"));
            };
            let types = self.types(map, ptr)?;
            let alts: Vec<Expr> = values
                .iter()
                .filter(|v| types.iter().any(|t| type_admits(t, v)))
                .map(|v| self.literal(v))
                .collect();
            if alts.is_empty() {
                return Err(self.err(ptr, "enum", "unsatisfiable: no value has the allowed type"));
            }
            return Ok(Expr::alt(alts));
        }
        let types = self.types(map, ptr)?;
        if types.len() == TYPES.len() && !map.keys().any(|k| typed_keyword(k)) {
            return Ok(Expr::rule("value"));
        }
        let mut alts = Vec::new();
        for t in types {
            let e = match t {
                "object" => self.object(map, ptr)?,
                "array" => self.array(map, ptr)?,
                "string" => self.string(map, ptr)?,
                "integer" => self.integer(map, ptr)?,
                "number" => self.number(map, ptr),
                "boolean" => Expr::alt(vec![Expr::lit("true"), Expr::lit("false")]),
                _ => Expr::lit("null"),
            };
            alts.push(e);
        }
        Ok(Expr::alt(alts))
    }

    /// Checks every keyword against the table: notes deferred ones, refuses unknown ones.
    fn classify(&mut self, map: &Map<String, Value>, ptr: &str) -> R<()> {
        for k in map.keys() {
            match keywords::lookup(k).map(|r| r.ours) {
                Some(Class::AfterParse) => self.defer(ptr, k),
                Some(Class::Grammar | Class::Annotation) => {}
                None if self.opts.lenient => self.notes.push(Note {
                    pointer: ptr.to_owned(),
                    keyword: k.clone(),
                    kind: NoteKind::Warning("unknown keyword ignored".into()),
                }),
                None => return Err(self.err(ptr, k, "unsupported keyword")),
            }
        }
        Ok(())
    }

    /// A `format` neither the grammar nor the validator knows is refused by name (a warning
    /// under `lenient`), whatever the type: never silently ignored.
    fn check_format(&mut self, map: &Map<String, Value>, ptr: &str) -> R<()> {
        let Some(f) = map.get("format").and_then(Value::as_str) else {
            return Ok(());
        };
        if strings::format(f).is_some() || super::keywords::VALIDATOR_FORMATS.contains(&f) {
            return Ok(());
        }
        if self.opts.lenient {
            self.notes.push(Note {
                pointer: ptr.to_owned(),
                keyword: "format".into(),
                kind: NoteKind::Warning(format!("unknown format `{f}` ignored")),
            });
            return Ok(());
        }
        Err(self.err(ptr, "format", format!("unknown format `{f}`")))
    }

    fn resolve_member(&mut self, m: &Value, ptr: &str) -> R<Map<String, Value>> {
        match m {
            Value::Bool(true) => Ok(Map::new()),
            Value::Object(o) => match o.get("$ref") {
                Some(Value::String(r)) if o.len() == 1 && !self.inlining.contains(r) => {
                    let target = self.target(r, ptr)?;
                    // Stays on the stack until the caller has compiled the merged schema.
                    self.inlining.push(r.clone());
                    self.resolve_member(target, ptr)
                }
                _ => Ok(o.clone()),
            },
            _ => Err(self.err(ptr, "allOf", "unsatisfiable member")),
        }
    }

    /// An `allOf` member, resolved, as the parts it merges in keyword order: a member with
    /// its own `allOf` gives its keys before it, its members (flattened the same way), then
    /// its keys after it — llguidance's order for nested `allOf`.
    fn flatten_member(&mut self, m: &Value, ptr: &str, depth: usize) -> R<Vec<Map<String, Value>>> {
        let resolved = self.resolve_member(m, ptr)?;
        let Some(Value::Array(inner)) = resolved.get("allOf") else {
            return Ok(vec![resolved]);
        };
        if depth > 8 {
            return Ok(vec![resolved]);
        }
        let inner = inner.clone();
        let mut parts = Vec::new();
        let mut pending = Map::new();
        for (k, v) in &resolved {
            if k != "allOf" {
                pending.insert(k.clone(), v.clone());
                continue;
            }
            if !pending.is_empty() {
                parts.push(std::mem::take(&mut pending));
            }
            for (i, sub) in inner.iter().enumerate() {
                parts.extend(self.flatten_member(sub, &format!("{ptr}/allOf/{i}"), depth + 1)?);
            }
        }
        if !pending.is_empty() {
            parts.push(pending);
        }
        Ok(parts)
    }

    /// Whether the root declares a draft (04, 06, 07 or older) in which `$ref` overrides
    /// the keywords beside it.
    fn legacy_ref(&self) -> bool {
        let declared = self
            .root
            .get("$schema")
            .and_then(Value::as_str)
            .unwrap_or("");
        ["draft-03", "draft-04", "draft-06", "draft-07"]
            .iter()
            .any(|d| declared.contains(d))
    }

    fn target(&self, r: &str, ptr: &str) -> R<&'a Value> {
        if !r.starts_with('#') {
            return Err(self.err(ptr, "$ref", format!("only local references: `{r}`")));
        }
        super::refs::target(self.root, r)
            .ok_or_else(|| self.err(ptr, "$ref", format!("`{r}` points nowhere")))
    }

    fn reference(&mut self, map: &Map<String, Value>, r: &Value, ptr: &str) -> R<Expr> {
        let Value::String(r) = r else {
            return Err(self.err(ptr, "$ref", "must be a string"));
        };
        let target = self.target(r, ptr)?;
        // Up to draft-07 the keywords beside `$ref` are ignored by definition; from 2019-09
        // on they apply with it (as `allOf`).
        let legacy = self.legacy_ref();
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|_| !legacy)
            .filter(|(k, _)| {
                k.as_str() != "$ref"
                    && !matches!(
                        keywords::lookup(k).map(|x| x.ours),
                        Some(Class::Annotation) | None
                    )
                    && k.as_str() != "$defs"
                    && k.as_str() != "definitions"
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !siblings.is_empty() && self.inlining.contains(r) {
            // Merging a reference inside its own expansion would unroll a recursive schema:
            // keep the reference as a rule and let the validator enforce the siblings.
            for k in siblings.keys() {
                self.defer(ptr, k);
            }
        } else if !siblings.is_empty() {
            // Merged in keyword order, as for `allOf`: the target's keys where `$ref` stands,
            // so properties come out in the order llguidance gives them.
            let mut merged = Map::new();
            let mut exact = true;
            for (k, v) in map {
                if k == "$ref" {
                    if let Value::Object(t) = target {
                        exact &= merge_into(&mut merged, t);
                    }
                } else if siblings.contains_key(k) {
                    exact &= merge_into(&mut merged, &Map::from_iter([(k.clone(), v.clone())]));
                }
            }
            if !exact {
                self.defer(ptr, "$ref");
            }
            self.inlining.push(r.clone());
            let out = self.schema(&Value::Object(merged), ptr);
            self.inlining.pop();
            return out;
        }
        if let Some(name) = self.refs.get(r) {
            return Ok(Expr::rule(name.clone()));
        }
        let name = format!("ref{}", self.refs.len());
        self.refs.insert(r.clone(), name.clone());
        let expr = match self.schema(target, &format!("{ptr}/$ref")) {
            Ok(e) => e,
            Err(e) => {
                // Forget the name so that no later use refers to a rule that never came.
                self.refs.remove(r);
                return Err(e);
            }
        };
        self.rules.push(Rule {
            name: name.clone(),
            expr,
        });
        Ok(Expr::rule(name))
    }

    fn types(&self, map: &Map<String, Value>, ptr: &str) -> R<Vec<&'static str>> {
        let named = |t: &str| -> R<&'static str> {
            match t {
                "integer" => Ok("integer"),
                t => TYPES
                    .iter()
                    .find(|x| **x == t)
                    .copied()
                    .ok_or_else(|| self.err(ptr, "type", format!("unknown type `{t}`"))),
            }
        };
        let mut out = match map.get("type") {
            None => TYPES.to_vec(),
            Some(Value::String(t)) => vec![named(t)?],
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| named(t.as_str().unwrap_or("")))
                .collect::<R<_>>()?,
            Some(_) => return Err(self.err(ptr, "type", "must be a string or a list")),
        };
        if out.contains(&"number") {
            out.retain(|t| *t != "integer");
        }
        out.dedup();
        if out.is_empty() {
            return Err(self.err(ptr, "type", "unsatisfiable: no type left"));
        }
        Ok(out)
    }

    /// The JSON text of `v` with free whitespace between tokens.
    fn literal(&self, v: &Value) -> Expr {
        match v {
            Value::Object(m) => {
                let mut items = vec![Expr::lit("{"), ws()];
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        items.extend([ws(), Expr::lit(","), ws()]);
                    }
                    items.extend([
                        Expr::lit(serde_json::to_string(k).unwrap_or_default()),
                        ws(),
                        Expr::lit(":"),
                        ws(),
                        self.literal(x),
                    ]);
                }
                items.extend([ws(), Expr::lit("}")]);
                Expr::seq(items)
            }
            Value::Array(a) => {
                let mut items = vec![Expr::lit("["), ws()];
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        items.extend([ws(), Expr::lit(","), ws()]);
                    }
                    items.push(self.literal(x));
                }
                items.extend([ws(), Expr::lit("]")]);
                Expr::seq(items)
            }
            // JSON Schema compares numbers by value: an integral `2.0` is also `2`, the form
            // the number policy writes.
            Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Expr::alt(vec![
                    Expr::lit((f as i64).to_string()),
                    Expr::lit(n.to_string()),
                ]),
                _ => Expr::lit(n.to_string()),
            },
            other => Expr::lit(other.to_string()),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, ptr: &str) -> R<Expr> {
        let empty = Map::new();
        let props = match map.get("properties") {
            Some(Value::Object(p)) => p,
            _ => &empty,
        };
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let pattern_props = map.contains_key("patternProperties");
        let additional = match map.get("additionalProperties") {
            _ if pattern_props => {
                if map.contains_key("additionalProperties") {
                    self.defer(ptr, "additionalProperties");
                }
                Some(Value::Bool(true))
            }
            Some(Value::Bool(false)) => None,
            Some(v) => Some(v.clone()),
            None if self.opts.closed_objects
                && !props.is_empty()
                && !map.contains_key("unevaluatedProperties") =>
            {
                None
            }
            None => Some(Value::Bool(true)),
        };
        // (key, value grammar, required)
        let mut items: Vec<(Expr, bool)> = Vec::new();
        for (name, sub) in props {
            let here = format!("{ptr}/properties/{}", super::refs::escape_token(name));
            let is_req = required.contains(&name.as_str());
            if *sub == Value::Bool(false) {
                if is_req {
                    return Err(self.err(
                        &here,
                        "required",
                        "unsatisfiable: a required property is `false`",
                    ));
                }
                continue;
            }
            let value = self.schema(sub, &here)?;
            // Hoisted: a member appears in several alternatives, nesting must not multiply it.
            let kv = self.hoist_if_big(self.kv(name, value));
            items.push((kv, is_req));
        }
        for name in &required {
            if props.contains_key(*name) {
                continue;
            }
            let Some(add) = &additional else {
                return Err(self.err(
                    ptr,
                    "required",
                    format!("unsatisfiable: `{name}` is required but not allowed"),
                ));
            };
            let value = self.schema(add, &format!("{ptr}/additionalProperties"))?;
            let kv = self.hoist_if_big(self.kv(name, value));
            items.push((kv, true));
        }
        let extra = match &additional {
            None => None,
            Some(add) => {
                let value = self.schema(add, &format!("{ptr}/additionalProperties"))?;
                let mut known: Vec<&str> = props.keys().map(String::as_str).collect();
                known.extend(required.iter().filter(|r| !props.contains_key(**r)));
                let key = if known.is_empty() || pattern_props {
                    Expr::rule("string")
                } else {
                    strings::key_except(&known)
                };
                Some(Expr::seq(vec![key, ws(), Expr::lit(":"), ws(), value]))
            }
        };
        let body = self.members(items, extra);
        Ok(Expr::seq(vec![
            Expr::lit("{"),
            ws(),
            body,
            ws(),
            Expr::lit("}"),
        ]))
    }

    fn kv(&self, name: &str, value: Expr) -> Expr {
        Expr::seq(vec![
            Expr::lit(serde_json::to_string(name).unwrap_or_default()),
            ws(),
            Expr::lit(":"),
            ws(),
            value,
        ])
    }

    /// Members in order, optional ones skippable, extra members (if any) after them.
    fn members(&mut self, items: Vec<(Expr, bool)>, extra: Option<Expr>) -> Expr {
        let sep = || Expr::seq(vec![ws(), Expr::lit(","), ws()]);
        let n = items.len();
        // after[i]: members i.. when something precedes (each needs a separator).
        let mut after: Vec<Expr> = vec![Expr::Seq(Vec::new()); n + 1];
        after[n] = match &extra {
            Some(x) => Expr::repeat(Expr::seq(vec![sep(), x.clone()]), 0, None),
            None => Expr::Seq(Vec::new()),
        };
        for i in (0..n).rev() {
            let part = Expr::seq(vec![sep(), items[i].0.clone()]);
            let part = if items[i].1 { part } else { Expr::opt(part) };
            let rest = self.hoist_if_big(after[i + 1].clone());
            after[i] = Expr::seq(vec![part, rest]);
        }
        // first[i]: members i.. when nothing precedes.
        let mut first = match &extra {
            Some(x) => Expr::opt(Expr::seq(vec![x.clone(), after[n].clone()])),
            None => Expr::Seq(Vec::new()),
        };
        for i in (0..n).rev() {
            let rest = self.hoist_if_big(after[i + 1].clone());
            let with = Expr::seq(vec![items[i].0.clone(), rest]);
            first = if items[i].1 {
                with
            } else {
                let skip = self.hoist_if_big(first);
                Expr::alt(vec![with, skip])
            };
        }
        first
    }

    fn hoist_if_big(&mut self, e: Expr) -> Expr {
        let small = match &e {
            Expr::Seq(v) => {
                v.len() <= 2 && v.iter().all(|x| !matches!(x, Expr::Seq(_) | Expr::Alt(_)))
            }
            Expr::Alt(_) => false,
            Expr::Repeat { expr, .. } => !matches!(**expr, Expr::Seq(_) | Expr::Alt(_)),
            _ => true,
        };
        if small {
            return e;
        }
        let name = format!("part{}", self.rules.len());
        self.rules.push(Rule {
            name: name.clone(),
            expr: e,
        });
        Expr::rule(name)
    }

    fn count(&self, map: &Map<String, Value>, key: &str, ptr: &str) -> R<Option<u32>> {
        match map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| *x >= 0.0 && x.fract() == 0.0)
                .map(|x| Some(x.min(f64::from(u32::MAX)) as u32))
                .ok_or_else(|| self.err(ptr, key, "must be a non-negative integer")),
        }
    }

    fn array(&mut self, map: &Map<String, Value>, ptr: &str) -> R<Expr> {
        let (prefix, tail, tail_key): (Vec<Value>, Option<Value>, &str) =
            match (map.get("prefixItems"), map.get("items")) {
                (Some(Value::Array(p)), items) => (p.clone(), items.cloned(), "items"),
                (None, Some(Value::Array(p))) => (
                    p.clone(),
                    map.get("additionalItems").cloned(),
                    "additionalItems",
                ),
                (_, items) => (Vec::new(), items.cloned(), "items"),
            };
        let min = self.count(map, "minItems", ptr)?.unwrap_or(0);
        let mut max = self.count(map, "maxItems", ptr)?;
        let k = u32::try_from(prefix.len()).unwrap_or(u32::MAX);
        let tail = match tail {
            Some(Value::Bool(false)) => {
                max = Some(max.map_or(k, |m| m.min(k)));
                None
            }
            Some(t) => {
                let e = self.schema(&t, &format!("{ptr}/{tail_key}"))?;
                Some(self.hoist_if_big(e))
            }
            None => Some(Expr::rule("value")),
        };
        if max.is_some_and(|m| m < min) {
            return Err(self.err(ptr, "minItems", "unsatisfiable: minItems > maxItems"));
        }
        let mut elems = Vec::new();
        for (i, p) in prefix.iter().enumerate() {
            elems.push(self.schema(p, &format!("{ptr}/prefixItems/{i}"))?);
        }
        let sep = || Expr::seq(vec![ws(), Expr::lit(","), ws()]);
        let limit = max.map_or(k, |m| m.min(k)) as usize;
        // Elements after the prefix.
        // Elements after the prefix: from `min - k` to `max - k` of them (the first element
        // carries no separator when there is no prefix).
        let first = u32::from(k == 0);
        let mut rest = match (&tail, max) {
            (None, _) => Expr::Seq(Vec::new()),
            (_, Some(m)) if m <= k => Expr::Seq(Vec::new()),
            (Some(t), m) => Expr::repeat(
                Expr::seq(vec![sep(), t.clone()]),
                min.saturating_sub(k + first),
                m.map(|m| m - k - first),
            ),
        };
        if k == 0 {
            let Some(t) = tail else {
                return Ok(Expr::seq(vec![Expr::lit("["), ws(), Expr::lit("]")]));
            };
            if max == Some(0) {
                return Ok(Expr::seq(vec![Expr::lit("["), ws(), Expr::lit("]")]));
            }
            let body = Expr::seq(vec![t, rest]);
            let body = if min == 0 { Expr::opt(body) } else { body };
            return Ok(Expr::seq(vec![
                Expr::lit("["),
                ws(),
                body,
                ws(),
                Expr::lit("]"),
            ]));
        }
        for i in (1..limit).rev() {
            let part = Expr::seq(vec![sep(), elems[i].clone(), rest]);
            rest = if (i as u32) < min {
                part
            } else {
                Expr::opt(part)
            };
        }
        let body = match elems.first() {
            Some(e0) if limit > 0 => {
                let b = Expr::seq(vec![e0.clone(), rest]);
                if min == 0 { Expr::opt(b) } else { b }
            }
            _ => Expr::Seq(Vec::new()),
        };
        Ok(Expr::seq(vec![
            Expr::lit("["),
            ws(),
            body,
            ws(),
            Expr::lit("]"),
        ]))
    }

    fn string(&mut self, map: &Map<String, Value>, ptr: &str) -> R<Expr> {
        let min = self.count(map, "minLength", ptr)?;
        let max = self.count(map, "maxLength", ptr)?;
        let quoted = |e: Expr| Expr::seq(vec![Expr::lit("\""), e, Expr::lit("\"")]);
        let special = match (map.get("format"), map.get("pattern")) {
            (_, Some(Value::String(p))) => match strings::pattern(p) {
                Ok(e) => Some(e),
                Err(_) => {
                    self.defer(ptr, "pattern");
                    None
                }
            },
            (Some(Value::String(f)), _) => match strings::format(f) {
                Some((re, exact)) => {
                    if !exact {
                        self.defer(ptr, "format");
                    }
                    crate::regex::to_expr(re).ok().map(strings::jsonize)
                }
                // Formats the validator knows are checked after parse; any other is
                // refused by name (a warning under `lenient`), never silently ignored.
                // Validator formats are checked after parse; unknown ones were refused (or
                // listed) by `check_format`.
                None => {
                    if super::keywords::VALIDATOR_FORMATS.contains(&f.as_str()) {
                        self.defer(ptr, "format");
                    }
                    None
                }
            },
            _ => None,
        };
        if map.contains_key("pattern") && map.contains_key("format") {
            self.defer(ptr, "format");
        }
        if let Some(e) = special {
            for k in ["minLength", "maxLength"] {
                if map.contains_key(k) {
                    self.defer(ptr, k);
                }
            }
            return Ok(quoted(e));
        }
        if max.is_some_and(|m| m < min.unwrap_or(0)) {
            return Err(self.err(ptr, "minLength", "unsatisfiable: minLength > maxLength"));
        }
        if min.is_none() && max.is_none() {
            return Ok(Expr::rule("string"));
        }
        Ok(quoted(Expr::repeat(
            Expr::rule(CHAR_RULE),
            min.unwrap_or(0),
            max,
        )))
    }

    /// Lower and upper bounds, each with whether it is exclusive.
    fn bounds(&self, map: &Map<String, Value>) -> (Option<Bound>, Option<Bound>) {
        let get = |k: &str| map.get(k).and_then(Value::as_f64);
        let flag = |k: &str| map.get(k).and_then(Value::as_bool).unwrap_or(false);
        let lo = match (get("minimum"), get("exclusiveMinimum")) {
            (Some(m), Some(x)) if x >= m => Some((x, true)),
            (Some(m), _) => Some((m, flag("exclusiveMinimum"))),
            (None, Some(x)) => Some((x, true)),
            (None, None) => None,
        };
        let hi = match (get("maximum"), get("exclusiveMaximum")) {
            (Some(m), Some(x)) if x <= m => Some((x, true)),
            (Some(m), _) => Some((m, flag("exclusiveMaximum"))),
            (None, Some(x)) => Some((x, true)),
            (None, None) => None,
        };
        (lo, hi)
    }

    fn integer(&mut self, map: &Map<String, Value>, ptr: &str) -> R<Expr> {
        let (lo, hi) = self.bounds(map);
        let clamp = |x: f64| x.clamp(-1e21, 1e21);
        let lo = lo.map(|(x, ex)| {
            let x = clamp(x);
            let c = x.ceil() as i128;
            if ex && x.fract() == 0.0 { c + 1 } else { c }
        });
        let hi = hi.map(|(x, ex)| {
            let x = clamp(x);
            let f = x.floor() as i128;
            if ex && x.fract() == 0.0 { f - 1 } else { f }
        });
        numbers::int_range(lo, hi).ok_or_else(|| {
            self.err(
                ptr,
                "minimum",
                format!(
                    "unsatisfiable: no integer of at most {} digits in range",
                    numbers::MAX_DIGITS
                ),
            )
        })
    }

    fn number(&mut self, map: &Map<String, Value>, ptr: &str) -> Expr {
        let (lo, hi) = self.bounds(map);
        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if map.contains_key(k) {
                self.defer(ptr, k);
            }
        }
        let sign = match (lo, hi) {
            (Some((x, _)), _) if x >= 0.0 => Sign::NonNegative,
            (_, Some((x, true))) if x <= 0.0 => Sign::Negative,
            (_, Some((x, false))) if x < 0.0 => Sign::Negative,
            _ => Sign::Any,
        };
        numbers::number(sign)
    }
}

/// Whether `k` is a keyword the grammar enforces on some types only (an untyped schema with
/// one is not "any value"; one the validator enforces after parsing does not count).
fn typed_keyword(k: &str) -> bool {
    keywords::lookup(k).is_some_and(|r| r.ours == Class::Grammar && !r.on.is_empty())
}

fn type_admits(t: &str, v: &Value) -> bool {
    match (t, v) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("number", Value::Number(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null) => true,
        ("integer", Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// Most alternatives [`distribute_branches`] may make.
const MAX_DISTRIBUTED: usize = 16;

/// `allOf: [A, {anyOf: [B1, B2]}, C]` → `anyOf: [allOf: [A, B1, C], allOf: [A, B2, C]]` when
/// the member with branches is not the last: merged in place, each branch's properties then
/// come before C's, the order llguidance gives (and the schema's text reads). `None` when
/// there is nothing to distribute; the flag says the branches were `oneOf` (checked after
/// parse for exclusivity).
fn distribute_branches(map: &Map<String, Value>, members: &[Value]) -> Option<(Value, bool)> {
    let last = members.len().checked_sub(1)?;
    let (j, key, branches) = members[..last].iter().enumerate().find_map(|(j, m)| {
        let o = m.as_object()?;
        keywords::alternatives().find_map(|key| match o.get(key) {
            Some(Value::Array(b)) if !o.contains_key("allOf") => Some((j, key, b)),
            _ => None,
        })
    })?;
    if branches.is_empty() || branches.len() > MAX_DISTRIBUTED {
        return None;
    }
    let member = members[j].as_object()?;
    let mut alternatives = Vec::new();
    for branch in branches {
        // The branch's keys where the keyword stands; a branch that is not a plain object
        // (a `$ref`, a boolean) or that clashes with the member is not distributed.
        let in_place = merge_in_place(member, key, branch)?;
        alternatives.push({
            let mut list = members.to_vec();
            list[j] = Value::Object(in_place);
            let outer: Map<String, Value> = map
                .iter()
                .map(|(k, v)| {
                    if k == "allOf" {
                        (k.clone(), Value::Array(list.clone()))
                    } else {
                        (k.clone(), v.clone())
                    }
                })
                .collect();
            Value::Object(outer)
        });
    }
    Some((
        Value::Object(Map::from_iter([(
            "anyOf".to_owned(),
            Value::Array(alternatives),
        )])),
        key == "oneOf" && branches.len() > 1,
    ))
}

/// `member` with `branch`'s keys merged where `key` stands (and `key` gone); `None` for a
/// branch that is not a plain object (a `$ref`, a boolean) or that clashes with the member.
fn merge_in_place(
    member: &Map<String, Value>,
    key: &str,
    branch: &Value,
) -> Option<Map<String, Value>> {
    let b = branch.as_object().filter(|b| !b.contains_key("$ref"))?;
    let mut in_place = Map::new();
    for (k, v) in member {
        let exact = if k == key {
            merge_into(&mut in_place, b)
        } else {
            merge_into(&mut in_place, &Map::from_iter([(k.clone(), v.clone())]))
        };
        if !exact {
            return None;
        }
    }
    Some(in_place)
}

/// A schema whose own `anyOf`/`oneOf` branches are merged in place, recursively: the flat
/// alternatives (at most `cap`), and whether a `oneOf` of several branches was among them.
/// `None` when there is nothing to flatten or it cannot be done exactly.
fn expand_nested(
    schema: &Map<String, Value>,
    cap: usize,
) -> Option<(Vec<Map<String, Value>>, bool)> {
    if schema.contains_key("allOf") {
        return None;
    }
    let (key, branches) = schema.iter().find_map(|(k, v)| match v {
        Value::Array(b) if keywords::alternatives().any(|a| a == k) => Some((k.as_str(), b)),
        _ => None,
    })?;
    if branches.is_empty() || branches.len() > cap {
        return None;
    }
    let mut one_of = key == "oneOf" && branches.len() > 1;
    let mut out = Vec::new();
    for branch in branches {
        let piece = merge_in_place(schema, key, branch)?;
        match expand_nested(&piece, cap) {
            Some((more, nested_one_of)) => {
                one_of |= nested_one_of;
                out.extend(more);
            }
            None => out.push(piece),
        }
        if out.len() > cap {
            return None;
        }
    }
    Some((out, one_of))
}

/// Keep a compiled branch; a branch that admits nothing is dropped, other errors stop.
fn push_branch(alts: &mut Vec<Expr>, compiled: R<Expr>) -> R<()> {
    match compiled {
        Ok(e) => alts.push(e),
        Err(e) if e.keyword == "false" || e.message.starts_with("unsatisfiable") => {}
        Err(e) => return Err(e),
    }
    Ok(())
}
