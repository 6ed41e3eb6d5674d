//! Python call syntax `name(a=1, b="x")` (LFM2, pythonic Llama): one call at the cursor.
//!
//! It must NOT evaluate anything: values are literals read by the lenient JSON reader.

use super::cursor::{Ctx, Cur, Fail, RawCall, call, is_name, partial_call};
use super::json_repair::{JsonFail, JsonReader};
use serde_json::{Map, Value};

/// Read `name(k=v, …)`.
pub(crate) fn read(cur: &mut Cur, ctx: &mut Ctx) -> Result<RawCall, Fail> {
    cur.ws();
    let r = cur.rest();
    let Some(open) = r.find('(') else {
        return Err(
            if r.chars().all(|c| c.is_alphanumeric() || "_.".contains(c)) {
                Fail::Truncated(Vec::new())
            } else {
                Fail::NoMatch
            },
        );
    };
    let name = r[..open].trim().to_owned();
    if !is_name(&name) {
        return Err(Fail::NoMatch);
    }
    ctx.check(&name)?;
    cur.pos += open + 1;
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
        cur.ws();
        let r = cur.rest();
        if r.is_empty() {
            return Err(partial(&args, None));
        }
        if r.starts_with(')') {
            cur.pos += 1;
            break;
        }
        if r.starts_with(',') {
            cur.pos += 1;
            continue;
        }
        let Some(eq) = r.find('=') else {
            return Err(partial(&args, None));
        };
        let key = r[..eq].trim().to_owned();
        if !is_name(&key) {
            return Err(Fail::NoMatch);
        }
        cur.pos += eq + 1;
        let mut jr = JsonReader::new(cur.text, cur.pos);
        match jr.value() {
            Ok(v) => {
                cur.pos = jr.pos;
                args.insert(key, v);
            }
            Err(JsonFail::Truncated) => return Err(partial(&args, Some(&key))),
            Err(JsonFail::Invalid(_)) => return Err(Fail::NoMatch),
        }
    }
    Ok(call(String::new(), name, Value::Object(args), ctx))
}
