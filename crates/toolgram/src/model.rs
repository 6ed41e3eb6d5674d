//! `toolgram model list | fetch [NAME] | path [NAME]` over the shipped model registry and the
//! Hugging Face Hub (`hf:` references).

use crate::output::say;
use clap::Subcommand;
use serde_json::json;
use toolgram_engine::models;

#[derive(Subcommand)]
pub(crate) enum ModelCommand {
    /// List registry models and whether they are cached.
    List,
    /// Download, check and assemble a model (default: the default model).
    Fetch {
        /// Registry name, role (default, test, stress), file name, or a Hugging Face reference
        /// (hf:OWNER/REPO[:QUANT] or hf:OWNER/REPO/FILE.gguf).
        name: Option<String>,
    },
    /// Print the cached path of a model (fetching it if needed).
    Path {
        /// Registry name, role, file name or hf: reference.
        name: Option<String>,
    },
}

pub(crate) fn run(cmd: ModelCommand) -> anyhow::Result<()> {
    match cmd {
        ModelCommand::List => {
            for m in models::registry()? {
                let line = json!({"name": m.name, "role": m.role, "file": m.file, "size": m.size, "cached": m.is_cached(), "path": m.path()});
                say!("{line}")?;
            }
        }
        ModelCommand::Fetch { name } | ModelCommand::Path { name } => {
            say!("{}", models::resolve(name.as_deref())?.display())?;
        }
    }
    Ok(())
}
