//! THE `$ref` resolver of the project (the schema compiler, the provider profiles and the
//! benchmarks all use it): same-document references only — a JSON pointer (`#`, `#/…`,
//! percent-decoded) or an anchor (`#name`: `$anchor`, or an `$id`/`id` of `#name`) — and
//! recursion detection. This module must not fetch anything or rewrite schemas; it answers
//! "where does this point" and "does it loop".

use serde_json::Value;
use std::collections::HashSet;

/// Deepest chain of references followed before a schema counts as recursive.
const MAX_CHAIN: usize = 64;

/// The JSON pointer (without `#`, percent-decoded) of a local pointer reference, or `None`
/// if it is not one (another document, or an anchor).
pub fn local_pointer(reference: &str) -> Option<String> {
    let p = percent_decode(reference.strip_prefix('#')?);
    (p.is_empty() || p.starts_with('/')).then_some(p)
}

/// The schema a local reference points to: a JSON pointer or an anchor.
pub fn target<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let p = percent_decode(reference.strip_prefix('#')?);
    if p.is_empty() {
        Some(root)
    } else if p.starts_with('/') {
        root.pointer(&p)
    } else {
        find_anchor(root, &p)
    }
}

/// Resolve a local pointer reference against the document root: the target and its pointer.
pub fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
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
pub fn is_recursive(root: &Value, pointer: &str) -> bool {
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

/// Every `$ref` string in `v` and its subschemas.
pub fn collect_refs(v: &Value, out: &mut Vec<String>) {
    super::walk::each_schema(v, &mut |m| {
        if let Some(Value::String(r)) = m.get("$ref") {
            out.push(r.clone());
        }
    });
}

/// Escape one JSON-pointer token.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescape one JSON-pointer token (`~1` is `/`, then `~0` is `~`; RFC 6901 §4).
pub fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// The subschema declaring `$anchor: name` (or draft-04..07 `id`/`$id: "#name"`).
fn find_anchor<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    match v {
        Value::Object(m) => {
            let hash = format!("#{name}");
            let declares = m.get("$anchor").and_then(Value::as_str) == Some(name)
                || ["$id", "id"]
                    .iter()
                    .any(|k| m.get(*k).and_then(Value::as_str) == Some(hash.as_str()));
            if declares {
                return Some(v);
            }
            m.values().find_map(|x| find_anchor(x, name))
        }
        Value::Array(a) => a.iter().find_map(|x| find_anchor(x, name)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_tokens_unescape_in_rfc_order() {
        for token in ["a/b", "~", "~1", "a~/b~0", ""] {
            assert_eq!(unescape_token(&escape_token(token)), token);
        }
        // `~01` is `~1` (unescaping `~0` first would make it `/`).
        assert_eq!(unescape_token("~01"), "~1");
    }
}
