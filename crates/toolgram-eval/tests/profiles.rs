//! Provider profiles on real-world schemas written by others: every BFCL function (read by
//! this crate's one BFCL reader, as the eval sends it) and llama.cpp's chat-test tools,
//! rendered under every profile and checked by an independent reading of each profile's
//! rules: allowed keywords, closed objects, and "nothing dropped silently" (every assertion of
//! the original is either in the rendered schema or listed as enforced after parse). Ground
//! truth must survive OpenAI strict mode and the restore step, alone and inside a call union.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use toolgram_core::ToolSet;
use toolgram_core::define::arguments::close_objects;
use toolgram_eval::bfcl::{DEFAULT_CATEGORIES, Item, read_category};
use toolgram_providers::profile::{
    CALLS_KEY, Profile, ProfileError, ProfiledSchema, call_union_schema, render_parameters,
    restore_arguments,
};

/// The repository's test data (`testdata/`, see its README).
fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn category(name: &str) -> Vec<Item> {
    read_category(&testdata().join("bfcl"), name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An item's functions as (name, parameters), as the eval sends them.
fn functions(item: &Item) -> Vec<(String, Value)> {
    item.tools
        .iter()
        .map(|t| {
            let f = &t["function"];
            (
                f["name"].as_str().unwrap_or_default().to_owned(),
                f["parameters"].clone(),
            )
        })
        .collect()
}

/// (pointer, keyword) of an `Unsupported` error.
fn at(e: &ProfileError) -> (&str, &str) {
    match e {
        ProfileError::Unsupported {
            pointer, keyword, ..
        } => (pointer, keyword),
        other => panic!("not Unsupported: {other}"),
    }
}

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
    for c in DEFAULT_CATEGORIES {
        for item in category(c) {
            for (name, parameters) in functions(&item) {
                total += 1;
                for p in Profile::ALL {
                    match render_parameters(&name, &parameters, p) {
                        Ok(r) => {
                            check(p, &parameters, &r, &format!("{} {name}", item.id));
                            if p != Profile::Gemini {
                                // OpenAI and Anthropic take JSON Schema proper.
                                let meta = jsonschema::meta::validate(&r.schema);
                                assert!(meta.is_ok(), "{}", r.schema);
                            }
                            *rendered.entry(p.name()).or_insert(0) += 1;
                        }
                        Err(e) => {
                            let (pointer, keyword) = at(&e);
                            let node = parameters.pointer(pointer).unwrap_or(&Value::Null);
                            let why = match keyword {
                                // A free-form map (BFCL `dict` without properties).
                                "properties" if node.get("type") == Some(&json!("object")) => {
                                    assert!(node.get("properties").is_none(), "{e}");
                                    "free-form object"
                                }
                                // Gemini's parameter-name rule (BFCL names with dots or dashes).
                                "properties" if p == Profile::Gemini => "Gemini parameter name",
                                _ => panic!("{}: unexpected refusal {e}", item.id),
                            };
                            *refused.entry((p.name(), why.to_owned())).or_insert(0) += 1;
                        }
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

/// The first accepted value of each parameter of one expected call (`""` means "may be
/// omitted").
fn first_values(params: &Value) -> Map<String, Value> {
    params
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, vals)| {
            Some((
                k.clone(),
                vals.as_array()?.iter().find(|v| *v != "")?.clone(),
            ))
        })
        .collect()
}

fn valid_for_original(parameters: &Value, args: &Value) -> bool {
    jsonschema::validator_for(&close_objects(parameters)).is_ok_and(|v| v.is_valid(args))
}

#[test]
fn bfcl_ground_truth_survives_openai_strict_and_restore() {
    let mut checked = 0;
    for item in category("simple_python") {
        let Some((name, parameters)) = functions(&item).into_iter().next() else {
            continue;
        };
        let Some(truth) = item.answers.first().and_then(|a| a.values().next()) else {
            continue;
        };
        let args = Value::Object(first_values(truth));
        if !valid_for_original(&parameters, &args) {
            continue; // ground truth outside its own schema (e.g. an integer for a float)
        }
        let Ok(r) = render_parameters(&name, &parameters, Profile::OpenAiStrict) else {
            continue;
        };
        let mut reply = args.clone();
        fill_nulls(&parameters, &mut reply);
        let strict = jsonschema::validator_for(&r.schema).expect("rendered schema is JSON Schema");
        assert!(
            strict.is_valid(&reply),
            "{}: {reply} not valid for {}",
            item.id,
            r.schema
        );
        assert_eq!(
            restore_arguments(Profile::OpenAiStrict, &parameters, reply),
            args,
            "{}",
            item.id
        );
        // Anthropic keeps optional properties optional: the call itself must validate.
        if let Ok(a) = render_parameters(&name, &parameters, Profile::Anthropic) {
            let v = jsonschema::validator_for(&a.schema).expect("rendered schema is JSON Schema");
            assert!(
                v.is_valid(&args),
                "{}: {args} not valid for {}",
                item.id,
                a.schema
            );
        }
        checked += 1;
    }
    eprintln!("BFCL simple_python: {checked} ground-truth calls round-tripped");
    assert!(checked >= 300, "{checked}");
}

#[test]
fn bfcl_pools_give_unions_that_accept_their_ground_truth() {
    let (mut accepted, mut refused) = (0, 0);
    for item in category("parallel_multiple") {
        let set = ToolSet::from_value(&Value::Array(item.tools.clone()))
            .unwrap_or_else(|e| panic!("{}: {e}", item.id));
        let union = match call_union_schema(&set, true, Profile::OpenAiStrict) {
            Ok(u) => u,
            Err(ProfileError::Unsupported { keyword, .. }) if keyword == "properties" => {
                refused += 1;
                continue;
            }
            Err(e) => panic!("{}: {e}", item.id),
        };
        for p in [Profile::Anthropic, Profile::Gemini] {
            match call_union_schema(&set, true, p) {
                Ok(_) | Err(ProfileError::OverLimit { .. }) => {}
                Err(ProfileError::Unsupported { keyword, .. }) if keyword == "properties" => {}
                Err(e) => panic!("{} {}: {e}", item.id, p.name()),
            }
        }
        let validator = jsonschema::validator_for(&union.schema).expect("union is JSON Schema");
        let mut calls = Vec::new();
        let mut original_ok = true;
        for (function, params) in item.answers.iter().flat_map(|a| a.iter()) {
            let Some(tool) = set.get(&toolgram_eval::bfcl::convert::tool_name(function)) else {
                continue;
            };
            let args = first_values(params);
            original_ok &= valid_for_original(&tool.parameters, &Value::Object(args.clone()));
            let mut reply = Value::Object(args);
            // An OpenAI strict reply spells absent optional parameters as null.
            fill_nulls(&tool.parameters, &mut reply);
            calls.push(json!({"name": tool.name, "arguments": reply}));
        }
        if !original_ok {
            continue; // ground truth outside its own schema (e.g. an integer for a float)
        }
        let reply = json!({CALLS_KEY: calls});
        assert!(
            validator.is_valid(&reply),
            "{}: {reply}\n{}",
            item.id,
            union.schema
        );
        accepted += 1;
    }
    eprintln!(
        "BFCL parallel_multiple: {accepted} ground-truth replies accepted by the openai-strict union, {refused} pools refused"
    );
    assert!(accepted >= 150, "{accepted}");
}

/// llama.cpp's chat-test tool definitions: `{name: {name, description, parameters}}`.
fn llama_cpp_tools() -> Vec<(String, Value)> {
    let path = testdata().join("toolcall-parsing/tools.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("tools.json: {e}"));
    doc.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v["parameters"].clone()))
        .collect()
}

#[test]
fn llama_cpp_tools_render_or_are_refused_by_name() {
    let mut outcomes = Vec::new();
    for (name, params) in llama_cpp_tools() {
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
