//! XML-element arguments (`<city>Paris</city>`, nested elements as objects, `<item>` lists
//! as arrays): one call at the cursor, for [`CallBody::XmlElements`] families. Each value is
//! read by its schema: children only where an object or array may stand, a string's text
//! as it is (even when it looks like elements), an empty element as `{}`/`[]` where the
//! schema says so.
//!
//! It must NOT accept unbalanced elements: text ending before a close tag is truncation.

use super::cursor::{Ctx, Cur, Fail, RawCall, call, is_name, partial_call};
use super::values;
use crate::syntax::CallBody;
use serde_json::{Map, Value};

/// Read one `<invoke …>…</invoke>` call.
pub(crate) fn read(cur: &mut Cur, body: CallBody, ctx: &mut Ctx) -> Result<RawCall, Fail> {
    let CallBody::XmlElements {
        name_open,
        name_close,
        tag_end,
        call_end,
        ..
    } = body
    else {
        return Err(Fail::NoMatch);
    };
    let trunc = || Fail::Truncated(Vec::new());
    if !cur.eat(name_open) {
        return Err(if cur.inside(name_open) {
            trunc()
        } else {
            Fail::NoMatch
        });
    }
    let rest = cur.rest();
    let end = rest.find(name_close).ok_or_else(trunc)?;
    let name = rest[..end].trim().to_owned();
    if !is_name(&name) {
        return Err(Fail::NoMatch);
    }
    ctx.check(&name)?;
    cur.pos += end + name_close.len();
    let rest = cur.rest();
    let end = rest.find(tag_end).ok_or_else(trunc)?;
    cur.pos += end + tag_end.len();
    let schema = ctx.schema(&name);
    let mut args = Map::new();
    loop {
        cur.ws();
        if cur.rest().starts_with(call_end) {
            cur.pos += call_end.len();
            break;
        }
        if cur.at_end() || cur.inside(call_end) {
            let text = Value::Object(args).to_string();
            return Err(Fail::Truncated(vec![partial_call(
                String::new(),
                name,
                &text,
            )]));
        }
        let Some((key, inner)) = element(cur)? else {
            return Err(Fail::NoMatch);
        };
        let v = value_of(inner, values::property(schema, &key));
        args.insert(key, v);
    }
    Ok(call(String::new(), name, Value::Object(args), ctx))
}

/// `<key>inner</key>` at the cursor: the key and the inner text.
fn element<'a>(cur: &mut Cur<'a>) -> Result<Option<(String, &'a str)>, Fail> {
    let rest = cur.rest();
    let Some(after) = rest.strip_prefix('<') else {
        return Ok(None);
    };
    let Some(gt) = after.find('>') else {
        return Err(Fail::Truncated(Vec::new()));
    };
    let key = &after[..gt];
    if !is_name(key) {
        return Ok(None);
    }
    let close = format!("</{key}>");
    let body = &after[gt + 1..];
    let Some(end) = matching_close(body, key) else {
        return Err(Fail::Truncated(Vec::new()));
    };
    cur.pos += 1 + gt + 1 + end + close.len();
    Ok(Some((key.to_owned(), &body[..end])))
}

/// Offset of the `</key>` closing the element whose body starts `body`, nesting-aware.
fn matching_close(body: &str, key: &str) -> Option<usize> {
    let (open, close) = (format!("<{key}>"), format!("</{key}>"));
    let mut depth = 0usize;
    let mut i = 0;
    while i < body.len() {
        let r = &body[i..];
        if r.starts_with(&close) {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
            i += close.len();
        } else if r.starts_with(&open) {
            depth += 1;
            i += open.len();
        } else {
            i += r.chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

fn has_children(inner: &str) -> bool {
    let t = inner.trim_start();
    t.starts_with('<') && t.len() > 1 && !t.starts_with("</") && !t.starts_with("<![CDATA[")
}

/// An element's text as the value its schema `prop` allows: its children where an object
/// or array may stand (or the schema is unknown), else the typed text.
fn value_of(inner: &str, prop: Option<&Value>) -> Value {
    let types = values::types_of(prop);
    let may = |t: &str| types.is_empty() || types.iter().any(|x| x == t);
    if may("object") || may("array") {
        children(inner, prop, &types).unwrap_or_else(|| values::typed(inner, prop))
    } else {
        values::typed(inner, prop)
    }
}

/// Child elements as an object, or as an array when they are all `<item>` and the schema
/// allows one; an empty element is `[]` or `{}` when the schema names exactly one of them.
/// `None` when the text is not all elements.
fn children(inner: &str, prop: Option<&Value>, types: &[String]) -> Option<Value> {
    let array = types.iter().any(|t| t == "array");
    let object = types.iter().any(|t| t == "object");
    if inner.trim().is_empty() {
        return match (array, object) {
            (true, false) => Some(Value::Array(Vec::new())),
            (false, true) => Some(Value::Object(Map::new())),
            _ => None,
        };
    }
    if !has_children(inner) {
        return None;
    }
    let mut cur = Cur {
        text: inner,
        pos: 0,
    };
    let mut items = Vec::new();
    loop {
        cur.ws();
        match element(&mut cur) {
            Ok(Some(kv)) => items.push(kv),
            _ => break,
        }
    }
    if !cur.rest().trim().is_empty() || items.is_empty() {
        return None;
    }
    if items.iter().all(|(k, _)| k == "item") && (array || !object) {
        let item = prop.and_then(|p| p.get("items"));
        Some(Value::Array(
            items.into_iter().map(|(_, v)| value_of(v, item)).collect(),
        ))
    } else {
        let members = items
            .into_iter()
            .map(|(k, v)| {
                let v = value_of(v, values::property(prop, &k));
                (k, v)
            })
            .collect();
        Some(Value::Object(members))
    }
}
