//! Our GBNF (read, and emitted from JSON Schema) against the real llama.cpp grammar engine,
//! and our Lark output against llguidance.

mod common;

use serde_json::Value;
use toolgram_engine::gbnf_check::{self, Job};
use toolgram_grammar::schema::{self, SchemaOptions};
use toolgram_grammar::{gbnf, lark};

fn strings(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs each case's accept/reject strings through llama.cpp and lists disagreements.
fn judge(cases: Vec<(String, String, Vec<String>, Vec<String>)>) -> Vec<String> {
    let model = common::test_model_path();
    let jobs: Vec<Job> = cases
        .iter()
        .map(|(_, g, acc, rej)| Job {
            grammar: g.clone(),
            strings: acc.iter().chain(rej).cloned().collect(),
        })
        .collect();
    let verdicts = gbnf_check::check_many(&model, &jobs).expect("checker runs");
    let mut bad = Vec::new();
    for ((name, g, acc, _), v) in cases.iter().zip(&verdicts) {
        if !v.parsed {
            bad.push(format!(
                "{name}: llama.cpp refused our GBNF (aborted: {})\n{g}",
                v.aborted
            ));
            continue;
        }
        for (i, s) in jobs_strings(acc, &cases, name).iter().enumerate() {
            let want = i < acc.len();
            if v.accepted.get(i) != Some(&want) {
                bad.push(format!(
                    "{name}: {s:?} should be {}",
                    if want { "accepted" } else { "rejected" }
                ));
            }
        }
    }
    bad
}

fn jobs_strings(
    acc: &[String],
    cases: &[(String, String, Vec<String>, Vec<String>)],
    name: &str,
) -> Vec<String> {
    let rej = cases
        .iter()
        .find(|c| c.0 == name)
        .map(|c| c.3.clone())
        .unwrap_or_default();
    acc.iter().cloned().chain(rej).collect()
}

fn schema_cases(file: &str) -> Vec<(String, String, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for (i, case) in common::grammar_tests(file).into_iter().enumerate() {
        if case["kind"] != "json_schema" {
            continue;
        }
        let name = format!("{file}#{i} {}", case["description"].as_str().unwrap_or(""));
        // lenient: the llama.cpp tests disable keywords by renaming them (`DISABLED_…`).
        let opts = SchemaOptions {
            lenient: true,
            ..SchemaOptions::default()
        };
        let (g, _) =
            schema::to_grammar(&case["schema"], &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Where python-jsonschema disagrees with llama.cpp's test, we follow JSON Schema.
        let disputed: Vec<&str> = case["jsonschema_disagreements"]
            .as_array()
            .map(|a| a.iter().filter_map(|d| d["instance"].as_str()).collect())
            .unwrap_or_default();
        let keep = |key: &str| -> Vec<String> {
            strings(&case, key)
                .into_iter()
                .filter(|s| !disputed.contains(&s.as_str()))
                .collect()
        };
        out.push((name, gbnf::emit(&g), keep("accept"), keep("reject")));
    }
    out
}

#[test]
fn json_schema_cases_accept_and_reject_as_llama_cpp_tests_expect() {
    let _guard = common::lock();
    let mut cases = schema_cases("llamacpp_grammar_integration.jsonl");
    cases.extend(schema_cases("llamacpp_grammar_llguidance.jsonl"));
    assert!(cases.len() >= 60, "{}", cases.len());
    let bad = judge(cases);
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn gbnf_integration_cases_survive_our_reader_and_writer() {
    let _guard = common::lock();
    let mut cases = Vec::new();
    for (i, case) in common::grammar_tests("llamacpp_grammar_integration.jsonl")
        .into_iter()
        .enumerate()
    {
        if case["kind"] != "gbnf" {
            continue;
        }
        let name = format!(
            "integration#{i} {}",
            case["description"].as_str().unwrap_or("")
        );
        let src = case["grammar"].as_str().expect("grammar");
        let g = gbnf::parse(src).unwrap_or_else(|e| panic!("{name}: {e}"));
        cases.push((
            name,
            gbnf::emit(&g),
            strings(&case, "accept"),
            strings(&case, "reject"),
        ));
    }
    assert!(cases.len() >= 10);
    let bad = judge(cases);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn json_schema_to_grammar_goldens_compile_to_gbnf_llama_cpp_parses() {
    let _guard = common::lock();
    let mut cases = Vec::new();
    let mut refused = Vec::new();
    for (i, case) in common::grammar_tests("llamacpp_json_schema_to_grammar.jsonl")
        .into_iter()
        .enumerate()
    {
        if case["expected_status"] != "SUCCESS" {
            continue;
        }
        let name = format!("goldens#{i} {}", case["name"].as_str().unwrap_or(""));
        match schema::to_grammar(&case["schema"], &SchemaOptions::default()) {
            Ok((g, _)) => cases.push((name, gbnf::emit(&g), Vec::new(), Vec::new())),
            Err(e) => refused.push(format!("{name}: {e}")),
        }
    }
    eprintln!("refused by name: {}\n{}", refused.len(), refused.join("\n"));
    assert!(cases.len() >= 60, "{}", cases.len());
    let bad = judge(cases);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn sample_grammars_become_lark_that_llguidance_compiles() {
    let dir = common::testdata().join("grammar-tests/llamacpp_grammars");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("samples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "gbnf") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let g = gbnf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for d in [lark::LarkDialect::Llguidance, lark::LarkDialect::OpenAi] {
            let l = lark::emit(&g, d);
            if let Err(e) = toolgram_engine::check_lark(&l) {
                panic!("{} as {d:?}: {e}\n{l}", path.display());
            }
        }
        n += 1;
    }
    assert!(n >= 8);
}

/// Whether llguidance (byte-level vocabulary) accepts `s` in full under the Lark grammar.
fn llguidance_accepts(lark_text: &str, s: &str) -> Result<bool, String> {
    use llguidance::api::TopLevelGrammar;
    use llguidance::toktrie::ApproximateTokEnv;
    use llguidance::{Matcher, ParserFactory};
    let env = ApproximateTokEnv::single_byte_env();
    let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
    factory.quiet();
    let parser = factory
        .create_parser(TopLevelGrammar::from_lark(lark_text.to_owned()))
        .map_err(|e| e.to_string())?;
    let mut m = Matcher::new(Ok(parser));
    let tokens = env.tokenize_bytes(s.as_bytes());
    if m.consume_tokens(&tokens).is_err() {
        return Ok(false);
    }
    Ok(m.is_accepting().unwrap_or(false))
}

#[test]
fn lark_output_accepts_and_rejects_like_llama_cpp_in_both_dialects() {
    let mut cases = Vec::new();
    for case in common::grammar_tests("llamacpp_grammar_integration.jsonl") {
        let g = if case["kind"] == "gbnf" {
            gbnf::parse(case["grammar"].as_str().expect("grammar")).expect("parses")
        } else {
            let opts = SchemaOptions {
                lenient: true,
                ..SchemaOptions::default()
            };
            schema::to_grammar(&case["schema"], &opts)
                .expect("compiles")
                .0
        };
        let disputed: Vec<String> = case["jsonschema_disagreements"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|d| d["instance"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let keep = |k: &str| -> Vec<String> {
            strings(&case, k)
                .into_iter()
                .filter(|s| !disputed.contains(s))
                .collect()
        };
        cases.push((
            case["description"].to_string(),
            g,
            keep("accept"),
            keep("reject"),
        ));
    }
    let mut bad = Vec::new();
    for (name, g, acc, rej) in &cases {
        for d in [lark::LarkDialect::Llguidance, lark::LarkDialect::OpenAi] {
            let text = lark::emit(g, d);
            for (s, want) in acc
                .iter()
                .map(|s| (s, true))
                .chain(rej.iter().map(|s| (s, false)))
            {
                match llguidance_accepts(&text, s) {
                    Ok(got) if got == want => {}
                    Ok(got) => bad.push(format!("{name} {d:?}: {s:?} accepted={got}")),
                    Err(e) => {
                        bad.push(format!("{name} {d:?}: llguidance refused: {e}"));
                        break;
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn llguidance_lark_tests_read_by_our_reader_keep_their_verdicts() {
    let (mut read, mut refused, mut bad) = (0, 0, Vec::new());
    for case in common::grammar_tests("llguidance_tests.jsonl") {
        if case["kind"] != "lark" || case.get("expect_compile_error").is_some() {
            continue;
        }
        let src = case["grammar"].as_str().unwrap_or_default();
        let Ok(g) = lark::parse(src) else {
            refused += 1;
            continue;
        };
        read += 1;
        let text = lark::emit(&g, lark::LarkDialect::Llguidance);
        let acc = strings(&case, "accept");
        let rej: Vec<String> = strings(&case, "reject")
            .into_iter()
            .filter(|s| !s.starts_with("FINAL_REJECT:"))
            .collect();
        for (s, want) in acc
            .iter()
            .map(|s| (s, true))
            .chain(rej.iter().map(|s| (s, false)))
        {
            match llguidance_accepts(&text, s) {
                Ok(got) if got == want => {}
                Ok(got) => bad.push(format!("{src:?}: {s:?} accepted={got}")),
                Err(e) => bad.push(format!("{src:?}: refused: {e}")),
            }
        }
    }
    eprintln!("read {read}, refused {refused}");
    // The rest use llguidance extensions (`%json`, `%regex`, lazy lexemes) the IR does not
    // hold; those are refused with a position, never half-read.
    assert!(read >= 8, "{read}");
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn a_whole_tool_pool_compiles_to_gbnf_that_llama_cpp_runs_as_the_call_union() {
    use toolgram_core::compile::CompileOptions;
    use toolgram_core::compile::ir::compile_ir;
    use toolgram_core::define::request::Think;
    use toolgram_core::{ToolChoice, syntax};
    let tools = common::tools();
    let hermes = syntax::by_name("hermes").expect("hermes");
    let call = |name: &str, args: &str| {
        format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
    };
    let weather = call("get_weather", r#"{"city": "Paris", "unit": "celsius"}"#);
    let mut cases = Vec::new();
    for (choice, think, accept, reject) in [
        (
            ToolChoice::Required,
            Think::Off,
            vec![weather.clone()],
            vec![
                call("get_weather", r#"{"city": "Paris", "unit": "kelvin"}"#),
                call("get_weather", r#"{"unit": "celsius"}"#),
                call("no_such_tool", "{}"),
                "Sure, Paris is sunny.".to_owned(),
            ],
        ),
        (
            ToolChoice::Auto,
            Think::Optional,
            vec![
                "Paris is sunny.".to_owned(),
                format!("Let me check.\n{weather}"),
                format!("<think>weather tool</think>\n{weather}"),
            ],
            vec![format!(
                "Let me check.\n<tool_call>\n{{\"name\": \"get_weather\"}}"
            )],
        ),
        (
            ToolChoice::Required,
            Think::Required,
            vec![format!("<think>Paris: weather tool</think>\n{weather}")],
            vec![
                weather.clone(),
                format!("<think>a</think>b</think>\n{weather}"),
            ],
        ),
    ] {
        let opts = CompileOptions {
            think,
            ..CompileOptions::default()
        };
        let ir = compile_ir(&tools, &choice, false, hermes, &opts, false).expect("compiles");
        cases.push((
            format!("{choice:?}/{think:?}"),
            gbnf::emit(&ir.grammar),
            accept,
            reject,
        ));
    }
    let bad = judge(cases);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A tagged family's raw value in GBNF stops at its closing tag and never holds the family's
/// other tags either — the same words llguidance's grammar excludes — so a value cannot run
/// on into the next parameter under llama.cpp's engine.
#[test]
fn gbnf_raw_values_never_hold_the_family_s_next_tags() {
    use toolgram_core::compile::CompileOptions;
    use toolgram_core::compile::ir::compile_ir;
    use toolgram_core::{ToolCall, ToolChoice, syntax};
    let tools = common::tools();
    let case = |name: &str, accept: &[&str], reject: &[&str]| {
        let s = syntax::by_name(name).expect("registered");
        let weather = |city: &&str| {
            s.render_calls(&[ToolCall {
                id: String::new(),
                name: "get_weather".into(),
                arguments: serde_json::json!({"city": city, "unit": "celsius"}),
            }])
        };
        let ir = compile_ir(
            &tools,
            &ToolChoice::Required,
            false,
            s,
            &CompileOptions::default(),
            false,
        )
        .expect("compiles");
        (
            name.to_owned(),
            gbnf::emit(&ir.grammar),
            accept.iter().map(weather).collect(),
            reject.iter().map(weather).collect(),
        )
    };
    let bad = judge(vec![
        // Tagged parameters (`compile/bodies.rs`).
        case(
            "qwen3-coder",
            &["Paris", "Paris <b>, </p> and </func"],
            &[
                "Paris</parameter>",
                "Paris\n<parameter=unit>\nkelvin",
                "Paris <function=get_weather>",
                "Paris </function",
            ],
        ),
        // XML elements (`compile/xml.rs`): the glue and the element's own tags.
        case(
            "minimax-m3",
            &["Paris", "Paris <b> and </cit"],
            &["Paris ]<]minimax[>[ x", "Paris <city> x", "Paris </city x"],
        ),
    ]);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every registered grammar tool (`toolgram_tools::BUILTINS`): its Lark compiles under
/// llguidance in both dialects, accepts its sample texts (which its own parser reads) and
/// refuses the others, and its GBNF gives the same verdicts under llama.cpp's engine. A new
/// tool is checked here by being registered, with no test code of its own.
#[test]
fn every_registered_grammar_tool_runs_under_llguidance_and_llama_cpp() {
    use toolgram_tools::Format;
    let dir = std::env::temp_dir().join(format!("toolgram-gbnf-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let opts = toolgram_tools::sample_options(&dir).expect("sample build options");
    let checker = toolgram_engine::ByteChecker::new().expect("checker");
    let mut cases = Vec::new();
    for entry in toolgram_tools::BUILTINS {
        let tool = (entry.build)(&opts).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let lark = tool.format(Format::Lark).expect("lark");
        let compiled = checker
            .compile(&lark)
            .unwrap_or_else(|e| panic!("{}: llguidance refused its grammar: {e}", entry.name));
        let openai = tool.format(Format::LarkOpenai).expect("lark-openai");
        toolgram_engine::check_lark(&openai)
            .unwrap_or_else(|e| panic!("{}: llguidance refused the OpenAI form: {e}", entry.name));
        let samples = entry.samples;
        assert!(
            samples.accepted.len() >= 2 && samples.refused.len() >= 3,
            "{}: too few samples",
            entry.name
        );
        for t in samples.accepted {
            assert!(checker.accepts(&compiled, t), "{}: {t}", entry.name);
            tool.parse_to_json(t)
                .unwrap_or_else(|e| panic!("{}: our parser refuses {t:?}: {e}", entry.name));
        }
        for t in samples.refused {
            assert!(!checker.accepts(&compiled, t), "{}: {t}", entry.name);
        }
        cases.push((
            entry.name.to_owned(),
            tool.format(Format::Gbnf).expect("gbnf"),
            samples.accepted.iter().map(|s| s.to_string()).collect(),
            samples.refused.iter().map(|s| s.to_string()).collect(),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let failures = judge(cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_grammar_tool_call_is_constrained_inside_its_json_string() {
    use toolgram_core::compile::{CompileOptions, compile};
    use toolgram_core::{ToolChoice, ToolSet, syntax};
    use toolgram_tools::{Format, GrammarTool, math_eval::MathEval};
    let lark = MathEval.format(Format::Lark).expect("lark");
    let tools = ToolSet::from_value(&serde_json::json!([{"type": "custom", "name": "math_eval",
        "format": {"type": "grammar", "syntax": "lark", "definition": lark}}]))
    .expect("valid tools");
    let hermes = syntax::by_name("hermes").expect("hermes");
    let g = compile(
        &tools,
        &ToolChoice::Required,
        false,
        hermes,
        &CompileOptions::default(),
    )
    .expect("compiles");
    let checker = toolgram_engine::ByteChecker::new().expect("checker");
    let compiled = checker
        .compile(&g.lark)
        .unwrap_or_else(|e| panic!("{e}\n{}", g.lark));
    let call = |input: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"math_eval\", \"arguments\": {{\"input\": \"{input}\"}}}}\n</tool_call>"
        )
    };
    assert!(
        checker.accepts(&compiled, &call("17 * 23 - 5")),
        "{}",
        g.lark
    );
    assert!(checker.accepts(&compiled, &call("max(1, pi)")));
    assert!(!checker.accepts(&compiled, &call("17 * x")));
    assert!(!checker.accepts(&compiled, &call("1 +")));
}

#[test]
fn a_grammar_tool_in_our_gbnf_is_constrained_by_llama_cpp_too() {
    use toolgram_core::compile::CompileOptions;
    use toolgram_core::compile::ir::compile_ir;
    use toolgram_core::{ToolChoice, ToolSet, syntax};
    use toolgram_tools::{Format, GrammarTool, math_eval::MathEval};
    let lark = MathEval.format(Format::Lark).expect("lark");
    let tools = ToolSet::from_value(&serde_json::json!([{"type": "custom", "name": "math_eval",
        "format": {"type": "grammar", "syntax": "lark", "definition": lark}}]))
    .expect("valid tools");
    let hermes = syntax::by_name("hermes").expect("hermes");
    let ir = compile_ir(
        &tools,
        &ToolChoice::Required,
        false,
        hermes,
        &CompileOptions::default(),
        false,
    )
    .expect("compiles");
    let call = |input: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"math_eval\", \"arguments\": {{\"input\": \"{input}\"}}}}\n</tool_call>"
        )
    };
    let bad = judge(vec![(
        "math_eval pool".into(),
        gbnf::emit(&ir.grammar),
        vec![call("17 * 23 - 5")],
        vec![call("17 * x")],
    )]);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// OpenAI-dialect Lark writes JSON string tokens whole: a declared key as one string, any
/// other key as one regex. Texts sharing a prefix with a declared key must still be read
/// right by llguidance's greedy lexer, and the symbols must shrink.
#[test]
fn openai_lark_writes_string_tokens_whole_and_keeps_their_meaning() {
    let s = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}},
        "additionalProperties": {"type": "integer"}});
    let (g, _) = schema::to_grammar(&s, &SchemaOptions::default()).expect("compiles");
    let text = lark::emit(&g, lark::LarkDialect::OpenAi);
    assert!(text.contains(r#""\"name\"""#), "{text}");
    assert!(text.contains("/\""), "{text}");
    for (doc, want) in [
        (r#"{"name": "x"}"#, true),
        (r#"{"nam": 1}"#, true),
        (r#"{"names": 2}"#, true),
        (r#"{"name": "x", "n": 3}"#, true),
        (r#"{"name": 1}"#, false),
        (r#"{"nam": "x"}"#, false),
    ] {
        assert_eq!(llguidance_accepts(&text, doc), Ok(want), "{doc}\n{text}");
    }
}
