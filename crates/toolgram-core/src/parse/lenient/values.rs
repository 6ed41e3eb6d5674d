//! Argument values by the tool's schema: typing text values of XML-like syntaxes and
//! decoding double-encoded JSON where the schema expects an object or array.
//!
//! It must NOT decode a string the schema says is a string, nor invent values.

use serde_json::{Map, Value};
use toolgram_grammar::schema::keywords;

/// Property `key`'s schema in an object schema.
pub(crate) fn property<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    schema?.get("properties")?.get(key)
}

/// The JSON types a value's schema allows (empty: unknown).
pub(crate) fn types_of(prop: Option<&Value>) -> Vec<String> {
    let Some(prop) = prop else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match prop.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned)))
        }
        _ => {}
    }
    for k in keywords::alternatives() {
        for alt in prop.get(k).and_then(Value::as_array).into_iter().flatten() {
            if let Some(t) = alt.get("type").and_then(Value::as_str) {
                out.push(t.to_owned());
            }
        }
    }
    out
}

/// A value written as text (XML-like parameters): its schema `prop` decides; without one,
/// JSON if it reads as JSON, else the text. One framing newline on each side is dropped.
pub(crate) fn typed(raw: &str, prop: Option<&Value>) -> Value {
    let text = match raw.strip_prefix('\n') {
        Some(inner) => inner.strip_suffix('\n').unwrap_or(inner),
        None => raw,
    };
    // An XML CDATA section holds its text verbatim.
    let text = text
        .trim()
        .strip_prefix("<![CDATA[")
        .and_then(|t| t.strip_suffix("]]>"))
        .unwrap_or(text);
    let types = types_of(prop);
    let only_string = !types.is_empty() && types.iter().all(|t| t == "string" || t == "null");
    if only_string {
        if text.trim() == "null" && types.iter().any(|t| t == "null") {
            return Value::Null;
        }
        return Value::String(text.to_owned());
    }
    // Templates that stringify values write Python's booleans.
    if types.iter().any(|t| t == "boolean") {
        match text.trim() {
            "True" => return Value::Bool(true),
            "False" => return Value::Bool(false),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v) if types.is_empty() || types.iter().any(|t| matches_type(&v, t)) => v,
        _ => Value::String(text.to_owned()),
    }
}

fn matches_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    }
}

/// The arguments object: a double-encoded object string is decoded, and so is any
/// property the schema types as object/array but that came as a JSON string.
pub(crate) fn coerce_arguments(
    args: Value,
    schema: Option<&Value>,
    repairs: &mut Vec<String>,
) -> Value {
    let mut note = |w: &str| {
        if !repairs.iter().any(|r| r == w) {
            repairs.push(w.to_owned());
        }
    };
    let args = match args {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => {
                note("decoded double-encoded arguments");
                v
            }
            _ => Value::String(s),
        },
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    let Value::Object(map) = args else {
        return args;
    };
    let out = map
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => {
                    let types = types_of(property(schema, &k));
                    let wants = types.iter().any(|t| t == "object" || t == "array");
                    let allows_string = types.iter().any(|t| t == "string");
                    match serde_json::from_str::<Value>(&s) {
                        Ok(d) if wants && !allows_string && (d.is_object() || d.is_array()) => {
                            note("decoded a double-encoded argument");
                            d
                        }
                        _ => Value::String(s),
                    }
                }
                other => other,
            };
            (k, v)
        })
        .collect();
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cdata_section_is_its_text() {
        let s = json!({"properties": {"code": {"type": "string"}, "n": {"type": "integer"}}});
        let v = typed("<![CDATA[a < b && c]]>", property(Some(&s), "code"));
        assert_eq!(v, json!("a < b && c"));
        assert_eq!(
            typed("\n<![CDATA[42]]>\n", property(Some(&s), "n")),
            json!(42)
        );
    }

    #[test]
    fn schema_decides_text_values() {
        let s =
            json!({"properties": {"n": {"type": ["string", "null"]}, "i": {"type": "integer"}}});
        assert_eq!(typed("\n42\n", property(Some(&s), "n")), json!("42"));
        assert_eq!(typed("null", property(Some(&s), "n")), Value::Null);
        assert_eq!(typed("\n42\n", property(Some(&s), "i")), json!(42));
        assert_eq!(typed("2 dollars", None), json!("2 dollars"));
        assert_eq!(typed("{\"a\": 1}", None), json!({"a": 1}));
    }

    #[test]
    fn double_encoding_only_where_an_object_is_expected() {
        let s = json!({"properties": {"o": {"type": "object"}, "s": {"type": "string"}}});
        let mut r = Vec::new();
        let got = coerce_arguments(
            json!("{\"o\": \"{\\\"a\\\":1}\", \"s\": \"{}\"}"),
            Some(&s),
            &mut r,
        );
        assert_eq!(got, json!({"o": {"a": 1}, "s": "{}"}));
        assert_eq!(r.len(), 2);
    }
}
