//! Requests in each provider's documented shape, for a path already chosen
//! ([`crate::choose_path`]). Schemas go through the provider profiles ([`crate::profile`]),
//! grammars through core's `compile::ir` + GBNF writer, prompt text through core's `prompt`. It
//! builds JSON only: it must not send anything.

use crate::capability::Kind;
use crate::error::ProviderError;
use crate::profile::{Profile, call_union_schema, render_parameters};
use serde_json::{Value, json};
use toolgram_core::compile::CompileOptions;
use toolgram_core::compile::ir::compile_ir;
use toolgram_core::define::request::Path;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::syntax::prompt::{few_shot, tools_prompt};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_grammar::gbnf;

/// Everything a request is made of.
pub struct RenderInput<'a> {
    /// The provider.
    pub kind: Kind,
    /// The conversation, OpenAI-shaped.
    pub messages: &'a [ChatMessage],
    /// The pool.
    pub tools: &'a ToolSet,
    /// Which calls may or must be made.
    pub choice: &'a ToolChoice,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// The model id, if the provider wants it in the body.
    pub model: Option<&'a str>,
    /// The path chosen.
    pub path: Path,
    /// The call syntax of the grammar and prompt paths (the model's own).
    pub syntax: &'static CallSyntax,
    /// Sampling temperature (`None`: the provider's default).
    pub temperature: Option<f32>,
    /// Most tokens to generate (`None`: the provider's default; Anthropic requires one, 1024).
    pub max_tokens: Option<usize>,
    /// Ask for a streamed reply (server-sent events; assembled by [`crate::assemble`]).
    pub stream: bool,
}

/// A request body and where it goes.
#[derive(Debug)]
pub struct Rendered {
    /// Path part of the URL (after the base URL).
    pub endpoint: String,
    /// The JSON body.
    pub body: Value,
    /// What the provider will not enforce and toolgram checks after parsing, and other
    /// facts worth telling the user (never keys).
    pub notes: Vec<String>,
}

/// Render the request.
pub fn render(input: &RenderInput) -> Result<Rendered, ProviderError> {
    let mut notes = Vec::new();
    let callable = input
        .choice
        .callable(input.tools)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    let pool = input
        .tools
        .subset(&callable)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    let (endpoint, mut body) = match (input.kind, input.path) {
        (_, Path::Prompt) => prompt_request(input, &pool),
        (Kind::OpenAiChat | Kind::Vllm | Kind::Sglang, Path::StrictJson) => {
            openai_chat(input, &pool, &mut notes)?
        }
        (Kind::OpenAiResponses, Path::StrictJson) => openai_responses(input, &pool, &mut notes)?,
        (Kind::Anthropic, Path::StrictJson) => anthropic(input, &pool, &mut notes)?,
        (Kind::Gemini, Path::StrictJson) => gemini(input, &pool, &mut notes)?,
        (Kind::LlamaServer | Kind::Ollama, Path::StrictJson) => {
            json_schema_request(input, &pool, &mut notes)?
        }
        (Kind::LlamaServer | Kind::Vllm | Kind::Sglang, Path::Grammar) => {
            grammar_request(input, &mut notes)?
        }
        (kind, Path::Grammar) => {
            return Err(ProviderError::Unsupported(format!(
                "{} takes no grammar for the whole reply",
                kind.name()
            )));
        }
        (kind, Path::Json) => {
            return Err(ProviderError::Unsupported(format!(
                "json is the embedded engine's path; {} takes strict_json",
                kind.name()
            )));
        }
    };
    if let (Some(model), Value::Object(map)) = (input.model, &mut body)
        && input.kind != Kind::Gemini
    {
        map.insert("model".into(), json!(model));
    }
    sampling(input, &mut body);
    if input.stream && input.kind != Kind::Gemini {
        body["stream"] = json!(true);
    } else if input.kind == Kind::Ollama {
        body["stream"] = json!(false);
    }
    Ok(Rendered {
        endpoint: if input.kind == Kind::Gemini {
            let model = input.model.unwrap_or("gemini-2.5-flash");
            if input.stream {
                format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
            } else {
                format!("/v1beta/models/{model}:generateContent")
            }
        } else {
            endpoint.to_owned()
        },
        body,
        notes,
    })
}

/// Temperature and token limit in each provider's own field names.
fn sampling(input: &RenderInput, body: &mut Value) {
    let (t, n) = (input.temperature, input.max_tokens);
    match input.kind {
        Kind::Gemini => {
            let mut cfg = serde_json::Map::new();
            if let Some(t) = t {
                cfg.insert("temperature".into(), json!(t));
            }
            if let Some(n) = n {
                cfg.insert("maxOutputTokens".into(), json!(n));
            }
            if !cfg.is_empty() {
                body["generationConfig"] = Value::Object(cfg);
            }
        }
        Kind::Ollama => {
            let mut opts = serde_json::Map::new();
            if let Some(t) = t {
                opts.insert("temperature".into(), json!(t));
            }
            if let Some(n) = n {
                opts.insert("num_predict".into(), json!(n));
            }
            if !opts.is_empty() {
                body["options"] = Value::Object(opts);
            }
        }
        kind => {
            if let Some(t) = t {
                body["temperature"] = json!(t);
            }
            let key = if kind == Kind::OpenAiResponses {
                "max_output_tokens"
            } else {
                "max_tokens"
            };
            if let Some(n) = n {
                body[key] = json!(n);
            }
        }
    }
}

fn chat_endpoint(kind: Kind) -> &'static str {
    match kind {
        Kind::Anthropic => "/v1/messages",
        Kind::Ollama => "/api/chat",
        Kind::OpenAiResponses => "/v1/responses",
        _ => "/v1/chat/completions",
    }
}

/// OpenAI-shaped messages with toolgram's system text in front.
fn with_system(messages: &[ChatMessage], system: &str) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": system})];
    out.extend(
        messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null)),
    );
    out
}

fn openai_messages(messages: &[ChatMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect(),
    )
}

/// Prompt path: tools and example calls in a system message, nothing enforced.
fn prompt_request(input: &RenderInput, pool: &ToolSet) -> (&'static str, Value) {
    let system = format!(
        "{}\n\n{}",
        tools_prompt(pool, input.syntax),
        few_shot(pool, input.choice, input.parallel, input.syntax)
    );
    let messages = with_system(input.messages, &system);
    let body = match input.kind {
        Kind::Anthropic => {
            let (_, msgs) = anthropic_messages(input.messages);
            json!({"max_tokens": 1024, "system": system, "messages": msgs})
        }
        Kind::Gemini => json!({
            "systemInstruction": {"parts": [{"text": system}]},
            "contents": gemini_contents(input.messages),
        }),
        Kind::Ollama => json!({"messages": messages}),
        Kind::OpenAiResponses => {
            json!({"instructions": system, "input": responses_input(input.messages)})
        }
        _ => json!({"messages": messages}),
    };
    (chat_endpoint(input.kind), body)
}

/// llama-server / vLLM / SGLang: the whole reply under our GBNF, in the model's syntax.
fn grammar_request(
    input: &RenderInput,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
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
    // The server renders its template without `tools` (never `grammar` with `tools`), so
    // the tools are described in the system prompt.
    let system = format!(
        "{}\n\n{}",
        tools_prompt(&pool, input.syntax),
        few_shot(&pool, input.choice, input.parallel, input.syntax)
    );
    let mut body = json!({"messages": with_system(input.messages, &system)});
    match input.kind {
        Kind::Vllm => body["structured_outputs"] = json!({"grammar": grammar}),
        Kind::Sglang => body["ebnf"] = json!(grammar),
        _ => body["grammar"] = json!(grammar),
    }
    Ok(("/v1/chat/completions", body))
}

/// llama-server / Ollama strict path: the reply is one JSON object matching the call union.
fn json_schema_request(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
    let union = call_union_schema(pool, input.parallel, Profile::OpenAiStrict)?;
    note_deferred(&union.enforced_after_parse, notes);
    let shape = if input.parallel {
        r#"{"calls": [{"name": …, "arguments": {…}}, …]}"#
    } else {
        r#"{"call": {"name": …, "arguments": {…}}}"#
    };
    let system = format!(
        "{}\n\nReply with one JSON object: {shape}",
        tools_prompt(pool, input.syntax)
    );
    let messages = with_system(input.messages, &system);
    Ok(match input.kind {
        Kind::Ollama => (
            "/api/chat",
            json!({"messages": messages, "format": union.schema}),
        ),
        _ => (
            "/v1/chat/completions",
            json!({"messages": messages, "json_schema": union.schema}),
        ),
    })
}

fn note_deferred(d: &[toolgram_core::define::arguments::DeferredKeyword], notes: &mut Vec<String>) {
    for k in d {
        notes.push(format!(
            "tool `{}` at {}: `{}` enforced after parsing",
            k.tool, k.pointer, k.keyword
        ));
    }
}

fn profiled(
    pool: &ToolSet,
    profile: Profile,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, String, Value)>, ProviderError> {
    pool.tools()
        .iter()
        .map(|t| {
            let p = render_parameters(&t.name, &t.parameters, profile)?;
            note_deferred(&p.enforced_after_parse, notes);
            Ok((t.name.clone(), t.description_for_model(), p.schema))
        })
        .collect()
}

/// Whether the model takes freeform (grammar) custom tools: OpenAI's GPT-5 family does;
/// other models get a grammar tool's JSON fallback shape instead (and a note says so).
fn freeform(input: &RenderInput) -> bool {
    matches!(input.kind, Kind::OpenAiChat | Kind::OpenAiResponses)
        && input.model.is_some_and(|m| m.starts_with("gpt-5"))
}

/// A grammar tool's Lark as OpenAI's custom tools take it.
fn openai_lark(definition: &str) -> Result<String, ProviderError> {
    let g = toolgram_grammar::lark::parse(definition)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    Ok(toolgram_grammar::lark::emit(
        &g,
        toolgram_grammar::lark::LarkDialect::OpenAi,
    ))
}

/// Grammar tools that go out as JSON functions are noted.
fn note_fallbacks(pool: &ToolSet, native: bool, notes: &mut Vec<String>) {
    for t in pool.tools().iter().filter(|t| t.grammar.is_some()) {
        if native {
            notes.push(format!(
                "grammar tool `{}` sent as a freeform custom tool",
                t.name
            ));
        } else {
            notes.push(format!(
                "grammar tool `{}` sent as its JSON fallback ({{\"input\": text}}); the text is checked against its grammar after parsing",
                t.name
            ));
        }
    }
}

fn openai_choice(choice: &ToolChoice) -> Value {
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

/// OpenAI Chat Completions (and vLLM/SGLang) strict function tools.
fn openai_chat(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
    let mut body = json!({"messages": openai_messages(input.messages)});
    if *input.choice == ToolChoice::None {
        return Ok(("/v1/chat/completions", body));
    }
    // allowed_tools needs the whole pool in `tools`; otherwise only the callable ones go.
    let sent = match input.choice {
        ToolChoice::AllowedTools { .. } => input.tools,
        _ => pool,
    };
    let native = freeform(input);
    note_fallbacks(sent, native, notes);
    let mut tools = Vec::new();
    for (t, (name, description, parameters)) in
        sent.tools()
            .iter()
            .zip(profiled(sent, Profile::OpenAiStrict, notes)?)
    {
        tools.push(match (&t.grammar, native) {
            (Some(g), true) => json!({"type": "custom", "custom": {"name": name, "description": description,
                "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": openai_lark(&g.definition)?}}}}),
            _ => json!({"type": "function", "function": {"name": name, "description": description,
                "parameters": parameters, "strict": true}}),
        });
    }
    body["tools"] = Value::Array(tools);
    body["tool_choice"] = openai_choice(input.choice);
    body["parallel_tool_calls"] = json!(input.parallel);
    Ok(("/v1/chat/completions", body))
}

fn responses_input(messages: &[ChatMessage]) -> Value {
    let mut items = Vec::new();
    for m in messages {
        match m.role.as_str() {
            "tool" => items.push(json!({"type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(),
                "output": m.content.clone().unwrap_or_default()})),
            _ => {
                if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
                    items.push(json!({"role": m.role, "content": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    items.push(json!({"type": "function_call", "call_id": c.id,
                        "name": c.function.name, "arguments": c.function.arguments}));
                }
            }
        }
    }
    Value::Array(items)
}

/// OpenAI Responses strict function tools.
fn openai_responses(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
    let mut body = json!({"input": responses_input(input.messages)});
    if *input.choice == ToolChoice::None {
        return Ok(("/v1/responses", body));
    }
    let sent = match input.choice {
        ToolChoice::AllowedTools { .. } => input.tools,
        _ => pool,
    };
    let native = freeform(input);
    note_fallbacks(sent, native, notes);
    let mut tools = Vec::new();
    for (t, (name, description, parameters)) in
        sent.tools()
            .iter()
            .zip(profiled(sent, Profile::OpenAiStrict, notes)?)
    {
        tools.push(match (&t.grammar, native) {
            (Some(g), true) => json!({"type": "custom", "name": name, "description": description,
                "format": {"type": "grammar", "syntax": "lark", "definition": openai_lark(&g.definition)?}}),
            _ => json!({"type": "function", "name": name, "description": description,
                "parameters": parameters, "strict": true}),
        });
    }
    body["tools"] = Value::Array(tools);
    body["tool_choice"] = match input.choice {
        ToolChoice::Named(n) => json!({"type": "function", "name": n}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools", "mode": if *required { "required" } else { "auto" },
            "tools": tools.iter().map(|n| json!({"type": "function", "name": n})).collect::<Vec<_>>(),
        }),
        other => openai_choice(other),
    };
    body["parallel_tool_calls"] = json!(input.parallel);
    Ok(("/v1/responses", body))
}

/// Anthropic's `system` string and `messages` (tool results as `tool_result` blocks).
fn anthropic_messages(messages: &[ChatMessage]) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role.as_str() {
            "system" => system.push(text),
            "tool" => out.push(json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(), "content": text}]})),
            "assistant" => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    let input: Value =
                        serde_json::from_str(&c.function.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.function.name, "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            _ => out.push(json!({"role": "user", "content": text})),
        }
    }
    (system.join("\n\n"), out)
}

/// Anthropic Messages with strict tools.
fn anthropic(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
    let (system, messages) = anthropic_messages(input.messages);
    let mut body = json!({"max_tokens": 1024, "messages": messages});
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    note_fallbacks(pool, false, notes);
    // Anthropic has no allowed_tools: the pool sent is the allowed subset.
    let tools: Vec<Value> = profiled(pool, Profile::Anthropic, notes)?
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"name": name, "description": description, "input_schema": schema, "strict": true})
        })
        .collect();
    let mut choice = match input.choice {
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"type": "auto"}),
        ToolChoice::Required | ToolChoice::AllowedTools { required: true, .. } => {
            json!({"type": "any"})
        }
        ToolChoice::Named(n) => json!({"type": "tool", "name": n}),
    };
    if *input.choice != ToolChoice::None {
        choice["disable_parallel_tool_use"] = json!(!input.parallel);
        body["tools"] = Value::Array(tools);
    }
    body["tool_choice"] = choice;
    Ok(("/v1/messages", body))
}

fn gemini_contents(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role.as_str() {
            "system" => {}
            "tool" => out.push(json!({"role": "user", "parts": [{"functionResponse": {
                "name": m.name.clone().unwrap_or_default(), "response": {"content": text}}}]})),
            "assistant" => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    let args: Value =
                        serde_json::from_str(&c.function.arguments).unwrap_or_else(|_| json!({}));
                    parts.push(json!({"functionCall": {"name": c.function.name, "args": args}}));
                }
                out.push(json!({"role": "model", "parts": parts}));
            }
            _ => out.push(json!({"role": "user", "parts": [{"text": text}]})),
        }
    }
    out
}

/// Gemini `generateContent` with function declarations; strict = mode ANY / VALIDATED.
fn gemini(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(&'static str, Value), ProviderError> {
    let system: Vec<String> = input
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .filter_map(|m| m.content.clone())
        .collect();
    let mut body = json!({"contents": gemini_contents(input.messages)});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": system.join("\n\n")}]});
    }
    note_fallbacks(input.tools, false, notes);
    let declarations: Vec<Value> = profiled(input.tools, Profile::Gemini, notes)?
        .into_iter()
        .map(|(name, description, parameters)| {
            json!({"name": name, "description": description, "parameters": parameters})
        })
        .collect();
    let names: Vec<String> = pool.tools().iter().map(|t| t.name.clone()).collect();
    let mut config = match input.choice {
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"mode": "VALIDATED"}),
        _ => json!({"mode": "ANY"}),
    };
    if matches!(
        input.choice,
        ToolChoice::Named(_) | ToolChoice::AllowedTools { .. }
    ) {
        config["allowedFunctionNames"] = json!(names);
    }
    if !input.parallel && *input.choice != ToolChoice::None {
        notes.push(
            "gemini has no parallel-calls switch: extra calls in a reply are refused by toolgram"
                .into(),
        );
    }
    body["tools"] = json!([{"functionDeclarations": declarations}]);
    body["toolConfig"] = json!({"functionCallingConfig": config});
    Ok(("", body))
}
