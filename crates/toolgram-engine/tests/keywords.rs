//! Every JSON-Schema keyword toolgram promises to enforce, on both compile targets: one schema,
//! an instance that keeps the keyword and one that breaks it. The kept one must pass the
//! grammar and the post-parse validator; the broken one must be stopped — by the grammar
//! itself when the keyword table says the grammar enforces it, else by the validator.

mod common;

use serde_json::{Value, json};
use toolgram_core::compile::{KeywordPass, bare_grammar_schema};
use toolgram_core::define::arguments::post_parse_validator;
use toolgram_engine::ByteChecker;
use toolgram_engine::gbnf_check::{self, Job};
use toolgram_grammar::gbnf;
use toolgram_grammar::schema::keywords::{self, Class};
use toolgram_grammar::schema::{SchemaOptions, to_grammar};

/// (keyword, schema, kept, broken)
#[allow(clippy::too_many_lines, reason = "a case table, one row per keyword")]
fn cases() -> Vec<(&'static str, Value, Value, Value)> {
    let s = |v: &str| json!(v);
    vec![
        (
            "type",
            json!({"type": ["integer", "null"]}),
            json!(null),
            s("x"),
        ),
        (
            "properties",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
            json!({"a": 1}),
            json!({"a": "1"}),
        ),
        (
            "required",
            json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
            json!({"a": 1}),
            json!({}),
        ),
        (
            "additionalProperties",
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}}),
            json!({"a": "x", "b": 2}),
            json!({"b": "2"}),
        ),
        (
            "patternProperties",
            json!({"type": "object", "patternProperties": {"^n_": {"type": "integer"}}}),
            json!({"n_a": 1}),
            json!({"n_a": "1"}),
        ),
        (
            "enum",
            json!({"enum": ["economy", "business"]}),
            s("economy"),
            s("first"),
        ),
        (
            "const",
            json!({"const": {"a": [1, 2]}}),
            json!({"a": [1, 2]}),
            json!({"a": [2, 1]}),
        ),
        (
            "anyOf",
            json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}),
            json!(true),
            s("x"),
        ),
        (
            "oneOf",
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
            json!(1),
            json!(3),
        ),
        (
            "allOf",
            json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}),
            json!(3),
            json!(1),
        ),
        (
            "not",
            json!({"type": "integer", "not": {"const": 3}}),
            json!(2),
            json!(3),
        ),
        (
            "$ref",
            json!({"$defs": {"p": {"type": "integer"}}, "$ref": "#/$defs/p"}),
            json!(1),
            s("1"),
        ),
        (
            "$defs",
            json!({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}, "additionalProperties": false}}, "$ref": "#/$defs/n"}),
            json!({"next": {"next": {}}}),
            json!({"next": {"nxt": {}}}),
        ),
        (
            "items",
            json!({"type": "array", "items": {"type": "integer"}}),
            json!([1, 2]),
            json!([1, "2"]),
        ),
        (
            "prefixItems",
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}),
            json!([1, "a"]),
            json!(["a", 1]),
        ),
        (
            "additionalItems",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "integer"}], "additionalItems": false}),
            json!([1]),
            json!([1, 2]),
        ),
        (
            "minItems",
            json!({"type": "array", "minItems": 2}),
            json!([1, 2]),
            json!([1]),
        ),
        (
            "maxItems",
            json!({"type": "array", "maxItems": 1}),
            json!([1]),
            json!([1, 2]),
        ),
        (
            "uniqueItems",
            json!({"type": "array", "uniqueItems": true}),
            json!([1, 2]),
            json!([1, 1]),
        ),
        (
            "minLength",
            json!({"type": "string", "minLength": 2}),
            s("ab"),
            s("a"),
        ),
        (
            "maxLength",
            json!({"type": "string", "maxLength": 2}),
            s("ab"),
            s("abc"),
        ),
        (
            "pattern",
            json!({"type": "string", "pattern": "^[A-Z]{3}$"}),
            s("PAR"),
            s("Paris"),
        ),
        (
            "minimum",
            json!({"type": "integer", "minimum": 10}),
            json!(10),
            json!(9),
        ),
        (
            "maximum",
            json!({"type": "number", "maximum": 1.5}),
            json!(1.5),
            json!(1.75),
        ),
        (
            "exclusiveMinimum",
            json!({"type": "integer", "exclusiveMinimum": 10}),
            json!(11),
            json!(10),
        ),
        (
            "exclusiveMaximum",
            json!({"type": "number", "exclusiveMaximum": 0}),
            json!(-0.5),
            json!(0),
        ),
        (
            "multipleOf",
            json!({"type": "integer", "multipleOf": 5}),
            json!(15),
            json!(12),
        ),
        (
            "minProperties",
            json!({"type": "object", "minProperties": 1}),
            json!({"a": 1}),
            json!({}),
        ),
        (
            "maxProperties",
            json!({"type": "object", "maxProperties": 1}),
            json!({"a": 1}),
            json!({"a": 1, "b": 2}),
        ),
        (
            "dependentRequired",
            json!({"type": "object", "dependentRequired": {"a": ["b"]}}),
            json!({"a": 1, "b": 2}),
            json!({"a": 1}),
        ),
        (
            "propertyNames",
            json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}),
            json!({"ab": 1}),
            json!({"Ab": 1}),
        ),
        (
            "format",
            json!({"type": "string", "format": "date-time"}),
            s("2026-11-22T10:00:00Z"),
            s("2026-11-22 10h"),
        ),
        (
            "format",
            json!({"type": "string", "format": "date"}),
            s("2026-11-22"),
            s("22/11/2026"),
        ),
        (
            "format",
            json!({"type": "string", "format": "time"}),
            s("10:00:00Z"),
            s("10h00"),
        ),
        (
            "format",
            json!({"type": "string", "format": "duration"}),
            s("P3DT4H"),
            s("3 days"),
        ),
        (
            "format",
            json!({"type": "string", "format": "email"}),
            s("ada@example.com"),
            s("ada.example.com"),
        ),
        (
            "format",
            json!({"type": "string", "format": "hostname"}),
            s("example.com"),
            s("exa mple.com"),
        ),
        (
            "format",
            json!({"type": "string", "format": "uuid"}),
            s("123e4567-e89b-12d3-a456-426614174000"),
            s("123e4567"),
        ),
        (
            "format",
            json!({"type": "string", "format": "uri"}),
            s("https://example.com/a"),
            s("not a uri"),
        ),
        (
            "format",
            json!({"type": "string", "format": "ipv4"}),
            s("192.168.0.1"),
            s("192.168.0.256"),
        ),
        (
            "format",
            json!({"type": "string", "format": "ipv6"}),
            s("::1"),
            s("::g"),
        ),
    ]
}

fn grammar_must_reject(keyword: &str, column: fn(&keywords::Keyword) -> Class) -> bool {
    keywords::lookup(keyword).is_some_and(|k| column(&k) == Class::Grammar)
}

#[test]
fn every_promised_keyword_is_enforced_on_the_llguidance_path() {
    let checker = ByteChecker::new().expect("checker");
    let mut bad = Vec::new();
    for (kw, schema, kept, broken) in cases() {
        let mut pass = KeywordPass::default();
        let g = bare_grammar_schema(&schema, &mut pass);
        assert!(pass.unknown.is_empty(), "{kw}: {:?}", pass.unknown);
        let deferred = pass.deferred.iter().any(|d| d.keyword == kw);
        let compiled = checker
            .compile(&format!("start: %json {g}\n"))
            .unwrap_or_else(|e| panic!("{kw}: {e}"));
        let validator = post_parse_validator(&schema).expect("validator");
        if !(checker.accepts(&compiled, &kept.to_string()) && validator.is_valid(&kept)) {
            bad.push(format!("{kw} {schema}: kept {kept} rejected"));
        }
        let by_grammar = !checker.accepts(&compiled, &broken.to_string());
        if !by_grammar && validator.is_valid(&broken) {
            bad.push(format!("{kw} {schema}: broken {broken} accepted"));
        }
        if !deferred && !by_grammar && grammar_must_reject(kw, |k| k.llguidance) {
            bad.push(format!("{kw} {schema}: the grammar should stop {broken}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_promised_keyword_is_enforced_by_our_gbnf_in_llama_cpp() {
    let cases = cases();
    let mut jobs = Vec::new();
    let mut deferred = Vec::new();
    for (kw, schema, kept, broken) in &cases {
        let (g, notes) =
            to_grammar(schema, &SchemaOptions::default()).unwrap_or_else(|e| panic!("{kw}: {e}"));
        deferred.push(notes.iter().any(|n| n.keyword == *kw));
        jobs.push(Job {
            grammar: gbnf::emit(&g),
            strings: vec![kept.to_string(), broken.to_string()],
        });
    }
    let verdicts = gbnf_check::check_many(&common::test_model_path(), &jobs).expect("checker");
    let mut bad = Vec::new();
    for (((kw, schema, kept, broken), v), deferred) in cases.iter().zip(&verdicts).zip(deferred) {
        let validator = post_parse_validator(schema).expect("validator");
        if !v.parsed {
            bad.push(format!("{kw} {schema}: llama.cpp refused our GBNF"));
            continue;
        }
        if !(v.accepted[0] && validator.is_valid(kept)) {
            bad.push(format!("{kw} {schema}: kept {kept} rejected"));
        }
        let by_grammar = !v.accepted[1];
        if !by_grammar && validator.is_valid(broken) {
            bad.push(format!("{kw} {schema}: broken {broken} accepted"));
        }
        if !deferred && !by_grammar && grammar_must_reject(kw, |k| k.ours) {
            bad.push(format!("{kw} {schema}: the grammar should stop {broken}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
