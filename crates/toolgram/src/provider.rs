//! `toolgram render` and the provider flags of `toolgram call`: which provider, its config
//! entry and overrides, read into a `toolgram-runtime` provider backend. Argument parsing and
//! printing only: path choice, rendering, the retry loop and the providers' names, URLs and
//! key variables are the runtime's and the providers crate's.

use crate::output::{CliError, say};
use clap::Args;
use std::path::PathBuf;
use toolgram_core::ChatMessage;
use toolgram_providers::{Config, Overrides};
use toolgram_runtime::{Backend, ProviderConfig, Request, Runtime, read_tools_file};

/// Provider options shared by `render` and `call --provider`.
#[derive(Args, Clone)]
pub(crate) struct ProviderArgs {
    // Help: the registered providers' names, from the providers crate's registry.
    #[arg(long, help = provider_help())]
    pub provider: Option<String>,
    /// Base URL of the provider's API.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Make a missing capability an error instead of falling back to a weaker path.
    #[arg(long)]
    pub no_fallback: bool,
    /// Switch a capability off (repeatable), to test or force the fallback chain: grammar,
    /// strict-json.
    #[arg(long = "disable", value_parser = ["grammar", "strict-json"])]
    pub disable: Vec<String>,
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

/// `--provider`'s help: every registered provider, or a config entry.
fn provider_help() -> String {
    format!(
        "Provider: {}, or an entry of the config file (`embedded` or absent: the local engine)",
        toolgram_providers::names().join(", ")
    )
}

impl ProviderArgs {
    /// The provider backend, if one was asked for, with `model` from `--model`.
    pub(crate) fn resolve(&self, model: Option<&str>) -> anyhow::Result<Option<ProviderConfig>> {
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
        let overrides = Overrides {
            base_url: self.base_url.clone(),
            model: model.map(str::to_owned),
            api_key_env: self.api_key_env.clone(),
            disable: self.disable.clone(),
            no_fallback: self.no_fallback,
        };
        Ok(Some(ProviderConfig {
            provider: config.resolve(name, &overrides)?,
            stream: self.stream,
        }))
    }
}

/// `toolgram render`.
#[derive(Args)]
pub(crate) struct RenderArgs {
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
    #[arg(long, default_value = "grammar", value_parser = crate::args::mode)]
    pub mode: toolgram_core::define::request::Mode,
    /// Call syntax of the grammar and prompt paths (default hermes).
    #[arg(long)]
    pub syntax: Option<String>,
    /// Model id at the provider.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub provider: ProviderArgs,
    #[command(flatten)]
    pub levers: crate::args::LeverArgs,
    /// The user's request.
    #[arg(default_value = "")]
    pub prompt: String,
}

pub(crate) fn render_cmd(args: RenderArgs) -> anyhow::Result<()> {
    let tools = read_tools_file(&args.tools)?;
    let provider = args
        .provider
        .resolve(args.model.as_deref())?
        .ok_or_else(|| CliError::new("invalid_request", "render needs --provider"))?;
    let mut req = Request::new(vec![ChatMessage::text("user", args.prompt.clone())], tools);
    req.shape.choice = toolgram_core::ToolChoice::from_cli(&args.tool_choice);
    req.shape.parallel = args.parallel_tool_calls;
    req.shape.mode = args.mode;
    req.syntax = args.syntax.clone();
    args.levers.apply(&mut req);
    let r = Runtime::new(Backend::Provider(provider))?.render(&req)?;
    eprintln!("path: {} ({})", r.path.name(), r.path_reason);
    eprintln!("endpoint: POST {}", r.url);
    for n in &r.rendered.notes {
        eprintln!("note: {n}");
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    if req.votes > 1 {
        eprintln!(
            "note: {} ballots: this request is sent {} times (each after the first sampled)",
            req.votes, req.votes
        );
    }
    say!("{}", serde_json::to_string_pretty(&r.rendered.body)?)?;
    if let Some(counted) = &r.counted {
        eprintln!(
            "then, where that reply calls: the second body, under the plan with a call required (its reply is kept where it counts several calls)"
        );
        say!("{}", serde_json::to_string_pretty(&counted.body)?)?;
    }
    Ok(())
}
