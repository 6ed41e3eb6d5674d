//! `bench tools`: how compact each grammar tool's grammar form is, in tokens of a model's
//! tokenizer, against the JSON forms of the same inputs — the JSON fallback (`{"input":
//! "…"}`, the text JSON-escaped) and the structured typed input a JSON-Schema function would
//! take.
//!
//! Measurements only; this module must not print.

use super::round_to;
use crate::BenchError;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolgram_engine::{Engine, EngineOptions};
use toolgram_tools::{BuildOptions, builtin};

/// What `bench tools` runs.
pub struct ToolsBenchOptions<'a> {
    /// JSON file: `{"sql_schema": "CREATE TABLE …", "tools": {"name": ["input", …]}}`.
    pub inputs: &'a Path,
    /// The GGUF model whose tokenizer counts.
    pub model: &'a Path,
}

/// One tool's token counts over its inputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTokens {
    /// The built-in tool.
    pub tool: String,
    /// Inputs counted.
    pub inputs: usize,
    /// The model file's name.
    pub model: String,
    /// Tokens of the inputs as the grammar writes them.
    pub grammar_tokens: usize,
    /// Tokens of `{"input": "…"}` (the JSON fallback).
    pub json_fallback_tokens: usize,
    /// Tokens of the typed input as JSON.
    pub structured_json_tokens: usize,
    /// Fallback tokens over grammar tokens (two decimals).
    pub fallback_over_grammar: f64,
    /// Structured tokens over grammar tokens (two decimals).
    pub structured_over_grammar: f64,
}

impl ToolTokens {
    fn new(tool: String, model: String, counts: [usize; 4]) -> Self {
        let [inputs, grammar, fallback, structured] = counts;
        let ratio = |x: usize| round_to(x as f64 / grammar.max(1) as f64, 2);
        Self {
            tool,
            inputs,
            model,
            grammar_tokens: grammar,
            json_fallback_tokens: fallback,
            structured_json_tokens: structured,
            fallback_over_grammar: ratio(fallback),
            structured_over_grammar: ratio(structured),
        }
    }
}

/// A scratch SQLite file holding `schema`, removed when dropped.
struct ScratchDb(PathBuf);

impl ScratchDb {
    fn create(schema: &str, inputs: &Path) -> Result<Self, BenchError> {
        let path = std::env::temp_dir().join(format!(
            "toolgram-bench-tools-{}.sqlite",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let db = Self(path);
        let bad = |e: rusqlite::Error| BenchError::Input {
            file: inputs.to_path_buf(),
            message: format!("sql_schema: {e}"),
        };
        rusqlite::Connection::open(&db.0)
            .map_err(bad)?
            .execute_batch(schema)
            .map_err(bad)?;
        Ok(db)
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Count every tool's inputs in the model's tokens, in the inputs file's order.
pub fn run(opts: &ToolsBenchOptions<'_>) -> Result<Vec<ToolTokens>, BenchError> {
    let text = std::fs::read_to_string(opts.inputs).map_err(|e| BenchError::io(opts.inputs, e))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| BenchError::Input {
        file: opts.inputs.to_path_buf(),
        message: format!("not JSON: {e}"),
    })?;
    let db = ScratchDb::create(doc["sql_schema"].as_str().unwrap_or(""), opts.inputs)?;
    let engine = Engine::load(opts.model, &EngineOptions::default())?;
    let build = BuildOptions {
        db: Some(db.0.clone()),
    };
    let mut out = Vec::new();
    for (name, inputs) in doc["tools"].as_object().into_iter().flatten() {
        let tool = builtin(name, &build)?;
        let mut counts = [0; 4];
        for text in inputs
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let typed = tool.parse_to_json(text).map_err(|e| BenchError::Input {
                file: opts.inputs.to_path_buf(),
                message: format!("{name}: {text:?} is not in the grammar: {e}"),
            })?;
            counts[0] += 1;
            counts[1] += engine.count_tokens(text);
            counts[2] += engine.count_tokens(&json!({ "input": text }).to_string());
            counts[3] += engine.count_tokens(&typed.to_string());
        }
        out.push(ToolTokens::new(
            name.clone(),
            engine.model_name().to_owned(),
            counts,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_over_grammar_tokens_and_never_divide_by_zero() {
        let t = ToolTokens::new("math_eval".into(), "m".into(), [6, 70, 94, 281]);
        assert_eq!(
            (t.fallback_over_grammar, t.structured_over_grammar),
            (1.34, 4.01)
        );
        let none = ToolTokens::new("x".into(), "m".into(), [0, 0, 5, 0]);
        assert_eq!(none.fallback_over_grammar, 5.0);
    }
}
