//! Tests of the provider profiles: one per rule and per limit (`rules.rs`-level behaviour on
//! small schemas); real-world schemas (BFCL, llama.cpp's tools) are checked in
//! `toolgram-eval/tests/profiles.rs`, beside the one BFCL reader. These tests must not need a network.

mod union;

use super::*;
use serde_json::{Value, json};

pub(super) fn render(p: Profile, schema: Value) -> ProfiledSchema {
    render_parameters("t", &schema, p).unwrap_or_else(|e| panic!("{}: {e}", p.name()))
}

pub(super) fn refuse(p: Profile, schema: Value) -> ProfileError {
    match render_parameters("t", &schema, p) {
        Err(e) => e,
        Ok(s) => panic!("{} accepted: {}", p.name(), s.schema),
    }
}

/// (pointer, keyword) of an `Unsupported` error.
pub(super) fn at(e: &ProfileError) -> (&str, &str) {
    match e {
        ProfileError::Unsupported {
            pointer, keyword, ..
        } => (pointer, keyword),
        other => panic!("not Unsupported: {other}"),
    }
}

pub(super) fn deferred(s: &ProfiledSchema) -> Vec<(String, String)> {
    s.enforced_after_parse
        .iter()
        .map(|d| (d.pointer.clone(), d.keyword.clone()))
        .collect()
}

fn pair(p: &str, k: &str) -> (String, String) {
    (p.to_owned(), k.to_owned())
}

#[test]
fn profile_names_round_trip() {
    for p in Profile::ALL {
        assert_eq!(Profile::from_name(p.name()), Ok(p));
    }
    assert_eq!(
        Profile::from_name("cohere"),
        Err(ProfileError::UnknownProfile("cohere".into()))
    );
}

#[test]
fn openai_makes_every_property_required_and_optional_ones_nullable() {
    let s = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "when": {"$ref": "#/$defs/day"},
            "tags": {"type": ["array"], "items": {"type": "string"}}},
         "required": ["city"],
         "$defs": {"day": {"type": "string", "format": "date"}}}),
    );
    assert_eq!(
        s.schema,
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", null]},
            "when": {"anyOf": [{"$ref": "#/$defs/day"}, {"type": "null"}]},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}}},
         "required": ["city", "unit", "when", "tags"],
         "$defs": {"day": {"type": "string", "format": "date"}},
         "additionalProperties": false})
    );
    assert!(s.enforced_after_parse.is_empty());
    assert!(
        s.notes.iter().any(|n| n.contains("nullable")),
        "{:?}",
        s.notes
    );
}

#[test]
fn restore_turns_nulls_of_optional_properties_back_into_absence() {
    let params = json!({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": ["string", "null"]},
        "o": {"type": "object", "properties": {"x": {"type": "string"}}}},
     "required": ["a"]});
    let reply = json!({"a": "x", "b": null, "c": null, "o": {"x": null}});
    let restored = restore_arguments(Profile::OpenAiStrict, &params, reply.clone());
    assert_eq!(restored, json!({"a": "x", "c": null, "o": {}}));
    assert_eq!(
        restore_arguments(Profile::Gemini, &params, reply.clone()),
        reply
    );
}

#[test]
fn unsupported_assertions_are_deferred_with_their_pointer() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 9, "format": "uri"},
        "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "minItems": 3},
        "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5}},
     "required": ["name", "ids", "n"], "minProperties": 1});
    let o = render(Profile::OpenAiStrict, schema.clone());
    let mut d = deferred(&o);
    d.sort();
    assert_eq!(
        d,
        vec![
            pair("", "minProperties"),
            pair("/properties/ids", "uniqueItems"),
            pair("/properties/name", "format"),
            pair("/properties/name", "maxLength"),
            pair("/properties/name", "minLength"),
        ]
    );
    assert_eq!(o.schema["properties"]["n"]["multipleOf"], json!(0.5));
    let a = render(Profile::Anthropic, schema.clone());
    let d = deferred(&a);
    for k in ["minimum", "exclusiveMaximum", "multipleOf"] {
        assert!(d.contains(&pair("/properties/n", k)), "{k}: {d:?}");
    }
    // minItems 3 is widened to 1 (Anthropic's largest) and checked after parse.
    assert_eq!(a.schema["properties"]["ids"]["minItems"], json!(1));
    assert!(d.contains(&pair("/properties/ids", "minItems")));
    assert_eq!(a.schema["properties"]["name"]["format"], json!("uri"));
    let g = render(Profile::Gemini, schema);
    let d = deferred(&g);
    assert!(
        d.contains(&pair("/properties/n", "exclusiveMaximum")),
        "{d:?}"
    );
    assert!(d.contains(&pair("/properties/name", "format")), "{d:?}");
    assert_eq!(g.schema["properties"]["name"]["minLength"], json!(2));
}

#[test]
fn annotations_the_provider_rejects_are_removed_with_a_note() {
    let s = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"a": {"type": "string", "default": "x",
            "examples": ["y"], "x-internal": 1, "description": "kept"}}, "required": ["a"]}),
    );
    assert_eq!(
        s.schema["properties"]["a"],
        json!({"type": "string", "description": "kept"})
    );
    assert_eq!(s.notes.len(), 3, "{:?}", s.notes);
    let a = render(
        Profile::Anthropic,
        json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}),
    );
    assert_eq!(a.schema["properties"]["a"]["default"], json!("x"));
}

#[test]
fn shapes_strict_objects_cannot_express_are_typed_errors() {
    for p in [Profile::OpenAiStrict, Profile::Anthropic] {
        let free = refuse(
            p,
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
        );
        assert_eq!(at(&free), ("/properties/m", "properties"));
        let open = refuse(
            p,
            json!({"type": "object", "properties": {"m": {"type": "object",
                "properties": {}, "additionalProperties": {"type": "string"}}}}),
        );
        assert_eq!(
            at(&open),
            ("/properties/m/additionalProperties", "additionalProperties")
        );
        let pat = refuse(
            p,
            json!({"type": "object", "properties": {}, "patternProperties": {"^x": {"type": "string"}}}),
        );
        assert_eq!(at(&pat), ("/patternProperties", "patternProperties"));
        // An unknown keyword is an annotation: left out, noted, never a refusal.
        let unknown = render(
            p,
            json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true}}}),
        );
        assert!(unknown.schema["properties"]["a"].get("nullable").is_none());
        assert!(
            unknown.notes.iter().any(|n| n.contains("`nullable`")),
            "{:?}",
            unknown.notes
        );
        let root = refuse(p, json!({"type": "object", "anyOf": [{"properties": {}}]}));
        assert_eq!(at(&root), ("/anyOf", "anyOf"));
        let no_items = refuse(
            p,
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
        );
        assert_eq!(at(&no_items), ("/properties/l", "items"));
    }
    let e = refuse(
        Profile::Gemini,
        json!({"type": "object", "properties": {"m": {"type": "object"}}}),
    );
    assert_eq!(at(&e), ("/properties/m", "properties"));
    let e = render_parameters("weather", &json!({"type": "string"}), Profile::Gemini);
    assert!(matches!(e, Err(ProfileError::Unsupported { ref tool, .. }) if tool == "weather"));
}

#[test]
fn a_root_without_properties_is_a_tool_without_arguments() {
    for p in Profile::ALL {
        let s = render(p, json!({"type": "object"}));
        assert_eq!(s.schema["properties"], json!({}), "{}", p.name());
        assert!(s.notes.iter().any(|n| n.contains("without arguments")));
    }
}

#[test]
fn one_of_becomes_any_of_with_exclusivity_checked_later() {
    for p in Profile::ALL {
        let s = render(
            p,
            json!({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
                   "required": ["v"]}),
        );
        assert!(
            s.schema["properties"]["v"]["anyOf"].is_array(),
            "{}",
            s.schema
        );
        let mut want = vec![pair("/properties/v", "oneOf")];
        if p == Profile::Gemini {
            // Gemini cannot close objects: toolgram's closed-object policy is checked later.
            want.push(pair("", "additionalProperties"));
        }
        assert_eq!(deferred(&s), want);
    }
}

#[test]
fn all_of_is_merged_or_refused() {
    let s = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"$ref": "#/$defs/b"}],
         "$defs": {"b": {"properties": {"b": {"type": "integer"}}, "required": ["b"]}}}),
    );
    assert_eq!(s.schema["required"], json!(["a", "b"]));
    assert_eq!(s.schema["additionalProperties"], json!(false));
    assert!(s.enforced_after_parse.is_empty());
    let widened = render(
        Profile::Anthropic,
        json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "string"}}, "additionalProperties": false}]}),
    );
    assert_eq!(deferred(&widened), vec![pair("", "allOf")]);
    let e = refuse(
        Profile::Gemini,
        json!({"type": "object", "properties": {"x": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}),
    );
    assert_eq!(at(&e), ("/properties/x/allOf/1", "type"));
}

#[test]
fn recursion_is_kept_for_openai_and_refused_elsewhere() {
    let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/definitions/node"}},
        "required": ["root"],
        "definitions": {"node": {"type": "object", "properties": {
            "value": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
            "required": ["value", "children"]}}});
    let o = render(Profile::OpenAiStrict, tree.clone());
    assert_eq!(
        o.schema["properties"]["root"],
        json!({"$ref": "#/$defs/node"})
    );
    assert_eq!(
        o.schema["$defs"]["node"]["additionalProperties"],
        json!(false)
    );
    let self_ref = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"next": {"$ref": "#"}}}),
    );
    assert_eq!(
        self_ref.schema["properties"]["next"]["anyOf"][0],
        json!({"$ref": "#"})
    );
    for p in [Profile::Anthropic, Profile::Gemini] {
        assert_eq!(
            at(&refuse(p, tree.clone())),
            ("/properties/root/$ref", "$ref")
        );
    }
    let external = refuse(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"a": {"$ref": "https://x/y.json"}}}),
    );
    assert_eq!(at(&external), ("/properties/a/$ref", "$ref"));
}

#[test]
fn gemini_spells_types_nullability_and_constants_its_own_way() {
    let s = render(
        Profile::Gemini,
        json!({"type": "object", "properties": {
            "name": {"type": ["string", "null"]},
            "id": {"type": ["string", "integer"], "description": "either", "minLength": 1, "minimum": 0},
            "kind": {"const": "fixed"},
            "level": {"type": "integer", "enum": [1, 2]},
            "addr": {"$ref": "#/$defs/addr"},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
         "required": ["name"], "additionalProperties": false,
         "$defs": {"addr": {"type": "object", "properties": {"street": {"type": "string"}}}}}),
    );
    let p = &s.schema["properties"];
    assert_eq!(p["name"], json!({"type": "STRING", "nullable": true}));
    assert_eq!(
        p["id"],
        json!({"description": "either", "anyOf": [
            {"minLength": 1, "type": "STRING"}, {"minimum": 0, "type": "INTEGER"}]})
    );
    assert_eq!(p["kind"], json!({"enum": ["fixed"], "type": "STRING"}));
    assert_eq!(p["level"], json!({"type": "INTEGER"}));
    assert_eq!(
        p["addr"],
        json!({"type": "OBJECT", "properties": {"street": {"type": "STRING"}}})
    );
    assert_eq!(p["maybe"], json!({"nullable": true, "type": "NUMBER"}));
    assert_eq!(s.schema["propertyOrdering"][0], json!("name"));
    assert!(s.schema.get("$defs").is_none() && s.schema.get("additionalProperties").is_none());
    let d = deferred(&s);
    assert!(d.contains(&pair("", "additionalProperties")), "{d:?}");
    assert!(d.contains(&pair("/properties/level", "enum")), "{d:?}");
    let bad = refuse(
        Profile::Gemini,
        json!({"type": "object", "properties": {"a.b": {"type": "string"}}}),
    );
    assert_eq!(at(&bad), ("/properties", "properties"));
}

#[test]
fn anthropic_defers_patterns_outside_its_regex_subset() {
    let s = render(
        Profile::Anthropic,
        json!({"type": "object", "properties": {
            "a": {"type": "string", "pattern": "^(?!x)\\w+$"},
            "b": {"type": "string", "pattern": "^[a-z]+$"}}}),
    );
    assert_eq!(deferred(&s), vec![pair("/properties/a", "pattern")]);
    assert_eq!(s.schema["properties"]["b"]["pattern"], json!("^[a-z]+$"));
    assert_eq!(s.schema["required"], Value::Null);
}

fn nested(levels: usize) -> Value {
    (1..levels).fold(
        json!({"type": "object", "properties": {}}),
        |inner, _| json!({"type": "object", "properties": {"x": inner}, "required": ["x"]}),
    )
}

fn limit(e: ProfileError) -> (&'static str, usize, usize) {
    match e {
        ProfileError::OverLimit {
            limit, value, max, ..
        } => (limit, value, max),
        other => panic!("not a limit: {other}"),
    }
}

#[test]
fn openai_limits_are_errors() {
    render(Profile::OpenAiStrict, nested(10));
    assert_eq!(
        limit(refuse(Profile::OpenAiStrict, nested(11))),
        ("the object nesting depth", 11, 10)
    );
    let many: serde_json::Map<String, Value> = (0..5001)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let e = refuse(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": many}),
    );
    assert_eq!(limit(e).1, 5001);
    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let e = refuse(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"e": {"type": "string", "enum": values}}, "required": ["e"]}),
    );
    assert_eq!(limit(e), ("the total number of enum values", 1001, 1000));
    let long: Vec<String> = (0..251).map(|i| format!("{i:0>60}")).collect();
    let e = refuse(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"e": {"type": "string", "enum": long}}, "required": ["e"]}),
    );
    assert_eq!(
        limit(e).0,
        "the string length of one enum of more than 250 values"
    );
    let names: serde_json::Map<String, Value> = (0..1300)
        .map(|i| (format!("{i:0>100}"), json!({"type": "integer"})))
        .collect();
    let e = refuse(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": names}),
    );
    assert_eq!(
        limit(e).0,
        "the total string length of names and enum/const values"
    );
}

#[test]
fn tuples_become_an_any_of_per_element_with_positions_checked_later() {
    for p in Profile::ALL {
        let s = render(
            p,
            json!({"type": "object", "properties": {"pair": {"type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}},
             "required": ["pair"]}),
        );
        let items = &s.schema["properties"]["pair"]["items"];
        assert_eq!(
            items["anyOf"].as_array().map(Vec::len),
            Some(2),
            "{}",
            s.schema
        );
        let mut d = deferred(&s);
        d.retain(|(_, k)| k != "additionalProperties");
        assert_eq!(
            d,
            vec![
                pair("/properties/pair", "items"),
                pair("/properties/pair", "prefixItems")
            ]
        );
    }
    let old = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {"t": {"type": "array",
            "items": [{"type": "string"}], "additionalItems": {"type": "number"}}}, "required": ["t"]}),
    );
    assert_eq!(
        old.schema["properties"]["t"]["items"],
        json!({"anyOf": [{"type": "string"}, {"type": "number"}]})
    );
    let open = refuse(
        Profile::Gemini,
        json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}]}}}),
    );
    assert_eq!(at(&open), ("/properties/t/prefixItems", "prefixItems"));
    let both = refuse(
        Profile::Anthropic,
        json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}], "oneOf": [{"type": "string"}]}}}),
    );
    assert_eq!(at(&both), ("/properties/v/oneOf", "oneOf"));
}

#[test]
fn references_with_siblings_are_inlined_and_unused_definitions_noted() {
    let s = render(
        Profile::OpenAiStrict,
        json!({"type": "object", "properties": {
            "home": {"$ref": "#/definitions/addr", "description": "where I live"}},
         "required": ["home"],
         "definitions": {
            "addr": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["zip"]},
            "unused": {"type": "string"}}}),
    );
    assert_eq!(
        s.schema["properties"]["home"],
        json!({"description": "where I live", "type": "object",
               "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
               "required": ["zip"], "additionalProperties": false})
    );
    assert!(s.schema.get("$defs").is_none(), "{}", s.schema);
    assert!(
        s.notes.iter().any(|n| n.contains("`unused` not sent")),
        "{:?}",
        s.notes
    );
    let a = render(
        Profile::Anthropic,
        json!({"type": "object", "properties": {"k": {"type": "array", "items": {"type": "integer"}, "enum": [[1], [2, 3]]}}}),
    );
    assert_eq!(deferred(&a), vec![pair("/properties/k", "enum")]);
    // Without its enum the schema would accept anything: refused, not widened to "any".
    let e = refuse(
        Profile::Anthropic,
        json!({"type": "object", "properties": {"k": {"enum": [{"a": 1}]}}}),
    );
    assert_eq!(at(&e), ("/properties/k", "type"));
}

#[test]
fn restore_follows_references_and_the_one_fitting_any_of_member() {
    let params = json!({"type": "object", "properties": {
        "who": {"$ref": "#/$defs/person"},
        "what": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/person"}]}},
     "required": ["who", "what"],
     "$defs": {"person": {"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}}});
    let r = render(Profile::OpenAiStrict, params.clone());
    let reply = json!({"who": {"name": "a", "age": null}, "what": {"name": "b", "age": null}});
    let strict = jsonschema::validator_for(&r.schema).expect("JSON Schema");
    assert!(strict.is_valid(&reply), "{}", r.schema);
    let restored = restore_arguments(Profile::OpenAiStrict, &params, reply);
    assert_eq!(
        restored,
        json!({"who": {"name": "a"}, "what": {"name": "b"}})
    );
    let original =
        jsonschema::validator_for(&toolgram_core::define::arguments::close_objects(&params))
            .expect("JSON Schema");
    assert!(original.is_valid(&restored));
}

#[test]
fn a_definition_inlined_twice_is_reported_once() {
    let s = render(
        Profile::Gemini,
        json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#/$defs/n"}},
         "required": ["a", "b"], "$defs": {"n": {"type": "number", "multipleOf": 2}}}),
    );
    let mut d = deferred(&s);
    d.retain(|(_, k)| k == "multipleOf");
    assert_eq!(d, vec![pair("/$defs/n", "multipleOf")]);
}

#[test]
fn inlining_that_fans_out_stops_at_a_limit() {
    // d0 uses d1 twice, d1 uses d2 twice, …: 2^40 schemas once inlined.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let e = refuse(Profile::Gemini, schema.clone());
    assert!(
        matches!(e, ProfileError::OverLimit { max: 100_000, .. }),
        "{e}"
    );
    // The same fan-out through allOf is merged, not rendered: it stops at the same limit.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"allOf": [next, next]}));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let merged =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    for p in Profile::ALL {
        assert!(matches!(
            refuse(p, merged.clone()),
            ProfileError::OverLimit { max: 100_000, .. }
        ));
    }
    // Profiles with $ref keep the references: nothing to inline, and limits are counted
    // without walking every path.
    render(Profile::Anthropic, schema.clone());
    let reply = json!({"x": {"a": null, "b": null}});
    assert_eq!(
        restore_arguments(Profile::OpenAiStrict, &schema, reply),
        json!({"x": {}})
    );
    let e = refuse(Profile::OpenAiStrict, schema);
    assert!(
        matches!(
            e,
            ProfileError::OverLimit {
                value: 41,
                max: 10,
                ..
            }
        ),
        "{e}"
    );
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[&str] = &[
        "type",
        "properties",
        "required",
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "enum",
        "const",
        "format",
        "additionalProperties",
        "minItems",
        "pattern",
        "description",
        "not",
        "nullable",
        "a",
        "b",
    ];
    const STRINGS: &[&str] = &[
        "object",
        "string",
        "integer",
        "null",
        "array",
        "#",
        "#/$defs/a",
        "#/properties/a",
        "date-time",
        "uri",
        "a",
        "b",
    ];

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            (0u8..4).prop_map(|n| json!(n)),
            prop::sample::select(STRINGS).prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn rendering_any_json_never_panics(body in json(), reply in json()) {
            let mut params = json!({"type": "object"});
            if let (Value::Object(p), Value::Object(b)) = (&mut params, &body) {
                p.extend(b.clone());
                p.insert("type".into(), json!("object"));
            }
            for p in Profile::ALL {
                let _ = render_parameters("t", &params, p);
                let _ = restore_arguments(p, &params, reply.clone());
            }
        }
    }
}
