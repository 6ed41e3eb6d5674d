//! The walker against the JSON Schema meta-schemas (draft 7 and 2020-12's vocabularies, as
//! the validator's `referencing` crate ships them): a keyword that holds subschemas there and
//! is missing from the table, or marked with another shape, fails here.

use super::*;
use crate::schema::keywords::KEYWORDS;
use serde_json::json;

/// What a meta-schema's property says its keyword's value is.
fn shape_in_meta(m: &Value) -> Holds {
    let schema = |v: &Value| {
        v.get("$ref") == Some(&json!("#")) || v.get("$dynamicRef") == Some(&json!("#meta"))
    };
    let schema_or_other = |v: &Value| {
        schema(v)
            || v.get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(schema))
    };
    let list = |v: &Value| {
        v.get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| r.ends_with("/schemaArray"))
    };
    match m.get("additionalProperties") {
        _ if schema_or_other(m) => Holds::Schema,
        _ if list(m) => Holds::List,
        Some(a) if m.get("type") == Some(&json!("object")) && schema_or_other(a) => Holds::Map,
        _ => Holds::Nothing,
    }
}

fn meta_schemas() -> Vec<(&'static str, &'static Value)> {
    use referencing::meta;
    vec![
        ("draft-07", &**meta::DRAFT7),
        ("2020-12 core", &**meta::DRAFT202012_CORE),
        ("2020-12 applicator", &**meta::DRAFT202012_APPLICATOR),
        ("2020-12 unevaluated", &**meta::DRAFT202012_UNEVALUATED),
        ("2020-12 content", &**meta::DRAFT202012_CONTENT),
    ]
}

#[test]
fn every_keyword_the_meta_schemas_give_subschemas_is_walked_as_they_say() {
    let mut seen = Vec::new();
    for (draft, meta) in meta_schemas() {
        let props = meta["properties"].as_object().expect("properties");
        for (k, m) in props {
            let want = shape_in_meta(m);
            if want == Holds::Nothing && keywords::lookup(k).is_none() {
                continue;
            }
            let row =
                keywords::lookup(k).unwrap_or_else(|| panic!("{draft}: `{k}` not in the table"));
            assert_eq!(row.holds, want, "{draft}: `{k}` holds {want:?}");
            seen.push(row.name);
        }
    }
    for row in KEYWORDS.iter().filter(|r| r.holds != Holds::Nothing) {
        assert!(
            seen.contains(&row.name),
            "`{}` holds {:?} but no meta-schema says so",
            row.name,
            row.holds
        );
    }
}

#[test]
fn children_are_every_subschema_and_no_value() {
    let s = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": true},
        "anyOf": [{"required": ["a"]}],
        "items": [{"type": "integer"}],
        "not": {"const": 1},
        "enum": [{"type": "object"}],
        "default": {"type": "object"},
        "x-extra": {"type": "object"},
    });
    let found: Vec<(&str, Key<'_>)> = children(s.as_object().expect("object"))
        .into_iter()
        .map(|(row, key, _)| (row.name, key))
        .collect();
    assert_eq!(
        found,
        [
            ("properties", Key::Name("a")),
            ("properties", Key::Name("b")),
            ("anyOf", Key::Index(0)),
            ("items", Key::Index(0)),
            ("not", Key::Whole),
        ]
    );
    let mut n = 0;
    each_schema(&s, &mut |_| n += 1);
    assert_eq!(n, 5, "the root, a, anyOf[0], items[0], not (b is `true`)");
    let mut m = s.as_object().expect("object").clone();
    let mut keys = Vec::new();
    for_each_child_mut(&mut m, |row, key, _| {
        keys.push(format!("{}{key:?}", row.name))
    });
    assert_eq!(keys.len(), found.len());
}
