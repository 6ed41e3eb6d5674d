//! Calls rendered in a syntax: exactly the text the compiled grammar accepts, each family's
//! native spelling as a chat template would write it (for few-shot examples and round-trip
//! tests).
//!
//! This module must not parse or compile: it only writes text.

use super::{CallBody, CallSyntax, text_of};
use crate::define::tool::ToolCall;
use crate::syntax::pyjson;
use serde_json::{Map, Value};

impl CallSyntax {
    /// One call's JSON object, spelled the way the grammar spells it.
    pub fn call_json(&self, name: &str, arguments: &Value) -> String {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(name.to_owned()));
        obj.insert(self.args_key.into(), arguments.clone());
        pyjson::to_string(&Value::Object(obj), None)
    }

    /// Render calls in this syntax: exactly the text the compiled grammar accepts, the
    /// family's native spelling.
    pub fn render_calls(&self, calls: &[ToolCall]) -> String {
        let mut out = text_of(self.section_open);
        for (i, c) in calls.iter().enumerate() {
            if i > 0 {
                out.push_str(&text_of(self.separator));
            }
            if i > 0 || self.prompt_opens.is_none() {
                // A prompt that opens the first call wrote its opener.
                out.push_str(&text_of(self.call_open));
            }
            out.push_str(&self.render_body(i, c));
            out.push_str(&text_of(self.call_close));
        }
        if !self.section_close.is_empty() {
            out.push_str(self.glue());
        }
        out.push_str(&text_of(self.section_close));
        out
    }

    fn render_body(&self, index: usize, c: &ToolCall) -> String {
        let json = |v: &Value| pyjson::to_string(v, None);
        match self.body {
            CallBody::Json => self.call_json(&c.name, &c.arguments),
            CallBody::JsonKeyed { name_key, id_key } => {
                let mut obj = Map::new();
                if !id_key.is_empty() {
                    obj.insert(id_key.into(), Value::String(c.id.clone()));
                }
                obj.insert(name_key.into(), Value::String(c.name.clone()));
                obj.insert(self.args_key.into(), c.arguments.clone());
                json(&Value::Object(obj))
            }
            CallBody::OpenAiJson => {
                // The grammar wants an id; a call without one gets its index's.
                let id = match c.id.as_str() {
                    "" => format!("call_{index}"),
                    id => id.to_owned(),
                };
                json(&serde_json::json!({
                    "id": id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }))
            }
            CallBody::JsonNamedKey => {
                let mut obj = Map::new();
                obj.insert(c.name.clone(), c.arguments.clone());
                json(&Value::Object(obj))
            }
            CallBody::NameThenArgs {
                name_prefix,
                id_first,
                name_end,
                id_marker,
                name_is_id,
                ..
            } => {
                let first = if id_first.is_empty() {
                    String::new()
                } else {
                    format!("{}{id_first}", c.id)
                };
                let suffix = if name_is_id {
                    format!(":{index}")
                } else {
                    String::new()
                };
                let id = if id_marker.is_empty() {
                    String::new()
                } else {
                    format!("{id_marker}{}", c.id)
                };
                let args = match self.body {
                    CallBody::NameThenArgs { quote, .. } if !quote.is_empty() => {
                        gemma_value(&c.arguments, quote)
                    }
                    _ => json(&c.arguments),
                };
                format!("{name_prefix}{first}{}{suffix}{id}{name_end}{args}", c.name)
            }
            CallBody::Tagged {
                name_close,
                key_open,
                key_close,
                tag_end,
                value_open,
                value_close,
                call_end,
                ..
            } => {
                let mut out = format!("{}{tag_end}", self.body.name_tag(&c.name));
                if name_close.is_empty() {
                    out.push('\n');
                }
                for (k, v) in c.arguments.as_object().into_iter().flatten() {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => json(other),
                    };
                    out.push_str(&format!(
                        "{key_open}{k}{key_close}{tag_end}{value_open}{text}{value_close}"
                    ));
                }
                out.push_str(call_end);
                out
            }
            CallBody::XmlElements {
                name_open,
                name_close,
                tag_end,
                call_end,
                glue,
            } => {
                let mut out = format!("{glue}{name_open}{}{name_close}{tag_end}", c.name);
                if let Some(args) = c.arguments.as_object() {
                    out.push_str(&xml_members(args, glue));
                }
                out.push_str(glue);
                out.push_str(call_end);
                out
            }
            CallBody::Harmony => format!(
                "<|channel|>commentary to=functions.{} <|constrain|>json<|message|>{}",
                c.name,
                json(&c.arguments)
            ),
            CallBody::Pythonic => {
                let args: Vec<String> = c
                    .arguments
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={}", python_literal(v)))
                    .collect();
                format!("{}({})", c.name, args.join(", "))
            }
        }
    }
}

/// A value in Gemma's spelling: keys bare and sorted, strings between `quote`, no spaces.
fn gemma_value(v: &Value, quote: &str) -> String {
    match v {
        Value::String(s) => format!("{quote}{s}{quote}"),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", gemma_value(&m[k], quote)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| gemma_value(v, quote)).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// An object's members as XML elements, `glue` before every tag; members that are null are
/// left out (as MiniMax's template does).
fn xml_members(m: &Map<String, Value>, glue: &str) -> String {
    m.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| xml_element(k, v, glue))
        .collect()
}

/// A JSON value as an XML element: objects nest, arrays repeat `<item>`, a null is empty.
fn xml_element(key: &str, v: &Value, glue: &str) -> String {
    let inner = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(m) => xml_members(m, glue),
        Value::Array(items) => items.iter().map(|v| xml_element("item", v, glue)).collect(),
        other => other.to_string(),
    };
    format!("{glue}<{key}>{inner}{glue}</{key}>")
}

/// A JSON value spelled as a Python literal (`True`, `None`, dicts and lists).
fn python_literal(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_literal).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_literal(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}
