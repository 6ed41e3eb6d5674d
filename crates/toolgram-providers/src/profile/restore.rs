//! Undo the one rewrite that changes what a reply looks like: under `openai-strict`, optional
//! properties are required and nullable, so the model writes `null` where it means "absent".
//!
//! [`restore_arguments`] removes those `null`s (guided by the ORIGINAL schema) before the
//! reply is validated against it. A `null` is kept wherever the original schema accepts `null`
//! itself (absent and null cannot be told apart there). Under `anyOf`/`oneOf` the walk follows
//! a member only when exactly one member admits the value's JSON type. This module must not
//! validate, and must not change anything but such `null`s.

use super::Profile;
use serde_json::{Map, Value};
use toolgram_grammar::schema::keywords;
use toolgram_grammar::schema::refs;

const MAX_DEPTH: usize = 64;
/// Schema visits one restore may make: references that fan out (`allOf`/`anyOf` of the same
/// definitions, again and again) would otherwise be walked exponentially. When it runs out,
/// the remaining `null`s stay and the validator reports them.
const MAX_STEPS: usize = 100_000;

/// The arguments as the original `parameters` schema expects them: for `openai-strict`,
/// `null` values of optional, non-nullable properties are removed; other profiles return the
/// arguments unchanged.
pub fn restore_arguments(profile: Profile, parameters: &Value, mut arguments: Value) -> Value {
    if profile == Profile::OpenAiStrict {
        let mut steps = MAX_STEPS;
        restore(parameters, parameters, &mut arguments, 0, &mut steps);
    }
    arguments
}

fn restore(schema: &Value, root: &Value, v: &mut Value, depth: usize, steps: &mut usize) {
    let Value::Object(m) = schema else { return };
    if depth > MAX_DEPTH || *steps == 0 {
        return;
    }
    *steps -= 1;
    if let Some((target, _)) = m
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| refs::resolve(root, r))
    {
        restore(target, root, v, depth + 1, steps);
    }
    if let Some(Value::Array(all)) = m.get("allOf") {
        all.iter()
            .for_each(|s| restore(s, root, v, depth + 1, steps));
    }
    for k in keywords::alternatives() {
        if let Some(Value::Array(members)) = m.get(k) {
            let fits: Vec<&Value> = members.iter().filter(|s| admits_type(s, v)).collect();
            if let [only] = fits.as_slice() {
                restore(only, root, v, depth + 1, steps);
            }
        }
    }
    match v {
        Value::Object(obj) => restore_object(m, root, obj, depth, steps),
        Value::Array(items) => {
            if let Some(item) = m.get("items") {
                items
                    .iter_mut()
                    .for_each(|x| restore(item, root, x, depth + 1, steps));
            }
        }
        _ => {}
    }
}

fn restore_object(
    m: &Map<String, Value>,
    root: &Value,
    obj: &mut Map<String, Value>,
    depth: usize,
    steps: &mut usize,
) {
    let Some(Value::Object(props)) = m.get("properties") else {
        return;
    };
    let required = |k: &str| {
        m.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x == k))
    };
    obj.retain(|k, val| {
        !(val.is_null()
            && !required(k)
            && props
                .get(k)
                .is_some_and(|s| !accepts_null(s, root, 0, steps)))
    });
    for (k, val) in obj.iter_mut() {
        if let Some(s) = props.get(k) {
            restore(s, root, val, depth + 1, steps);
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_admits(t: &Value, v: &Value) -> bool {
    let ty = json_type(v);
    let one = |t: &Value| t == ty || (t == "number" && ty == "integer");
    match t {
        Value::String(_) => one(t),
        Value::Array(ts) => ts.iter().any(one),
        _ => true,
    }
}

fn admits_type(schema: &Value, v: &Value) -> bool {
    schema.get("type").is_none_or(|t| type_admits(t, v))
}

/// Whether the schema accepts `null` (references followed; unknown shapes say yes).
fn accepts_null(schema: &Value, root: &Value, depth: usize, steps: &mut usize) -> bool {
    let m = match schema {
        Value::Bool(b) => return *b,
        Value::Object(m) => m,
        _ => return true,
    };
    if depth > MAX_DEPTH || *steps == 0 {
        return true;
    }
    *steps -= 1;
    if let Some((target, _)) = m
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| refs::resolve(root, r))
        && !accepts_null(target, root, depth + 1, steps)
    {
        return false;
    }
    if m.get("type").is_some_and(|t| !type_admits(t, &Value::Null)) {
        return false;
    }
    if m.get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.contains(&Value::Null))
    {
        return false;
    }
    if m.get("const").is_some_and(|c| !c.is_null()) {
        return false;
    }
    for k in keywords::alternatives() {
        if let Some(Value::Array(a)) = m.get(k)
            && !a.iter().any(|s| accepts_null(s, root, depth + 1, steps))
        {
            return false;
        }
    }
    if let Some(Value::Array(a)) = m.get("allOf") {
        return a.iter().all(|s| accepts_null(s, root, depth + 1, steps));
    }
    true
}
