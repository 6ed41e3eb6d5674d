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
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let map = toolgram_grammar::schema::openapi_numeric_format(map).unwrap_or_else(|| map.clone());
    let each = |v: &Value, f: fn(&Value) -> Value| match v {
        Value::Array(items) => Value::Array(items.iter().map(f).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), f(x))).collect()),
        other => f(other),
    };
    Value::Object(
        map.into_iter()
            .map(|(k, v)| {
                let v = match k.as_str() {
                    // Maps of name → schema: the names are not keywords.
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" => each(&v, with_numeric_formats),
                    // Schemas, or lists of schemas.
                    "items"
                    | "prefixItems"
                    | "additionalItems"
                    | "additionalProperties"
                    | "allOf"
                    | "anyOf"
                    | "oneOf"
                    | "not"
                    | "if"
                    | "then"
                    | "else"
                    | "contains"
                    | "propertyNames"
                    | "unevaluatedItems"
                    | "unevaluatedProperties" => match &v {
                        Value::Array(items) => {
                            Value::Array(items.iter().map(with_numeric_formats).collect())
                        }
                        other => with_numeric_formats(other),
                    },
                    // Data (`enum`, `const`, `default`, …) and annotations stay as they are.
                    _ => v,
                };
                (k, v)
            })
            .collect(),
    )
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
/// keys is closed (`additionalProperties: false`), as OpenAI's strict mode does; members of
/// `allOf` are left open so that their intersection still works.
pub fn close_objects(schema: &Value) -> Value {
    let mut s = schema.clone();
    close_in_place(&mut s);
    s
}

fn close_in_place(v: &mut Value) {
    let Value::Object(map) = v else { return };
    let open_keys = [
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "allOf",
    ];
    if map.contains_key("properties") && !open_keys.iter().any(|k| map.contains_key(*k)) {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (key, child) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(m) = child {
                    m.values_mut().for_each(close_in_place);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => close_in_place(child),
            "prefixItems" | "anyOf" | "oneOf" => {
                if let Value::Array(a) = child {
                    a.iter_mut().for_each(close_in_place);
                }
            }
            _ => {}
        }
    }
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
