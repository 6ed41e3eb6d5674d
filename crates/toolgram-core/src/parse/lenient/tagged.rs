//! XML-like tagged arguments (`<function=NAME><parameter=KEY>VALUE</parameter></function>`,
//! GLM's `<arg_key>`/`<arg_value>`, DSML, MiniMax M2, Kimi K3, MiniCPM 5, Hunyuan 3, Muse
//! Glimmer's header then `<atem:invoke>`): one call at the cursor, spelled by the entry's
//! [`CallBody::Tagged`] markers; where a header names the tool, both names must agree.
//!
//! It must NOT type values itself (the tool schema does, in `values`) nor accept a call
//! whose closing marker never comes: that is truncation.

use super::cursor::{Ctx, Cur, Fail, RawCall, call, is_name, partial_call};
use super::values;
use crate::syntax::{CallBody, CallSyntax};
use serde_json::{Map, Value};

/// Read one tagged call.
pub(crate) fn read(
    cur: &mut Cur,
    syntax: &CallSyntax,
    call_close: &str,
    ctx: &mut Ctx,
) -> Result<RawCall, Fail> {
    let CallBody::Tagged {
        name_open,
        name_again,
        name_close,
        key_open,
        key_close,
        tag_end,
        value_open,
        value_close,
        call_end,
        ..
    } = syntax.body
    else {
        return Err(Fail::NoMatch);
    };
    let trunc = || Fail::Truncated(Vec::new());
    if !name_open.is_empty() && !cur.eat(name_open) {
        return Err(if cur.inside(name_open) {
            trunc()
        } else {
            Fail::NoMatch
        });
    }
    let name = if name_close.is_empty() {
        let r = cur.rest();
        let mut end = r.len();
        for stop in ["\n", key_open, call_close] {
            if let Some(i) = r.find(stop).filter(|_| !stop.is_empty()) {
                end = end.min(i);
            }
        }
        cur.pos += end;
        r[..end].trim().to_owned()
    } else if name_again.is_empty() {
        cur.until(name_close).ok_or_else(trunc)?.trim().to_owned()
    } else {
        // A header names the tool, then the call's own tag names it again: the same name.
        // Without the tag, the reply ends inside the header only if what is left is a name
        // and then a beginning of the tag; otherwise ` to=` was text (`to='EUR'`).
        let Some(first) = cur.until(name_again) else {
            return Err(if ends_in_header(cur.rest(), name_again) {
                trunc()
            } else {
                Fail::NoMatch
            });
        };
        let first = first.trim().to_owned();
        let again = cur.until(name_close).ok_or_else(trunc)?.trim();
        if again != first {
            return Err(Fail::NoMatch);
        }
        first
    };
    if !is_name(&name) {
        return Err(if cur.at_end() { trunc() } else { Fail::NoMatch });
    }
    ctx.check(&name)?;
    if !tag_end.is_empty() {
        cur.until(tag_end).ok_or_else(trunc)?;
    }
    let schema = ctx.schema(&name).cloned();
    let mut args = Map::new();
    let partial = |args: &Map<String, Value>, key: Option<&str>| {
        let mut text = Value::Object(args.clone()).to_string();
        if let Some(k) = key {
            text.pop();
            if !args.is_empty() {
                text.push_str(", ");
            }
            text.push_str(&format!("{}: ", Value::String(k.to_owned())));
        }
        Fail::Truncated(vec![partial_call(String::new(), name.clone(), &text)])
    };
    loop {
        if cur.inside(key_open) {
            return Err(partial(&args, None));
        }
        if !cur.eat(key_open) {
            break;
        }
        let Some(key) = cur.until(key_close) else {
            return Err(partial(&args, None));
        };
        let key = key.trim().to_owned();
        if !tag_end.is_empty() && cur.until(tag_end).is_none() {
            return Err(partial(&args, Some(&key)));
        }
        if !value_open.is_empty() && !cur.eat(value_open) {
            return Err(if cur.at_end() || cur.inside(value_open) {
                partial(&args, Some(&key))
            } else {
                Fail::NoMatch
            });
        }
        let Some(raw) = cur.until(value_close) else {
            return Err(partial(&args, Some(&key)));
        };
        let v = values::typed(raw, values::property(schema.as_ref(), &key));
        args.insert(key, v);
    }
    let end = if call_end.is_empty() {
        call_close
    } else {
        call_end
    };
    if !end.is_empty() && !cur.eat(end) {
        return Err(if cur.at_end() || cur.inside(end) {
            partial(&args, None)
        } else {
            Fail::NoMatch
        });
    }
    if call_end.is_empty() && !call_close.is_empty() {
        cur.pos -= call_close.len();
    }
    Ok(call(String::new(), name, Value::Object(args), ctx))
}

/// Whether `rest` is a tool name (or a beginning of one) followed by a beginning of `tag`.
fn ends_in_header(rest: &str, tag: &str) -> bool {
    let name_len = rest
        .find(|c: char| !(c.is_alphanumeric() || "_-.:/".contains(c)))
        .unwrap_or(rest.len());
    tag.starts_with(&rest[name_len..])
}
