//! A tools document read into a checked [`ToolSet`]: a JSON array of OpenAI tools (or
//! `{"tools": [...]}`), function tools read here with toolgram's own `x-toolgram` keys, grammar
//! ("custom") tools through [`super::custom_tool`]. [`read_function`] is the one reader of a
//! function tool, whichever API's shape holds it (the server's readers call it on Responses'
//! flat and Anthropic's `input_schema` shapes directly). Errors carry the JSON pointer of what
//! is wrong.
//!
//! This module must not check a schema or index the pool: [`ToolSet::new`] does that for every
//! way a pool is made.

use crate::define::custom_tool;
use crate::define::rules::{ArgumentRule, read_rules};
use crate::define::tool::{Tool, ToolSet};
use crate::error::DefinitionError;
use serde_json::{Map, Value, json};

impl ToolSet {
    /// Read a tools document: a JSON array of OpenAI function tools, or `{"tools": [...]}`.
    pub fn from_json_str(text: &str) -> Result<Self, DefinitionError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| {
            DefinitionError::new(
                None,
                "",
                format!("not JSON: {e} (line {}, column {})", e.line(), e.column()),
            )
        })?;
        Self::from_value(&doc)
    }

    /// Read a parsed tools document (see [`ToolSet::from_json_str`]).
    pub fn from_value(doc: &Value) -> Result<Self, DefinitionError> {
        Self::read_document(doc, read_tool)
    }

    /// Read a parsed tools document — an array, or `{"tools": [...]}` — with `read` for each
    /// item (given its JSON pointer): a caller with tool types of its own reads those and
    /// hands the rest to [`read_tool`].
    pub fn read_document<E: From<DefinitionError>>(
        doc: &Value,
        mut read: impl FnMut(&Value, &str) -> Result<Tool, E>,
    ) -> Result<Self, E> {
        let (items, base) = match doc {
            Value::Array(items) => (items, String::new()),
            Value::Object(map) => match map.get("tools") {
                Some(Value::Array(items)) => (items, "/tools".to_owned()),
                _ => return Err(not_a_document().into()),
            },
            _ => return Err(not_a_document().into()),
        };
        let mut tools = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            tools.push(read(item, &format!("{base}/{i}"))?);
        }
        Ok(Self::new(tools).map_err(|mut e| {
            e.pointer = format!("{base}{}", e.pointer);
            e
        })?)
    }
}

fn not_a_document() -> DefinitionError {
    DefinitionError::new(
        None,
        "",
        "expected an array of tools or an object with a `tools` array",
    )
}

/// One tool in Chat Completions' shape: `{"type":"function","function":{…}}`, or a grammar
/// ("custom") tool in either of OpenAI's shapes; `at` is its JSON pointer.
pub fn read_tool(item: &Value, at: &str) -> Result<Tool, DefinitionError> {
    let obj = item
        .as_object()
        .ok_or_else(|| DefinitionError::new(None, at, "a tool must be an object"))?;
    match obj.get("type") {
        Some(Value::String(t)) if t == "function" => {}
        Some(Value::String(t)) if t == "custom" => {
            return custom_tool::read(obj, at);
        }
        Some(other) => {
            return Err(DefinitionError::new(
                None,
                format!("{at}/type"),
                format!("unsupported tool type {other}; expected \"function\" or \"custom\""),
            ));
        }
        None => {
            return Err(DefinitionError::new(
                None,
                format!("{at}/type"),
                "missing `type` (expected \"function\")",
            ));
        }
    }
    let function = obj
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            DefinitionError::new(None, format!("{at}/function"), "missing `function` object")
        })?;
    let parameters = json!({"type": "object", "properties": {}});
    read_function(
        function,
        &format!("{at}/function"),
        "parameters",
        parameters,
    )
}

/// A function tool from the object holding its `name`, `description`, schema (under
/// `schema_key`: Chat's and Responses' `parameters`, Anthropic's `input_schema`; `absent`
/// when it has none) and toolgram's `x-toolgram` keys; `at` is that object's JSON pointer.
/// The one reader of a function tool: each API's shape reads through it, none is rewritten
/// into another first.
pub fn read_function(
    function: &Map<String, Value>,
    at: &str,
    schema_key: &str,
    absent: Value,
) -> Result<Tool, DefinitionError> {
    let name = match function.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => {
            return Err(DefinitionError::new(
                None,
                format!("{at}/name"),
                "missing string `name`",
            ));
        }
    };
    let description = match function.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(d)) => d.clone(),
        Some(_) => {
            return Err(DefinitionError::new(
                Some(&name),
                format!("{at}/description"),
                "`description` must be a string",
            ));
        }
    };
    let parameters = function.get(schema_key).cloned().unwrap_or(absent);
    let ext = read_extensions(function, &name, &parameters, at)?;
    Ok(Tool {
        name,
        description,
        parameters,
        escape_hatch: ext.escape_hatch,
        repeatable: ext.repeatable,
        rules: ext.rules,
        grammar: None,
    })
}

/// Most trigger words one escape-hatch tool may have (a handful is usual).
pub const MAX_ESCAPE_WORDS: usize = 32;

/// Longest trigger word (or phrase), in bytes.
pub const MAX_ESCAPE_WORD_BYTES: usize = 64;

/// toolgram's own keys in a function object (`x-toolgram`).
#[derive(Default)]
struct Extensions {
    escape_hatch: Vec<String>,
    repeatable: bool,
    rules: Vec<ArgumentRule>,
}

/// toolgram's own keys in the function object (`x-toolgram`): `escape_hatch`, `repeatable`
/// and `rules`. Unknown keys are refused, so a typo cannot silently switch a rule off.
fn read_extensions(
    function: &Map<String, Value>,
    name: &str,
    parameters: &Value,
    at: &str,
) -> Result<Extensions, DefinitionError> {
    let base = format!("{at}/x-toolgram");
    let Some(ext) = function.get("x-toolgram") else {
        return Ok(Extensions::default());
    };
    let ext = ext
        .as_object()
        .ok_or_else(|| DefinitionError::new(Some(name), &base, "`x-toolgram` must be an object"))?;
    if let Some(key) = ext
        .keys()
        .find(|k| !matches!(k.as_str(), "escape_hatch" | "repeatable" | "rules"))
    {
        return Err(DefinitionError::new(
            Some(name),
            format!("{base}/{key}"),
            format!(
                "unknown `x-toolgram` key `{key}`; the keys are escape_hatch, repeatable, rules"
            ),
        ));
    }
    let repeatable = match ext.get("repeatable") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(DefinitionError::new(
                Some(name),
                format!("{base}/repeatable"),
                "`repeatable` must be a boolean",
            ));
        }
    };
    let escape_hatch = match ext.get("escape_hatch") {
        None => Vec::new(),
        Some(Value::Array(words))
            if words.len() > MAX_ESCAPE_WORDS
                || words
                    .iter()
                    .any(|w| w.as_str().is_some_and(|w| w.len() > MAX_ESCAPE_WORD_BYTES)) =>
        {
            return Err(DefinitionError::new(
                Some(name),
                format!("{base}/escape_hatch"),
                format!(
                    "`escape_hatch` has more than {MAX_ESCAPE_WORDS} words or a word over {MAX_ESCAPE_WORD_BYTES} bytes (the limit on escape-hatch words)"
                ),
            ));
        }
        Some(Value::Array(words))
            if words
                .iter()
                .all(|w| w.as_str().is_some_and(|w| !w.trim().is_empty())) =>
        {
            words
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        }
        Some(_) => {
            return Err(DefinitionError::new(
                Some(name),
                format!("{base}/escape_hatch"),
                "`escape_hatch` must be an array of non-empty trigger words",
            ));
        }
    };
    let rules = match ext.get("rules") {
        None => Vec::new(),
        Some(r) => read_rules(r, parameters).map_err(|(pointer, message)| {
            DefinitionError::new(Some(name), format!("{base}/rules{pointer}"), message)
        })?,
    };
    Ok(Extensions {
        escape_hatch,
        repeatable,
        rules,
    })
}
