//! Reads one family's call region at a given offset, driven only by its [`CallSyntax`]
//! declaration (markers + [`CallBody`]): no family is special-cased here.
//!
//! It must NOT decide where calls start (that is [`super::scan`]) nor complete text that
//! stops inside a call: that is [`Fail::Truncated`], with what was read so far.

use super::cursor::{Ctx, Cur, Fail, RawCall, call, is_name, partial_call};
use super::json_repair::{JsonFail, JsonReader};
use super::pythonic;
use crate::syntax::{CallBody, CallSyntax, Piece};
use serde_json::{Map, Value};

/// Marker text without surrounding whitespace.
pub(crate) fn marker(pieces: &[Piece]) -> String {
    crate::syntax::text_of(pieces).trim().to_owned()
}

/// Read `syntax`'s calls starting at `start`; returns them and the end offset.
pub(crate) fn read_calls(
    text: &str,
    start: usize,
    syntax: &CallSyntax,
    ctx: &mut Ctx,
) -> Result<(Vec<RawCall>, usize), Fail> {
    let mut cur = Cur { text, pos: start };
    let call_open = marker(syntax.call_open);
    let call_close = marker(syntax.call_close);
    let sep = marker(syntax.separator);
    let has_section = !marker(syntax.section_open).is_empty();
    let sectioned = has_section && cur.eat_pieces(syntax.section_open);
    let at_body = body_anchor(syntax).is_some_and(|a| cur.rest().starts_with(a));
    let at_call = !call_open.is_empty() && cur.rest().starts_with(&call_open);
    if has_section && !sectioned && !at_body && !at_call {
        return Err(Fail::NoMatch);
    }
    let open_first = syntax
        .call_open
        .iter()
        .map(|p| p.text().trim())
        .find(|t| !t.is_empty())
        .unwrap_or("");
    let mut calls: Vec<RawCall> = Vec::new();
    loop {
        if cur.inside(&call_open) {
            return Err(Fail::Truncated(calls));
        }
        let save = cur.pos;
        let opened = !call_open.is_empty() && cur.eat_pieces(syntax.call_open);
        if !opened {
            cur.pos = save;
        }
        ws_before_body(&mut cur, syntax);
        if cur.at_end() {
            if calls.is_empty() || opened {
                return Err(Fail::Truncated(calls));
            }
            break;
        }
        let before = calls.len();
        match read_body(&mut cur, syntax, &call_close, ctx) {
            Ok(mut more) => calls.append(&mut more),
            Err(Fail::Truncated(mut partial)) => {
                calls.append(&mut partial);
                return Err(Fail::Truncated(calls));
            }
            Err(Fail::NoMatch) if before > 0 && !opened => {
                cur.pos = save;
                break;
            }
            Err(e) => return Err(e),
        }
        if !call_close.is_empty() && !cur.eat(&call_close) && cur.inside(&call_close) {
            return Err(Fail::Truncated(calls));
        }
        let save = cur.pos;
        if !sep.is_empty() && !cur.eat(&sep) {
            cur.pos = save;
        }
        ws_before_body(&mut cur, syntax);
        let rest = cur.rest();
        let again = if !open_first.is_empty() {
            rest.starts_with(open_first)
        } else if let Some(anchor) = body_anchor(syntax) {
            rest.starts_with(anchor)
        } else if sep.is_empty() {
            syntax.body == CallBody::Json && rest.starts_with('{')
        } else {
            cur.pos != save && !cur.at_end()
        };
        if !again {
            cur.pos = save;
            break;
        }
    }
    if sectioned {
        let save = cur.pos;
        if !cur.eat_pieces(syntax.section_close) {
            cur.pos = save;
        }
    }
    Ok((calls, cur.pos))
}

/// Skip whitespace before a call's body, unless the body's anchor starts with it (Muse
/// Glimmer's ` to=`).
fn ws_before_body(cur: &mut Cur, syntax: &CallSyntax) {
    if !body_anchor(syntax).is_some_and(|a| cur.rest().starts_with(a)) {
        cur.ws();
    }
}

/// Text that starts a call of this body even without the call/section opener.
pub(crate) fn body_anchor(syntax: &CallSyntax) -> Option<&'static str> {
    match syntax.body {
        CallBody::Tagged { name_open, .. } if !name_open.is_empty() => Some(name_open),
        CallBody::XmlElements { name_open, .. } => Some(name_open),
        _ => None,
    }
}

fn json_fail(e: JsonFail, partial: Vec<RawCall>) -> Fail {
    match e {
        JsonFail::Truncated => Fail::Truncated(partial),
        JsonFail::Invalid(_) => Fail::NoMatch,
    }
}

/// Skip a markdown fence opener (```` ```json ````) before a JSON value.
fn skip_fence_open(cur: &mut Cur) -> bool {
    let save = cur.pos;
    cur.ws();
    if let Some(r) = cur.rest().strip_prefix("```") {
        let lang = r.find(['\n', '{', '[']).unwrap_or(r.len());
        cur.pos += 3 + lang;
        return true;
    }
    cur.pos = save;
    false
}

fn read_json(cur: &mut Cur, ctx: &mut Ctx) -> Result<Value, JsonFail> {
    read_json_keys(cur, ctx, "")
}

/// Read JSON; `bare_keys`: keys without quotes are the syntax (Gemma 4), not a repair.
/// A JSON value, or with a non-empty `quote` one in Gemma's spelling (bare keys, strings
/// between `quote`).
fn read_json_keys(cur: &mut Cur, ctx: &mut Ctx, quote: &'static str) -> Result<Value, JsonFail> {
    let fenced = skip_fence_open(cur);
    let mut r = JsonReader::new(cur.text, cur.pos);
    if !quote.is_empty() {
        r.bare_keys = true;
        r.quote = quote;
    }
    let v = r.value()?;
    cur.pos = r.pos;
    for rep in r.repairs {
        ctx.note(rep);
    }
    if fenced {
        cur.eat("```");
    }
    Ok(v)
}

fn read_body(
    cur: &mut Cur,
    syntax: &CallSyntax,
    call_close: &str,
    ctx: &mut Ctx,
) -> Result<Vec<RawCall>, Fail> {
    match syntax.body {
        CallBody::Json
        | CallBody::JsonKeyed { .. }
        | CallBody::JsonNamedKey
        | CallBody::OpenAiJson => {
            let start = cur.pos;
            match read_json(cur, ctx) {
                Ok(v) => json_calls(v, syntax, ctx),
                Err(JsonFail::Truncated) => Err(Fail::Truncated(partial_json_call(
                    &cur.text[start..],
                    syntax,
                ))),
                Err(JsonFail::Invalid(_)) => Err(Fail::NoMatch),
            }
        }
        CallBody::NameThenArgs {
            name_prefix,
            id_first,
            name_end,
            id_marker,
            name_is_id,
            quote,
        } => {
            let raw_start = cur.pos;
            if !name_prefix.is_empty() && !cur.rest().starts_with(name_prefix) {
                return Err(if cur.inside(name_prefix) {
                    Fail::Truncated(Vec::new())
                } else {
                    Fail::NoMatch
                });
            }
            cur.pos += name_prefix.len();
            let first_id = if id_first.is_empty() {
                None
            } else {
                let rest = cur.rest();
                match rest.find(id_first) {
                    Some(i) if !rest[..i].contains(['\n', '{', '<']) => {
                        cur.pos += i + id_first.len();
                        Some(rest[..i].trim().to_owned())
                    }
                    Some(_) => return Err(Fail::NoMatch),
                    None => return Err(Fail::Truncated(Vec::new())),
                }
            };
            let name_start = cur.pos;
            let raw = if name_end.is_empty() {
                let r = cur.rest();
                let i = r.find(['{', '(']).ok_or(Fail::Truncated(Vec::new()))?;
                cur.pos += i;
                &r[..i]
            } else {
                match cur.until(name_end) {
                    Some(r) => r,
                    None => return Err(Fail::Truncated(Vec::new())),
                }
            };
            let (mut name, mut id) = (raw.trim().to_owned(), String::new());
            if let Some((n, i)) = raw.split_once(id_marker).filter(|_| !id_marker.is_empty()) {
                (name, id) = (n.trim().to_owned(), i.trim().to_owned());
            }
            if name_is_id {
                id = cur.text[raw_start..name_start + raw.len()]
                    .trim()
                    .to_owned();
                if let Some((n, _)) = name
                    .rsplit_once(':')
                    .filter(|(_, idx)| idx.chars().all(|c| c.is_ascii_digit()))
                {
                    name = n.to_owned();
                }
            }
            if let Some(first) = first_id {
                id = first;
            }
            if !is_name(&name) {
                return Err(Fail::NoMatch);
            }
            ctx.check(&name)?;
            let args_start = cur.pos;
            match read_json_keys(cur, ctx, quote) {
                Ok(Value::Object(m)) => Ok(vec![call(id, name, Value::Object(m), ctx)]),
                Ok(_) => Err(Fail::NoMatch),
                Err(e) => Err(json_fail(
                    e,
                    vec![partial_call(id, name, &cur.text[args_start..])],
                )),
            }
        }
        CallBody::Tagged { .. } => {
            super::tagged::read(cur, syntax, call_close, ctx).map(|c| vec![c])
        }
        CallBody::Pythonic => pythonic::read(cur, ctx).map(|c| vec![c]),
        CallBody::XmlElements { .. } => super::xml::read(cur, syntax.body, ctx).map(|c| vec![c]),
        // Harmony replies are read whole by `super::harmony`, never from a marker.
        CallBody::Harmony => Err(Fail::NoMatch),
    }
}

/// The name/id already readable in a truncated JSON call, if any.
fn partial_json_call(text: &str, syntax: &CallSyntax) -> Vec<RawCall> {
    let (name_key, id_key) = match syntax.body {
        CallBody::JsonKeyed { name_key, id_key } => (name_key, id_key),
        _ => ("name", ""),
    };
    let field = |key: &str| -> Option<String> {
        if key.is_empty() {
            return None;
        }
        let pat = format!("\"{key}\"");
        let i = text.rfind(&pat)?;
        let mut r = JsonReader::new(text, i + pat.len());
        r.skip_ws().ok()?;
        let after = text.get(r.pos..)?.strip_prefix(':')?;
        let mut r = JsonReader::new(after, 0);
        match r.value().ok()? {
            Value::String(s) => Some(s),
            _ => None,
        }
    };
    let Some(name) = field(name_key) else {
        return Vec::new();
    };
    let args = ["\"arguments\"", "\"parameters\""]
        .iter()
        .filter_map(|k| text.find(k).map(|i| i + k.len()))
        .next()
        .and_then(|i| text[i..].find(':').map(|j| &text[i + j + 1..]))
        .unwrap_or("");
    vec![partial_call(field(id_key).unwrap_or_default(), name, args)]
}

/// Calls in a JSON value: one object, or an array of them.
fn json_calls(v: Value, syntax: &CallSyntax, ctx: &mut Ctx) -> Result<Vec<RawCall>, Fail> {
    let items = match v {
        Value::Array(items) => items,
        other => vec![other],
    };
    if items.is_empty() {
        return Err(Fail::NoMatch);
    }
    items
        .into_iter()
        .map(|item| json_call(item, syntax, ctx))
        .collect()
}

fn json_call(item: Value, syntax: &CallSyntax, ctx: &mut Ctx) -> Result<RawCall, Fail> {
    let Value::Object(mut obj) = item else {
        return Err(Fail::NoMatch);
    };
    if let Some(Value::Object(f)) = obj.get("function").cloned() {
        obj.shift_remove("function");
        obj.extend(f);
    }
    let (name_key, id_key) = match syntax.body {
        CallBody::JsonKeyed { name_key, id_key } => (name_key, id_key),
        _ => ("name", "id"),
    };
    if syntax.body == CallBody::JsonNamedKey && obj.len() == 1 {
        let Some((name, args)) = obj.into_iter().next() else {
            return Err(Fail::NoMatch);
        };
        ctx.check(&name)?;
        return Ok(call(String::new(), name, args, ctx));
    }
    let name = [name_key, "name", "tool_name"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .ok_or(Fail::NoMatch)?
        .to_owned();
    if !is_name(&name) {
        return Err(Fail::NoMatch);
    }
    ctx.check(&name)?;
    let args = [syntax.args_key, "arguments", "parameters", "args"]
        .iter()
        .find_map(|k| obj.get(*k).cloned())
        .unwrap_or_else(|| Value::Object(Map::new()));
    let id = [id_key, "id", "tool_call_id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_owned();
    Ok(call(id, name, args, ctx))
}
