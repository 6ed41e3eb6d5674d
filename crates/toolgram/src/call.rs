//! `toolgram call`: tools file + prompt or messages → one constrained call on the embedded
//! model, printed as an OpenAI assistant message.
//!
//! Everything that can be checked without a model (tools, tool choice, messages, the
//! compiled grammar) is checked before the model is loaded.

use crate::output::{CliError, assistant_message};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, compile};
use toolgram_engine::{CallRequest, Engine, EngineOptions, Sampling, check_grammar, models};

#[derive(Args)]
pub struct CallArgs {
    /// JSON file with OpenAI-style function tools (an array, or {"tools": [...]}).
    #[arg(long)]
    pub tools: PathBuf,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    /// Registry model name or role, or a path to any GGUF (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
    /// Jinja chat template file overriding the GGUF's.
    #[arg(long)]
    pub chat_template: Option<PathBuf>,
    /// Call syntax overriding detection (hermes, mistral, llama3-json, generic-json).
    #[arg(long)]
    pub syntax: Option<String>,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 512)]
    pub max_tokens: usize,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Seed for sampling.
    #[arg(long)]
    pub seed: Option<u64>,
    /// CPU threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Context window in tokens.
    #[arg(long)]
    pub ctx_size: Option<u32>,
    /// System message.
    #[arg(long)]
    pub system: Option<String>,
    /// JSON file with an OpenAI messages array (earlier turns, tool results).
    #[arg(long)]
    pub messages: Option<PathBuf>,
    /// The user's request (appended after --messages).
    pub prompt: Option<String>,
}

fn read(path: &PathBuf, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read {what} {}: {e}", path.display()),
        )
        .into()
    })
}

pub fn messages(args: &CallArgs) -> anyhow::Result<Vec<ChatMessage>> {
    let mut msgs = Vec::new();
    if let Some(s) = &args.system {
        msgs.push(ChatMessage::text("system", s.clone()));
    }
    if let Some(p) = &args.messages {
        let text = read(p, "messages file")?;
        let parsed: Vec<ChatMessage> = serde_json::from_str(&text).map_err(|e| {
            CliError::new(
                "invalid_messages",
                format!("{}: not an OpenAI messages array: {e}", p.display()),
            )
        })?;
        msgs.extend(parsed);
    }
    if let Some(p) = &args.prompt {
        msgs.push(ChatMessage::text("user", p.clone()));
    }
    if msgs.iter().all(|m| m.role == "system") {
        return Err(CliError::new("invalid_request", "give a PROMPT or --messages").into());
    }
    Ok(msgs)
}

pub fn run(args: CallArgs) -> anyhow::Result<()> {
    let tools = ToolSet::from_json_str(&read(&args.tools, "tools file")?)
        .map_err(toolgram_engine::EngineError::from)?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let plan = compile::compile(
        &tools,
        &choice,
        args.parallel_tool_calls,
        toolgram_core::syntax::detect(""),
        &Default::default(),
    )
    .map_err(toolgram_engine::EngineError::from)?;
    check_grammar(&plan.lark)?;
    let msgs = messages(&args)?;
    let chat_template = args
        .chat_template
        .as_ref()
        .map(|p| read(p, "chat template"))
        .transpose()?;
    let path = models::resolve(args.model.as_deref()).context("resolving the model")?;
    let opts = EngineOptions {
        threads: args.threads,
        n_ctx: args.ctx_size,
        chat_template,
        syntax: args.syntax.clone(),
    };
    let engine = Engine::load(&path, &opts)?;
    let mut session = engine.session()?;
    let reply = session.call(&CallRequest {
        messages: &msgs,
        tools: &tools,
        choice,
        parallel: args.parallel_tool_calls,
        sampling: Sampling {
            max_tokens: args.max_tokens,
            temperature: args.temperature,
            seed: args.seed,
            ..Sampling::default()
        },
    })?;
    println!(
        "{}",
        assistant_message(&reply, engine.syntax().name, engine.model_name())
    );
    Ok(())
}
