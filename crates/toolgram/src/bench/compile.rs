//! `toolgram bench compile`: JSON-Schema coverage and correctness on MaskBench (the
//! JSONSchemaBench schemas with valid and invalid instances), per subset: % compiled, %
//! refused (by keyword), % valid instances accepted, % invalid rejected, schemas passing
//! (compiled, every valid accepted, every invalid rejected), compile time p50/p99.
//!
//! The Lark/llguidance path is what the embedded engine runs: our keyword pass, then
//! llguidance's JSON grammar, then the post-parse validator for keywords the grammar leaves
//! out. Measurements only: nothing here decides pass/fail of a test.

use crate::output::CliError;
use clap::Args;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use toolgram_core::compile::{KeywordPass, bare_grammar_schema};
use toolgram_engine::ByteChecker;
use toolgram_grammar::schema::refs;

#[derive(Args)]
pub(crate) struct CompileBenchArgs {
    /// MaskBench data directory (`…/jsonschemabench/maskbench/data`).
    #[arg(long, required_unless_present = "suite")]
    pub data: Option<PathBuf>,
    /// Instead: a JSON-Schema-Test-Suite draft directory (`…/tests/draft2020-12`); each
    /// group's schema is one row entry, its tests the instances.
    #[arg(long, conflicts_with = "data")]
    pub suite: Option<PathBuf>,
    /// Run a fixed, seeded sample of this many schemas instead of all.
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Ignore formats nobody enforces (`topic`, `color`, …) instead of refusing the schema,
    /// as `--lenient` does for users: each one is counted and reported.
    #[arg(long)]
    pub lenient: bool,
    /// Write the per-schema results (JSON lines) here.
    #[arg(long)]
    pub details: Option<PathBuf>,
    /// Which compiler to measure: `lark` (our keyword pass + llguidance, what the embedded
    /// engine runs), `gbnf` (our own schema → GBNF emitter, checked by llama.cpp's engine) or
    /// `lark-openai` (our own schema → OpenAI-dialect Lark, checked by llguidance).
    #[arg(long, value_enum, default_value = "lark")]
    pub target: Target,
    /// With `--target gbnf`: judge the peer instead of us — the GBNF llama.cpp's own converter
    /// wrote for each schema into this directory (`scripts/llama-cpp-schema-grammars`), run by
    /// the same engine on the same instances, without a post-parse validator.
    #[arg(long)]
    pub peer_gbnf: Option<PathBuf>,
}

/// The compiler a `bench compile` run measures.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Target {
    /// Keyword pass + llguidance's JSON grammar.
    Lark,
    /// Our schema → IR → GBNF, run by llama.cpp.
    Gbnf,
    /// Our schema → IR → OpenAI-dialect Lark, run by llguidance.
    LarkOpenai,
}

/// What happened to one schema.
#[derive(Default)]
pub(super) struct SchemaResult {
    pub(super) subset: String,
    pub(super) compiled: bool,
    pub(super) refused_by: Option<String>,
    pub(super) compile_ms: f64,
    pub(super) valid: (usize, usize),
    pub(super) invalid: (usize, usize),
    pub(super) out_of_order_valid_rejected: usize,
    pub(super) validator_rejected: usize,
    pub(super) ignored_formats: usize,
    pub(super) ignored_keywords: usize,
    /// Where the grammar stopped on the first valid instance it rejected for a reason other
    /// than the output policies (byte offset into its compact JSON).
    pub(super) valid_rejected_at: Option<usize>,
    /// llguidance's `%json` refused it and our own schema grammar ran instead.
    pub(super) ir_fallback: bool,
}

impl SchemaResult {
    /// Compiled, every valid instance accepted (counting one rejected only for its key order
    /// as accepted under the order policy) and every invalid one rejected.
    fn passes(&self) -> bool {
        self.compiled
            && self.valid.0 + self.out_of_order_valid_rejected == self.valid.1
            && self.invalid.0 == self.invalid.1
    }
}

pub(super) fn subset_of(file: &str) -> String {
    let stem = file.trim_end_matches(".json");
    match stem.split_once("---") {
        Some((s, _)) => s.to_owned(),
        None => {
            let parts: Vec<&str> = stem.split('_').collect();
            parts[..parts.len().saturating_sub(1).max(1)].join("_")
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The schema files, sorted, or a seeded sample of them.
fn files(dir: &Path, sample: Option<usize>, seed: u64) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::new("io_error", format!("cannot read {}: {e}", dir.display())))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    if let Some(n) = sample {
        names.sort_by_key(|name| splitmix(fnv(name) ^ seed));
        names.truncate(n);
        names.sort();
    }
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// The reason of a refusal, without llguidance's location prefix and instance details.
fn refusal_reason(message: &str) -> String {
    let m = message
        .split("failed to compile JSON schema: ")
        .nth(1)
        .unwrap_or(message);
    let m = m.lines().next().unwrap_or_default();
    // Keep the kind of failure, not the schema-specific value after it.
    let cut = m.find(": ").map_or(m.len(), |i| i.min(80));
    m[..cut.min(m.len())].to_owned()
}

/// `data` as toolgram's output policies write it: every object's keys in the order its
/// schema lists them (following local `$ref`s and the branches of `allOf`/`anyOf`/`oneOf`;
/// keys the schema does not list keep their order after the listed ones), integral numbers
/// without a fraction. Used to tell policy rejections apart from real ones.
/// Which order of an object's keys an output policy writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyOrder {
    /// Where each key's schema keyword stands (llguidance's).
    Keyword,
    /// A schema's own `properties` before those of its `allOf` members and `$ref` target.
    OwnFirst,
    /// Required keys first, then the rest, each in listed order (llama.cpp's converter).
    RequiredFirst,
}

pub(super) fn in_schema_order(
    data: &Value,
    schema: &Value,
    root: &Value,
    depth: usize,
    order: KeyOrder,
) -> Value {
    match data {
        Value::Object(obj) if depth < 64 => {
            let listed = listed_properties(schema, root, obj, order);
            let mut out = serde_json::Map::new();
            for (k, sub) in &listed {
                if let Some(v) = obj.get(k)
                    && !out.contains_key(k)
                {
                    out.insert(k.clone(), in_schema_order(v, sub, root, depth + 1, order));
                }
            }
            for (k, v) in obj {
                if !out.contains_key(k) {
                    let sub = unlisted_key_schema(schema, root, k, 0).unwrap_or(Value::Null);
                    out.insert(k.clone(), in_schema_order(v, &sub, root, depth + 1, order));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) if depth < 64 => {
            let (prefix, rest) = array_schemas(schema, root, 0).unwrap_or_default();
            Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let sub = prefix.get(i).unwrap_or(&rest);
                        in_schema_order(v, sub, root, depth + 1, order)
                    })
                    .collect(),
            )
        }
        Value::Number(n) => match n.as_f64() {
            // Number policy: integral values are written without a fraction.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => data.clone(),
        },
        other => other.clone(),
    }
}

/// `data` as compact JSON text under the number policy: a fraction is written in decimal
/// notation, never with an exponent (llguidance's bounded numbers have none).
pub(super) fn policy_text(data: &Value) -> String {
    let mut out = String::new();
    write_policy(data, &mut out);
    out
}

fn write_policy(data: &Value, out: &mut String) {
    match data {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_policy(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_policy(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() != 0.0 => out.push_str(&f.to_string()),
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// The schema of a key no `properties` lists: a matching `patternProperties` entry, else
/// `additionalProperties`, looked up in the schema and its combinator branches.
fn unlisted_key_schema(schema: &Value, root: &Value, key: &str, depth: usize) -> Option<Value> {
    let schema = resolve(schema, root);
    if depth > 8 {
        return None;
    }
    let by_pattern = schema
        .get("patternProperties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .find(|(pattern, _)| {
            jsonschema::validator_for(&serde_json::json!({"pattern": pattern}))
                .is_ok_and(|v| v.is_valid(&Value::String(key.to_owned())))
        })
        .map(|(_, sub)| sub.clone());
    by_pattern
        .or_else(|| {
            schema
                .get("additionalProperties")
                .filter(|a| a.is_object())
                .cloned()
        })
        .or_else(|| branches(schema).find_map(|b| unlisted_key_schema(b, root, key, depth + 1)))
}

/// Per-position item schemas and the schema of the rest: `prefixItems`, draft-4 tuple
/// `items` + `additionalItems`, or `items`, in the schema or its combinator branches.
fn array_schemas(schema: &Value, root: &Value, depth: usize) -> Option<(Vec<Value>, Value)> {
    let schema = resolve(schema, root);
    if depth > 8 {
        return None;
    }
    let tuple = |t: &Value| t.as_array().cloned();
    if let Some(prefix) = schema.get("prefixItems").and_then(tuple) {
        return Some((prefix, schema.get("items").cloned().unwrap_or(Value::Null)));
    }
    match schema.get("items") {
        Some(Value::Array(prefix)) => Some((
            prefix.clone(),
            schema
                .get("additionalItems")
                .cloned()
                .unwrap_or(Value::Null),
        )),
        own => {
            // `allOf` members constrain the same items: intersect them all.
            let mut all: Vec<Value> = own.into_iter().cloned().collect();
            let members = schema.get("allOf").and_then(Value::as_array);
            for m in members.into_iter().flatten() {
                if let Some((_, rest)) = array_schemas(m, root, depth + 1) {
                    all.push(rest);
                }
            }
            match all.len() {
                0 => branches(schema).find_map(|b| array_schemas(b, root, depth + 1)),
                1 => all.pop().map(|one| (Vec::new(), one)),
                _ => Some((Vec::new(), serde_json::json!({ "allOf": all }))),
            }
        }
    }
}

fn branches(schema: &Value) -> impl Iterator<Item = &Value> {
    ["allOf", "anyOf", "oneOf"].into_iter().flat_map(|k| {
        schema
            .get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    })
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut s = schema;
    for _ in 0..16 {
        match s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| refs::target(root, r))
        {
            Some(t) => s = t,
            None => break,
        }
    }
    s
}

/// The properties an object is written with, as llguidance orders them: the schema's keywords
/// in the order the schema text lists them, `properties` contributing its keys, `allOf`
/// members and `$ref` targets theirs at the place they appear, and `anyOf`/`oneOf` those of the
/// branch that lists most of the object's keys (the branch the grammar took).
fn listed_properties(
    schema: &Value,
    root: &Value,
    obj: &serde_json::Map<String, Value>,
    order: KeyOrder,
) -> Vec<(String, Value)> {
    let mut listed = Vec::new();
    let own_first = order == KeyOrder::OwnFirst;
    collect_properties(schema, root, obj, &mut listed, 0, own_first);
    // Then required keys that no `properties` lists, in `required` order (llguidance's).
    let mut required = Vec::new();
    collect_required(schema, root, &mut required, 0);
    for k in &required {
        if !listed.iter().any(|(n, _)| n == k) {
            let sub = unlisted_key_schema(schema, root, k, 0).unwrap_or(Value::Null);
            listed.push((k.clone(), sub));
        }
    }
    if order == KeyOrder::RequiredFirst {
        let (mut first, rest): (Vec<_>, Vec<_>) =
            listed.into_iter().partition(|(k, _)| required.contains(k));
        first.extend(rest);
        listed = first;
    }
    listed
}

/// The `required` keys of a schema, its `$ref` target and its `allOf` members, in order.
fn collect_required(schema: &Value, root: &Value, out: &mut Vec<String>, depth: usize) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if depth > 16 {
        return;
    }
    for (key, value) in map {
        match key.as_str() {
            "required" => {
                for k in value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !out.iter().any(|o| o == k) {
                        out.push(k.to_owned());
                    }
                }
            }
            "$ref" => {
                let target = resolve(schema, root);
                if !std::ptr::eq(target, schema) {
                    collect_required(target, root, out, depth + 1);
                }
            }
            "allOf" => {
                for member in value.as_array().into_iter().flatten() {
                    collect_required(member, root, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

fn collect_properties(
    schema: &Value,
    root: &Value,
    obj: &serde_json::Map<String, Value>,
    out: &mut Vec<(String, Value)>,
    depth: usize,
    own_first: bool,
) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if depth > 16 {
        return;
    }
    // The other reading of "schema order": a schema's own properties before those its
    // combinators bring, whatever the keyword order.
    let own = |k: &&String| matches!(k.as_str(), "properties" | "additionalProperties");
    let keys: Vec<&String> = if own_first {
        map.keys()
            .filter(own)
            .chain(map.keys().filter(|k| !own(k)))
            .collect()
    } else {
        map.keys().collect()
    };
    for key in keys {
        let Some(value) = map.get(key) else { continue };
        match key.as_str() {
            // llguidance meets `additionalProperties` with the keys of `properties` in tow.
            "properties" | "additionalProperties" => {
                let props = map.get("properties").and_then(Value::as_object);
                for (k, v) in props.into_iter().flatten() {
                    // A key listed in several places keeps its first position; its schemas
                    // are intersected so that nested objects are ordered by all of them.
                    match out.iter_mut().find(|(n, _)| n == k) {
                        Some((_, seen)) => *seen = serde_json::json!({"allOf": [seen.clone(), v]}),
                        None => out.push((k.clone(), v.clone())),
                    }
                }
            }
            "$ref" => {
                let target = resolve(schema, root);
                if !std::ptr::eq(target, schema) {
                    collect_properties(target, root, obj, out, depth + 1, own_first);
                }
            }
            "allOf" => {
                for member in value.as_array().into_iter().flatten() {
                    collect_properties(member, root, obj, out, depth + 1, own_first);
                }
            }
            "anyOf" | "oneOf" => {
                let best = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|branch| {
                        let mut props = Vec::new();
                        collect_properties(branch, root, obj, &mut props, depth + 1, own_first);
                        // A branch whose `const`/`enum` a value contradicts is not the one taken.
                        let hits: usize = props
                            .iter()
                            .filter_map(|(k, sub)| {
                                obj.get(k).map(|v| match contradicts(v, sub, root) {
                                    true => 0,
                                    false => 1 + fit(v, sub, root, depth),
                                })
                            })
                            .sum();
                        let clashes = props
                            .iter()
                            .filter(|(k, sub)| {
                                obj.get(k).is_some_and(|v| contradicts(v, sub, root))
                            })
                            .count();
                        (hits.saturating_sub(1000 * clashes), props)
                    })
                    // The first of the best: ties go to the earlier branch.
                    .rev()
                    .max_by_key(|(hits, _)| *hits);
                for (k, v) in best.map(|(_, p)| p).unwrap_or_default() {
                    match out.iter_mut().find(|(n, _)| *n == k) {
                        Some((_, seen)) => *seen = serde_json::json!({"allOf": [seen.clone(), v]}),
                        None => out.push((k, v)),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether `schema` pins the value (`const` or `enum`) to something other than `data`.
fn contradicts(data: &Value, schema: &Value, root: &Value) -> bool {
    let schema = resolve(schema, root);
    let by_const = schema.get("const").is_some_and(|c| c != data);
    let by_enum = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.contains(data));
    by_const || by_enum
}

/// How many keys of `data`, at any depth, the schema lists where they are: how well a
/// branch fits the instance.
fn fit(data: &Value, schema: &Value, root: &Value, depth: usize) -> usize {
    if depth > 16 {
        return 0;
    }
    match data {
        Value::Object(obj) => {
            let mut props = Vec::new();
            collect_properties(schema, root, obj, &mut props, depth + 1, false);
            props
                .iter()
                .filter_map(|(k, sub)| obj.get(k).map(|v| 1 + fit(v, sub, root, depth + 1)))
                .sum()
        }
        Value::Array(items) => {
            let (prefix, rest) = array_schemas(schema, root, 0).unwrap_or_default();
            items
                .iter()
                .enumerate()
                .map(|(i, v)| fit(v, prefix.get(i).unwrap_or(&rest), root, depth + 1))
                .sum()
        }
        _ => 0,
    }
}

fn run_one(checker: &ByteChecker, path: &Path, lenient: bool) -> SchemaResult {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut r = SchemaResult {
        subset: subset_of(&name),
        ..SchemaResult::default()
    };
    let doc: Value = match std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        Some(d) => d,
        None => {
            r.refused_by = Some("unreadable file".into());
            return r;
        }
    };
    let schema = doc.get("schema").cloned().unwrap_or(Value::Null);
    let tests = doc
        .get("tests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    check_schema(checker, &schema, &tests, lenient, r)
}

/// Remove `format` values that neither the grammar nor the validator knows; their count.
fn drop_unknown_formats(v: &mut Value) -> usize {
    use toolgram_grammar::schema::keywords::{GRAMMAR_FORMATS, VALIDATOR_FORMATS};
    match v {
        Value::Object(m) => {
            let unknown = m
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !GRAMMAR_FORMATS.contains(&f) && !VALIDATOR_FORMATS.contains(&f));
            let here = usize::from(unknown && m.shift_remove("format").is_some());
            here + m.values_mut().map(drop_unknown_formats).sum::<usize>()
        }
        Value::Array(a) => a.iter_mut().map(drop_unknown_formats).sum(),
        _ => 0,
    }
}

/// The engine's fallback: the schema through toolgram's own compiler, as llguidance Lark;
/// the compiled grammar and whether any keyword is left to the validator.
fn ir_fallback(
    checker: &ByteChecker,
    schema: &Value,
    lenient: bool,
) -> Option<(toolgram_engine::CompiledCheck, bool)> {
    use toolgram_grammar::lark;
    use toolgram_grammar::schema::{NoteKind, SchemaOptions, to_grammar};
    let opts = SchemaOptions {
        lenient,
        ..SchemaOptions::default()
    };
    let (g, notes) = to_grammar(schema, &opts).ok()?;
    let compiled = checker
        .compile(&lark::emit(&g, lark::LarkDialect::Llguidance))
        .ok()?;
    Some((compiled, notes.iter().any(|n| n.kind == NoteKind::Deferred)))
}

/// Compile one schema and run its test instances (`{"data", "valid"}`) through the grammar
/// and the post-parse validator.
fn check_schema(
    checker: &ByteChecker,
    schema: &Value,
    tests: &[Value],
    lenient: bool,
    mut r: SchemaResult,
) -> SchemaResult {
    let mut schema = schema.clone();
    if lenient {
        r.ignored_formats = drop_unknown_formats(&mut schema);
    }
    let mut pass = KeywordPass::default();
    let t0 = Instant::now();
    let grammar_schema = bare_grammar_schema(&schema, &mut pass);
    if let (false, Some(k)) = (lenient, pass.unknown.first()) {
        r.refused_by = Some(format!("unknown keyword `{}`", k.keyword));
        return r;
    }
    r.ignored_keywords = pass.unknown.len();
    let mut deferred = !pass.deferred.is_empty();
    let lark = format!("start: %json {grammar_schema}\n");
    // As the engine does: where llguidance's `%json` refuses, our own schema grammar.
    let compiled =
        checker
            .compile(&lark)
            .or_else(|e| match ir_fallback(checker, &schema, lenient) {
                Some((c, deferred_ir)) => {
                    r.ir_fallback = true;
                    deferred = deferred_ir;
                    Ok(c)
                }
                None => Err(e),
            });
    r.compile_ms = t0.elapsed().as_secs_f64() * 1e3;
    let compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            r.refused_by = Some(refusal_reason(&e.to_string()));
            return r;
        }
    };
    // Deferred keywords need the validator; a schema it cannot build is refused, not passed.
    let validator = match deferred
        .then(|| toolgram_core::define::arguments::post_parse_validator(&schema))
        .transpose()
    {
        Ok(v) => v,
        Err(e) => {
            r.refused_by = Some(format!("validator: {e}"));
            return r;
        }
    };
    r.compiled = true;
    for t in tests {
        let data = t.get("data").cloned().unwrap_or(Value::Null);
        let by_grammar = checker.accepts(&compiled, &data.to_string());
        let by_validator = validator.as_ref().is_none_or(|v| v.is_valid(&data));
        let accepted = by_grammar && by_validator;
        if t.get("valid").and_then(Value::as_bool).unwrap_or(false) {
            r.valid.1 += 1;
            if accepted {
                r.valid.0 += 1;
            } else if !by_validator {
                r.validator_rejected += 1;
            } else if [KeyOrder::Keyword, KeyOrder::OwnFirst]
                .into_iter()
                .any(|order| {
                    let text = policy_text(&in_schema_order(&data, &schema, &schema, 0, order));
                    checker.accepts(&compiled, &text)
                })
            {
                r.out_of_order_valid_rejected += 1;
            } else if r.valid_rejected_at.is_none() {
                r.valid_rejected_at = Some(checker.accepted_len(&compiled, &data.to_string()));
            }
        } else {
            r.invalid.1 += 1;
            if !accepted {
                r.invalid.0 += 1;
            }
        }
    }
    r
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1}", 100.0 * a as f64 / b as f64)
    }
}

/// One result per JSON-Schema-Test-Suite group (`[{description, schema, tests}]` per file),
/// the subset being the file (the keyword under test).
fn suite_results(
    checker: &ByteChecker,
    dir: &Path,
    lenient: bool,
) -> anyhow::Result<Vec<SchemaResult>> {
    let mut out = Vec::new();
    for path in files(dir, None, 0)? {
        let subset = path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let groups: Vec<Value> = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        for g in groups {
            let tests = g
                .get("tests")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let r = SchemaResult {
                subset: subset.clone(),
                ..SchemaResult::default()
            };
            out.push(check_schema(checker, &g["schema"], &tests, lenient, r));
        }
    }
    Ok(out)
}

pub(super) fn run(args: CompileBenchArgs) -> anyhow::Result<()> {
    let checker = ByteChecker::new()?;
    let started = Instant::now();
    if let Some(dir) = &args.suite {
        if args.target != Target::Lark {
            return Err(CliError::new(
                "invalid_request",
                "--suite runs the lark target; use --data for --target gbnf|lark-openai",
            )
            .into());
        }
        let results = suite_results(&checker, dir, args.lenient)?;
        return report(&results, &[], &args, started);
    }
    let Some(data) = &args.data else {
        return Err(CliError::new("invalid_request", "give --data or --suite").into());
    };
    if args.peer_gbnf.is_some() && args.target != Target::Gbnf {
        return Err(CliError::new("invalid_request", "--peer-gbnf goes with --target gbnf").into());
    }
    let files = files(data, args.sample, args.seed)?;
    use super::compile_gbnf::{Emitter, results};
    match args.target {
        Target::Gbnf => {
            let peer = args.peer_gbnf.as_deref();
            let results = results(&files, args.lenient, Emitter::Gbnf, peer)?;
            return report(&results, &files, &args, started);
        }
        Target::LarkOpenai => {
            let results = results(&files, args.lenient, Emitter::LarkOpenai, None)?;
            return report(&results, &files, &args, started);
        }
        Target::Lark => {}
    }
    let mut results = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        results.push(run_one(&checker, f, args.lenient));
        if (i + 1) % 500 == 0 {
            eprintln!(
                "{} / {} schemas, {:.0} s",
                i + 1,
                files.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    report(&results, &files, &args, started)
}

fn report(
    results: &[SchemaResult],
    files: &[PathBuf],
    args: &CompileBenchArgs,
    started: Instant,
) -> anyhow::Result<()> {
    let mut by_subset: BTreeMap<String, Vec<&SchemaResult>> = BTreeMap::new();
    for r in results {
        by_subset.entry(r.subset.clone()).or_default().push(r);
    }
    let mut rows: Vec<(String, Vec<&SchemaResult>)> = by_subset.into_iter().collect();
    rows.push(("ALL".into(), results.iter().collect()));
    println!(
        "| subset | schemas | compiled % | refused % | valid accepted % | invalid rejected % | passing | compile p50 / p99 ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut summary = Vec::new();
    for (name, rs) in &rows {
        let n = rs.len();
        let compiled = rs.iter().filter(|r| r.compiled).count();
        let valid: (usize, usize) = rs
            .iter()
            .fold((0, 0), |a, r| (a.0 + r.valid.0, a.1 + r.valid.1));
        let invalid: (usize, usize) = rs
            .iter()
            .fold((0, 0), |a, r| (a.0 + r.invalid.0, a.1 + r.invalid.1));
        let passing = rs.iter().filter(|r| r.passes()).count();
        let mut times: Vec<f64> = rs
            .iter()
            .filter(|r| r.compiled)
            .map(|r| r.compile_ms)
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "| {name} | {n} | {} | {} | {} | {} | {passing} | {:.1} / {:.1} |",
            pct(compiled, n),
            pct(n - compiled, n),
            pct(valid.0, valid.1),
            pct(invalid.0, invalid.1),
            percentile(&times, 0.5),
            percentile(&times, 0.99),
        );
        summary.push(json!({"subset": name, "schemas": n, "compiled": compiled, "passing": passing,
            "valid_accepted": valid.0, "valid": valid.1, "invalid_rejected": invalid.0, "invalid": invalid.1}));
    }
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        if let Some(k) = &r.refused_by {
            *refusals.entry(k.clone()).or_default() += 1;
        }
    }
    let mut refusals: Vec<(String, usize)> = refusals.into_iter().collect();
    refusals.sort_by_key(|r| std::cmp::Reverse(r.1));
    let ooo: usize = results.iter().map(|r| r.out_of_order_valid_rejected).sum();
    let by_validator: usize = results.iter().map(|r| r.validator_rejected).sum();
    println!(
        "\nvalid instances rejected only for key order or `1.0`-style integers (output policies; counted as passing): {ooo}"
    );
    println!("valid instances rejected by the post-parse validator: {by_validator}");
    let fallbacks = results.iter().filter(|r| r.ir_fallback).count();
    if fallbacks > 0 {
        println!(
            "compiled by toolgram's own schema grammar where llguidance's %json refused (the engine's fallback): {fallbacks}"
        );
    }
    let ignored: usize = results.iter().map(|r| r.ignored_formats).sum();
    let ignoring = results.iter().filter(|r| r.ignored_formats > 0).count();
    let ignored_kw: usize = results.iter().map(|r| r.ignored_keywords).sum();
    let ignoring_kw = results.iter().filter(|r| r.ignored_keywords > 0).count();
    if args.lenient {
        println!(
            "--lenient: {ignored} unknown `format` values ignored in {ignoring} schemas, {ignored_kw} unknown keywords in {ignoring_kw} schemas (each refused without --lenient)"
        );
    }
    println!("refusals by reason (top 20):");
    for (k, n) in refusals.iter().take(20) {
        println!("- {n} × {k}");
    }
    if let Some(p) = &args.details {
        let lines: Vec<String> = files
            .iter()
            .zip(results)
            .map(|(f, r)| {
                json!({"file": f.file_name().map(|n| n.to_string_lossy().into_owned()),
                    "compiled": r.compiled, "refused_by": r.refused_by, "passes": r.passes(),
                    "valid": [r.valid.0, r.valid.1], "invalid": [r.invalid.0, r.invalid.1],
                    "order_only": r.out_of_order_valid_rejected, "validator_rejected": r.validator_rejected,
                    "valid_rejected_at": r.valid_rejected_at, "ir_fallback": r.ir_fallback,
                    "compile_ms": r.compile_ms})
                .to_string()
            })
            .collect();
        std::fs::write(p, lines.join("\n") + "\n")
            .map_err(|e| CliError::new("io_error", format!("cannot write {}: {e}", p.display())))?;
    }
    eprintln!(
        "{}",
        json!({"summary": summary, "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}
