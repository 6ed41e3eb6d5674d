//! Provider JSON-Schema profiles: render a tool's `parameters` (or the whole pool, or one
//! call-union schema) in the JSON-Schema subset a provider accepts.
//!
//! The rule of toolgram holds here too: **nothing is dropped silently**. Every keyword the
//! provider does not accept is either rewritten into an equivalent it accepts (type lists,
//! `oneOf`→`anyOf` + deferred exclusivity, `allOf` merged, `$ref` inlined, `const`→one-value
//! `enum`, optional → required-and-nullable), or removed and listed in
//! [`ProfiledSchema::enforced_after_parse`] (removal only ever widens the provider schema;
//! toolgram's validator checks the original schema on the reply), or refused with a typed
//! [`ProfileError`] naming tool, JSON pointer and keyword. Documented limits are errors.
//! Removed annotations (which constrain nothing) are listed in [`ProfiledSchema::notes`].
//!
//! The profiles and their sources are described in `rules.rs` and `docs/architecture.md`.
//! This module is pure: it must not send requests, know request envelopes (that is the
//! providers' job), or change the compiler's own keyword policy in `compile/keyword_pass.rs`.

mod error;
mod gemini;
mod limits;
mod merge;
mod reference;
mod render;
mod restore;
mod rules;
mod union;

#[cfg(test)]
mod tests;

pub use error::ProfileError;
pub use restore::restore_arguments;
pub use toolgram_core::define::arguments::DeferredKeyword;
pub use union::{CALL_KEY, CALLS_KEY, call_union_schema};

use serde_json::{Value, json};
use toolgram_core::define::tool::ToolSet;

/// A provider's JSON-Schema subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// OpenAI Structured Outputs / `strict: true` function tools.
    OpenAiStrict,
    /// Anthropic `input_schema`, restricted to what `strict: true` tool use accepts (so the
    /// same schema works with and without `strict`).
    Anthropic,
    /// Gemini `functionDeclarations[].parameters` (its OpenAPI 3.0 `Schema` subset).
    Gemini,
}

impl Profile {
    /// Every profile, in a stable order.
    pub const ALL: [Profile; 3] = [Profile::OpenAiStrict, Profile::Anthropic, Profile::Gemini];

    /// Read a profile name: `openai-strict`, `anthropic` or `gemini`.
    pub fn from_name(name: &str) -> Result<Self, ProfileError> {
        match name {
            "openai-strict" | "openai" => Ok(Self::OpenAiStrict),
            "anthropic" => Ok(Self::Anthropic),
            "gemini" => Ok(Self::Gemini),
            other => Err(ProfileError::UnknownProfile(other.to_owned())),
        }
    }

    /// The name [`Profile::from_name`] reads.
    pub fn name(&self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai-strict",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

/// A schema rendered for a profile, with what the provider will not enforce.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfiledSchema {
    /// The schema to send.
    pub schema: Value,
    /// Keywords removed from `schema` that toolgram's validator enforces on the reply.
    pub enforced_after_parse: Vec<DeferredKeyword>,
    /// Rewrites and removed annotations, for humans.
    pub notes: Vec<String>,
}

/// Render one tool's `parameters` for `profile`.
pub fn render_parameters(
    tool: &str,
    parameters: &Value,
    profile: Profile,
) -> Result<ProfiledSchema, ProfileError> {
    let mut r = render::Renderer::new(profile, tool, parameters);
    let schema = r.render_root()?;
    limits::check_schema(profile, &format!("tool `{tool}`"), &schema)?;
    // A definition inlined at several places is reported once.
    let mut deferred: Vec<DeferredKeyword> = Vec::new();
    for d in r.deferred {
        if !deferred.contains(&d) {
            deferred.push(d);
        }
    }
    let mut notes: Vec<String> = Vec::new();
    for n in r.notes {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    Ok(ProfiledSchema {
        schema,
        enforced_after_parse: deferred,
        notes,
    })
}

/// Render every tool of the pool, in pool order, and check the pool-wide limits.
pub fn render_tools(
    tools: &ToolSet,
    profile: Profile,
) -> Result<Vec<(String, ProfiledSchema)>, ProfileError> {
    let rendered = tools
        .tools()
        .iter()
        .map(|t| {
            Ok((
                t.name.clone(),
                render_parameters(&t.name, &t.parameters, profile)?,
            ))
        })
        .collect::<Result<Vec<_>, ProfileError>>()?;
    let schemas: Vec<&Value> = rendered.iter().map(|(_, p)| &p.schema).collect();
    limits::check_pool(profile, &schemas)?;
    Ok(rendered)
}

/// OpenAI's spelling of "optional": the property is required and may be `null`.
pub(crate) fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return json!({"anyOf": [schema, {"type": "null"}]});
    };
    let null_type = |t: &Value| t == "null";
    let typed =
        map.contains_key("type") && !map.contains_key("anyOf") && !map.contains_key("const");
    if typed {
        match map.get_mut("type") {
            Some(Value::String(t)) if t != "null" => {
                let t = std::mem::take(t);
                map.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(ts)) if !ts.iter().any(null_type) => ts.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(e)) = map.get_mut("enum")
            && !e.contains(&Value::Null)
        {
            e.push(Value::Null);
        }
        return Value::Object(map);
    }
    let only_any_of = map
        .keys()
        .all(|k| ["anyOf", "description", "title"].contains(&k.as_str()));
    if only_any_of && let Some(Value::Array(members)) = map.get_mut("anyOf") {
        if !members.iter().any(|m| m.get("type").is_some_and(null_type)) {
            members.push(json!({"type": "null"}));
        }
        return Value::Object(map);
    }
    json!({"anyOf": [Value::Object(map), {"type": "null"}]})
}
