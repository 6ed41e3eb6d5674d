//! `toolgram bench tools`: how compact each grammar tool's grammar form is, in tokens of a
//! model's tokenizer, against the JSON forms of the same inputs — the JSON fallback
//! (`{"input": "…"}`, the text JSON-escaped) and the structured typed input a JSON-Schema
//! function would take. Measurements only.

use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use toolgram_engine::{Engine, EngineOptions, models};
use toolgram_tools::{BuildOptions, builtin};

#[derive(Args)]
pub(crate) struct ToolsBenchArgs {
    /// JSON file: `{"sql_schema": "CREATE TABLE …", "tools": {"name": ["input", …]}}`.
    #[arg(long, default_value = "examples/grammar-tools/inputs.json")]
    pub inputs: PathBuf,
    /// Model whose tokenizer counts (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
}

pub(super) fn run(args: ToolsBenchArgs) -> anyhow::Result<()> {
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(&args.inputs)
            .with_context(|| format!("reading {}", args.inputs.display()))?,
    )?;
    let db = std::env::temp_dir().join(format!(
        "toolgram-bench-tools-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&db);
    let conn = rusqlite::Connection::open(&db)?;
    conn.execute_batch(doc["sql_schema"].as_str().unwrap_or(""))?;
    drop(conn);
    let engine = Engine::load(
        &models::resolve(args.model.as_deref())?,
        &EngineOptions::default(),
    )?;
    let opts = BuildOptions {
        db: Some(db.clone()),
    };
    let tools = doc["tools"].as_object().cloned().unwrap_or_default();
    for (name, inputs) in tools {
        let tool = builtin(&name, &opts)?;
        let (mut grammar, mut fallback, mut structured, mut n) = (0, 0, 0, 0);
        for text in inputs
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let typed = tool
                .parse_to_json(text)
                .with_context(|| format!("{name}: {text:?} is not in the grammar"))?;
            grammar += engine.count_tokens(text);
            fallback += engine.count_tokens(&json!({ "input": text }).to_string());
            structured += engine.count_tokens(&typed.to_string());
            n += 1;
        }
        let ratio = |x: usize| (x as f64 / grammar.max(1) as f64 * 100.0).round() / 100.0;
        println!(
            "{}",
            json!({"tool": name, "inputs": n, "model": engine.model_name(),
                "grammar_tokens": grammar, "json_fallback_tokens": fallback,
                "structured_json_tokens": structured,
                "fallback_over_grammar": ratio(fallback), "structured_over_grammar": ratio(structured)})
        );
    }
    let _ = std::fs::remove_file(&db);
    Ok(())
}
