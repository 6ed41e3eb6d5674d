//! The keyword pass of the llguidance target: an argument schema made ready for `%json` —
//! objects closed, keywords llguidance does not enforce moved out to the validator (and
//! listed), unknown keywords listed, `oneOf` relaxed to `anyOf` in place — and the JSON
//! spelling styles of its slots.
//!
//! This module must not compile a schema or write grammar text: the llguidance writer
//! ([`super::lark`]) embeds what it returns.

use crate::define::arguments::{DeferredKeyword, close_objects};
use serde_json::{Value, json};
use toolgram_grammar::schema::keywords::{self, GRAMMAR_FORMATS, VALIDATOR_FORMATS};
use toolgram_grammar::schema::refs::escape_token;
use toolgram_grammar::schema::walk::{Key, for_each_child_mut};

/// The schema the grammar uses for `parameters`: objects closed (see [`close_objects`]),
/// keywords the llguidance path enforces after parse
/// ([`keywords::llguidance_after_parse`]) moved out (recorded in `deferred`), annotations
/// llguidance does not know removed.
pub fn grammar_schema(tool: &str, parameters: &Value, pass: &mut KeywordPass) -> Value {
    let mut s = close_objects(parameters);
    let legacy = legacy_ref(parameters);
    strip(&mut s, "", tool, legacy, pass);
    s
}

/// What the keyword pass took out of a schema for the llguidance path.
#[derive(Debug, Default)]
pub struct KeywordPass {
    /// Keywords enforced after parsing instead of by the grammar.
    pub deferred: Vec<DeferredKeyword>,
    /// Keywords toolgram does not know (not in `schema::keywords`): an error unless lenient.
    pub unknown: Vec<DeferredKeyword>,
}

impl KeywordPass {
    /// List `keyword` at `pointer` in tool `tool`'s arguments as enforced after parsing, once.
    pub fn defer(&mut self, tool: &str, pointer: &str, keyword: &str) {
        let d = DeferredKeyword {
            tool: tool.to_owned(),
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
        };
        if !self.deferred.contains(&d) {
            self.deferred.push(d);
        }
    }
}

/// Whether the schema declares a draft (4, 6 or 7, or 3) in which `$ref` overrides its
/// sibling keywords; in 2019-09 and later (and without `$schema`) siblings apply too.
fn legacy_ref(schema: &Value) -> bool {
    schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|d| {
            ["draft-03", "draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|v| d.contains(v))
        })
}

/// The schema the grammar uses for a bare JSON Schema (not a tool's arguments): as
/// [`grammar_schema`] but objects keep JSON Schema's default of allowing other keys.
pub fn bare_grammar_schema(schema: &Value, pass: &mut KeywordPass) -> Value {
    let mut s = schema.clone();
    strip(&mut s, "", "", legacy_ref(schema), pass);
    s
}

#[allow(
    clippy::too_many_lines,
    reason = "one arm per keyword class of the keyword table"
)]
fn strip(v: &mut Value, at: &str, tool: &str, legacy: bool, pass: &mut KeywordPass) {
    let Value::Object(map) = v else { return };
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| keywords::lookup(k).is_none())
        .cloned()
        .collect();
    for k in unknown {
        map.shift_remove(&k);
        pass.unknown.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: k,
        });
    }
    if let Some(n) = toolgram_grammar::schema::openapi_numeric_format(map) {
        *map = n;
    }
    // llguidance cannot build an integer range reaching -2^63 (its bound overflows when
    // negated); such a bound is left to the validator.
    for k in ["minimum", "exclusiveMinimum"] {
        if map
            .get(k)
            .and_then(Value::as_f64)
            .is_some_and(|b| b <= -9.223_372_036_854_775e18)
        {
            map.shift_remove(k);
            pass.deferred.push(DeferredKeyword {
                tool: tool.to_owned(),
                pointer: at.to_owned(),
                keyword: k.to_owned(),
            });
        }
    }
    // A format nobody enforces would be dropped silently by llguidance on non-strings.
    if let Some(f) = map.get("format").and_then(Value::as_str)
        && !GRAMMAR_FORMATS.contains(&f)
        && !VALIDATOR_FORMATS.contains(&f)
    {
        pass.unknown.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: format!("format: {f}"),
        });
        map.shift_remove("format");
    }
    let deferred = &mut pass.deferred;
    if legacy && map.contains_key("$ref") {
        // Drafts 3–7: `$ref` replaces the schema it sits in; only the containers that
        // references may point into are kept.
        map.retain(|k, _| {
            matches!(
                k.as_str(),
                "$ref" | "definitions" | "$defs" | "$schema" | "$id" | "id"
            )
        });
    }
    for k in keywords::llguidance_after_parse() {
        if map.shift_remove(k).is_some() {
            deferred.push(DeferredKeyword {
                tool: tool.to_owned(),
                pointer: at.to_owned(),
                keyword: k.to_owned(),
            });
        }
    }
    for k in keywords::llguidance_unknown_annotations() {
        map.shift_remove(k);
    }
    let defer = |keyword: &str, deferred: &mut Vec<DeferredKeyword>| {
        deferred.push(DeferredKeyword {
            tool: tool.to_owned(),
            pointer: at.to_owned(),
            keyword: keyword.to_owned(),
        })
    };
    // oneOf: the grammar enforces "at least one" (anyOf); "exactly one" is checked after.
    // Rewritten where it stands: llguidance orders properties by keyword position.
    if map.contains_key("oneOf") {
        defer("oneOf", deferred);
        let as_key = if !map.contains_key("anyOf") {
            "anyOf"
        } else if !map.contains_key("allOf") {
            "allOf"
        } else {
            ""
        };
        let mut pending = None;
        for (k, v) in std::mem::take(map) {
            match (k.as_str(), as_key) {
                ("oneOf", "anyOf") => {
                    map.insert("anyOf".into(), v);
                }
                ("oneOf", "allOf") => {
                    map.insert("allOf".into(), json!([{"anyOf": v}]));
                }
                ("oneOf", _) => pending = Some(v),
                _ => {
                    map.insert(k, v);
                }
            }
        }
        if let (Some(v), Some(Value::Array(all))) = (pending, map.get_mut("allOf")) {
            all.push(json!({"anyOf": v}));
        }
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| VALIDATOR_FORMATS.contains(&f))
    {
        map.shift_remove("format");
        defer("format", deferred);
    }
    // llguidance bounds the number of keys only when every listed key is required.
    let all_required = map
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|props| {
            let req = map.get("required").and_then(Value::as_array);
            props
                .keys()
                .all(|k| req.is_some_and(|r| r.iter().any(|x| x == k.as_str())))
        });
    if !all_required {
        for k in ["minProperties", "maxProperties"] {
            if map.shift_remove(k).is_some() {
                defer(k, deferred);
            }
        }
    }
    // llguidance intersects a pattern with the length bounds into one automaton, which
    // exceeds its lexer limits for patterns with counted repetition (measured on MaskBench):
    // with a pattern, length bounds are enforced after parsing.
    if map.contains_key("pattern") {
        for k in ["minLength", "maxLength"] {
            if map.shift_remove(k).is_some() {
                defer(k, deferred);
            }
        }
    }
    map.retain(|k, _| !k.starts_with("x-"));
    for_each_child_mut(map, |row, key, sub| {
        let keyword = escape_token(row.name);
        let here = match key {
            Key::Whole => format!("{at}/{keyword}"),
            Key::Name(name) => format!("{at}/{keyword}/{}", escape_token(name)),
            Key::Index(i) => format!("{at}/{keyword}/{i}"),
        };
        strip(sub, &here, tool, legacy, pass);
    });
}

/// The whitespace and separator policy for arguments: exactly the spelling of Python's
/// `json.dumps` (what chat templates were trained on), no free whitespace.
pub fn json_style() -> Value {
    json!({"whitespace_flexible": false, "key_separator": ": ", "item_separator": ", "})
}

/// The whitespace policy of bare calls and pretty-printing templates: any spacing, at most
/// 41 characters per gap (a newline and 40 spaces, as the schema compiler's `ws` rule: ten
/// levels of four-space indentation).
pub fn loose_json_style() -> Value {
    json!({"whitespace_pattern": "[ \\t\\n\\r]{1,41}", "key_separator": ":", "item_separator": ","})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define::arguments::post_parse_validator;

    #[test]
    fn keywords_the_grammar_cannot_express_are_deferred_not_dropped() {
        let mut pass = KeywordPass::default();
        let s = grammar_schema(
            "t",
            &json!({"type":"object","properties":{"tags":{"type":"array","uniqueItems":true,"deprecated":true,"x-ui":1}},
                "dependentRequired":{"a":["b"]}}),
            &mut pass,
        );
        assert_eq!(s["properties"]["tags"], json!({"type":"array"}));
        assert!(pass.unknown.is_empty());
        let got: Vec<(&str, &str)> = pass
            .deferred
            .iter()
            .map(|d| (d.pointer.as_str(), d.keyword.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("", "dependentRequired"),
                ("/properties/tags", "uniqueItems")
            ]
        );
    }

    #[test]
    fn rewrites_keep_keyword_order_because_llguidance_orders_properties_by_it() {
        let schema = json!({"description": "d", "oneOf": [{"required": ["a"]}],
            "properties": {"b": {}, "a": {}}, "format": "email", "type": "object"});
        let s = grammar_schema("t", &schema, &mut KeywordPass::default());
        let keys: Vec<&str> = s
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "description",
                "anyOf",
                "properties",
                "format",
                "type",
                "additionalProperties"
            ]
        );
    }

    /// OpenAPI `int64`'s lower bound (-2^63) is beyond what llguidance's range grammar
    /// takes: it leaves the grammar schema and is listed for the validator, which reads
    /// `int32`/`int64` as bounds too.
    #[test]
    fn openapi_integer_formats_are_bounds_for_grammar_and_validator() {
        let schema = json!({"type": "object", "properties": {
            "big": {"type": "integer", "format": "int64"},
            "small": {"type": "integer", "format": "int32"}}});
        let mut pass = KeywordPass::default();
        let g = bare_grammar_schema(&schema, &mut pass);
        assert!(g["properties"]["big"].get("minimum").is_none(), "{g}");
        assert_eq!(g["properties"]["big"]["maximum"], json!(i64::MAX));
        assert_eq!(g["properties"]["small"]["minimum"], json!(i32::MIN));
        assert!(
            pass.deferred
                .iter()
                .any(|d| d.pointer == "/properties/big" && d.keyword == "minimum"),
            "{:?}",
            pass.deferred
        );
        let v = post_parse_validator(&schema).expect("builds");
        assert!(v.is_valid(&json!({"small": 2_147_483_647, "big": i64::MIN})));
        assert!(!v.is_valid(&json!({"small": 2_147_483_648_i64})));
        // A property named like a data keyword is still a schema.
        let named = json!({"type": "object", "properties": {
            "default": {"type": "integer", "format": "int32"}}});
        let v = post_parse_validator(&named).expect("builds");
        assert!(!v.is_valid(&json!({"default": 2_147_483_648_i64})));
        // …while a `const` that looks like a schema is data.
        let data = json!({"const": {"format": "int32"}});
        let v = post_parse_validator(&data).expect("builds");
        assert!(v.is_valid(&json!({"format": "int32"})));
    }
}
