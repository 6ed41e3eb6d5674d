//! OpenAI harmony replies (GPT-OSS): a sequence of messages, each
//! `[<|start|>assistant][ to=R]<|channel|>C[ to=R][ <|constrain|>json]<|message|>BODY` ended
//! by `<|end|>`, `<|call|>` or `<|return|>`. `analysis` is reasoning, `final`/`commentary`
//! is content, a recipient `functions.NAME` makes the body a call's JSON arguments.
//!
//! It must NOT turn messages to built-in tools (`container.exec`, `browser.*`) into calls,
//! nor complete a call whose arguments stop mid-JSON.

use super::cursor::{Ctx, Fail, RawCall, call, partial_call};
use super::json_repair::{JsonFail, JsonReader};
use super::reasoning::ReasoningFormat;

/// What a harmony reply says.
pub(crate) struct Harmony {
    pub content: String,
    pub reasoning: String,
    pub calls: Vec<RawCall>,
}

const ENDS: [&str; 3] = ["<|end|>", "<|call|>", "<|return|>"];

/// Read a harmony reply; `Err(Truncated)` when a call's arguments stop early.
pub(crate) fn read(text: &str, format: ReasoningFormat, ctx: &mut Ctx) -> Result<Harmony, Fail> {
    let mut out = Harmony {
        content: String::new(),
        reasoning: String::new(),
        calls: Vec::new(),
    };
    for msg in text.split("<|start|>") {
        let Some((header, body_and_end)) = msg.split_once("<|message|>") else {
            out.content.push_str(msg);
            continue;
        };
        let (body, ended) = match ENDS
            .iter()
            .filter_map(|e| body_and_end.find(e).map(|i| (i, e)))
            .min()
        {
            Some((i, e)) => (&body_and_end[..i], Some(*e)),
            None => (body_and_end, None),
        };
        let channel = header
            .rsplit("<|channel|>")
            .next()
            .and_then(|c| c.split_whitespace().next())
            .unwrap_or("");
        let recipient = header
            .split_whitespace()
            .flat_map(|w| w.split("<|"))
            .find_map(|w| w.strip_prefix("to="))
            .unwrap_or("");
        if let Some(name) = recipient.strip_prefix("functions.") {
            let name = name.trim().to_owned();
            ctx.check(&name)?;
            let mut r = JsonReader::new(body, 0);
            match r.value() {
                Ok(v) => {
                    if !body[r.pos..].trim().is_empty() {
                        ctx.note("ignored text after a call's arguments");
                    }
                    for rep in r.repairs.drain(..) {
                        ctx.note(rep);
                    }
                    let c = call(String::new(), name, v, ctx);
                    out.calls.push(c);
                }
                Err(JsonFail::Truncated) => {
                    let mut calls = std::mem::take(&mut out.calls);
                    calls.push(partial_call(String::new(), name, body));
                    return Err(Fail::Truncated(calls));
                }
                Err(JsonFail::Invalid(_)) => return Err(Fail::NoMatch),
            }
        } else if !recipient.is_empty() && recipient != "assistant" && recipient != "user" {
            // A built-in tool's message: neither content nor a function call.
        } else if channel == "analysis" {
            if format == ReasoningFormat::None {
                let start = header.find("<|channel|>").unwrap_or(0);
                out.content.push_str(&header[start..]);
                out.content.push_str("<|message|>");
                out.content.push_str(body);
                out.content.push_str(ended.unwrap_or(""));
            } else {
                out.reasoning.push_str(body);
            }
        } else {
            out.content.push_str(body);
        }
    }
    Ok(out)
}
