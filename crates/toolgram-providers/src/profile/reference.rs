//! `$ref` handling of the renderer: keep references a profile takes (`#`, `#/$defs/NAME`),
//! inline the others, refuse recursion where the provider cannot follow it, and render the
//! root definitions that stay referenced.
//!
//! This module must not resolve anything but same-document references.

use super::Profile;
use super::error::ProfileError;
use super::render::Renderer;
use super::rules::{Class, classify};
use serde_json::{Map, Value, json};
use toolgram_grammar::schema::{keywords, refs};

type Out = Result<Value, ProfileError>;

impl Renderer<'_> {
    /// Render the root definitions the output still references (transitively) into `$defs`;
    /// a definition nothing references is not sent (noted).
    pub(super) fn render_defs(&mut self, out: &mut Value) -> Result<(), ProfileError> {
        let mut defs = Map::new();
        let mut pending = Vec::new();
        refs::collect_refs(out, &mut pending);
        while let Some(r) = pending.pop() {
            let Some(token) = r.strip_prefix("#/$defs/") else {
                continue;
            };
            let name = refs::unescape_token(token);
            if defs.contains_key(&name) {
                continue;
            }
            let (at, def) = keywords::definition_containers()
                .find_map(|d| {
                    let at = format!("/{d}/{token}");
                    self.root.pointer(&at).map(|v| (at, v))
                })
                .ok_or_else(|| self.err("", "$ref", format!("`{r}` does not resolve")))?;
            defs.insert(name.clone(), Value::Null);
            let rendered = self.node(def, &at, false)?;
            refs::collect_refs(&rendered, &mut pending);
            defs.insert(name, rendered);
        }
        for d in keywords::definition_containers() {
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

    pub(super) fn reference(&mut self, map: &Map<String, Value>, at: &str) -> Out {
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
        super::merge::with_member(&mut merged, target.clone());
        self.node(&Value::Object(merged), at, false)
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
