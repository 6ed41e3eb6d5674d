//! A tool's argument schema as every stage reads it: objects that list `properties` are
//! closed ([`close_objects`], the tool-call policy), and [`post_parse_validator`] builds the
//! validator that checks arguments against the schema after parsing — the schema's own draft,
//! `format` checked (with OpenAPI's numeric formats as bounds), `multipleOf` exact on decimals
//! ([`multiple_of`]) and `const`/`enum`/`uniqueItems` equal whatever the key order
//! ([`equality`]).
//!
//! This module must not compile grammars or word messages for the model (`validate` does).

mod equality;
mod multiple_of;

use serde_json::Value;
use toolgram_grammar::schema::keywords;
use toolgram_grammar::schema::walk::for_each_child_mut;

/// A schema keyword left out of the grammar and enforced after parsing instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferredKeyword {
    /// The tool.
    pub tool: String,
    /// JSON pointer into the tool's `parameters`.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
}

/// The validator that enforces, after parsing, everything the grammar leaves out: the
/// schema's own draft (from `$schema`, 2020-12 without it), with `format` checked.
pub fn post_parse_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    let schema = &with_numeric_formats(schema);
    jsonschema::options()
        .should_validate_formats(true)
        .with_format("iri", is_absolute_iri)
        .with_format("uri-template", is_uri_template)
        .with_keyword("multipleOf", multiple_of::factory)
        .with_keyword("const", equality::const_factory)
        .with_keyword("enum", equality::enum_factory)
        .with_keyword("uniqueItems", equality::unique_items_factory)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// `schema` with OpenAPI's `int32`/`int64` formats written as the integer bounds they mean
/// (as both grammar targets read them), so the validator enforces them too. Values that are
/// data, not schemas (`enum`, `const`, `default`, examples), are left as they are.
fn with_numeric_formats(schema: &Value) -> Value {
    let mut s = schema.clone();
    numeric_formats_in_place(&mut s);
    s
}

fn numeric_formats_in_place(v: &mut Value) {
    let Value::Object(map) = v else { return };
    if let Some(m) = toolgram_grammar::schema::openapi_numeric_format(map) {
        *map = m;
    }
    for_each_child_mut(map, |_, _, c| numeric_formats_in_place(c));
}

/// RFC 6570 URI template: expressions `{…}` closed, not nested, not empty, no stray `}` (the
/// `jsonschema` crate accepts an unclosed `{`).
fn is_uri_template(s: &str) -> bool {
    let mut open = false;
    let mut empty = true;
    for c in s.chars() {
        match (c, open) {
            ('{', false) => (open, empty) = (true, true),
            ('}', true) if !empty => open = false,
            ('{' | '}', _) => return false,
            (c, _) if c.is_whitespace() || c.is_control() => return false,
            (_, true) => empty = false,
            _ => {}
        }
    }
    !open
}

/// RFC 3987 `IRI`: a scheme, `:`, then no spaces, controls or characters IRIs exclude (the
/// `jsonschema` crate's own `iri` check accepts scheme-less text such as `not-an-iri`).
fn is_absolute_iri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.chars().any(|c| {
            c.is_control()
                || c.is_whitespace()
                || matches!(c, '<' | '>' | '"' | '{' | '}' | '|' | '\\' | '^' | '`')
        })
}

/// Tool-call policy: an object schema that lists `properties` and says nothing about other
/// keys is closed (`additionalProperties: false`), as OpenAI's strict mode does; schemas that
/// apply alongside it (`allOf` members, `if`/`then`/`else`, `dependentSchemas`) leave it open
/// and are left open themselves, so that their intersection still works.
pub fn close_objects(schema: &Value) -> Value {
    let mut s = schema.clone();
    close_in_place(&mut s);
    s
}

fn close_in_place(v: &mut Value) {
    let Value::Object(map) = v else { return };
    let open = map
        .keys()
        .any(|k| keywords::lookup(k).is_some_and(|row| row.other_keys || row.alongside()));
    if map.contains_key("properties") && !open {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for_each_child_mut(map, |row, _, child| {
        if !row.alongside() {
            close_in_place(child);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_closed_except_under_all_of() {
        let s = close_objects(
            &json!({"type":"object","properties":{"p":{"type":"object","properties":{}}},
            "allOf":[{"properties":{"q":{}}}]}),
        );
        assert_eq!(s.get("additionalProperties"), None);
        assert_eq!(s["properties"]["p"]["additionalProperties"], json!(false));
        assert_eq!(s["allOf"][0].get("additionalProperties"), None);
    }

    /// `then` may add properties to the same object: neither it nor its holder is closed (a
    /// closed holder would refuse every key `then` adds).
    #[test]
    fn objects_with_conditional_properties_stay_open() {
        let s = close_objects(&json!({"type": "object", "properties": {"kind": {}},
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"properties": {"a": {"type": "object", "properties": {}}}},
            "additionalItems": {"properties": {}}}));
        assert_eq!(s.get("additionalProperties"), None);
        assert_eq!(s["then"].get("additionalProperties"), None);
        assert_eq!(s["additionalItems"]["additionalProperties"], json!(false));
    }

    #[test]
    fn iri_format_needs_a_scheme() {
        let v = post_parse_validator(&json!({"type": "string", "format": "iri"})).expect("builds");
        assert!(v.is_valid(&json!("https://example.com/ä")));
        assert!(v.is_valid(&json!("urn:isbn:0451450523")));
        assert!(!v.is_valid(&json!("not-an-iri")));
        assert!(!v.is_valid(&json!("https://exa mple.com")));
        let t = post_parse_validator(&json!({"format": "uri-template"})).expect("builds");
        assert!(t.is_valid(&json!("http://example.com/{id}/x{?q,r}")));
        assert!(!t.is_valid(&json!("http://example.com/resource/{")));
        assert!(!t.is_valid(&json!("http://example.com/{}")));
    }

    /// The validator's `multipleOf` is exact on decimals and accepts negative multiples (the
    /// `jsonschema` crate's own refuses every negative number).
    #[test]
    fn multiple_of_after_parse_is_exact_and_signed() {
        let v =
            post_parse_validator(&json!({"type": "number", "multipleOf": 0.01})).expect("builds");
        assert!(v.is_valid(&json!(-500.25)));
        assert!(v.is_valid(&json!(0.3)));
        assert!(!v.is_valid(&json!(12.345)));
    }

    /// Objects are compared whatever their key order (instances keep the order written:
    /// serde_json's `preserve_order`), numbers by value — in `uniqueItems`, `enum`, `const`.
    #[test]
    fn equality_after_parse_ignores_key_order() {
        let read = |t: &str| -> Value { serde_json::from_str(t).expect("json") };
        let unique =
            post_parse_validator(&json!({"type": "array", "uniqueItems": true})).expect("builds");
        assert!(!unique.is_valid(&read(r#"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"#)));
        assert!(!unique.is_valid(&read("[1.0, 1]")));
        assert!(unique.is_valid(&read(r#"[{"a": 1}, {"a": 2}]"#)));
        let one_of =
            post_parse_validator(&read(r#"{"enum": [{"a": 1, "b": [2]}, "x"]}"#)).expect("builds");
        assert!(one_of.is_valid(&read(r#"{"b": [2.0], "a": 1}"#)));
        assert!(!one_of.is_valid(&read(r#"{"b": [3], "a": 1}"#)));
        let fixed = post_parse_validator(&read(r#"{"const": {"a": 1, "b": 2}}"#)).expect("builds");
        assert!(fixed.is_valid(&read(r#"{"b": 2, "a": 1}"#)));
        assert!(!fixed.is_valid(&read(r#"{"b": 2}"#)));
        // Errors keep their kinds (the validate module's messages read them).
        let err = one_of
            .iter_errors(&json!("y"))
            .next()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("is not one of")));
    }
}
