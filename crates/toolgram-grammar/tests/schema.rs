//! `schema::to_grammar`: keyword classes (enforced, deferred, annotation, refused by name),
//! and the shapes of the grammars, read back through our own GBNF reader.

use serde_json::json;
use toolgram_grammar::schema::{self, NoteKind, SchemaOptions, keywords};
use toolgram_grammar::{gbnf, lark};

fn compile(s: serde_json::Value) -> (String, Vec<(String, String)>) {
    let (g, notes) = schema::to_grammar(&s, &SchemaOptions::default()).expect("compiles");
    let text = gbnf::emit(&g);
    gbnf::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    lark::parse(&lark::emit(&g, lark::LarkDialect::OpenAi)).expect("lark re-reads");
    let deferred = notes
        .into_iter()
        .filter(|n| n.kind == NoteKind::Deferred)
        .map(|n| (n.pointer, n.keyword))
        .collect();
    (text, deferred)
}

#[test]
fn unknown_keywords_are_refused_by_tool_pointer_and_name() {
    let opts = SchemaOptions {
        tool: Some("t".into()),
        ..SchemaOptions::default()
    };
    let e = schema::to_grammar(
        &json!({"type":"object","properties":{"a":{"type":"string","frobnicate":1}}}),
        &opts,
    )
    .expect_err("unknown keyword");
    assert_eq!(
        (e.tool.as_deref(), e.pointer.as_str(), e.keyword.as_str()),
        (Some("t"), "/properties/a", "frobnicate")
    );
    let lenient = SchemaOptions {
        lenient: true,
        ..opts
    };
    let (_, notes) = schema::to_grammar(&json!({"type":"string","frobnicate":1}), &lenient)
        .expect("lenient compiles");
    assert!(matches!(notes[0].kind, NoteKind::Warning(_)), "{notes:?}");
}

#[test]
fn after_parse_keywords_are_listed_never_dropped() {
    let (_, deferred) = compile(json!({
        "type":"object",
        "properties":{"tags":{"type":"array","uniqueItems":true},"n":{"type":"integer","multipleOf":3}},
        "dependentRequired":{"a":["b"]},"minProperties":1,"propertyNames":{"maxLength":3},
        "not":{"required":["x"]}
    }));
    for (p, k) in [
        ("", "dependentRequired"),
        ("", "minProperties"),
        ("", "propertyNames"),
        ("", "not"),
        ("/properties/tags", "uniqueItems"),
        ("/properties/n", "multipleOf"),
    ] {
        assert!(
            deferred.contains(&(p.to_owned(), k.to_owned())),
            "{k} at {p}: {deferred:?}"
        );
    }
}

#[test]
fn every_table_keyword_is_accepted_in_some_schema() {
    for k in keywords::KEYWORDS {
        let value = match k.name {
            "type" => json!("string"),
            "required" | "enum" | "examples" => json!(["a"]),
            "properties" | "$defs" | "definitions" | "patternProperties" | "dependentRequired"
            | "dependentSchemas" | "dependencies" | "$vocabulary" => json!({}),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => json!([{"type":"string"}]),
            "$ref" => json!("#/$defs/x"),
            "pattern" => json!("^a+$"),
            "format" => json!("date"),
            "const" | "title" | "description" | "$comment" | "$anchor" | "$id" | "$schema"
            | "contentMediaType" | "contentEncoding" | "$dynamicAnchor" | "default" => json!("a"),
            "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => json!(true),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minLength"
            | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties"
            | "minContains" | "maxContains" => json!(1),
            "multipleOf" => json!(2),
            _ => json!({}),
        };
        let mut s = json!({"$defs": {"x": {"type": "string"}}});
        s[k.name] = value;
        schema::to_grammar(&s, &SchemaOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    }
}

#[test]
fn integer_ranges_are_exact_digit_rules() {
    let (g, deferred) = compile(json!({"type":"integer","minimum":-5,"exclusiveMaximum":120}));
    assert!(deferred.is_empty(), "{deferred:?}");
    assert!(g.contains("\"-\""), "{g}");
}

#[test]
fn recursive_refs_become_recursive_rules() {
    let (g, _) = compile(json!({
        "$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},
        "$ref":"#/$defs/node"
    }));
    assert!(g.contains("ref0"), "{g}");
}

#[test]
fn remote_refs_are_refused() {
    let e = schema::to_grammar(
        &json!({"$ref":"https://example.com/s.json"}),
        &SchemaOptions::default(),
    )
    .expect_err("remote");
    assert_eq!(e.keyword, "$ref");
}

#[test]
fn closed_objects_follow_the_tool_call_policy() {
    let s = json!({"type":"object","properties":{"a":{"type":"string"}}});
    let open = gbnf::emit(
        &schema::to_grammar(&s, &SchemaOptions::default())
            .expect("ok")
            .0,
    );
    let closed = gbnf::emit(
        &schema::to_grammar(
            &s,
            &SchemaOptions {
                closed_objects: true,
                ..SchemaOptions::default()
            },
        )
        .expect("ok")
        .0,
    );
    assert!(open.len() > closed.len(), "{open}\n---\n{closed}");
}

#[test]
fn unexpressible_patterns_are_deferred() {
    let (_, deferred) = compile(json!({"type":"string","pattern":"^(?=a)a\\b$"}));
    assert_eq!(deferred, vec![(String::new(), "pattern".to_owned())]);
}

fn accepts(s: &serde_json::Value, instance: &str) -> bool {
    let (g, _) = schema::to_grammar(s, &SchemaOptions::default()).expect("compiles");
    toolgram_grammar::tree::parse_tree(&g, instance).is_ok()
}

/// Property order follows the schema's text as llguidance reads it: a `$ref`'s keys where
/// `$ref` stands, an `allOf` member's branches before the later members' properties, and a
/// branch's own branches flattened before it joins (MaskBench o77739, o60846,
/// testenvironments).
#[test]
fn merged_properties_keep_the_order_of_the_schema_text() {
    let ref_first = json!({"$defs": {"v": {"type": "object", "properties": {"reg": {"type": "string"}}}},
        "type": "object", "$ref": "#/$defs/v", "properties": {"track": {"type": "string"}}});
    assert!(accepts(&ref_first, r#"{"reg": "a", "track": "b"}"#));
    assert!(!accepts(&ref_first, r#"{"track": "b", "reg": "a"}"#));
    let all_of = json!({"allOf": [
        {"type": "object", "properties": {"match": {"type": "string"}}},
        {"anyOf": [{"properties": {"devices": {"type": "object"}}}, {"properties": {"device": {"type": "string"}}}]},
        {"properties": {"engine": {"type": "string"}}}]});
    assert!(accepts(
        &all_of,
        r#"{"match": "a", "devices": {}, "engine": "b"}"#
    ));
    assert!(accepts(
        &all_of,
        r#"{"match": "a", "device": "x", "engine": "b"}"#
    ));
    let nested = json!({"$defs": {"docker": {"properties": {"type": {"enum": ["docker"]}},
            "oneOf": [{"required": ["image"], "properties": {"image": {"type": "string"}}},
                      {"required": ["file"], "properties": {"file": {"type": "string"}}}]}},
        "type": "object", "required": ["type"], "oneOf": [{"$ref": "#/$defs/docker"}],
        "properties": {"name": {"type": "string"}}});
    assert!(accepts(
        &nested,
        r#"{"type": "docker", "image": "u", "name": "n"}"#
    ));
    assert!(accepts(&nested, r#"{"type": "docker", "file": "f"}"#));
}

/// Up to draft-07 `$ref` overrides the keywords beside it; from 2019-09 they apply with it.
#[test]
fn ref_siblings_follow_the_declared_draft() {
    let with = |draft: &str| {
        json!({"$schema": draft, "definitions": {"p": {"anyOf": [{"type": "string"},
            {"type": "object", "properties": {"key": {"type": "string"}}}]}},
            "type": "object", "properties": {"t": {"$ref": "#/definitions/p", "enum": ["key", "sas"]}}})
    };
    let object_value = r#"{"t": {"key": "k"}}"#;
    assert!(accepts(
        &with("http://json-schema.org/draft-07/schema#"),
        object_value
    ));
    assert!(!accepts(
        &with("https://json-schema.org/draft/2020-12/schema"),
        object_value
    ));
    assert!(accepts(
        &with("https://json-schema.org/draft/2020-12/schema"),
        r#"{"t": "sas"}"#
    ));
}

/// An `allOf` member that is only a `$ref` to a schema with branches has them distributed,
/// and a member with its own `allOf` is flattened where it stands, so properties come in
/// llguidance's order (MaskBench o64963, o90832).
#[test]
fn referenced_branches_and_nested_all_of_keep_the_schema_order() {
    let defs = json!({
        "base": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
            "oneOf": [{"properties": {"type": {"enum": ["Int32", "String"]}}, "required": ["type"]},
                      {"properties": {"custom": {"type": "string"}}, "required": ["custom"]}]},
        "desc": {"allOf": [{"properties": {"typeId": {"type": "string"}}}]}
    });
    let via_ref = json!({"definitions": defs,
        "allOf": [{"$ref": "#/definitions/base"}, {"properties": {"generated": {"type": "boolean"}}}]});
    assert!(accepts(
        &via_ref,
        r#"{"name": "p", "type": "Int32", "generated": true}"#
    ));
    assert!(accepts(&via_ref, r#"{"name": "p", "custom": "c"}"#));
    let nested = json!({"definitions": defs, "type": "object",
        "allOf": [{"properties": {"name": {"type": "string"}}}, {"$ref": "#/definitions/desc"},
                  {"properties": {"value": {"type": "number"}}, "required": ["value"]}]});
    assert!(accepts(
        &nested,
        r#"{"name": "PI", "typeId": "double", "value": 3.14}"#
    ));
}

/// JSON Schema compares numbers by value: `enum: [2.0]` admits `2`, an integer type admits
/// an integral enum value, and every 64-bit integer fits the number policy.
#[test]
fn numbers_are_matched_by_value_and_64_bit_integers_fit() {
    assert!(accepts(&json!({"enum": [2.0]}), "2"));
    assert!(accepts(&json!({"enum": [2.0]}), "2.0"));
    assert!(accepts(&json!({"type": "integer", "enum": [3.0]}), "3"));
    assert!(accepts(&json!({"type": "integer"}), "-9223372036854775808"));
    assert!(accepts(&json!({"type": "integer"}), "18446744073709551615"));
    assert!(accepts(&json!({"type": "number"}), "234567890123456789"));
    assert!(!accepts(
        &json!({"type": "integer"}),
        "123456789012345678901"
    ));
}
