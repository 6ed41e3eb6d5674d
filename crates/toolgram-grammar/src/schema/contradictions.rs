//! Schemas that accept nothing because they contradict themselves: an `enum` or `const` none
//! of whose values has the declared `type` (`"type": "integer", "enum": ["1", "2"]`, as in some
//! real-world tool sets). No call could ever satisfy such a property, and grammar engines
//! refuse it only when the request is decoded; toolgram refuses it when the definition is read,
//! with the place. Walked (by the keyword table's `applies`): subschemas of values inside the
//! instance (`properties`, `items`, `additionalProperties`, …), definitions and `allOf`;
//! alternatives (`anyOf`/`oneOf`), conditions and `not` may legitimately be empty.
//!
//! This module must not change schemas or validate instances.

use super::keywords::Applies;
use super::walk::Key;
use serde_json::Value;

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}

fn types(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// The first self-contradicting subschema of `schema`: its JSON pointer (relative to
/// `schema`) and what is wrong.
pub fn contradiction(schema: &Value) -> Option<(String, String)> {
    let map = schema.as_object()?;
    if let Some(types) = types(schema) {
        let fits = |v: &Value| types.iter().any(|t| has_type(v, t));
        let wanted = types.join(" or ");
        if let Some(Value::Array(values)) = map.get("enum")
            && !values.is_empty()
            && !values.iter().any(fits)
        {
            return Some((
                "/enum".into(),
                format!(
                    "no value of `enum` is of type {wanted}, so nothing satisfies this schema \
                     (did you mean the values without quotes, or another type?)"
                ),
            ));
        }
        if let Some(c) = map.get("const")
            && !fits(c)
        {
            return Some((
                "/const".into(),
                format!("`const` {c} is not of type {wanted}, so nothing satisfies this schema"),
            ));
        }
    }
    // Where every instance (or definition) must satisfy the subschema; an alternative, a
    // condition or a negation may legitimately be empty.
    for (row, key, child) in super::walk::children(map) {
        if !matches!(
            row.applies,
            Applies::Child | Applies::Definition | Applies::Conjunct
        ) {
            continue;
        }
        if let Some((p, m)) = contradiction(child) {
            let at = match key {
                Key::Whole => String::new(),
                Key::Name(name) => format!("/{}", super::refs::escape_token(name)),
                Key::Index(i) => format!("/{i}"),
            };
            return Some((format!("/{}{at}{p}", row.name), m));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::contradiction;
    use serde_json::json;

    #[test]
    fn an_enum_of_strings_under_type_integer_accepts_nothing() {
        let s = json!({"type": "object", "properties": {"tickets": {"type": "integer",
            "enum": ["1", "2"]}}});
        let (at, why) = contradiction(&s).expect("a contradiction");
        assert_eq!(at, "/properties/tickets/enum");
        assert!(
            why.contains("no value of `enum` is of type integer"),
            "{why}"
        );
    }

    #[test]
    fn consistent_schemas_and_partial_overlaps_pass() {
        for s in [
            json!({"type": "integer", "enum": [1, 2.0]}),
            json!({"type": ["integer", "string"], "enum": ["1"]}),
            json!({"type": "number", "enum": ["a", 1.5]}),
            json!({"enum": ["a", 1]}),
            json!({"type": "string", "const": "x"}),
            json!({"anyOf": [{"type": "integer", "enum": ["1"]}, {"type": "string"}]}),
            json!({"not": {"type": "integer", "enum": ["1"]}}),
            json!({"if": {"type": "integer", "enum": ["1"]}, "then": {"type": "string"}}),
        ] {
            assert_eq!(contradiction(&s), None, "{s}");
        }
    }

    #[test]
    fn contradictions_are_found_where_they_are_nested() {
        let s = json!({"type": "object", "properties": {"a/b": {"type": "array",
            "items": {"type": "object", "properties": {"c": {"type": "boolean", "const": 1}}}}}});
        let (at, _) = contradiction(&s).expect("nested");
        assert_eq!(at, "/properties/a~1b/items/properties/c/const");
        let s = json!({"allOf": [{"type": "string", "enum": [1]}]});
        assert_eq!(
            contradiction(&s).map(|c| c.0).as_deref(),
            Some("/allOf/0/enum")
        );
        // Every subschema of values inside the instance, as the keyword table says.
        let s = json!({"type": "object", "patternProperties": {"^x": {"type": "integer",
            "enum": ["1"]}}});
        assert_eq!(
            contradiction(&s).map(|c| c.0).as_deref(),
            Some("/patternProperties/^x/enum")
        );
    }
}
