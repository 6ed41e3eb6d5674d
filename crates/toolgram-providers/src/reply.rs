//! Provider replies read into toolgram's one reply type ([`ModelReply`]): native tool calls
//! from each documented response shape (the provider's dialect finds them); text written under
//! our grammar by core's strict parser; strict-JSON calls restored from the provider's
//! profile; prompt-path text by core's lenient parser. Reading only: validation is the retry
//! loop's, and no provider is named here.

use crate::dialect::json_object;
use crate::error::ProviderError;
use crate::profile::restore_arguments;
use crate::spec::{Kind, ReadError, Strict};
use serde_json::Value;
use toolgram_core::define::request::{CallShape, Path};
use toolgram_core::parse::lenient::{LenientOptions, SyntaxChoice};
use toolgram_core::parse::{parse_output, split_plan};
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ToolCall, ToolSet};
use toolgram_retry::ModelReply;
use toolgram_wire::read::call;

/// Read a reply body for the path the request took, rendered for `shape`. Under our grammar a
/// planned reply's plan line is split off first and returned as its reasoning (the caller
/// decides whether a client sees it).
pub fn read_reply(
    kind: Kind,
    path: Path,
    body: &Value,
    tools: &ToolSet,
    shape: &CallShape,
    syntax: &'static CallSyntax,
) -> Result<ModelReply, ReadError> {
    let text = kind.dialect.reply_text(kind, body)?;
    match path {
        Path::Grammar => {
            let (plan, rest) = if shape.plans(tools, syntax) {
                split_plan(&text)
            } else {
                (None, text.as_str())
            };
            let out = parse_output(rest, syntax, tools, &shape.choice).map_err(|e| {
                ReadError::Unreadable {
                    raw: text.clone(),
                    message: e.to_string(),
                }
            })?;
            Ok(ModelReply {
                reasoning_content: plan,
                content: out.content,
                tool_calls: out.tool_calls,
                raw: text,
                ..ModelReply::default()
            })
        }
        Path::Prompt => lenient(&text, tools, syntax, kind.dialect.native_calls(body)?),
        Path::Json => Err(ReadError::Shape(ProviderError::Unsupported(format!(
            "json is the embedded engine's path; {} replies on strict_json",
            kind.name()
        )))),
        Path::StrictJson => match kind.strict {
            Some(Strict::ResponseSchema(_)) => json_object::read(&text, tools),
            _ => restored_calls(kind, text, body, tools),
        },
    }
}

/// Strict path with native tool calls: the calls' arguments restored from the dialect's
/// profile's rewriting of each tool's schema.
fn restored_calls(
    kind: Kind,
    text: String,
    body: &Value,
    tools: &ToolSet,
) -> Result<ModelReply, ReadError> {
    let profile = kind.dialect.profile();
    let calls = kind
        .dialect
        .native_calls(body)?
        .into_iter()
        .map(|c| {
            let restored = tools.get(&c.name).map_or(c.arguments.clone(), |t| {
                restore_arguments(profile, &t.parameters, c.arguments.clone())
            });
            ToolCall {
                arguments: restored,
                ..c
            }
        })
        .collect();
    Ok(ModelReply {
        content: Some(text.clone()).filter(|t| !t.trim().is_empty()),
        tool_calls: calls,
        raw: text,
        ..ModelReply::default()
    })
}

/// Prompt path: native calls if the provider produced any, else the lenient parser.
fn lenient(
    text: &str,
    tools: &ToolSet,
    syntax: &'static CallSyntax,
    native: Vec<ToolCall>,
) -> Result<ModelReply, ReadError> {
    if !native.is_empty() {
        return Ok(ModelReply {
            content: Some(text.to_owned()).filter(|t| !t.trim().is_empty()),
            tool_calls: native,
            raw: text.to_owned(),
            ..ModelReply::default()
        });
    }
    let opts = LenientOptions {
        syntax: SyntaxChoice::Named(syntax),
        tools: Some(tools.tools()),
        ..LenientOptions::default()
    };
    let out =
        toolgram_core::parse::lenient::parse(text, &opts).map_err(|e| ReadError::Unreadable {
            raw: text.to_owned(),
            message: e.to_string(),
        })?;
    Ok(ModelReply {
        content: Some(out.content).filter(|c| !c.is_empty()),
        reasoning_content: Some(out.reasoning_content).filter(|c| !c.is_empty()),
        tool_calls: out
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| call(&c.id, i, &c.name, c.arguments))
            .collect(),
        raw: text.to_owned(),
        usage: None,
    })
}
