//! One schema for a whole call — `{"name": <tool>, "arguments": <that tool's schema>}` as a
//! discriminated `anyOf` over the pool — for providers' JSON-Schema constrained modes.
//!
//! Every profile gets an object root (OpenAI strict refuses a root `anyOf`): `{"call": …}`, or
//! `{"calls": [ … ]}` (at least one) when parallel calls are allowed. Each tool's `$defs` move
//! to the union's `$defs` as `<tool>.<name>` and a tool that recurses through `#` becomes
//! `$defs/<tool>`, so references stay correct. This module must not render tools itself
//! (`render_tools` does) and must not know request envelopes.

use super::limits;
use super::{Profile, ProfileError, ProfiledSchema, render_tools};
use serde_json::{Map, Value, json};
use toolgram_core::define::tool::ToolSet;
use toolgram_grammar::schema::walk::for_each_child_mut;

/// The root key of a single-call union: `{"call": {"name": …, "arguments": …}}`.
pub const CALL_KEY: &str = "call";
/// The root key of a parallel-call union: `{"calls": [{"name": …, "arguments": …}, …]}`.
pub const CALLS_KEY: &str = "calls";

/// The union schema of a call (or of a non-empty list of calls when `parallel`).
pub fn call_union_schema(
    tools: &ToolSet,
    parallel: bool,
    profile: Profile,
) -> Result<ProfiledSchema, ProfileError> {
    if tools.is_empty() {
        return Err(ProfileError::EmptyPool);
    }
    let gemini = profile == Profile::Gemini;
    let ty = |t: &str| {
        if gemini {
            json!(t.to_uppercase())
        } else {
            json!(t)
        }
    };
    let mut defs = Map::new();
    let (mut members, mut deferred, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for (name, p) in render_tools(tools, profile)? {
        let args = if gemini {
            p.schema
        } else {
            relocate(&name, p.schema, &mut defs)
        };
        let name_schema = if gemini {
            json!({"type": "STRING", "enum": [name]})
        } else {
            json!({"type": "string", "const": name})
        };
        members.push(object(
            profile,
            vec![("name", name_schema), ("arguments", args)],
        ));
        deferred.extend(p.enforced_after_parse);
        notes.extend(p.notes.into_iter().map(|n| format!("{name}: {n}")));
    }
    let union = match members.len() {
        1 => members.remove(0),
        _ => json!({"anyOf": members}),
    };
    let (key, body) = if parallel {
        (
            CALLS_KEY,
            json!({"type": ty("array"), "items": union, "minItems": 1}),
        )
    } else {
        (CALL_KEY, union)
    };
    let mut root = object(profile, vec![(key, body)]);
    if !defs.is_empty()
        && let Value::Object(m) = &mut root
    {
        m.insert("$defs".into(), Value::Object(defs));
    }
    limits::check_schema(profile, "the call union", &root)?;
    Ok(ProfiledSchema {
        schema: root,
        enforced_after_parse: deferred,
        notes,
    })
}

/// A closed object whose properties are all required, in the profile's spelling.
fn object(profile: Profile, props: Vec<(&str, Value)>) -> Value {
    let names: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
    let properties: Map<String, Value> = props
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    if profile == Profile::Gemini {
        let mut o = json!({"type": "OBJECT", "properties": properties, "required": names});
        if names.len() > 1 {
            o["propertyOrdering"] = json!(names);
        }
        return o;
    }
    json!({"type": "object", "properties": properties, "required": names, "additionalProperties": false})
}

/// Move the tool's `$defs` into the union's and point its references there.
fn relocate(tool: &str, mut schema: Value, defs: &mut Map<String, Value>) -> Value {
    let own = schema.as_object_mut().and_then(|m| m.shift_remove("$defs"));
    let mut uses_root = false;
    rewrite_refs(tool, &mut schema, &mut uses_root);
    if let Some(Value::Object(own)) = own {
        for (d, mut s) in own {
            rewrite_refs(tool, &mut s, &mut uses_root);
            defs.insert(format!("{tool}.{d}"), s);
        }
    }
    if uses_root {
        defs.insert(tool.to_owned(), schema);
        return json!({"$ref": format!("#/$defs/{tool}")});
    }
    schema
}

fn rewrite_refs(tool: &str, v: &mut Value, uses_root: &mut bool) {
    let Value::Object(m) = v else { return };
    if let Some(Value::String(r)) = m.get_mut("$ref") {
        if r == "#" {
            *uses_root = true;
            *r = format!("#/$defs/{tool}");
        } else if let Some(name) = r.strip_prefix("#/$defs/") {
            *r = format!("#/$defs/{tool}.{name}");
        }
    }
    for_each_child_mut(m, |_, _, c| rewrite_refs(tool, c, uses_root));
}
