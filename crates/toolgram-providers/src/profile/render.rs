//! The schema walker: renders one tool's `parameters` into a provider's JSON-Schema subset.
//!
//! Each keyword is kept (the provider enforces it), rewritten into an equivalent, removed and
//! recorded as enforced after parse (only ever widening the provider schema), or refused with a
//! typed error. This module must not silently drop an assertion, and must not check provider
//! limits (see `limits.rs`).

use super::error::ProfileError;
use super::rules::{self, Class, classify};
use super::{Profile, nullable};
use serde_json::{Map, Value, json};
use toolgram_core::define::arguments::DeferredKeyword;
use toolgram_grammar::schema::keywords;
use toolgram_grammar::schema::refs::escape_token;

/// One rendering: the tool, the original document, and what was deferred or noted.
pub(crate) struct Renderer<'a> {
    pub profile: Profile,
    pub tool: &'a str,
    pub root: &'a Value,
    pub deferred: Vec<DeferredKeyword>,
    pub notes: Vec<String>,
    /// Schemas rendered so far (inlining can multiply them).
    nodes: usize,
}

/// The most schemas one rendering may produce: inlining references that fan out (a
/// definition used twice by one used twice by …) grows exponentially, and stops here.
const MAX_NODES: usize = 100_000;

type Out = Result<Value, ProfileError>;

impl<'a> Renderer<'a> {
    pub(crate) fn new(profile: Profile, tool: &'a str, root: &'a Value) -> Self {
        Self {
            profile,
            tool,
            root,
            deferred: Vec::new(),
            notes: Vec::new(),
            nodes: 0,
        }
    }

    pub(crate) fn err(&self, at: &str, keyword: &str, reason: impl Into<String>) -> ProfileError {
        ProfileError::Unsupported {
            profile: self.profile.name(),
            tool: self.tool.to_owned(),
            pointer: at.to_owned(),
            keyword: keyword.to_owned(),
            reason: reason.into(),
        }
    }

    pub(super) fn defer(&mut self, at: &str, keyword: &str) {
        self.deferred.push(DeferredKeyword {
            tool: self.tool.to_owned(),
            pointer: at.to_owned(),
            keyword: keyword.to_owned(),
        });
    }

    /// Count one schema visited (rendered or merged); over [`MAX_NODES`] is an error.
    pub(super) fn tick(&mut self) -> Result<(), ProfileError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(ProfileError::OverLimit {
                profile: self.profile.name(),
                scope: format!("tool `{}`", self.tool),
                limit: "the number of schemas after inlining references (toolgram's own limit)",
                value: self.nodes,
                max: MAX_NODES,
            });
        }
        Ok(())
    }

    pub(super) fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// Render the whole `parameters` schema.
    pub(crate) fn render_root(&mut self) -> Out {
        let map = self
            .root
            .as_object()
            .ok_or_else(|| self.err("", "type", "`parameters` must be a JSON Schema object"))?;
        if map.get("type").and_then(Value::as_str) != Some("object") {
            return Err(self.err("/type", "type", "the root must say `\"type\": \"object\"`"));
        }
        for k in keywords::alternatives() {
            if map.contains_key(k) {
                return Err(self.err(&format!("/{k}"), k, "the root must be a plain object"));
            }
        }
        let mut out = self.node(self.root, "", true)?;
        if self.profile != Profile::Gemini {
            self.render_defs(&mut out)?;
        }
        Ok(out)
    }

    pub(super) fn node(&mut self, schema: &Value, at: &str, root: bool) -> Out {
        self.tick()?;
        let map = match schema {
            Value::Object(m) => m,
            Value::Bool(b) => {
                return Err(self.err(at, &b.to_string(), "a boolean schema has no equivalent"));
            }
            _ => return Err(self.err(at, "", "a schema must be an object")),
        };
        if map.contains_key("allOf") {
            let merged = self.merge_all_of(map, at)?;
            return self.node(&Value::Object(merged), at, root);
        }
        if map.contains_key("$ref") {
            return self.reference(map, at);
        }
        if map.contains_key("anyOf") && map.contains_key("oneOf") {
            let here = format!("{at}/oneOf");
            return Err(self.err(
                &here,
                "oneOf",
                "`anyOf` and `oneOf` together cannot be rendered",
            ));
        }
        if let Some(rewritten) = self.tuple_items(map, at)? {
            return self.node(&Value::Object(rewritten), at, root);
        }
        if self.profile == Profile::Gemini
            && let Some(split) = self.gemini_type_list(map, at)?
        {
            return self.node(&split, at, root);
        }
        let ty = map.get("type").and_then(Value::as_str);
        let mut out = Map::new();
        for (k, v) in map {
            let here = format!("{at}/{}", escape_token(k));
            match classify(self.profile, k) {
                Class::Structural => self.structural(k, v, &here, ty, &mut out, root)?,
                Class::Native => self.native(k, v, &here, &mut out),
                Class::KeptAnnotation => {
                    out.insert(k.clone(), v.clone());
                }
                Class::DroppedAnnotation => {
                    self.note(format!(
                        "annotation `{k}` at {here:?} removed (not in the {} subset)",
                        self.profile.name()
                    ));
                }
                Class::Deferred => self.defer(at, k),
                Class::Unknown => {
                    self.note(format!(
                        "unknown keyword `{k}` at {here:?} left out (an annotation, never enforced)"
                    ));
                }
            }
        }
        self.finish_object(map, &mut out, at, root)?;
        self.finish_type(map, &mut out, at)?;
        Ok(Value::Object(out))
    }

    fn native(&mut self, k: &str, v: &Value, here: &str, out: &mut Map<String, Value>) {
        let at = here.rsplit_once('/').map_or("", |(a, _)| a);
        let keep = match (self.profile, k) {
            (_, "exclusiveMinimum" | "exclusiveMaximum") => v.is_number(),
            (Profile::Anthropic, "pattern") => v.as_str().is_some_and(rules::anthropic_pattern_ok),
            (Profile::Anthropic, "minItems") => match v.as_u64() {
                Some(0 | 1) => true,
                Some(_) => {
                    // Widened to the largest bound Anthropic accepts; the real one is checked later.
                    out.insert(k.to_owned(), json!(1));
                    self.defer(at, k);
                    return;
                }
                None => false,
            },
            _ => true,
        };
        if keep {
            out.insert(k.to_owned(), v.clone());
        } else {
            self.defer(at, k);
        }
    }

    fn structural(
        &mut self,
        k: &str,
        v: &Value,
        here: &str,
        ty: Option<&str>,
        out: &mut Map<String, Value>,
        root: bool,
    ) -> Result<(), ProfileError> {
        let at = here.rsplit_once('/').map_or("", |(a, _)| a);
        match k {
            "type" => {
                let t = match (self.profile, v) {
                    (Profile::Gemini, Value::String(s)) => json!(s.to_uppercase()),
                    _ => v.clone(),
                };
                out.insert(k.into(), t);
            }
            "properties" => {
                let props = v
                    .as_object()
                    .ok_or_else(|| self.err(here, k, "`properties` must be an object"))?;
                let mut rendered = Map::new();
                for (name, sub) in props {
                    if self.profile == Profile::Gemini && !rules::gemini_name_ok(name) {
                        return Err(self.err(here, k, format!("Gemini parameter names must match [A-Za-z_][A-Za-z0-9_]{{0,63}}; `{name}` does not")));
                    }
                    let r = self.node(sub, &format!("{here}/{}", escape_token(name)), false)?;
                    rendered.insert(name.clone(), r);
                }
                out.insert(k.into(), Value::Object(rendered));
            }
            "required" | "additionalProperties" | "patternProperties" => {
                if k == "required" {
                    out.insert(k.into(), v.clone());
                }
            }
            "items" => {
                let r = self.node(v, here, false)?;
                out.insert(k.into(), r);
            }
            "anyOf" | "oneOf" => {
                if k == "oneOf" {
                    // anyOf accepts at least what oneOf accepts; exclusivity is checked after parse.
                    self.defer(at, k);
                }
                let members = v
                    .as_array()
                    .ok_or_else(|| self.err(here, k, "must be an array"))?;
                let mut rendered = Vec::new();
                for (i, m) in members.iter().enumerate() {
                    if self.profile == Profile::Gemini
                        && m.get("type").and_then(Value::as_str) == Some("null")
                    {
                        // Gemini spells "or null" as `nullable` on the schema itself.
                        out.insert("nullable".into(), json!(true));
                        continue;
                    }
                    rendered.push(self.node(m, &format!("{here}/{i}"), false)?);
                }
                if self.profile == Profile::Gemini {
                    if rendered.is_empty() {
                        return Err(self.err(here, k, "Gemini has no schema for null alone"));
                    }
                    if rendered.len() == 1 {
                        if let Some(Value::Object(only)) = rendered.pop() {
                            out.extend(only);
                        }
                        return Ok(());
                    }
                }
                out.insert("anyOf".into(), Value::Array(rendered));
            }
            "$defs" | "definitions" => {
                // At the root of a profile with references, the definitions that stay
                // referenced are rendered after the walk (`render_defs`); others are inlined.
                if self.profile == Profile::Gemini || !root {
                    self.note(format!(
                        "`{k}` at {here:?} not sent: its references are inlined"
                    ));
                }
            }
            "enum" => self.enumeration(v, here, at, ty, out)?,
            "const" => match (self.profile, v) {
                (Profile::Gemini, Value::String(_)) => {
                    out.insert("enum".into(), json!([v]));
                    out.entry("type").or_insert_with(|| json!("STRING"));
                }
                (Profile::Gemini, _) => self.defer(at, k),
                _ => {
                    out.insert(k.into(), v.clone());
                }
            },
            "format" => {
                let f = v.as_str().unwrap_or_default();
                if rules::format_supported(self.profile, ty, f) {
                    out.insert(k.into(), v.clone());
                } else {
                    self.defer(at, k);
                }
            }
            _ => return Err(self.err(here, k, "not handled by the renderer")),
        }
        Ok(())
    }

    fn enumeration(
        &mut self,
        v: &Value,
        here: &str,
        at: &str,
        ty: Option<&str>,
        out: &mut Map<String, Value>,
    ) -> Result<(), ProfileError> {
        let values = v
            .as_array()
            .ok_or_else(|| self.err(here, "enum", "must be an array"))?;
        let primitive = values.iter().all(|x| !x.is_array() && !x.is_object());
        match self.profile {
            Profile::OpenAiStrict => {
                out.insert("enum".into(), v.clone());
            }
            Profile::Anthropic if primitive => {
                out.insert("enum".into(), v.clone());
            }
            Profile::Anthropic => self.defer(at, "enum"),
            Profile::Gemini => {
                let strings: Vec<Value> =
                    values.iter().filter(|x| x.is_string()).cloned().collect();
                let nulls = values.iter().filter(|x| x.is_null()).count();
                if strings.len() + nulls == values.len()
                    && ty.is_none_or(|t| t == "string")
                    && !strings.is_empty()
                {
                    out.insert("enum".into(), Value::Array(strings));
                    out.entry("type").or_insert_with(|| json!("STRING"));
                    if nulls > 0 {
                        out.insert("nullable".into(), json!(true));
                    }
                } else {
                    // Gemini enums are strings only; the type stays, the value set is checked later.
                    self.defer(at, "enum");
                }
            }
        }
        Ok(())
    }

    fn finish_object(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
        root: bool,
    ) -> Result<(), ProfileError> {
        let is_object = match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => map.contains_key("properties"),
        };
        if !is_object {
            return Ok(());
        }
        let has_props = map.contains_key("properties");
        let ap = map.get("additionalProperties");
        if self.profile == Profile::Gemini {
            // Gemini cannot close an object. Listed: an explicit `additionalProperties`, and
            // the closure toolgram's validator applies to objects with `properties` that say
            // nothing else (`compile::close_objects`).
            let open_keys = ["patternProperties", "unevaluatedProperties"];
            let closed_by_policy =
                ap.is_none() && has_props && !open_keys.iter().any(|k| map.contains_key(*k));
            if closed_by_policy || matches!(ap, Some(v) if v != &Value::Bool(true)) {
                self.defer(at, "additionalProperties");
            }
            if map.contains_key("patternProperties") {
                self.defer(at, "patternProperties");
            }
            if !has_props {
                if !root {
                    return Err(self.err(at, "properties", "Gemini OBJECT schemas need `properties`; a free-form map cannot be expressed"));
                }
                self.note("no `properties`: rendered as a tool without arguments".into());
                out.insert("properties".into(), json!({}));
            }
            let names: Vec<Value> = out
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| json!(k)).collect())
                .unwrap_or_default();
            if names.len() > 1 {
                // toolgram's property order is schema order; Gemini is told so explicitly.
                out.insert("propertyOrdering".into(), Value::Array(names));
            }
            return Ok(());
        }
        if map.contains_key("patternProperties") {
            return Err(self.err(&format!("{at}/patternProperties"), "patternProperties", "strict objects are closed (`additionalProperties: false`), so pattern-matched keys cannot be expressed"));
        }
        match ap {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(self.err(&format!("{at}/additionalProperties"), "additionalProperties", "only `additionalProperties: false` is accepted; an open map cannot be expressed"));
            }
        }
        if !has_props {
            if !root {
                return Err(self.err(at, "properties", "an object without `properties` is a free-form map, which strict objects cannot express"));
            }
            self.note(
                "no `properties`: rendered as a tool without arguments (closed empty object)"
                    .into(),
            );
            out.insert("properties".into(), json!({}));
        }
        out.insert("additionalProperties".into(), json!(false));
        let names: Vec<String> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(missing) = required.iter().find(|r| !names.contains(r)) {
            return Err(self.err(
                &format!("{at}/required"),
                "required",
                format!(
                    "`{missing}` is required but not among `properties`, and the object is closed"
                ),
            ));
        }
        if self.profile == Profile::OpenAiStrict {
            let optional: Vec<&String> = names.iter().filter(|n| !required.contains(n)).collect();
            if let Some(Value::Object(props)) = out.get_mut("properties") {
                for n in &optional {
                    if let Some(p) = props.get_mut(n.as_str()) {
                        *p = nullable(p.take());
                    }
                }
            }
            if !optional.is_empty() {
                self.note(format!("optional properties {optional:?} at {at:?} are required and nullable (restore_arguments maps null back to absent)"));
            }
            out.insert("required".into(), json!(names));
        }
        Ok(())
    }

    fn finish_type(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), ProfileError> {
        let is_array = match map.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !out.contains_key("items") {
            return Err(self.err(at, "items", "an array without `items` cannot be expressed"));
        }
        if out.contains_key("properties") && !out.contains_key("type") {
            // A schema that lists properties is read as an object schema (toolgram's own
            // grammar reads it the same way).
            let t = if self.profile == Profile::Gemini {
                "OBJECT"
            } else {
                "object"
            };
            out.insert("type".into(), json!(t));
        }
        let typed = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k));
        if !typed {
            return Err(self.err(
                at,
                "type",
                "a schema that accepts any value cannot be expressed",
            ));
        }
        if self.profile == Profile::Gemini
            && !out.contains_key("type")
            && !out.contains_key("anyOf")
        {
            return Err(self.err(at, "type", "Gemini schemas need a `type`"));
        }
        Ok(())
    }

    /// Tuples (`prefixItems`, or draft-4 array-form `items` + `additionalItems`): no profile
    /// has them, so every element gets `anyOf` the position schemas (and the rest schema). That
    /// only widens; the positions (and a closed rest) are checked after parse.
    fn tuple_items(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
    ) -> Result<Option<Map<String, Value>>, ProfileError> {
        let (positions, rest, keyword, rest_keyword) =
            match (map.get("prefixItems"), map.get("items")) {
                (Some(Value::Array(p)), rest) => (p, rest, "prefixItems", "items"),
                (None, Some(Value::Array(p))) => {
                    (p, map.get("additionalItems"), "items", "additionalItems")
                }
                _ => return Ok(None),
            };
        let mut members: Vec<Value> = positions.clone();
        match rest {
            None | Some(Value::Bool(true)) => {
                let here = format!("{at}/{keyword}");
                return Err(self.err(&here, keyword, "an open tuple (no schema for the elements after the positions) cannot be expressed"));
            }
            Some(Value::Bool(false)) => self.defer(at, rest_keyword),
            Some(schema) => members.push(schema.clone()),
        }
        self.defer(at, keyword);
        let mut out = map.clone();
        for k in ["prefixItems", "additionalItems"] {
            out.shift_remove(k);
        }
        let items = match members.len() {
            1 => members.remove(0),
            _ => json!({"anyOf": members}),
        };
        out.insert("items".into(), items);
        Ok(Some(out))
    }
}
