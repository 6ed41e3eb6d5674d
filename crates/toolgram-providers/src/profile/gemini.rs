//! Gemini-only spellings: one type per schema (`[T, "null"]` → `T` + `nullable`, several
//! types → `anyOf` with each type's keywords), and its documented parameter-name rule.
//!
//! This module must not apply to other profiles.

use super::error::ProfileError;
use super::render::Renderer;
use serde_json::{Map, Value, json};
use toolgram_grammar::schema::keywords;

impl Renderer<'_> {
    /// Gemini has one type per schema: `[T, "null"]` → `T` + `nullable`; several types → `anyOf`.
    pub(super) fn gemini_type_list(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
    ) -> Result<Option<Value>, ProfileError> {
        let types: Vec<&str> = match map.get("type") {
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(t)) if t == "null" => {
                return Err(self.err(
                    &format!("{at}/type"),
                    "type",
                    "Gemini has no schema for null alone",
                ));
            }
            _ => return Ok(None),
        };
        let null = types.contains(&"null");
        let others: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
        let mut base = map.clone();
        base.shift_remove("type");
        let split = match others.as_slice() {
            [] => {
                return Err(self.err(
                    &format!("{at}/type"),
                    "type",
                    "Gemini has no schema for null alone",
                ));
            }
            [one] => {
                base.insert("type".into(), json!(one));
                Value::Object(base)
            }
            many => {
                if map.contains_key("anyOf") {
                    return Err(self.err(
                        &format!("{at}/type"),
                        "type",
                        "a type list next to anyOf cannot be rendered",
                    ));
                }
                let mut outer = Map::new();
                for k in ["description", "title", "default"] {
                    if let Some(v) = base.shift_remove(k) {
                        outer.insert(k.into(), v);
                    }
                }
                let members = many.iter().map(|t| {
                    let mut m: Map<String, Value> = base
                        .iter()
                        .filter(|(k, _)| keyword_applies(k, t))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    m.insert("type".into(), json!(t));
                    Value::Object(m)
                });
                outer.insert("anyOf".into(), Value::Array(members.collect()));
                Value::Object(outer)
            }
        };
        if null {
            // Rendered as anyOf: the Gemini branch of `anyOf` turns a null member into `nullable`.
            return Ok(Some(json!({"anyOf": [split, {"type": "null"}]})));
        }
        Ok(Some(split))
    }
}

/// Whether keyword `k` of a multi-type schema belongs to the member of type `t` (the
/// keyword table's `on`; an unknown keyword goes with every member).
fn keyword_applies(k: &str, t: &str) -> bool {
    keywords::lookup(k).is_none_or(|row| row.applies_to(t))
}
