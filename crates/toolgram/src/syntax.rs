//! `toolgram syntax --template FILE`: which call syntax a chat template speaks — the
//! registry entry that reads back the calls the template renders, one derived from them, or
//! the template's own markers when it renders none — printed as one JSON object. A
//! template whose calls fit no shape is an error that shows what was found. This module
//! must not detect anything itself (core's `template::detect` does).

use crate::output::read_text;
use crate::output::{CliError, say};
use serde_json::json;
use std::path::PathBuf;
use toolgram_engine::template::ChatTemplate;

/// Arguments of `toolgram syntax`.
#[derive(clap::Args, Debug)]
pub(crate) struct SyntaxArgs {
    /// A chat template (Jinja) file, e.g. one taken from a GGUF.
    #[arg(long)]
    template: PathBuf,
}

pub(crate) fn run(args: SyntaxArgs) -> anyhow::Result<()> {
    let source = read_text(&args.template, "chat template")?;
    let template =
        ChatTemplate::new(&source, "", "").map_err(|e| CliError::new("invalid_request", e))?;
    let found = toolgram_core::template::detect(&template, &source);
    if found.refused {
        return Err(CliError::new("unsupported_syntax", found.how).into());
    }
    let s = found.syntax;
    let out = json!({
        "syntax": s.name,
        "how": found.how,
        "description": s.description,
        "opener": s.opener(),
        "body": format!("{:?}", s.body),
    });
    say!("{out}")?;
    Ok(())
}
