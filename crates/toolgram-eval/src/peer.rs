//! The peer in the same run: the items sent to an OpenAI-compatible server's own tool calling
//! (llama-server `--jinja`: its chat template and its lazy grammar; no toolgram grammar), the
//! tools as BFCL prepares them, `tool_choice: auto`, parallel calls allowed, greedy. Each reply
//! is scored twice: strictly (`tool_calls` only, mode `native`) and leniently (when
//! `tool_calls` is empty, the text read by toolgram's lenient parser, mode `native-lenient`).
//!
//! Under BFCL's protocol the request and its reading are BFCL's ([`crate::bfcl::fc`]): one
//! record, mode `native`, scored as BFCL's evaluator scores it.
//!
//! This module must not compile grammars or retry: the peer gets one attempt, as its users do.

use crate::bfcl::checker::Call;
use crate::bfcl::{Item, fc, scored};
use crate::record::ItemRecord;
use crate::{Protocol, RunOptions};
use serde_json::{Map, Value, json};
use std::time::Instant;
use toolgram_core::parse::lenient::{self, LenientOptions};
use toolgram_core::validate::validate_call;
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_providers::{HttpOptions, Kind, Resolved, native_chat_body, post_json, read_usage};

/// An OpenAI-compatible chat-completions server.
pub struct Peer {
    kind: Kind,
    url: String,
    model: Option<String>,
    http: HttpOptions,
}

impl Peer {
    /// The peer a resolved provider entry describes.
    pub fn new(provider: &Resolved) -> Self {
        Self {
            kind: provider.kind,
            url: format!(
                "{}/v1/chat/completions",
                provider.base_url.trim_end_matches('/')
            ),
            model: provider.model.clone(),
            http: HttpOptions {
                api_key: provider.api_key.clone(),
                retries: 1,
                ..HttpOptions::default()
            },
        }
    }

    /// Run one item: two records (`native`, `native-lenient`) under toolgram's protocol, one
    /// (`native`) under BFCL's.
    pub fn run(&self, item: &Item, tools: &ToolSet, options: RunOptions) -> Vec<ItemRecord> {
        let body = match options.protocol {
            Protocol::Bfcl => {
                let mut body = fc::request_body(item, self.model.as_deref().unwrap_or("default"));
                if let Some(n) = options.max_tokens {
                    body["max_tokens"] = json!(n);
                }
                body
            }
            Protocol::Toolgram => {
                let mut body = native_chat_body(
                    json!(item.messages),
                    &json!(item.tools),
                    &ToolChoice::Auto,
                    true,
                    options.max_tokens.unwrap_or(512),
                );
                if let Some(m) = &self.model {
                    body["model"] = json!(m);
                }
                body
            }
        };
        let modes: &[&str] = match options.protocol {
            Protocol::Bfcl => &["native"],
            Protocol::Toolgram => &["native", "native-lenient"],
        };
        let t0 = Instant::now();
        let reply = post_json(self.kind, &self.url, &body, &self.http);
        let latency_ms = t0.elapsed().as_secs_f64() * 1e3;
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                return modes
                    .iter()
                    .map(|mode| {
                        let mut r = scored(item, mode, &[]);
                        r.correct = false;
                        r.reason = Some(format!("peer error: {e}"));
                        r.parsed = false;
                        r.valid = false;
                        r.latency_ms = latency_ms;
                        r
                    })
                    .collect();
            }
        };
        let message = &reply["choices"][0]["message"];
        let content = message["content"].as_str().unwrap_or_default().to_owned();
        let usage = read_usage(self.kind, &reply);
        if options.protocol == Protocol::Bfcl {
            let mut r = bfcl_record(item, tools, message, latency_ms);
            r.output_tokens = usage.map(|u| u.completion_tokens);
            r.cached_tokens = usage.map(|u| u.cached_prompt_tokens);
            return vec![r];
        }
        let (strict, strict_parsed) = strict_calls(message);
        let (lenient, lenient_parsed) = if strict.is_empty() {
            lenient_calls(&content, tools)
        } else {
            (strict.clone(), strict_parsed)
        };
        let raw = if strict.is_empty() {
            content
        } else {
            json!({"content": content, "tool_calls": message["tool_calls"]}).to_string()
        };
        [
            ("native", strict, strict_parsed),
            ("native-lenient", lenient, lenient_parsed),
        ]
        .into_iter()
        .map(|(mode, calls, parsed)| {
            let mut r = scored(item, mode, &calls);
            r.parsed = parsed;
            r.valid = parsed && calls.iter().all(|c| valid(tools, c));
            r.raw = raw.clone();
            r.output_tokens = usage.map(|u| u.completion_tokens);
            r.cached_tokens = usage.map(|u| u.cached_prompt_tokens);
            r.latency_ms = latency_ms;
            r
        })
        .collect()
    }
}

/// BFCL's reading of a reply: its decode, its verdict; `parsed` when it decoded.
fn bfcl_record(item: &Item, tools: &ToolSet, message: &Value, latency_ms: f64) -> ItemRecord {
    let decoded = fc::decode(message);
    let (verdict, calls) = fc::verdict(item, message);
    let mut r = scored(item, "native", &calls);
    r.correct = verdict.is_ok();
    r.reason = verdict.err().map(|m| format!("{}: {}", m.kind, m.message));
    r.parsed = decoded.is_ok();
    r.valid = r.parsed && calls.iter().all(|c| valid(tools, c));
    r.raw = message.to_string();
    r.latency_ms = latency_ms;
    r
}

fn valid(tools: &ToolSet, c: &Call) -> bool {
    let call = ToolCall {
        id: String::new(),
        name: c.name.clone(),
        arguments: Value::Object(c.arguments.clone()),
    };
    validate_call(tools, &call).is_ok()
}

/// The reply's `tool_calls` with arguments that are JSON objects; `false` when one is not.
fn strict_calls(message: &Value) -> (Vec<Call>, bool) {
    let mut ok = true;
    let calls = message["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| {
            let name = c["function"]["name"].as_str()?.to_owned();
            let arguments = match &c["function"]["arguments"] {
                Value::String(s) => serde_json::from_str::<Map<String, Value>>(s).ok(),
                Value::Object(m) => Some(m.clone()),
                _ => None,
            };
            ok &= arguments.is_some();
            Some(Call {
                name,
                arguments: arguments?,
            })
        })
        .collect();
    (calls, ok)
}

/// Calls read from the text by toolgram's lenient parser (every registered syntax).
fn lenient_calls(text: &str, tools: &ToolSet) -> (Vec<Call>, bool) {
    let opts = LenientOptions {
        tools: Some(tools.tools()),
        ..LenientOptions::default()
    };
    match lenient::parse(text, &opts) {
        Ok(out) => (
            out.tool_calls
                .into_iter()
                .map(|c| Call {
                    name: c.name,
                    arguments: c.arguments.as_object().cloned().unwrap_or_default(),
                })
                .collect(),
            true,
        ),
        Err(_) => (Vec::new(), false),
    }
}
