//! The lenient parser against llama.cpp's parsing cases
//! (`testdata/toolcall-parsing/cases.jsonl`): every case that needs no prefilled
//! conversation is read with the syntax `toolgram parse --template` detects from its chat
//! template (a rendered probe, else a derived syntax), and `{content, reasoning_content,
//! tool_calls}` is compared; a per-family table is printed.
//!
//! It must NOT special-case inputs: the only per-case data used are the settings llama.cpp's
//! test passes (thinking, reasoning format, partial) and the offered tool names.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toolgram_core::Tool;
use toolgram_core::parse::lenient::{self, LenientOptions, ReasoningFormat};

mod reading;

/// The repository's test data (`testdata/`, see its README).
fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn load(dir: &Path) -> (Vec<Value>, Value) {
    let base = dir.join("toolcall-parsing");
    let cases = std::fs::read_to_string(base.join("cases.jsonl"))
        .unwrap_or_else(|e| panic!("parsing cases not found under {} ({e})", base.display()));
    let tools = std::fs::read_to_string(base.join("tools.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("{}/tools.json unreadable", base.display()));
    let cases = cases
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad case line: {e}")))
        .collect();
    (cases, tools)
}

/// Template file names a case names (`models/templates/X.jinja` or a list in parentheses).
fn template_files(template: &str) -> Vec<String> {
    template
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == '/')
        .filter(|w| w.ends_with(".jinja"))
        .map(str::to_owned)
        .collect()
}

fn family(template: &str) -> String {
    template_files(template)
        .first()
        .map(|f| f.trim_end_matches(".jinja").to_owned())
        .unwrap_or_else(|| template.split(" (").next().unwrap_or(template).to_owned())
}

fn tools_of(case: &Value, defs: &Value) -> Vec<Tool> {
    let mut out = Vec::new();
    for t in case["tools"].as_array().into_iter().flatten() {
        let (name, params) = match t {
            Value::String(n) => (n.clone(), defs[n]["parameters"].clone()),
            Value::Array(a) => (
                a.first().and_then(Value::as_str).unwrap_or("").to_owned(),
                a.get(2)
                    .and_then(Value::as_str)
                    .and_then(|s| serde_json::from_str(s).ok())
                    .unwrap_or(json!({})),
            ),
            _ => continue,
        };
        out.push(Tool {
            name,
            description: String::new(),
            parameters: params,
            escape_hatch: Vec::new(),
            repeatable: false,
            rules: Vec::new(),
            grammar: None,
        });
    }
    out
}

fn run_case(case: &Value, defs: &Value, dir: &Path) -> Result<(), String> {
    let s = &case["settings"];
    let template = case["template"].as_str().unwrap_or("");
    let files = template_files(template);
    let template_text = files
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join("toolcall-parsing/templates").join(f)).ok());
    let syntax = reading::syntax_for(template_text.as_deref());
    let tools = tools_of(case, defs);
    let format = match s["reasoning_format"].as_str() {
        Some("COMMON_REASONING_FORMAT_AUTO") => ReasoningFormat::Auto,
        Some("COMMON_REASONING_FORMAT_DEEPSEEK") => ReasoningFormat::Deepseek,
        _ => ReasoningFormat::None,
    };
    let opts = LenientOptions {
        syntax,
        tools: (!tools.is_empty()).then_some(tools.as_slice()),
        thinking: s["enable_thinking"].as_bool().unwrap_or(true),
        reasoning_format: format,
        partial: s["is_partial"].as_bool().unwrap_or(false),
        template: template_text.as_deref(),
    };
    let input = case["input"].as_str().unwrap_or("");
    let out = lenient::parse(input, &opts).map_err(|e| format!("error: {e}"))?;
    let all = reading::Checked {
        content: true,
        reasoning: true,
        arguments: true,
    };
    reading::compare(&out, &case["expect"], &all)
}

#[test]
fn shared_parsing_cases() {
    let dir = data_dir();
    let (cases, defs) = load(&dir);
    let mut table: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let verbose = std::env::var("TOOLGRAM_VERBOSE").is_ok();
    for case in &cases {
        let fam = family(case["template"].as_str().unwrap_or("?"));
        let row = table.entry(fam.clone()).or_default();
        let s = &case["settings"];
        if s.get("messages").is_some() || s.get("continue_final_message").is_some() {
            row.2 += 1;
            continue;
        }
        row.1 += 1;
        match run_case(case, &defs, &dir) {
            Ok(()) => row.0 += 1,
            Err(why) if verbose => println!(
                "FAIL {fam} line {}: {why}\n  input {:?}",
                case["line"], case["input"]
            ),
            Err(_) => {}
        }
    }
    let (mut pass, mut run, mut skipped) = (0, 0, 0);
    println!("| family | passed | run | skipped |\n|---|---|---|---|");
    for (fam, (p, r, s)) in &table {
        println!("| {fam} | {p} | {r} | {s} |");
        (pass, run, skipped) = (pass + p, run + r, skipped + s);
    }
    let rate = pass as f64 / run.max(1) as f64;
    println!(
        "| **all** | {pass} | {run} | {skipped} |\npass rate {:.1}%",
        rate * 100.0
    );
    // The issue asks for 95%; the floor sits just under what the parser reads today
    // (255/256), so losing one case fails here instead of hiding under the bar.
    let floor = 0.995;
    assert!(
        rate >= floor,
        "pass rate {:.1}% below {:.1}%",
        rate * 100.0,
        floor * 100.0
    );
}
