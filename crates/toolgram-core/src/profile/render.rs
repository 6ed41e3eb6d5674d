//! The schema walker: renders one tool's `parameters` into a provider's JSON-Schema subset.
//!
//! Each keyword is kept (the provider enforces it), rewritten into an equivalent, removed and
//! recorded as enforced after parse (only ever widening the provider schema), or refused with a
//! typed error. This module must not silently drop an assertion, and must not check provider
//! limits (see `limits.rs`).

use super::error::ProfileError;
use super::refs::{self, esc};
use super::rules::{self, Class, classify};
use super::{Profile, nullable};
use crate::compile::DeferredKeyword;
use serde_json::{Map, Value, json};

/// One rendering: the tool, the original document, and what was deferred or noted.
pub(crate) struct Renderer<'a> {
    pub profile: Profile,
    pub tool: &'a str,
    pub root: &'a Value,
    pub deferred: Vec<DeferredKeyword>,
    pub notes: Vec<String>,
}

type Out = Result<Value, ProfileError>;

impl<'a> Renderer<'a> {
    pub(crate) fn new(profile: Profile, tool: &'a str, root: &'a Value) -> Self {
        Self {
            profile,
            tool,
            root,
            deferred: Vec::new(),
            notes: Vec::new(),
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

    fn defer(&mut self, at: &str, keyword: &str) {
        self.deferred.push(DeferredKeyword {
            tool: self.tool.to_owned(),
            pointer: at.to_owned(),
            keyword: keyword.to_owned(),
        });
    }

    fn note(&mut self, text: String) {
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
        for k in ["anyOf", "oneOf"] {
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

    /// Render the root definitions the output still references (transitively) into `$defs`;
    /// a definition nothing references is not sent (noted).
    fn render_defs(&mut self, out: &mut Value) -> Result<(), ProfileError> {
        let mut defs = Map::new();
        let mut pending = Vec::new();
        refs::collect_refs(out, &mut pending);
        while let Some(r) = pending.pop() {
            let Some(token) = r.strip_prefix("#/$defs/") else {
                continue;
            };
            let name = token.replace("~1", "/").replace("~0", "~");
            if defs.contains_key(&name) {
                continue;
            }
            let (at, def) = ["$defs", "definitions"]
                .iter()
                .find_map(|d| {
                    let at = format!("/{d}/{token}");
                    self.root.pointer(&at).map(|v| (at, v))
                })
                .ok_or_else(|| self.err("", "$ref", format!("`{r}` does not resolve")))?;
            defs.insert(name, Value::Null);
            let rendered = self.node(def, &at, false)?;
            refs::collect_refs(&rendered, &mut pending);
            defs.insert(token.replace("~1", "/").replace("~0", "~"), rendered);
        }
        for d in ["$defs", "definitions"] {
            for name in self
                .root
                .get(d)
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys())
            {
                if !defs.contains_key(name) {
                    self.note(format!(
                        "definition `{name}` not sent: nothing references it after rendering"
                    ));
                }
            }
        }
        if let (false, Value::Object(m)) = (defs.is_empty(), out) {
            m.insert("$defs".into(), Value::Object(defs));
        }
        Ok(())
    }

    fn node(&mut self, schema: &Value, at: &str, root: bool) -> Out {
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
        if self.profile == Profile::Gemini
            && let Some(split) = self.gemini_type_list(map, at)?
        {
            return self.node(&split, at, root);
        }
        let ty = map.get("type").and_then(Value::as_str);
        let mut out = Map::new();
        for (k, v) in map {
            let here = format!("{at}/{}", esc(k));
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
                    return Err(self.err(&here, k, "not a JSON-Schema keyword toolgram knows"));
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
                    if self.profile == Profile::Gemini && !gemini_name_ok(name) {
                        return Err(self.err(here, k, format!("Gemini parameter names must match [A-Za-z_][A-Za-z0-9_]{{0,63}}; `{name}` does not")));
                    }
                    let r = self.node(sub, &format!("{here}/{}", esc(name)), false)?;
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
                if v.is_array() {
                    return Err(self.err(
                        here,
                        k,
                        "array-form `items` (a tuple) is not supported; use prefixItems",
                    ));
                }
                let r = self.node(v, here, false)?;
                out.insert(k.into(), r);
            }
            "anyOf" | "oneOf" => {
                if k == "oneOf" {
                    if out.contains_key("anyOf") || v.get("anyOf").is_some() {
                        return Err(self.err(
                            here,
                            k,
                            "`anyOf` and `oneOf` together cannot be rendered",
                        ));
                    }
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
            if matches!(ap, Some(v) if v != &Value::Bool(true)) {
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

    fn reference(&mut self, map: &Map<String, Value>, at: &str) -> Out {
        let here = format!("{at}/$ref");
        let r = map
            .get("$ref")
            .and_then(Value::as_str)
            .ok_or_else(|| self.err(&here, "$ref", "must be a string"))?;
        let (target, ptr) = refs::resolve(self.root, r).ok_or_else(|| {
            self.err(
                &here,
                "$ref",
                format!("`{r}` is not a local reference that resolves"),
            )
        })?;
        let recursive = refs::is_recursive(self.root, &ptr);
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| *k != "$ref")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let canonical = canonical_def(&ptr);
        if recursive {
            match (self.profile, &canonical) {
                (Profile::OpenAiStrict, Some(c)) => {
                    let annotations_only = siblings.keys().all(|k| {
                        matches!(
                            classify(self.profile, k),
                            Class::KeptAnnotation | Class::DroppedAnnotation
                        )
                    });
                    if !annotations_only {
                        return Err(self.err(
                            &here,
                            "$ref",
                            "a recursive $ref with sibling assertions cannot be expressed",
                        ));
                    }
                    if !siblings.is_empty() {
                        self.note(format!("annotations next to the recursive $ref at {at:?} removed (OpenAI takes no siblings next to $ref)"));
                    }
                    return Ok(json!({"$ref": c}));
                }
                (Profile::OpenAiStrict, None) => {
                    return Err(self.err(
                        &here,
                        "$ref",
                        "recursion is expressible only through `#` or `#/$defs/NAME`",
                    ));
                }
                _ => {
                    return Err(self.err(
                        &here,
                        "$ref",
                        format!(
                            "recursive schemas are not supported by {}",
                            self.profile.name()
                        ),
                    ));
                }
            }
        }
        if siblings.is_empty() {
            if let (Some(c), true) = (&canonical, self.profile != Profile::Gemini) {
                return Ok(json!({"$ref": c}));
            }
            self.note(format!("$ref `{r}` at {at:?} inlined"));
            return self.node(target, &ptr, ptr.is_empty());
        }
        self.note(format!(
            "$ref `{r}` at {at:?} inlined and merged with its sibling keywords"
        ));
        let mut merged = siblings;
        merged.insert("allOf".into(), json!([target]));
        self.node(&Value::Object(merged), at, false)
    }

    /// Merge `allOf` into one schema: the parent's own keywords plus every member's.
    fn merge_all_of(
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
            if let Some(r) = member.remove("$ref") {
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
                let t = target
                    .as_object()
                    .ok_or_else(|| self.err(&m_at, "$ref", "target is not an object schema"))?;
                let mut t = t.clone();
                t.extend(member);
                member = t;
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
                for (name, sub) in v.as_object().cloned().unwrap_or_default() {
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
                for r in v.as_array().cloned().unwrap_or_default() {
                    if !req.contains(&r) {
                        req.push(r);
                    }
                }
            }
            ("additionalProperties" | "patternProperties" | "unevaluatedProperties", Some(_)) => {}
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

    /// Gemini has one type per schema: `[T, "null"]` → `T` + `nullable`; several types → `anyOf`.
    fn gemini_type_list(
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
        base.remove("type");
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
                    if let Some(v) = base.remove(k) {
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

/// `#` or `#/$defs/NAME` / `#/definitions/NAME` at the root, spelled `#/$defs/NAME`.
fn canonical_def(ptr: &str) -> Option<String> {
    if ptr.is_empty() {
        return Some("#".into());
    }
    let name = ptr
        .strip_prefix("/$defs/")
        .or_else(|| ptr.strip_prefix("/definitions/"))?;
    (!name.contains('/')).then(|| format!("#/$defs/{name}"))
}

/// Which keywords of a multi-type schema belong to the member of type `t`.
fn keyword_applies(k: &str, t: &str) -> bool {
    let string = ["pattern", "minLength", "maxLength", "format"];
    let number = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "format",
    ];
    let array = [
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
    ];
    let object = [
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
    ];
    let typed: Vec<&str> = [&string[..], &number[..], &array[..], &object[..]].concat();
    if !typed.contains(&k) {
        return true;
    }
    match t {
        "string" => string.contains(&k),
        "number" | "integer" => number.contains(&k),
        "array" => array.contains(&k),
        "object" => object.contains(&k),
        _ => false,
    }
}

/// Gemini's documented parameter-name rule, applied at every level (the conservative reading).
fn gemini_name_ok(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}
