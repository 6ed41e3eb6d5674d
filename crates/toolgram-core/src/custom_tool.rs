//! Grammar ("custom") tools in a tools file, in both of OpenAI's shapes — Chat Completions
//! `{"type":"custom","custom":{"name","description","format":{"type":"grammar","grammar":
//! {"syntax":"lark","definition"}}}}` and Responses `{"type":"custom","name","description",
//! "format":{"type":"grammar","syntax":"lark","definition"}}` — read into a [`Tool`] whose
//! `grammar` holds the Lark text and whose `parameters` are the JSON fallback shape
//! (`{"input": <text in the grammar>}`). The grammar is read by core's Lark reader when the
//! tool set is read, so a bad grammar is a definition error with line and column.

use crate::error::DefinitionError;
use crate::grammar::lark;
use crate::tool::{GrammarSpec, Tool};
use serde_json::{Map, Value, json};

/// The JSON fallback shape of a grammar tool.
pub fn fallback_parameters(definition: &str) -> Value {
    json!({"type": "object", "properties": {"input": {"type": "string",
        "description": format!("Text in this Lark grammar:\n{definition}")}},
        "required": ["input"], "additionalProperties": false})
}

/// Read one `{"type": "custom", …}` entry.
pub(crate) fn read(obj: &Map<String, Value>, at: &str) -> Result<Tool, DefinitionError> {
    // Chat Completions nests the tool under `custom`; Responses puts it at the top level.
    let (body, base) = match obj.get("custom").and_then(Value::as_object) {
        Some(inner) => (inner, format!("{at}/custom")),
        None => (obj, at.to_owned()),
    };
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| DefinitionError::new(None, format!("{base}/name"), "missing string `name`"))?
        .to_owned();
    let description = body
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let format = body.get("format").and_then(Value::as_object).ok_or_else(|| {
        DefinitionError::new(
            Some(&name),
            format!("{base}/format"),
            "a custom tool needs `format: {\"type\": \"grammar\", …}` (free-text custom tools are not constrained calls)",
        )
    })?;
    if format.get("type").and_then(Value::as_str) != Some("grammar") {
        return Err(DefinitionError::new(
            Some(&name),
            format!("{base}/format/type"),
            "only `grammar` formats are supported",
        ));
    }
    let (grammar, gat) = match format.get("grammar").and_then(Value::as_object) {
        Some(g) => (g, format!("{base}/format/grammar")),
        None => (format, format!("{base}/format")),
    };
    let syntax = grammar.get("syntax").and_then(Value::as_str).unwrap_or("");
    if syntax != "lark" {
        return Err(DefinitionError::new(
            Some(&name),
            format!("{gat}/syntax"),
            format!("grammar syntax `{syntax}` is not supported (use `lark`)"),
        ));
    }
    let definition = grammar
        .get("definition")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            DefinitionError::new(
                Some(&name),
                format!("{gat}/definition"),
                "missing `definition`",
            )
        })?
        .to_owned();
    lark::parse(&definition).map_err(|e| {
        DefinitionError::new(
            Some(&name),
            format!("{gat}/definition"),
            format!("Lark: {e}"),
        )
    })?;
    Ok(Tool {
        parameters: fallback_parameters(&definition),
        name,
        description,
        grammar: Some(GrammarSpec {
            definition,
            check: None,
        }),
        ..Tool::default()
    })
}
