//! OpenAI Chat Completions, as OpenAI, llama-server, vLLM and SGLang speak it: messages,
//! strict function tools (and freeform custom tools for the models that take them),
//! `tool_choice`, a grammar request's messages, `choices[0].message` replies and their
//! `tool_calls`, `usage`, and `choices[].delta` streams — each mapping toolgram-wire's `chat`
//! module, which the server reads and writes with too. Shapes only: it must not name a
//! provider; where providers differ (the grammar field, freeform tools) their rows say.

use crate::dialect::request::{
    common_fields, note_fallbacks, profiled, prompt_system, with_system,
};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_wire::chat::{messages, reply, stream, tools};

/// Where Chat Completions requests go.
const ENDPOINT: &str = "/v1/chat/completions";

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
        "tool_choice": tools::write_choice(choice),
        "parallel_tool_calls": parallel,
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": max_tokens,
    })
}

/// The tools sent: `allowed_tools` needs the whole pool in `tools`; otherwise only the
/// callable ones go.
pub(crate) fn sent<'a>(input: &'a RenderInput, pool: &'a ToolSet) -> &'a ToolSet {
    match &input.shape.choice {
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
    function: tools::write_function,
    custom: tools::write_custom,
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
    if input.shape.choice == ToolChoice::None {
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
        let mut body = json!({"messages": messages::write(input.messages)});
        let freeform = self.freeform && freeform_model(input.model);
        if let Some(items) = openai_tools(input, pool, freeform, notes, &CHAT_TOOLS)? {
            body["tools"] = Value::Array(items);
            body["tool_choice"] = tools::write_choice(&input.shape.choice);
            body["parallel_tool_calls"] = json!(input.shape.parallel);
        }
        Ok(body)
    }

    /// The messages of a request whose whole reply is under our GBNF (in the model's
    /// syntax, the whole call shape compiled in: [`crate::render::RenderPlan`]). The tools are
    /// described in the system prompt: the server renders its template without `tools`
    /// (never a grammar with `tools`).
    fn grammar(&self, input: &RenderInput, pool: &ToolSet) -> Body {
        Ok(prompt(input, pool))
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, toolgram_wire::chat::envelope::MAX_TOKENS_SENT);
        if input.stream {
            // A stream reports its usage only when asked, in its last chunk.
            body["stream_options"] = serde_json::json!({"include_usage": true});
        }
        ENDPOINT.to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        reply::read_text(body).ok_or_else(|| ReadError::shape(kind, "no `choices[0].message`"))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        reply::read_calls(body).map_err(|e| ReadError::body(body, e.message))
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        reply::read_usage(body)
    }

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        Ok(stream::assemble(chunks))
    }

    fn text_delta<'c>(&self, chunk: &'c Value) -> &'c str {
        stream::content_delta(chunk)
    }
}
