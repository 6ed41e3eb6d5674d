//! `response_format` → the grammar free generation runs under: any JSON object, a JSON
//! Schema (through the same keyword pass as tool arguments: unknown keywords refused by name
//! or, lenient, listed; keywords the grammar cannot say checked on the output), or Lark.
//! This module must not generate.

use crate::error::RunError;
use crate::request::{Request, ResponseFormat};
use serde_json::{Value, json};
use toolgram_core::compile::{KeywordPass, bare_grammar_schema};
use toolgram_core::define::arguments::DeferredKeyword;
use toolgram_core::define::arguments::post_parse_validator;
use toolgram_engine::UserGrammar;

/// A format made ready to decode under.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The grammar.
    pub grammar: UserGrammar,
    /// Checks the finished text for keywords the grammar left out.
    pub validator: Option<jsonschema::Validator>,
    /// Unknown keywords ignored (lenient).
    pub warnings: Vec<String>,
}

/// Refuse unknown keywords (naming the first), or with `lenient` list one warning each.
pub fn refuse_unknown(
    unknown: &[DeferredKeyword],
    lenient: bool,
    error: fn(String) -> RunError,
) -> Result<Vec<String>, RunError> {
    match unknown.first() {
        Some(k) if !lenient => Err(error(format!(
            "at {}: unsupported keyword `{}` (refused under strict schemas; without them an unknown keyword is an annotation, listed as a warning)",
            if k.pointer.is_empty() {
                "/"
            } else {
                &k.pointer
            },
            k.keyword
        ))),
        _ => Ok(warning_texts(unknown)),
    }
}

/// One warning per unknown keyword left out as an annotation: the tool, the JSON pointer and
/// the keyword.
pub(crate) fn warning_texts(unknown: &[DeferredKeyword]) -> Vec<String> {
    unknown
        .iter()
        .map(|k| {
            let whose = if k.tool.is_empty() {
                String::new()
            } else {
                format!("tool `{}` ", k.tool)
            };
            let at = if k.pointer.is_empty() {
                "/"
            } else {
                &k.pointer
            };
            format!("{whose}at {at}: `{}`: unknown keyword ignored", k.keyword)
        })
        .collect()
}

/// The grammar and the after-check for `format`.
pub(crate) fn prepare(format: &ResponseFormat, lenient: bool) -> Result<Prepared, RunError> {
    let schema = match format {
        ResponseFormat::Lark(text) => {
            return Ok(Prepared {
                grammar: UserGrammar::Lark(text.clone()),
                validator: None,
                warnings: Vec::new(),
            });
        }
        ResponseFormat::JsonObject => json!({"type": "object"}),
        ResponseFormat::JsonSchema(schema) => schema.clone(),
    };
    let mut pass = KeywordPass::default();
    let stripped = bare_grammar_schema(&schema, &mut pass);
    let warnings = refuse_unknown(&pass.unknown, lenient, RunError::InvalidSchema)?;
    let validator = if pass.deferred.is_empty() {
        None
    } else {
        Some(post_parse_validator(&schema).map_err(|e| RunError::InvalidSchema(e.to_string()))?)
    };
    Ok(Prepared {
        grammar: UserGrammar::JsonSchema(stripped),
        validator,
        warnings,
    })
}

/// The answer branch of a request that sends a response format beside its tools: the
/// format prepared, and its schema for the call grammar ([`toolgram_engine::CallShape`]'s
/// `answer`). `None` without both; a Lark format beside tools is refused by name.
pub(crate) fn answer_beside_tools(req: &Request) -> Result<Option<(Prepared, Value)>, RunError> {
    let Some(format) = req
        .response_format
        .as_ref()
        .filter(|_| !req.tools.is_empty())
    else {
        return Ok(None);
    };
    let prepared = prepare(format, !req.strict_schemas)?;
    let schema = answer_schema(&prepared)?;
    Ok(Some((prepared, schema)))
}

/// The schema a response format beside tools puts in the call grammar's text branch; a Lark
/// format beside tools is refused by name.
pub(crate) fn answer_schema(prepared: &Prepared) -> Result<Value, RunError> {
    match &prepared.grammar {
        UserGrammar::JsonSchema(schema) => Ok(schema.clone()),
        UserGrammar::Lark(_) => Err(RunError::InvalidRequest(
            "a Lark response_format beside tools is not supported: send a JSON Schema format (json_schema or json_object) with the tools, or the Lark format without them".into(),
        )),
    }
}

/// Check finished text against the keywords the grammar left out.
pub(crate) fn check_output(validator: &jsonschema::Validator, text: &str) -> Result<(), RunError> {
    let invalid = |message: String| RunError::InvalidOutput {
        message,
        content: text.to_owned(),
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("the output is not JSON: {e}")))?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(invalid(format!(
            "the output breaks keywords checked after generation: {}",
            errors.join("; ")
        )))
    }
}
