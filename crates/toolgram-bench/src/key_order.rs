//! A valid instance as toolgram's output policies would write it — object keys in schema
//! order (each reading of it: llguidance's keyword order, own properties first, llama.cpp's
//! required first), integral numbers without a fraction, fractions without an exponent — so
//! that `bench compile` can tell a rejection for policy alone from a real one.
//!
//! This module must not judge an instance: it only rewrites one.

use serde_json::Value;
use toolgram_grammar::schema::refs;

/// Which order of an object's keys an output policy writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    /// Where each key's schema keyword stands (llguidance's).
    Keyword,
    /// A schema's own `properties` before those of its `allOf` members and `$ref` target.
    OwnFirst,
    /// Required keys first, then the rest, each in listed order (llama.cpp's converter).
    RequiredFirst,
}

/// `data` as toolgram's output policies write it: every object's keys in the order its
/// schema lists them under `order` (following local `$ref`s and the branches of
/// `allOf`/`anyOf`/`oneOf`; keys the schema does not list keep their order after the listed
/// ones), integral numbers without a fraction. Used to tell policy rejections apart from real
/// ones.
pub(crate) fn in_schema_order(
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
pub(crate) fn policy_text(data: &Value) -> String {
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
