//! Requests in each provider's documented shape, for a path already chosen
//! ([`crate::choose_path`]): the callable pool worked out here, and the body by the provider's
//! row (its strict path and grammar field) and dialect ([`crate::Dialect`]). It builds JSON
//! only: it must not send anything, and names no provider.

use crate::dialect::json_object;
use crate::error::ProviderError;
use crate::spec::{Kind, RenderInput, Strict};
use serde_json::{Value, json};
use toolgram_core::define::request::Path;

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
        .shape
        .choice
        .callable(input.tools)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    let pool = input
        .tools
        .subset(&callable)
        .map_err(|e| ProviderError::Compile(e.to_string()))?;
    let kind = input.kind;
    let mut body = match (input.path, kind.strict, kind.grammar_field) {
        (Path::Prompt, ..) => kind.dialect.prompt(input, &pool),
        (Path::StrictJson, Some(Strict::Tools), _) => {
            kind.dialect.strict_tools(input, &pool, &mut notes)?
        }
        (Path::StrictJson, Some(Strict::ResponseSchema(field)), _) => {
            let (messages, schema) = json_object::request(input, &pool, &mut notes)?;
            json!({"messages": messages, field: schema})
        }
        (Path::Grammar, _, Some(field)) => {
            let (mut body, grammar) = kind.dialect.grammar(input, &mut notes)?;
            *field.iter().fold(&mut body, |at, key| &mut at[*key]) = json!(grammar);
            body
        }
        (path, ..) => return Err(unsupported(kind, path)),
    };
    let endpoint = kind.dialect.finish(input, &mut body);
    Ok(Rendered {
        endpoint,
        body,
        notes,
    })
}

/// The error for a path `kind` does not take.
fn unsupported(kind: Kind, path: Path) -> ProviderError {
    ProviderError::Unsupported(match path {
        Path::Json => format!(
            "json is the embedded engine's path; {} takes strict_json",
            kind.name()
        ),
        _ => format!("{} takes no grammar for the whole reply", kind.name()),
    })
}
