//! OpenAI Chat Completions, as OpenAI, llama-server, vLLM and SGLang speak it: messages,
//! strict function tools (and freeform custom tools for the models that take them),
//! `tool_choice`, a grammar request's messages, `choices[0].message` replies and their
//! `tool_calls`, `usage`, and `choices[].delta` streams. Shapes only: it must not name a
//! provider; where providers differ (the grammar field, freeform tools) their rows say.

use crate::dialect::reply::{call, string_args};
use crate::dialect::request::{
    common_fields, note_fallbacks, profiled, prompt_system, with_system,
};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::stream::push_str;
use crate::usage::count;
use serde_json::{Map, Value, json};
use toolgram_core::compile::CompileOptions;
use toolgram_core::compile::ir::compile_ir;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_grammar::gbnf;

/// Where Chat Completions requests go.
const ENDPOINT: &str = "/v1/chat/completions";

fn messages(messages: &[ChatMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect(),
    )
}

/// Prompt path: tools and example calls in a system message, nothing enforced.
pub(crate) fn prompt(input: &RenderInput, pool: &ToolSet) -> Value {
    json!({"messages": with_system(input.messages, &prompt_system(input, pool))})
}

/// Whether `model` takes freeform (grammar) custom tools: OpenAI's GPT-5 family does; other
/// models get a grammar tool's JSON fallback shape instead (and a note says so).
pub(crate) fn freeform_model(model: Option<&str>) -> bool {
    model.is_some_and(|m| m.starts_with("gpt-5"))
}

/// A grammar tool's Lark as OpenAI's custom tools take it.
pub(crate) fn openai_lark(definition: &str) -> Result<String, ProviderError> {
    let g = toolgram_grammar::lark::parse(definition)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    Ok(toolgram_grammar::lark::emit(
        &g,
        toolgram_grammar::lark::LarkDialect::OpenAi,
    ))
}

/// OpenAI's `tool_choice`.
pub(crate) fn openai_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Named(n) => json!({"type": "function", "function": {"name": n}}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": if *required { "required" } else { "auto" },
                "tools": tools.iter().map(|n| json!({"type": "function", "function": {"name": n}})).collect::<Vec<_>>(),
            }
        }),
    }
}

/// A Chat Completions body for a server's own tool calling, no toolgram grammar: `messages`
/// and `tools` as OpenAI JSON, `tool_choice`, parallel calls, `max_tokens`, greedy and seeded.
/// The one builder of the peer requests the evals and benchmarks send (llama-server, vLLM,
/// `toolgram serve`); a caller adds its server's own fields (`cache_prompt`, `model`).
pub fn native_body(
    messages: Value,
    tools: &Value,
    choice: &ToolChoice,
    parallel: bool,
    max_tokens: usize,
) -> Value {
    json!({
        "messages": messages,
        "tools": tools,
        "tool_choice": openai_choice(choice),
        "parallel_tool_calls": parallel,
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": max_tokens,
    })
}

/// The tools sent: `allowed_tools` needs the whole pool in `tools`; otherwise only the
/// callable ones go.
pub(crate) fn sent<'a>(input: &'a RenderInput, pool: &'a ToolSet) -> &'a ToolSet {
    match input.choice {
        ToolChoice::AllowedTools { .. } => input.tools,
        _ => pool,
    }
}

/// How an OpenAI API writes one tool: a strict function from its name, description and
/// parameters, or a freeform custom tool from its name, description and Lark.
pub(crate) struct ToolShape {
    /// A strict function tool.
    pub(crate) function: fn(String, String, Value) -> Value,
    /// A freeform custom tool.
    pub(crate) custom: fn(String, String, String) -> Value,
}

/// Chat Completions' tools: each nested under its type.
const CHAT_TOOLS: ToolShape = ToolShape {
    function: |name, description, parameters| {
        json!({"type": "function", "function": {"name": name, "description": description,
            "parameters": parameters, "strict": true}})
    },
    custom: |name, description, lark| {
        json!({"type": "custom", "custom": {"name": name, "description": description,
            "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": lark}}}})
    },
};

/// The tools OpenAI's strict path sends, written by `shape` (grammar tools as freeform custom
/// tools when `freeform`, else their JSON fallback, with a note either way); `None` under
/// `tool_choice: none`, which sends none.
pub(crate) fn openai_tools(
    input: &RenderInput,
    pool: &ToolSet,
    freeform: bool,
    notes: &mut Vec<String>,
    shape: &ToolShape,
) -> Result<Option<Vec<Value>>, ProviderError> {
    if *input.choice == ToolChoice::None {
        return Ok(None);
    }
    let sent = sent(input, pool);
    note_fallbacks(sent, freeform, notes);
    let mut tools = Vec::new();
    for (t, (name, description, parameters)) in
        sent.tools()
            .iter()
            .zip(profiled(sent, Profile::OpenAiStrict, notes)?)
    {
        tools.push(match (&t.grammar, freeform) {
            (Some(g), true) => (shape.custom)(name, description, openai_lark(&g.definition)?),
            _ => (shape.function)(name, description, parameters),
        });
    }
    Ok(Some(tools))
}

/// Grammar path: the messages of a request whose whole reply is under our GBNF (in the
/// model's syntax), and that GBNF; the caller puts it in its provider's field. The tools are
/// described in the system prompt: the server renders its template without `tools` (never
/// a grammar with `tools`).
fn grammar(input: &RenderInput, notes: &mut Vec<String>) -> Result<(Value, String), ProviderError> {
    let ir = compile_ir(
        input.tools,
        input.choice,
        input.parallel,
        input.syntax,
        &CompileOptions::default(),
        false,
    )
    .map_err(|e| ProviderError::Compile(e.to_string()))?;
    for (tool, n) in &ir.notes {
        notes.push(format!(
            "tool `{tool}` at {}: `{}` enforced after parsing",
            n.pointer, n.keyword
        ));
    }
    let grammar = gbnf::emit(&ir.grammar);
    let callable: Vec<usize> = ir.callable;
    let pool = input
        .tools
        .subset(&callable)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    Ok((prompt(input, &pool), grammar))
}

/// Chat Completions, as every provider speaking it takes and returns it.
#[derive(Debug)]
pub(crate) struct ChatCompletions {
    /// Whether the models that take freeform custom tools (OpenAI's GPT-5 family) get grammar
    /// tools as such; otherwise every grammar tool goes as its JSON fallback.
    pub(crate) freeform: bool,
}

impl Dialect for ChatCompletions {
    fn profile(&self) -> Profile {
        Profile::OpenAiStrict
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        prompt(input, pool)
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        let mut body = json!({"messages": messages(input.messages)});
        let freeform = self.freeform && freeform_model(input.model);
        if let Some(tools) = openai_tools(input, pool, freeform, notes, &CHAT_TOOLS)? {
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = openai_choice(input.choice);
            body["parallel_tool_calls"] = json!(input.parallel);
        }
        Ok(body)
    }

    fn grammar(
        &self,
        input: &RenderInput,
        notes: &mut Vec<String>,
    ) -> Result<(Value, String), ProviderError> {
        grammar(input, notes)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, "max_tokens");
        ENDPOINT.to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        let msg = body
            .pointer("/choices/0/message")
            .ok_or_else(|| ReadError::shape(kind, "no `choices[0].message`"))?;
        Ok(msg
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned())
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        tool_calls(body, "/choices/0/message/tool_calls")
    }

    /// `usage.prompt_tokens`, `completion_tokens`, and the cached tokens
    /// (`prompt_tokens_details.cached_tokens`, else llama-server's `timings.cache_n`).
    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        (
            count(body, "/usage/prompt_tokens"),
            count(body, "/usage/completion_tokens"),
            count(body, "/usage/prompt_tokens_details/cached_tokens")
                .or_else(|| count(body, "/timings/cache_n")),
        )
    }

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        Ok(assemble(chunks))
    }
}

/// The `tool_calls` list at `pointer` (function calls, and custom calls as `{"input": text}`).
pub(crate) fn tool_calls(body: &Value, pointer: &str) -> Result<Vec<ToolCall>, ReadError> {
    let mut calls = Vec::new();
    for (i, c) in body
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        if let Some(custom) = c.get("custom") {
            let name = custom.get("name").and_then(Value::as_str).unwrap_or("");
            let text = custom.get("input").cloned().unwrap_or(Value::Null);
            calls.push(call(id, i, name, json!({ "input": text })));
            continue;
        }
        let name = c
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let args = string_args(c.pointer("/function/arguments").unwrap_or(&Value::Null))
            .map_err(|m| ReadError::body(body, m))?;
        calls.push(call(id, i, name, args));
    }
    Ok(calls)
}

/// `choices[].delta` chunks joined: content concatenated, `tool_calls` by index with their
/// name and argument pieces concatenated.
fn assemble(chunks: &[Value]) -> Value {
    let mut content = String::new();
    let mut calls: Vec<Map<String, Value>> = Vec::new();
    for c in chunks {
        let Some(delta) = c.pointer("/choices/0/delta") else {
            continue;
        };
        content.push_str(delta.get("content").and_then(Value::as_str).unwrap_or(""));
        for tc in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            while calls.len() <= i {
                calls.push(Map::from_iter([
                    ("id".to_owned(), json!("")),
                    ("type".to_owned(), json!("function")),
                    ("function".to_owned(), json!({"name": "", "arguments": ""})),
                ]));
            }
            let call = &mut calls[i];
            if let Some(id) = tc.get("id").and_then(Value::as_str) {
                call.insert("id".into(), json!(id));
            }
            if let Some(f) = call.get_mut("function") {
                if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                    push_str(&mut f["name"], n);
                }
                if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                    push_str(&mut f["arguments"], a);
                }
            }
        }
    }
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
    }
    json!({"choices": [{"index": 0, "message": message}]})
}
