//! Documented provider limits, checked on rendered schemas: over a limit is an error, never a
//! truncation.
//!
//! OpenAI (Structured Outputs, "Objects have limitations on nesting and size", "Limitations on
//! total string size", "Limitations on enum size"): 5,000 object properties, 10 levels of
//! nesting, 1,000 enum values in total, 15,000 characters of string values in one enum of more
//! than 250 values, 120,000 characters of property names, definition names, enum and const
//! values. Anthropic (strict tool use, "Schema complexity limits"): 20 strict tools per
//! request, 24 optional parameters and 16 parameters with union types (`anyOf` or type
//! arrays) across all strict schemas of a request. Gemini documents no schema limits.
//!
//! Where the docs leave the counting open we count conservatively: nesting counts object
//! levels with the root object as level 1, following `$ref`s (a recursive reference is counted
//! once); optional and union parameters are counted at every level. This module must not
//! rewrite schemas.

use super::Profile;
use super::error::ProfileError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use toolgram_grammar::schema::refs;
use toolgram_grammar::schema::walk::{children, each_schema};

const OPENAI_PROPERTIES: usize = 5_000;
const OPENAI_DEPTH: usize = 10;
const OPENAI_ENUM_VALUES: usize = 1_000;
const OPENAI_BIG_ENUM: usize = 250;
const OPENAI_BIG_ENUM_CHARS: usize = 15_000;
const OPENAI_CHARS: usize = 120_000;
const ANTHROPIC_TOOLS: usize = 20;
const ANTHROPIC_OPTIONAL: usize = 24;
const ANTHROPIC_UNIONS: usize = 16;

fn over(
    profile: Profile,
    scope: &str,
    limit: &'static str,
    value: usize,
    max: usize,
) -> Result<(), ProfileError> {
    if value > max {
        return Err(ProfileError::OverLimit {
            profile: profile.name(),
            scope: scope.to_owned(),
            limit,
            value,
            max,
        });
    }
    Ok(())
}

fn str_len(v: &Value) -> usize {
    v.as_str().map_or(0, |s| s.chars().count())
}

/// The per-schema limits of `profile`.
pub(crate) fn check_schema(
    profile: Profile,
    scope: &str,
    schema: &Value,
) -> Result<(), ProfileError> {
    if profile != Profile::OpenAiStrict {
        return Ok(());
    }
    let (mut props, mut enum_values, mut chars, mut big_enum) = (0, 0, 0, 0);
    each_schema(schema, &mut |m| {
        if let Some(Value::Object(p)) = m.get("properties") {
            props += p.len();
            chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        if let Some(Value::Object(d)) = m.get("$defs") {
            chars += d.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            enum_values += e.len();
            let len: usize = e.iter().map(str_len).sum();
            chars += len;
            if e.len() > OPENAI_BIG_ENUM {
                big_enum = big_enum.max(len);
            }
        }
        chars += m.get("const").map_or(0, str_len);
    });
    over(
        profile,
        scope,
        "the number of object properties",
        props,
        OPENAI_PROPERTIES,
    )?;
    over(
        profile,
        scope,
        "the total number of enum values",
        enum_values,
        OPENAI_ENUM_VALUES,
    )?;
    over(
        profile,
        scope,
        "the string length of one enum of more than 250 values",
        big_enum,
        OPENAI_BIG_ENUM_CHARS,
    )?;
    over(
        profile,
        scope,
        "the total string length of names and enum/const values",
        chars,
        OPENAI_CHARS,
    )?;
    let depth = object_depth(schema, schema, &mut Vec::new(), &mut HashMap::new());
    over(
        profile,
        scope,
        "the object nesting depth",
        depth,
        OPENAI_DEPTH,
    )
}

fn is_object(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        Some(Value::String(t)) => t == "object" || t == "OBJECT",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => m.contains_key("properties"),
    }
}

/// Depth in object levels; `memo` keeps the depth below each reference target once computed
/// (so references that fan out are not walked exponentially), `refs_seen` cuts recursion.
fn object_depth(
    v: &Value,
    root: &Value,
    refs_seen: &mut Vec<String>,
    memo: &mut HashMap<String, usize>,
) -> usize {
    let Value::Object(m) = v else { return 0 };
    let mut deepest = children(m)
        .into_iter()
        .filter(|(row, ..)| !row.holds_definitions())
        .map(|(_, _, c)| object_depth(c, root, refs_seen, memo))
        .max()
        .unwrap_or(0);
    if let Some(Value::String(r)) = m.get("$ref")
        && !refs_seen.contains(r)
    {
        let below = match memo.get(r) {
            Some(d) => *d,
            None => {
                let d = refs::resolve(root, r).map_or(0, |(target, _)| {
                    refs_seen.push(r.clone());
                    let d = object_depth(target, root, refs_seen, memo);
                    refs_seen.pop();
                    d
                });
                memo.insert(r.clone(), d);
                d
            }
        };
        deepest = deepest.max(below);
    }
    deepest + usize::from(is_object(m))
}

/// The pool-wide limits of `profile` over every tool's rendered schema.
pub(crate) fn check_pool(profile: Profile, schemas: &[&Value]) -> Result<(), ProfileError> {
    if profile != Profile::Anthropic {
        return Ok(());
    }
    let scope = "the tool pool";
    over(
        profile,
        scope,
        "the number of strict tools",
        schemas.len(),
        ANTHROPIC_TOOLS,
    )?;
    let (mut optional, mut unions) = (0, 0);
    for s in schemas {
        each_schema(s, &mut |m| {
            let required = m.get("required").and_then(Value::as_array);
            if let Some(Value::Object(p)) = m.get("properties") {
                optional += p
                    .keys()
                    .filter(|k| !required.is_some_and(|r| r.iter().any(|x| x == *k)))
                    .count();
            }
            if m.contains_key("anyOf") || m.get("type").is_some_and(Value::is_array) {
                unions += 1;
            }
        });
    }
    over(
        profile,
        scope,
        "the number of optional parameters",
        optional,
        ANTHROPIC_OPTIONAL,
    )?;
    over(
        profile,
        scope,
        "the number of parameters with union types",
        unions,
        ANTHROPIC_UNIONS,
    )
}
