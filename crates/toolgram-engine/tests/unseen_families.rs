//! The lenient parser on model families this repository was never written against: 155 raw
//! outputs of 18 families taken from vLLM's tool-parser tests (`tests/data/unseen-families`,
//! Apache-2.0; how they were extracted: its `SOURCE.txt`), none of them in the shared
//! llama.cpp cases or the registry. It was a held-out set until its first measurement
//! (50.0 % with templates); the derivation work after it was read from its failures, so its
//! rates since are not a held-out measure. The table this test prints is what
//! `docs/parsing.md` reports.
//!
//! Each case is read with the syntax `toolgram parse --template` finds in the family's chat
//! template where vLLM ships one (a rendered probe call, else derived from the rendered
//! calls, as `call` and `serve` find it), and with every registered syntax where it ships
//! none. Reasoning is extracted (`auto`); thinking is off
//! unless the case's settings turn it on (vLLM's tool-parser tests assume no open block).
//! Compared as in the shared cases (content and reasoning trimmed, arguments as parsed JSON),
//! except what vLLM's test does not assert (`content_checked`, `reasoning_checked`,
//! `arguments_checked` false): that is not compared.
//!
//! It must NOT special-case inputs or families: the only per-case data used are the
//! settings the test passes (thinking), the offered tools and those three flags.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toolgram_core::Tool;
use toolgram_core::parse::lenient::{self, LenientOptions, ReasoningFormat};

mod reading;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/unseen-families")
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("cases.jsonl")).expect("cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a case is JSON"))
        .collect()
}

/// The tools a case offers: the test's definitions where it has them, else the names.
fn tools_of(case: &Value) -> Vec<Tool> {
    let schemas = case["tool_schemas"].as_array();
    let defs: Vec<(String, Value)> = match schemas {
        Some(defs) => defs
            .iter()
            .map(|d| {
                let f = if d["function"].is_object() {
                    &d["function"]
                } else {
                    d
                };
                (
                    f["name"].as_str().unwrap_or("").to_owned(),
                    f["parameters"].clone(),
                )
            })
            .collect(),
        None => case["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|n| (n.to_owned(), Value::Object(Default::default())))
            .collect(),
    };
    defs.into_iter()
        .map(|(name, parameters)| Tool {
            name,
            description: String::new(),
            parameters: if parameters.is_object() {
                parameters
            } else {
                Value::Object(Default::default())
            },
            escape_hatch: Vec::new(),
            repeatable: false,
            rules: Vec::new(),
            grammar: None,
        })
        .collect()
}

fn run_case(case: &Value) -> Result<(), String> {
    let template = case["template"]
        .as_str()
        .map(|f| std::fs::read_to_string(data_dir().join("templates").join(f)).expect("template"));
    let syntax = reading::syntax_for(template.as_deref());
    let tools = tools_of(case);
    let opts = LenientOptions {
        syntax,
        tools: (!tools.is_empty()).then_some(tools.as_slice()),
        thinking: case["settings"]["enable_thinking"]
            .as_bool()
            .unwrap_or(false),
        reasoning_format: ReasoningFormat::Auto,
        partial: false,
        template: template.as_deref(),
    };
    let input = case["input"].as_str().unwrap_or("");
    let out = lenient::parse(input, &opts).map_err(|e| format!("error: {e}"))?;
    let checked = |what: &str| case[what].as_bool() != Some(false);
    let checks = reading::Checked {
        content: checked("content_checked"),
        reasoning: checked("reasoning_checked"),
        arguments: checked("arguments_checked"),
    };
    reading::compare(&out, &case["expect"], &checks)
}

/// Passed cases per family: (passed, run, has a template).
type Table = BTreeMap<String, (usize, usize, bool)>;

#[test]
fn families_never_seen_are_read() {
    let cases = cases();
    let mut table = Table::new();
    let verbose = std::env::var("TOOLGRAM_VERBOSE").is_ok();
    for case in &cases {
        let family = case["family"].as_str().unwrap_or("?").to_owned();
        let row = table.entry(family.clone()).or_default();
        row.1 += 1;
        row.2 = case["template"].is_string();
        match run_case(case) {
            Ok(()) => row.0 += 1,
            Err(why) if verbose => println!(
                "FAIL {family} line {}: {why}\n  input {:?}",
                case["line"], case["input"]
            ),
            Err(_) => {}
        }
    }
    println!("| family | template | passed |\n|---|---|---:|");
    let mut with = (0, 0);
    let mut without = (0, 0);
    for (family, (p, n, has)) in &table {
        let tpl = if *has { "vLLM's" } else { "none" };
        println!("| {family} | {tpl} | {p}/{n} |");
        let sum = if *has { &mut with } else { &mut without };
        *sum = (sum.0 + p, sum.1 + n);
    }
    let pct = |p: usize, n: usize| 100.0 * p as f64 / n.max(1) as f64;
    println!(
        "with the family's template: {}/{} = {:.1}%",
        with.0,
        with.1,
        pct(with.0, with.1)
    );
    println!(
        "without one (every registered syntax): {}/{} = {:.1}%",
        without.0,
        without.1,
        pct(without.0, without.1)
    );
    assert_eq!(cases.len(), 155, "the held-out set is complete");
    // Floors at what the parser reads today (29 of 58 when the set was first measured,
    // held out; 55 since the derivation learned Python calls, marker + JSON and Gemma's
    // quoted keys): a lost case fails; a gained one is reported in docs/parsing.md.
    assert!(with.0 >= 55, "with templates: {} < 55 of 58", with.0);
    assert!(
        without.0 >= 27,
        "without templates: {} < 27 of 97",
        without.0
    );
}
