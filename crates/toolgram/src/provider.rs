//! `toolgram render` and `toolgram call --provider`: the same tools file sent to a remote
//! provider in its native shape, the path (grammar → strict JSON → prompt) chosen by
//! capability and reported, the reply validated and retried like the embedded path.

use crate::output::CliError;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::PathBuf;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax, validate};
use toolgram_providers::{
    Capabilities, Config, Endpoint, Fallback, HttpOptions, Kind, Path, ProviderModel, RenderInput,
    choose_path, render,
};
use toolgram_retry::{RetryError, RetryPolicy};

/// A capability to switch off (to test or force the fallback chain).
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Capability {
    /// Whole-reply grammars.
    Grammar,
    /// Strict JSON Schema.
    StrictJson,
}

/// Provider options shared by `render` and `call --provider`.
#[derive(Args, Clone)]
pub struct ProviderArgs {
    /// Provider: openai-chat, openai-responses, anthropic, gemini, llama-server, vllm,
    /// sglang, ollama, or an entry of the config file (`embedded` or absent: the local
    /// engine).
    #[arg(long)]
    pub provider: Option<String>,
    /// Base URL of the provider's API.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Make a missing capability an error instead of falling back to a weaker path.
    #[arg(long)]
    pub no_fallback: bool,
    /// Switch a capability off (repeatable): grammar, strict-json.
    #[arg(long = "disable")]
    pub disable: Vec<Capability>,
    /// Environment variable holding the API key (default per provider, e.g. OPENAI_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Provider config file (default: ./toolgram.toml when it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Ask the provider to stream the reply (assembled, then read as usual).
    #[arg(long)]
    pub stream: bool,
}

/// A provider with flags and config merged (flags win).
pub struct Resolved {
    kind: Kind,
    base_url: String,
    model: Option<String>,
    api_key: Option<String>,
    caps: Capabilities,
    fallback: bool,
}

impl ProviderArgs {
    /// The remote provider, if one was asked for, with `model` from `--model`.
    pub fn resolve(&self, model: Option<&str>) -> anyhow::Result<Option<Resolved>> {
        let Some(name) = self.provider.as_deref().filter(|n| *n != "embedded") else {
            return Ok(None);
        };
        let config = match &self.config {
            Some(path) => Config::load(path)?,
            None if std::path::Path::new("toolgram.toml").exists() => {
                Config::load(std::path::Path::new("toolgram.toml"))?
            }
            None => Config::default(),
        };
        let entry = config.providers.get(name);
        let kind = Kind::from_name(entry.map_or(name, |e| e.kind.as_str()))?;
        let mut caps = Capabilities::of(kind);
        let disabled = |c: Capability, word: &str| {
            self.disable.contains(&c) || entry.is_some_and(|e| e.disable.iter().any(|d| d == word))
        };
        caps.grammar &= !disabled(Capability::Grammar, "grammar");
        caps.strict_json &= !disabled(Capability::StrictJson, "strict-json");
        let key_env = self
            .api_key_env
            .clone()
            .or_else(|| entry.and_then(|e| e.api_key_env.clone()))
            .or(match kind {
                Kind::OpenAiChat | Kind::OpenAiResponses => Some("OPENAI_API_KEY".into()),
                Kind::Anthropic => Some("ANTHROPIC_API_KEY".into()),
                Kind::Gemini => Some("GEMINI_API_KEY".into()),
                _ => None,
            });
        Ok(Some(Resolved {
            kind,
            base_url: self
                .base_url
                .clone()
                .or_else(|| entry.and_then(|e| e.base_url.clone()))
                .unwrap_or_else(|| default_base_url(kind).to_owned()),
            model: model
                .map(str::to_owned)
                .or_else(|| entry.and_then(|e| e.model.clone())),
            api_key: key_env.and_then(|v| std::env::var(v).ok()),
            caps,
            fallback: !self.no_fallback && entry.is_none_or(|e| e.fallback == Fallback::Allowed),
        }))
    }
}

fn default_base_url(kind: Kind) -> &'static str {
    match kind {
        Kind::OpenAiChat | Kind::OpenAiResponses => "https://api.openai.com",
        Kind::Anthropic => "https://api.anthropic.com",
        Kind::Gemini => "https://generativelanguage.googleapis.com",
        Kind::Ollama => "http://127.0.0.1:11434",
        Kind::LlamaServer | Kind::Vllm | Kind::Sglang => "http://127.0.0.1:8080",
    }
}

fn wanted(mode: crate::call::ModeArg) -> Path {
    match mode {
        crate::call::ModeArg::Grammar => Path::Grammar,
        crate::call::ModeArg::Json => Path::StrictJson,
        crate::call::ModeArg::Prompt => Path::Prompt,
    }
}

fn call_syntax(name: Option<&str>) -> anyhow::Result<&'static syntax::CallSyntax> {
    let name = name.unwrap_or("hermes");
    syntax::by_name(name).ok_or_else(|| {
        CliError::new("invalid_request", format!("unknown call syntax `{name}`")).into()
    })
}

/// `toolgram render`.
#[derive(Args)]
pub struct RenderArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long)]
    pub tools: PathBuf,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    /// Strongest constraint wanted: grammar, json (strict JSON Schema) or prompt.
    #[arg(long, value_enum, default_value = "grammar")]
    pub mode: crate::call::ModeArg,
    /// Call syntax of the grammar and prompt paths (default hermes).
    #[arg(long)]
    pub syntax: Option<String>,
    /// Model id at the provider.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// The user's request.
    #[arg(default_value = "")]
    pub prompt: String,
}

pub fn render_cmd(args: RenderArgs) -> anyhow::Result<()> {
    let tools = crate::tools_file::read(&args.tools)?;
    let p = args
        .provider
        .resolve(args.model.as_deref())?
        .ok_or_else(|| CliError::new("invalid_request", "render needs --provider"))?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let (path, why) = choose_path(p.kind, p.caps, wanted(args.mode), p.fallback)?;
    let messages = [ChatMessage::text("user", args.prompt.clone())];
    let rendered = render(&RenderInput {
        kind: p.kind,
        messages: &messages,
        tools: &tools,
        choice: &choice,
        parallel: args.parallel_tool_calls,
        model: p.model.as_deref(),
        path,
        syntax: call_syntax(args.syntax.as_deref())?,
        temperature: None,
        max_tokens: None,
        stream: args.provider.stream,
    })?;
    eprintln!("path: {} ({why})", path.name());
    eprintln!("endpoint: POST {}{}", p.base_url, rendered.endpoint);
    for n in &rendered.notes {
        eprintln!("note: {n}");
    }
    println!("{}", serde_json::to_string_pretty(&rendered.body)?);
    Ok(())
}

/// `toolgram call --provider`: the provider drives the same validate-and-retry loop.
pub fn call_remote(
    args: &crate::call::CallArgs,
    p: Resolved,
    tools: &ToolSet,
    choice: ToolChoice,
    msgs: &[ChatMessage],
) -> anyhow::Result<()> {
    let kind = p.kind;
    let (path, why) = choose_path(kind, p.caps, wanted(args.mode), p.fallback)?;
    let mut model = ProviderModel {
        provider: Endpoint {
            kind,
            base_url: p.base_url,
            capabilities: p.caps,
            http: HttpOptions {
                api_key: p.api_key,
                ..HttpOptions::default()
            },
        },
        model: p.model,
        tools,
        choice: choice.clone(),
        parallel: args.parallel_tool_calls,
        path,
        syntax: call_syntax(args.syntax.as_deref())?,
        temperature: Some(args.temperature),
        max_tokens: Some(args.max_tokens),
        stream: args.provider.stream,
    };
    let policy = RetryPolicy {
        max_attempts: args.max_attempts,
        consecutive_blocked: args.consecutive_blocked,
    };
    let out = match toolgram_retry::run(&mut model, tools, &choice, msgs, policy) {
        Ok(o) => o,
        Err(RetryError::Model { error, .. }) => return Err(error.into()),
        Err(e) => {
            let kind = match e {
                RetryError::Blocked { .. } => "retry_blocked",
                _ => "no_valid_call",
            };
            let attempts: Vec<Value> = e
                .failed()
                .iter()
                .map(|f| json!({"attempt": f.attempt, "errors": f.errors, "raw": f.raw}))
                .collect();
            return Err(CliError::new(kind, e.to_string())
                .with(json!({"attempts": attempts}))
                .into());
        }
    };
    let reply = &out.reply;
    let mut msg = json!({"role": "assistant", "content": reply.content});
    if let Some(r) = &reply.reasoning_content {
        msg["reasoning_content"] = json!(r);
    }
    if !reply.tool_calls.is_empty() {
        msg["tool_calls"] = Value::Array(
            reply
                .tool_calls
                .iter()
                .map(|c| crate::tools_file::call_json(c, tools))
                .collect(),
        );
    }
    msg["finish_reason"] = json!(if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    });
    msg["toolgram"] = json!({"path": path.name(), "path_reason": why, "provider": kind.name(),
        "attempts": out.attempts});
    let repeats = validate::repeated_calls(msgs, &reply.tool_calls);
    if !repeats.is_empty() {
        msg["toolgram"]["repeated_calls"] = json!(repeats.len());
    }
    println!("{msg}");
    Ok(())
}
