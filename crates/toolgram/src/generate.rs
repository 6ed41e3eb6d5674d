//! `toolgram generate`: free generation on the embedded model under any grammar file — Lark
//! (`.lark`), GBNF (`.gbnf`, llama.cpp dialect) or a JSON Schema (`--schema`) — optionally
//! after a `<think>` block; prints the assistant message.
//!
//! The grammar is checked before the model is loaded. Wiring only: reading grammars
//! belongs to `toolgram-core`, the run (a `response_format` request) to `toolgram-runtime`.

use crate::output::say;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use toolgram_core::define::request::Think;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax};
use toolgram_runtime::{
    Backend, EmbeddedConfig, Request, Runtime, Sampling, check_before_load, read_format_file,
};

#[derive(Args)]
pub(crate) struct GenerateArgs {
    /// Grammar file: Lark (.lark) or GBNF (.gbnf).
    #[arg(long, conflicts_with = "schema", required_unless_present = "schema")]
    pub grammar: Option<PathBuf>,
    /// JSON Schema file the output must match.
    #[arg(long)]
    pub schema: Option<PathBuf>,
    /// A <think>…</think> block first: off, optional or required (returned as reasoning_content).
    #[arg(long, default_value = "off", value_parser = crate::args::think)]
    pub think: Think,
    /// Most tokens of reasoning before </think> is forced in (default: 3/4 of --max-tokens).
    #[arg(long)]
    pub think_budget: Option<usize>,
    /// Registry model name or role, a path to any GGUF, or an `hf:OWNER/REPO[:QUANT]` reference
    /// (fetched from the Hugging Face Hub, sha256-checked; default: the default model).
    #[arg(long)]
    pub model: Option<String>,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Seed for sampling.
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub engine: crate::args::EngineArgs,
    /// System message.
    #[arg(long)]
    pub system: Option<String>,
    /// Refuse a `--schema` with keywords toolgram does not know (by default they are
    /// annotations: listed as warnings, never enforced).
    #[arg(long)]
    pub strict_schemas: bool,
    /// The user's request.
    pub prompt: String,
}

pub(crate) fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let format = read_format_file(args.grammar.as_deref(), args.schema.as_deref())?;
    let mut messages = Vec::new();
    if let Some(s) = &args.system {
        messages.push(ChatMessage::text("system", s.clone()));
    }
    messages.push(ChatMessage::text("user", args.prompt.clone()));
    let mut req = Request::new(messages, ToolSet::new(Vec::new())?);
    req.shape.choice = ToolChoice::None;
    req.response_format = Some(format);
    req.shape.think = args.think;
    req.strict_schemas = args.strict_schemas;
    req.sampling = Sampling {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        seed: args.seed,
        think_budget: args.think_budget,
        ..Sampling::default()
    };
    // The grammar is checked before any model is loaded.
    let checked = check_before_load(&req, syntax::detect(""))?;
    crate::output::print_checked(&checked);
    let runtime = Runtime::new(Backend::Embedded(EmbeddedConfig {
        model: args.model.clone(),
        engine: args.engine.options(),
        max_sessions: 1,
        parallel: 1,
        max_queue: 1,
        prefix_cache: None,
        measure_speed: false,
    }))?;
    let r = runtime.run(&runtime.ready(req)?)?;
    let mut msg = r.to_json();
    // Free generation has no calls: the message keeps only what applies to it.
    msg["toolgram"] = json!({"path": r.path.name(), "model": r.model});
    say!("{msg}")?;
    Ok(())
}
