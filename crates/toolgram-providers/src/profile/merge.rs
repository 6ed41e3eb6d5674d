//! `allOf` merging: the parent's keywords plus every member's, in one schema. Members that
//! close themselves (`additionalProperties`, …) make the merge wider than the original, so
//! `allOf` is then listed as enforced after parse; members that disagree on a keyword are an
//! error. This module must not render the merged schema (the walker does).

use super::error::ProfileError;
use super::render::Renderer;
use super::rules::{Class, classify};
use serde_json::{Map, Value, json};
use toolgram_grammar::schema::{keywords, refs};

impl Renderer<'_> {
    /// Merge `allOf` into one schema: the parent's own keywords plus every member's.
    pub(super) fn merge_all_of(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
    ) -> Result<Map<String, Value>, ProfileError> {
        let here = format!("{at}/allOf");
        let members = map
            .get("allOf")
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(&here, "allOf", "must be an array"))?;
        let mut acc: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| *k != "allOf")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut widened = false;
        for (i, m) in members.iter().enumerate() {
            let m_at = format!("{here}/{i}");
            self.tick()?;
            let mut member = match m {
                Value::Bool(true) => continue,
                Value::Object(o) => o.clone(),
                _ => {
                    return Err(self.err(
                        &m_at,
                        "allOf",
                        "members must be schemas other than `false`",
                    ));
                }
            };
            if let Some(r) = member.shift_remove("$ref") {
                let r = r.as_str().unwrap_or_default();
                let (target, ptr) = refs::resolve(self.root, r).ok_or_else(|| {
                    self.err(
                        &m_at,
                        "$ref",
                        format!("`{r}` is not a local reference that resolves"),
                    )
                })?;
                if refs::is_recursive(self.root, &ptr) {
                    return Err(self.err(
                        &m_at,
                        "$ref",
                        "a recursive $ref inside allOf cannot be merged",
                    ));
                }
                // The target is one more member, merged like the others.
                with_member(&mut member, target.clone());
            }
            if member.contains_key("allOf") {
                member = self.merge_all_of(&member, &m_at)?;
            }
            widened |= [
                "additionalProperties",
                "patternProperties",
                "unevaluatedProperties",
            ]
            .iter()
            .any(|k| member.contains_key(*k));
            for (k, v) in member {
                self.merge_key(&mut acc, k, v, &m_at)?;
            }
        }
        if widened {
            // Each member's closure applied to its own properties only; merged, it is wider.
            self.defer(at, "allOf");
        } else {
            self.note(format!("allOf at {at:?} merged into one schema"));
        }
        Ok(acc)
    }

    fn merge_key(
        &mut self,
        acc: &mut Map<String, Value>,
        k: String,
        v: Value,
        at: &str,
    ) -> Result<(), ProfileError> {
        match (k.as_str(), acc.get_mut(&k)) {
            (_, None) => {
                acc.insert(k, v);
            }
            ("properties", Some(Value::Object(props))) => {
                let Value::Object(more) = v else {
                    return Err(self.err(at, &k, "`properties` must be an object"));
                };
                for (name, sub) in more {
                    match props.get_mut(&name) {
                        Some(old) if *old != sub => *old = json!({"allOf": [old.take(), sub]}),
                        Some(_) => {}
                        None => {
                            props.insert(name, sub);
                        }
                    }
                }
            }
            ("required", Some(Value::Array(req))) => {
                let Value::Array(more) = v else {
                    return Err(self.err(at, &k, "`required` must be an array"));
                };
                for r in more {
                    if !req.contains(&r) {
                        req.push(r);
                    }
                }
            }
            // Both say which other keys the object may have: the first stands.
            (k, Some(_)) if keywords::lookup(k).is_some_and(|r| r.other_keys) => {}
            (_, Some(old)) if *old == v => {}
            (_, Some(_))
                if matches!(
                    classify(self.profile, &k),
                    Class::KeptAnnotation | Class::DroppedAnnotation
                ) => {}
            (_, Some(_)) => {
                return Err(self.err(
                    at,
                    &k,
                    format!("allOf members disagree on `{k}`; they cannot be merged"),
                ));
            }
        }
        Ok(())
    }
}

/// Add `schema` to the `allOf` of `map` (creating it).
pub(super) fn with_member(map: &mut Map<String, Value>, schema: Value) {
    match map.get_mut("allOf") {
        Some(Value::Array(members)) => members.push(schema),
        _ => {
            map.insert("allOf".into(), json!([schema]));
        }
    }
}
