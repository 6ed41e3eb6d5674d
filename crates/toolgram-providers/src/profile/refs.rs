//! Local `$ref` resolution and recursion detection for the profile renderer.
//!
//! Only same-document references (`#`, `#/…`) are resolved. This module must not fetch
//! anything or rewrite schemas; it answers "where does this point" and "does it loop".

use serde_json::Value;
use std::collections::HashSet;

/// Deepest chain of references followed before a schema counts as recursive.
const MAX_CHAIN: usize = 64;

/// The JSON pointer (without `#`) of a local reference, or `None` if it is not local.
pub(crate) fn local_pointer(reference: &str) -> Option<String> {
    let p = reference.strip_prefix('#')?;
    (p.is_empty() || p.starts_with('/')).then(|| p.replace("%25", "%").replace("%22", "\""))
}

/// Resolve a local reference against the document root.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let p = local_pointer(reference)?;
    let target = if p.is_empty() {
        root
    } else {
        root.pointer(&p)?
    };
    Some((target, p))
}

/// Whether `outer` is `inner` or one of its ancestors (as JSON pointers).
fn encloses(outer: &str, inner: &str) -> bool {
    inner == outer || inner.starts_with(&format!("{outer}/"))
}

/// Whether expanding the schema at `pointer` never ends: following its references (and
/// theirs) comes back to it or to a schema that encloses it. Unresolvable references and
/// chains deeper than 64 count as recursive (the conservative answer).
pub(crate) fn is_recursive(root: &Value, pointer: &str) -> bool {
    let mut stack = Vec::new();
    let mut finite = HashSet::new();
    loops(root, pointer, &mut stack, &mut finite)
}

/// Depth-first search; `finite` remembers targets already expanded without a loop, so a
/// schema that references the same definitions many times is not walked exponentially.
fn loops(
    root: &Value,
    pointer: &str,
    stack: &mut Vec<String>,
    finite: &mut HashSet<String>,
) -> bool {
    if stack.iter().any(|s| encloses(pointer, s)) || stack.len() > MAX_CHAIN {
        return true;
    }
    if finite.contains(pointer) {
        return false;
    }
    let node = if pointer.is_empty() {
        Some(root)
    } else {
        root.pointer(pointer)
    };
    let Some(node) = node else { return true };
    stack.push(pointer.to_owned());
    let mut refs = Vec::new();
    collect_refs(node, &mut refs);
    let found = refs
        .iter()
        .any(|r| local_pointer(r).is_none_or(|p| loops(root, &p, stack, finite)));
    stack.pop();
    if !found {
        finite.insert(pointer.to_owned());
    }
    found
}

/// Every `$ref` string under `v`.
pub(crate) fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r.clone());
            }
            for (k, c) in map {
                match (k.as_str(), c) {
                    // Maps of schemas: every value is a schema, whatever its name.
                    (
                        "properties" | "$defs" | "definitions" | "patternProperties",
                        Value::Object(children),
                    ) => children.values().for_each(|s| collect_refs(s, out)),
                    // Values, not schemas.
                    ("enum" | "const" | "default" | "examples" | "$ref", _) => {}
                    (_, c) => collect_refs(c, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}

/// Escape one JSON-pointer token.
pub(crate) fn esc(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
