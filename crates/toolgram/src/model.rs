//! `toolgram model list | fetch [NAME] | path [NAME]` over the shipped model registry.

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
        /// Registry name, role (default, test, stress) or file name.
        name: Option<String>,
    },
    /// Print the cached path of a model (fetching it if needed).
    Path {
        /// Registry name, role or file name.
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
            let entry = models::find(name.as_deref().unwrap_or("default"))?;
            say!("{}", entry.fetch()?.display())?;
        }
    }
    Ok(())
}
