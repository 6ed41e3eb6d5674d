//! `toolgram generate`: free generation on the embedded model under any grammar file — Lark
//! (`.lark`), GBNF (`.gbnf`, llama.cpp dialect) or a JSON Schema (`--schema`) — optionally
//! after a `<think>` block; prints the assistant message.
//!
//! The grammar is checked before the model is loaded. Wiring only: reading grammars
//! belongs to `toolgram-core`, generating to `toolgram-engine`.

use crate::call::ThinkArg;
use crate::output::CliError;
use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolgram_core::ChatMessage;
use toolgram_core::compile::{
    CompileOptions, KeywordPass, bare_grammar_schema, post_parse_validator,
};
use toolgram_core::grammar::{self, lark::LarkDialect};
use toolgram_engine::{
    ByteChecker, Engine, EngineOptions, GenerateRequest, Sampling, UserGrammar, generation_grammar,
    models,
};

#[derive(Args)]
pub struct GenerateArgs {
    /// Grammar file: Lark (.lark) or GBNF (.gbnf).
    #[arg(long, conflicts_with = "schema", required_unless_present = "schema")]
    pub grammar: Option<PathBuf>,
    /// JSON Schema file the output must match.
    #[arg(long)]
    pub schema: Option<PathBuf>,
    /// Allow or demand a <think>…</think> block first (returned as reasoning_content).
    #[arg(long, value_enum, default_value = "off")]
    pub think: ThinkArg,
    /// Most tokens of reasoning before </think> is forced in (default: 3/4 of --max-tokens).
    #[arg(long)]
    pub think_budget: Option<usize>,
    /// Registry model name or role, or a path to any GGUF (default: the default model).
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
    /// CPU threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// System message.
    #[arg(long)]
    pub system: Option<String>,
    /// Unknown keywords in `--schema` are listed as warnings and ignored instead of refused.
    #[arg(long)]
    pub lenient: bool,
    /// The user's request.
    pub prompt: String,
}

fn read(path: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read {what} {}: {e}", path.display()),
        )
        .into()
    })
}

/// The grammar the user gave, read into what the engine runs, and for a JSON Schema the
/// validator for the keywords the grammar leaves to after generation.
pub fn user_grammar(
    grammar: Option<&Path>,
    schema: Option<&Path>,
    lenient: bool,
) -> anyhow::Result<(UserGrammar, Option<jsonschema::Validator>)> {
    if let Some(p) = schema {
        let text = read(p, "schema")?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            CliError::new("invalid_schema", format!("{}: not JSON: {e}", p.display()))
        })?;
        // The same keyword pass as tool arguments: unknown keywords refused by name,
        // keywords llguidance cannot enforce checked after generation.
        let mut pass = KeywordPass::default();
        let stripped = bare_grammar_schema(&v, &mut pass);
        crate::grammar::refuse_or_list_unknown(&pass.unknown, lenient, "invalid_schema")?;
        let validator = if pass.deferred.is_empty() {
            None
        } else {
            Some(
                post_parse_validator(&v)
                    .map_err(|e| CliError::new("invalid_schema", e.to_string()))?,
            )
        };
        return Ok((UserGrammar::JsonSchema(stripped), validator));
    }
    let Some(p) = grammar else {
        return Err(CliError::new("invalid_request", "give --grammar or --schema").into());
    };
    let text = read(p, "grammar")?;
    match p.extension().and_then(|e| e.to_str()) {
        Some("lark") => Ok((UserGrammar::Lark(text), None)),
        // Our own GBNF reader (llama.cpp dialect) into the grammar IR, run as Lark: a grammar
        // it cannot take is refused with line and column, never half-read.
        Some("gbnf") => {
            let g = grammar::gbnf::parse(&text)
                .map_err(|e| CliError::new("invalid_grammar", format!("{}: {e}", p.display())))?;
            let lark = grammar::lark::emit(&g, LarkDialect::Llguidance);
            Ok((UserGrammar::Lark(lark), None))
        }
        Some(other) => Err(CliError::new(
            "invalid_grammar",
            format!(
                "{}: unknown grammar format `.{other}` (use .lark or .gbnf)",
                p.display()
            ),
        )
        .into()),
        None => Err(CliError::new(
            "invalid_grammar",
            format!("{}: name the file .lark or .gbnf", p.display()),
        )
        .into()),
    }
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let (user, validator) = user_grammar(
        args.grammar.as_deref(),
        args.schema.as_deref(),
        args.lenient,
    )?;
    let think = args.think.into();
    // The grammar is checked before any model is loaded.
    ByteChecker::new()?.compile_grammar(generation_grammar(
        &user,
        think,
        &CompileOptions::default(),
    ))?;
    let path = models::resolve(args.model.as_deref()).context("resolving the model")?;
    let engine = Engine::load(
        &path,
        &EngineOptions {
            threads: args.threads,
            ..EngineOptions::default()
        },
    )?;
    let mut session = engine.session()?;
    let mut messages = Vec::new();
    if let Some(s) = &args.system {
        messages.push(ChatMessage::text("system", s.clone()));
    }
    messages.push(ChatMessage::text("user", args.prompt.clone()));
    let r = session.generate_text(&GenerateRequest {
        messages: &messages,
        grammar: &user,
        think,
        sampling: Sampling {
            max_tokens: args.max_tokens,
            temperature: args.temperature,
            seed: args.seed,
            think_budget: args.think_budget,
            ..Sampling::default()
        },
    })?;
    // Keywords the grammar left out are checked on the finished text.
    if let Some(v) = &validator
        && r.finish_reason.as_str() == "stop"
    {
        let text = &r.content;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| CliError::new("invalid_output", format!("the output is not JSON: {e}")))?;
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        if !errors.is_empty() {
            return Err(CliError::new(
                "invalid_output",
                format!(
                    "the output breaks keywords checked after generation: {}",
                    errors.join("; ")
                ),
            )
            .with(json!({"content": text}))
            .into());
        }
    }
    let mut msg = json!({"role": "assistant", "content": r.content});
    if let Some(reasoning) = &r.reasoning_content {
        msg["reasoning_content"] = json!(reasoning);
    }
    msg["finish_reason"] = json!(r.finish_reason.as_str());
    msg["usage"] = json!({
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "total_tokens": r.prompt_tokens + r.completion_tokens,
    });
    msg["toolgram"] = json!({"path": "grammar", "model": engine.model_name()});
    println!("{msg}");
    Ok(())
}
