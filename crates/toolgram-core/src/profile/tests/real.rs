//! Real-world schemas written by others (BFCL v4, llama.cpp's chat-test tools) rendered under
//! every profile, checked by an independent reading of each profile's rules: allowed keywords,
//! closed objects, and "nothing dropped silently" (every assertion of the original is either in
//! the rendered schema or listed as enforced after parse).

use super::data::{self, BFCL_FILES};
use super::*;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

const COUNTED: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "format",
    "enum",
    "const",
    "not",
    "oneOf",
    "allOf",
];

fn allowed(p: Profile) -> &'static [&'static str] {
    match p {
        Profile::OpenAiStrict => &[
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "anyOf",
            "$ref",
            "$defs",
            "enum",
            "const",
            "format",
            "pattern",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "minItems",
            "maxItems",
            "title",
            "description",
        ],
        Profile::Anthropic => &[
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "anyOf",
            "$ref",
            "$defs",
            "enum",
            "const",
            "format",
            "pattern",
            "minItems",
            "description",
            "default",
        ],
        Profile::Gemini => &[
            "type",
            "format",
            "title",
            "description",
            "nullable",
            "enum",
            "properties",
            "required",
            "items",
            "minItems",
            "maxItems",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "minProperties",
            "maxProperties",
            "anyOf",
            "propertyOrdering",
            "default",
        ],
    }
}

/// Every subschema (properties, items, anyOf/oneOf/allOf members, $defs).
fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Map<String, Value>>) {
    let Value::Object(m) = v else { return };
    out.push(m);
    for (k, c) in m {
        match (k.as_str(), c) {
            ("properties" | "$defs" | "definitions", Value::Object(cs)) => {
                cs.values().for_each(|s| walk(s, out))
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(a)) => a.iter().for_each(|s| walk(s, out)),
            ("items" | "additionalProperties", s) => walk(s, out),
            _ => {}
        }
    }
}

fn count(v: &Value, key: &str) -> usize {
    let mut nodes = Vec::new();
    walk(v, &mut nodes);
    nodes.iter().filter(|m| m.contains_key(key)).count()
}

/// The independent check of one rendering against its original.
fn check(p: Profile, original: &Value, r: &ProfiledSchema, what: &str) {
    let mut nodes = Vec::new();
    walk(&r.schema, &mut nodes);
    for m in &nodes {
        for k in m.keys() {
            assert!(
                allowed(p).contains(&k.as_str()),
                "{what} {}: `{k}` in {}",
                p.name(),
                r.schema
            );
        }
        let object = m.get("properties").is_some();
        if object && p != Profile::Gemini {
            assert_eq!(
                m.get("additionalProperties"),
                Some(&json!(false)),
                "{what}: open object"
            );
        }
        if object && p == Profile::OpenAiStrict {
            let names: Vec<Value> = m["properties"]
                .as_object()
                .map(|o| o.keys().map(|k| json!(k)).collect())
                .unwrap_or_default();
            assert_eq!(
                m.get("required"),
                Some(&Value::Array(names)),
                "{what}: not all required"
            );
        }
        if p == Profile::Gemini {
            if let Some(t) = m.get("type") {
                assert!(
                    t.as_str().is_some_and(|t| t == t.to_uppercase()),
                    "{what}: type {t}"
                );
            }
            if let Some(Value::Array(e)) = m.get("enum") {
                assert!(e.iter().all(Value::is_string), "{what}: enum {e:?}");
            }
        }
        if p == Profile::Anthropic {
            assert!(
                m.get("minItems")
                    .and_then(Value::as_u64)
                    .is_none_or(|n| n <= 1)
            );
        }
    }
    for k in COUNTED {
        let before = count(original, k);
        let mut after = count(&r.schema, k)
            + r.enforced_after_parse
                .iter()
                .filter(|d| d.keyword == *k)
                .count();
        if p == Profile::Gemini && *k == "const" {
            after += count(original, k);
        }
        assert!(
            after >= before,
            "{what} {}: `{k}` {before} in the original, {after} kept or deferred",
            p.name()
        );
    }
}

#[test]
fn bfcl_schemas_render_under_every_profile_or_are_refused_by_name() {
    let mut rendered = HashMap::new();
    let mut refused: HashMap<(&str, String), usize> = HashMap::new();
    let mut total = 0;
    for file in BFCL_FILES {
        for t in data::bfcl(file) {
            total += 1;
            for p in Profile::ALL {
                match render_parameters(&t.name, &t.parameters, p) {
                    Ok(r) => {
                        check(
                            p,
                            &t.parameters,
                            &r,
                            &format!("{file} {} {}", t.case, t.name),
                        );
                        if p != Profile::Gemini {
                            // OpenAI and Anthropic take JSON Schema proper.
                            let meta = jsonschema::meta::validate(&r.schema);
                            assert!(meta.is_ok(), "{}", r.schema);
                        }
                        *rendered.entry(p.name()).or_insert(0) += 1;
                    }
                    Err(e) => {
                        let (pointer, keyword) = at(&e);
                        let node = t.parameters.pointer(pointer).unwrap_or(&Value::Null);
                        let why = match keyword {
                            // A free-form map (BFCL `dict` without properties).
                            "properties" if node.get("type") == Some(&json!("object")) => {
                                assert!(node.get("properties").is_none(), "{e}");
                                "free-form object"
                            }
                            // Gemini's parameter-name rule (BFCL names with dots or dashes).
                            "properties" if p == Profile::Gemini => "Gemini parameter name",
                            _ => panic!("{file} {}: unexpected refusal {e}", t.case),
                        };
                        *refused.entry((p.name(), why.to_owned())).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    eprintln!("BFCL: {total} tools; rendered {rendered:?}; refused {refused:?}");
    assert!(total > 2000, "{total}");
    for p in Profile::ALL {
        assert!(
            rendered.get(p.name()).copied().unwrap_or(0) * 100 >= total * 95,
            "{}: {rendered:?}",
            p.name()
        );
    }
}

/// Add `null` for every absent property, as an OpenAI strict reply would.
fn fill_nulls(schema: &Value, v: &mut Value) {
    match v {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, s) in props {
                    match obj.get_mut(k) {
                        Some(val) => fill_nulls(s, val),
                        None => {
                            obj.insert(k.clone(), Value::Null);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                items.iter_mut().for_each(|x| fill_nulls(s, x));
            }
        }
        _ => {}
    }
}

#[test]
fn bfcl_ground_truth_survives_openai_strict_and_restore() {
    let file = "BFCL_v4_simple_python.json";
    let answers = data::bfcl_answers(file);
    let mut checked = 0;
    for t in data::bfcl(file) {
        let Some(truth) = answers.get(&t.case).and_then(|g| g[0].get(&t.name)) else {
            continue;
        };
        // The first acceptable value of each parameter; `""` means "may be omitted".
        let args: Map<String, Value> = truth
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, vals)| {
                Some((
                    k.clone(),
                    vals.as_array()?.iter().find(|v| *v != "")?.clone(),
                ))
            })
            .collect();
        let args = Value::Object(args);
        let original = jsonschema::validator_for(&crate::compile::close_objects(&t.parameters))
            .expect("BFCL schema");
        if !original.is_valid(&args) {
            continue; // ground truth outside its own schema (e.g. an integer for a float)
        }
        let Ok(r) = render_parameters(&t.name, &t.parameters, Profile::OpenAiStrict) else {
            continue;
        };
        let mut reply = args.clone();
        fill_nulls(&t.parameters, &mut reply);
        let strict = jsonschema::validator_for(&r.schema).expect("rendered schema is JSON Schema");
        assert!(
            strict.is_valid(&reply),
            "{}: {reply} not valid for {}",
            t.case,
            r.schema
        );
        assert_eq!(
            restore_arguments(Profile::OpenAiStrict, &t.parameters, reply),
            args,
            "{}",
            t.case
        );
        // Anthropic keeps optional properties optional: the call itself must validate.
        if let Ok(a) = render_parameters(&t.name, &t.parameters, Profile::Anthropic) {
            let v = jsonschema::validator_for(&a.schema).expect("rendered schema is JSON Schema");
            assert!(
                v.is_valid(&args),
                "{}: {args} not valid for {}",
                t.case,
                a.schema
            );
        }
        checked += 1;
    }
    eprintln!("BFCL simple_python: {checked} ground-truth calls round-tripped");
    assert!(checked >= 300, "{checked}");
}

#[test]
fn llama_cpp_tools_render_or_are_refused_by_name() {
    let mut outcomes = Vec::new();
    for (name, params) in data::llama_cpp_tools() {
        for p in Profile::ALL {
            match render_parameters(&name, &params, p) {
                Ok(r) => check(p, &params, &r, &name),
                Err(e) => {
                    let (pointer, keyword) = at(&e);
                    outcomes.push(format!("{name} {} {pointer} {keyword}", p.name()));
                }
            }
        }
    }
    outcomes.sort();
    let expected = [
        "Calendar.create_event anthropic /properties/metadata properties",
        "Calendar.create_event gemini /properties/metadata properties",
        "Calendar.create_event openai-strict /properties/metadata properties",
        "empty_args_no_schema anthropic /type type",
        "empty_args_no_schema gemini /type type",
        "empty_args_no_schema openai-strict /type type",
        "manage_todo_list anthropic /properties/todos items",
        "manage_todo_list gemini /properties/todos items",
        "manage_todo_list openai-strict /properties/todos items",
        "set_config anthropic /properties/config properties",
        "set_config gemini /properties/config properties",
        "set_config openai-strict /properties/config properties",
        "set_nullable gemini /properties/value/type type",
        "set_union anthropic /properties/value properties",
        "set_union gemini /properties/value/anyOf/1 properties",
        "set_union openai-strict /properties/value properties",
        "todo_list anthropic /properties/todos items",
        "todo_list gemini /properties/todos items",
        "todo_list openai-strict /properties/todos items",
    ];
    assert_eq!(outcomes, expected);
}
