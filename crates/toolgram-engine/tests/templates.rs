//! Every chat template in the shared set (`toolcall-parsing/templates`): calls rendered by
//! the template itself (random arguments, several seeds) are accepted exactly by the
//! grammar compiled for the syntax detected in that template — llguidance's Lark over
//! bytes and our GBNF under llama.cpp's own grammar engine — and the strict parser reads
//! them back to the same calls. Templates that write no call here, whose calls no syntax
//! is derived for, or whose layout their entry does not spell are listed by name, and the
//! lists are asserted, so none can grow silently.

mod common;

use serde_json::{Value, json};
use toolgram_core::compile::{self, CompileOptions, ir::compile_ir};
use toolgram_core::parse::parse_output;
use toolgram_core::syntax::{CallBody, CallSyntax, REGISTRY, text_of};
use toolgram_core::template::{detect, probe};
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_engine::ByteChecker;
use toolgram_engine::gbnf_check::{self, Job};
use toolgram_engine::template::ChatTemplate;
use toolgram_grammar::gbnf;

fn tools() -> ToolSet {
    ToolSet::from_json_str(
        r#"[{"type":"function","function":{"name":"get_weather","description":"Weather in a city",
              "parameters":{"type":"object","properties":{
                "city":{"type":"string","description":"City name"},
                "days":{"type":"integer","description":"Days ahead"},
                "unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Unit"},
                "hourly":{"type":"boolean","description":"Hour by hour"}},"required":["city"]}}},
            {"type":"function","function":{"name":"search","description":"Search the web",
              "parameters":{"type":"object","properties":{
                "query":{"type":"string","description":"What to search"},
                "filters":{"type":"object","properties":{"lang":{"type":"string"},"year":{"type":"integer"}},
                  "additionalProperties":false,"description":"Narrowing"},
                "sites":{"type":"array","items":{"type":"string"},"description":"Sites"}},
              "required":["query"]}}}]"#,
    )
    .expect("valid tools")
}

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn text(&mut self) -> String {
        const WORDS: &[&str] = &[
            "Paris",
            "New York",
            "São Paulo",
            "rust grammar",
            "a, b. c!",
            "x",
            "42 km",
            "It's",
        ];
        WORDS[self.below(WORDS.len() as u64) as usize].to_owned()
    }
}

/// Random calls (one or two), arguments in declared order with optional ones left out.
fn random_calls(rng: &mut Rng) -> Vec<ToolCall> {
    let n = 1 + rng.below(2) as usize;
    (0..n)
        .map(|i| {
            let mut args = serde_json::Map::new();
            let name = if rng.below(2) == 0 {
                args.insert("city".into(), json!(rng.text()));
                if rng.below(2) == 0 {
                    args.insert("days".into(), json!(rng.below(14)));
                }
                if rng.below(2) == 0 {
                    let unit = ["celsius", "fahrenheit"][rng.below(2) as usize];
                    args.insert("unit".into(), json!(unit));
                }
                if rng.below(2) == 0 {
                    args.insert("hourly".into(), json!(rng.below(2) == 0));
                }
                "get_weather"
            } else {
                args.insert("query".into(), json!(rng.text()));
                if rng.below(2) == 0 {
                    args.insert(
                        "filters".into(),
                        json!({"lang": "en", "year": 2000 + rng.below(30)}),
                    );
                }
                if rng.below(2) == 0 {
                    args.insert("sites".into(), json!([rng.text(), rng.text()]));
                }
                "search"
            };
            ToolCall {
                // Nine alphanumerics: Mistral's templates refuse other ids.
                id: format!("c{i}abcdefg"),
                name: name.into(),
                arguments: Value::Object(args),
            }
        })
        .collect()
}

fn messages(calls: Option<&[ToolCall]>, content: &Value) -> Vec<ChatMessage> {
    let mut m = vec![json!({"role": "user", "content": "What's the weather in Paris?"})];
    if let Some(calls) = calls {
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments.to_string()}})
            })
            .collect();
        m.push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
    }
    serde_json::from_value(Value::Array(m)).expect("messages")
}

/// The calls as the template writes them in the assistant's turn: from the syntax's opener
/// to its last closing marker, after the prompt the conversation shares. The assistant's
/// content is `""` (templates that test its length) or, failing that, `null` (templates
/// that write calls only when there is no content).
fn rendered_calls(
    t: &ChatTemplate,
    s: &CallSyntax,
    tools: &ToolSet,
    calls: &[ToolCall],
) -> Result<String, String> {
    rendered_with(t, s, tools, calls, &json!("")).or_else(|e| {
        rendered_with(t, s, tools, calls, &Value::Null)
            .map_err(|e2| format!("{e}; with null content: {e2}"))
    })
}

fn rendered_with(
    t: &ChatTemplate,
    s: &CallSyntax,
    tools: &ToolSet,
    calls: &[ToolCall],
    content: &Value,
) -> Result<String, String> {
    let prompt = t.render_with(&messages(None, content), tools, s, true)?;
    let full = t.render_with(&messages(Some(calls), content), tools, s, false)?;
    let reply = probe::assistant_turn(&prompt, &full);
    if s.body == CallBody::Harmony {
        // A harmony reply is all messages: the calls start right after the prompt.
        return Ok(reply.trim_end().to_owned());
    }
    let opener = match s.opener() {
        o if o.is_empty() => "{".to_owned(),
        o => o,
    };
    let start = if s.prompt_opens.is_some() {
        // The generation prompt wrote the first call's opener.
        Some(0)
    } else {
        reply.find(&opener)
    }
    .ok_or_else(|| format!("no {opener:?} in the reply {reply:?}"))?;
    let last = match s.closer() {
        c if c.is_empty() => "}".to_owned(),
        c => c,
    };
    // A section ends at its first closer (Command R+'s template writes a system turn after
    // the calls, quoting `]```` again); a call closer ends each call, so the last one ends
    // the calls.
    let end = if s.section_close.is_empty() {
        reply.rfind(&last).filter(|&e| e >= start)
    } else {
        let from = start + opener.len();
        reply[from..].find(&last).map(|e| from + e)
    };
    // A section the template leaves open ends with its last call.
    let call_close = text_of(s.call_close);
    let (end, last) = match end {
        None if s.section_close_optional => {
            (reply.rfind(&call_close).filter(|&e| e >= start), call_close)
        }
        end => (end, last),
    };
    let end = end.ok_or_else(|| format!("no {last:?} in the reply {reply:?}"))?;
    Ok(reply[start..end + last.len()].to_owned())
}

/// What the round trips found.
struct Report {
    checker: ByteChecker,
    failures: Vec<String>,
    not_rendered: Vec<String>,
    checked: Vec<String>,
    gbnf_jobs: Vec<(String, Job)>,
}

impl Report {
    fn new() -> Self {
        Self {
            checker: ByteChecker::new().expect("checker"),
            failures: Vec::new(),
            not_rendered: Vec::new(),
            checked: Vec::new(),
            gbnf_jobs: Vec::new(),
        }
    }

    /// The GBNF of every template checked, under llama.cpp's own grammar engine.
    fn check_gbnf(&mut self) {
        let model = common::test_model_path();
        let jobs: Vec<Job> = self.gbnf_jobs.iter().map(|(_, j)| j.clone()).collect();
        let verdicts = gbnf_check::check_many(&model, &jobs).expect("llama.cpp's checker runs");
        for ((file, job), v) in self.gbnf_jobs.iter().zip(&verdicts) {
            if !v.parsed {
                self.failures.push(format!(
                    "{file}: llama.cpp refused the GBNF\n{}",
                    job.grammar
                ));
                continue;
            }
            if v.accepted.len() != job.strings.len() {
                self.failures.push(format!(
                    "{file}: {} verdicts for {} strings",
                    v.accepted.len(),
                    job.strings.len()
                ));
            }
            for (text, ok) in job.strings.iter().zip(&v.accepted) {
                if !ok {
                    self.failures
                        .push(format!("{file}: llama.cpp's grammar rejects {text:?}"));
                }
            }
        }
    }
}

/// Calls rendered by `template` (six seeds) against the grammar compiled for `s` and the
/// strict parser; the GBNF is queued for [`Report::check_gbnf`].
fn round_trip(
    file: &str,
    template: &ChatTemplate,
    s: &'static CallSyntax,
    tools: &ToolSet,
    r: &mut Report,
) {
    let grammar = compile::compile(
        tools,
        &ToolChoice::Required,
        true,
        s,
        &CompileOptions::default(),
    )
    .map_err(|e| e.to_string())
    .and_then(|g| r.checker.compile(&g.lark).map_err(|e| e.to_string()));
    let grammar = match grammar {
        Ok(g) => g,
        Err(e) => {
            r.failures
                .push(format!("{file}: the grammar does not compile: {e}"));
            return;
        }
    };
    let ir = compile_ir(
        tools,
        &ToolChoice::Required,
        true,
        s,
        &CompileOptions::default(),
        false,
    )
    .map(|ir| gbnf::emit(&ir.grammar));
    let mut strings = Vec::new();
    for seed in 1..=6u64 {
        let mut calls = random_calls(&mut Rng(seed * 0x9E37_79B9_7F4A_7C15));
        let mut rendered = rendered_calls(template, s, tools, &calls);
        let dropped = |r: &Result<String, String>, calls: &[ToolCall]| match r {
            Ok(t) => {
                calls.iter().filter(|c| t.contains(c.name.as_str())).count() < calls.len()
                    || (calls.len() == 2
                        && calls[0].name == calls[1].name
                        && t.matches(calls[0].name.as_str()).count() < 2)
            }
            Err(_) => true,
        };
        if calls.len() > 1 && dropped(&rendered, &calls) {
            // Templates that allow one call per turn raise (Llama 3.x) or write only
            // the first (GigaChat 3.1).
            calls.truncate(1);
            rendered = rendered_calls(template, s, tools, &calls);
        }
        let text = match rendered {
            Ok(t) => t,
            Err(e) if seed == 1 && e.contains("failed to render") => {
                r.not_rendered.push(format!("{file} ({e})"));
                return;
            }
            Err(e) => {
                r.failures.push(format!("{file} seed {seed}: {e}"));
                continue;
            }
        };
        if !r.checker.accepts(&grammar, &text) {
            let at = r.checker.accepted_len(&grammar, &text);
            r.failures.push(format!(
                "{file} seed {seed}: llguidance stops at byte {at}: {:?} | {:?}",
                &text[..text.floor_char_boundary(at)],
                &text[text.floor_char_boundary(at)..]
            ));
        }
        match parse_output(&text, s, tools, &ToolChoice::Required) {
            Ok(out) => {
                let got: Vec<(&str, &Value)> = out
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.as_str(), &c.arguments))
                    .collect();
                let want: Vec<(&str, &Value)> = calls
                    .iter()
                    .map(|c| (c.name.as_str(), &c.arguments))
                    .collect();
                if got != want {
                    r.failures.push(format!(
                        "{file} seed {seed}: read back {got:?}, want {want:?}"
                    ));
                }
            }
            Err(e) => r
                .failures
                .push(format!("{file} seed {seed}: strict parse: {e}\n{text}")),
        }
        strings.push(text);
    }
    match ir {
        Ok(g) => r.gbnf_jobs.push((
            file.to_owned(),
            Job {
                grammar: g,
                strings,
            },
        )),
        Err(e) => r.failures.push(format!("{file}: no GBNF: {e}")),
    }
    r.checked.push(format!("{file} ({})", s.name));
}

#[test]
#[allow(clippy::too_many_lines, reason = "one case table over every template")]
fn calls_rendered_by_every_template_are_accepted_and_read_back() {
    let dir = common::testdata().join("toolcall-parsing/templates");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("templates folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
        .collect();
    files.sort();
    let tools = tools();
    let mut report = Report::new();
    let mut no_syntax = Vec::new();
    let mut refused = Vec::new();
    for path in &files {
        let file = path
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned());
        let source = std::fs::read_to_string(path).expect("template");
        let template = match ChatTemplate::new(&source, "<s>", "</s>") {
            Ok(t) => t,
            Err(e) => {
                report.not_rendered.push(format!("{file} ({e})"));
                continue;
            }
        };
        let found = detect(&template, &source);
        if found.refused {
            refused.push(file);
            continue;
        }
        let s = found.syntax;
        // The probed family, or its copy with the template's reasoning and text markers.
        let same = |family: &CallSyntax| {
            *family
                == CallSyntax {
                    think: family.think,
                    text_markers: family.text_markers,
                    ..*s
                }
        };
        match probe::probe_family(&template) {
            Some(family) if !same(family) => {
                report.failures.push(format!(
                    "{file}: read as {} but compiled as {}",
                    family.name, s.name
                ));
                continue;
            }
            // No entry reads a call and none was derived: the template writes none.
            None if s.name != "derived" => {
                no_syntax.push(file);
                continue;
            }
            _ => {}
        }
        round_trip(&file, &template, s, &tools, &mut report);
    }
    eprintln!(
        "round trip on {} templates: {}",
        report.checked.len(),
        report.checked.join(", ")
    );
    eprintln!("no call syntax of their own: {}", no_syntax.join(", "));
    eprintln!(
        "calls in no shape a syntax can be derived from: {}",
        refused.join(", ")
    );
    eprintln!(
        "not rendered by minijinja: {}",
        report.not_rendered.join(", ")
    );
    report.check_gbnf();
    let Report {
        failures,
        not_rendered,
        checked,
        ..
    } = report;
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Which syntax each template is compiled in, pinned: a probe that stops reading a family
    // would otherwise fall back to a derived syntax that round-trips too.
    assert_eq!(
        checked,
        [
            "Apertus-8B-Instruct.jinja (apertus)",
            "Apriel-1.6-15b-Thinker-fixed.jinja (apriel)",
            "Bielik-11B-v3.0-Instruct.jinja (hermes)",
            "ByteDance-Seed-OSS.jinja (seed-oss)",
            "Cohere2MoE.jinja (command-r7b)",
            "CohereForAI-c4ai-command-r-plus-tool_use.jinja (command-r-plus)",
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja (command-r7b)",
            "GLM-4.6.jinja (glm)",
            "GLM-4.7-Flash.jinja (glm)",
            "GigaChat3-10B-A1.8B.jinja (gigachat3)",
            "GigaChat3.1-10B-A1.8B.jinja (gigachat3.1)",
            "Kimi-K2-Instruct.jinja (kimi-k2)",
            "Kimi-K2-Thinking.jinja (kimi-k2)",
            "Kimi-K3.jinja (kimi-k3)",
            "LFM2.5-8B-A1B.jinja (lfm2)",
            "MiMo-VL.jinja (hermes)",
            "MiniMax-M1.jinja (minimax-m1)",
            "MiniMax-M2.jinja (minimax-m2)",
            "MiniMax-M3.jinja (minimax-m3)",
            "Mistral-Small-3.2-24B-Instruct-2506.jinja (mistral-v11)",
            "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja (qwen3-coder)",
            "NVIDIA-Nemotron-Nano-v2.jinja (nemotron-v2)",
            "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja (hermes)",
            "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja (hermes)",
            "Qwen-QwQ-32B.jinja (hermes)",
            "Qwen-Qwen2.5-7B-Instruct.jinja (hermes)",
            "Qwen-Qwen3-0.6B.jinja (hermes)",
            "Qwen3-Coder.jinja (qwen3-coder)",
            "Qwen3.5-4B.jinja (qwen3-coder)",
            "Reka-Edge.jinja (hermes)",
            "Spark2.5.jinja (glm)",
            "StepFun3.5-Flash.jinja (qwen3-coder)",
            "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja (deepseek-r1)",
            "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja (deepseek-r1)",
            "deepseek-ai-DeepSeek-V3.1.jinja (deepseek-v3.1)",
            "deepseek-ai-DeepSeek-V3.2.jinja (deepseek-v3.2)",
            "deepseek-ai-DeepSeek-V4-Flash-0731.jinja (deepseek-v4)",
            "deepseek-ai-DeepSeek-V4.jinja (deepseek-v4)",
            "fireworks-ai-llama-3-firefunction-v2.jinja (firefunction-v2)",
            "google-gemma-4-31B-it-interleaved.jinja (gemma4)",
            "google-gemma-4-31B-it.jinja (gemma4)",
            "ibm-granite-granite-4.0.jinja (hermes)",
            "ibm-granite-granite-4.1.jinja (hermes)",
            "inclusionai-ling-3.0-flash.jinja (glm)",
            "llama-cpp-deepseek-r1.jinja (deepseek-r1)",
            "meetkai-functionary-medium-v3.1.jinja (functionary-v3.1)",
            "meetkai-functionary-medium-v3.2.jinja (functionary-v3.2)",
            "meta-llama-Llama-3.1-8B-Instruct.jinja (llama3-json)",
            "meta-llama-Llama-3.2-3B-Instruct.jinja (llama3-json)",
            "meta-llama-Llama-3.3-70B-Instruct.jinja (llama3-json)",
            "mistralai-Ministral-3-14B-Reasoning-2512.jinja (mistral-v11)",
            "mistralai-Mistral-Nemo-Instruct-2407.jinja (mistral)",
            "moonshotai-Kimi-K2.jinja (kimi-k2)",
            "muse-glimmer.jinja (muse-glimmer)",
            "openai-gpt-oss-120b.jinja (gpt-oss)",
            "openbmb-MiniCPM5-1B.jinja (minicpm5)",
            "poolside-Laguna-S-2.1.jinja (glm)",
            "poolside-Laguna-XS-2.1.jinja (glm)",
            "poolside-Laguna-XS.2.jinja (glm)",
            "tencent-Hy3.jinja (hunyuan3)",
            "unsloth-Apriel-1.5.jinja (apriel)",
            "unsloth-mistral-Devstral-Small-2507.jinja (mistral-v11)",
            "upstage-Solar-Open-100B.jinja (solar-open)",
        ],
        "templates round-tripped, by the syntax compiled for each"
    );
    // What is not round-tripped is listed by name, so neither list grows silently.
    assert!(
        not_rendered.is_empty(),
        "templates minijinja does not render: {not_rendered:?}"
    );
    assert_eq!(
        no_syntax,
        [
            "HuggingFaceTB-SmolLM3-3B.jinja",
            "LFM2-8B-A1B.jinja",
            "LFM2.5-Instruct.jinja",
            "google-gemma-2-2b-it.jinja",
            "ibm-granite-granite-3.3-2B-Instruct.jinja",
            "llama-cpp-rwkv-world.jinja",
            "microsoft-Phi-3.5-mini-instruct.jinja",
        ],
        "templates that write no call here: none of their own (Gemma 2, LFM2, Granite 3.3; \
         SmolLM3, Phi-3.5 and RWKV-World render neither tools nor calls)"
    );
    assert!(
        refused.is_empty(),
        "templates whose calls no syntax could be derived for: {refused:?}"
    );
}

/// Templates written for this test whose calls no registry entry reads: the syntax is
/// derived from what they render, and the same round trip holds for it.
#[test]
fn syntaxes_derived_from_templates_no_entry_reads_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/templates");
    let tools = tools();
    let mut report = Report::new();
    for (file, shape) in [
        ("invoke-tags.jinja", "tagged parameters"),
        ("call-brackets.jinja", "a JSON object \"tool\""),
    ] {
        let source = std::fs::read_to_string(dir.join(file)).expect("example template");
        let template = ChatTemplate::new(&source, "<s>", "</s>").expect("compiles");
        assert!(
            probe::probe_family(&template).is_none(),
            "{file} is in the registry"
        );
        let found = detect(&template, &source);
        assert_eq!(found.syntax.name, "derived", "{file}: {}", found.how);
        assert!(found.how.contains(shape), "{file}: {}", found.how);
        round_trip(file, &template, found.syntax, &tools, &mut report);
    }
    report.check_gbnf();
    assert!(report.failures.is_empty(), "{}", report.failures.join("\n"));
    assert_eq!(report.checked.len(), 2, "{:?}", report.not_rendered);
}

/// Calls written by `s`'s own renderer (six seeds) against the grammar compiled for `s` under
/// llguidance and the strict parser: the failures, and the texts checked.
fn own_round_trip(
    s: &'static CallSyntax,
    tools: &ToolSet,
    checker: &ByteChecker,
    failures: &mut Vec<String>,
) -> Vec<String> {
    let opts = CompileOptions::default();
    let grammar = compile::compile(tools, &ToolChoice::Required, true, s, &opts)
        .map_err(|e| e.to_string())
        .and_then(|g| checker.compile(&g.lark).map_err(|e| e.to_string()));
    let grammar = match grammar {
        Ok(g) => g,
        Err(e) => {
            failures.push(format!("{}: {e}", s.name));
            return Vec::new();
        }
    };
    let mut texts = Vec::new();
    for seed in 1..=6u64 {
        let calls = random_calls(&mut Rng(seed * 0x9E37_79B9_7F4A_7C15));
        let text = s.render_calls(&calls);
        if !checker.accepts(&grammar, &text) {
            let at = text.floor_char_boundary(checker.accepted_len(&grammar, &text));
            failures.push(format!(
                "{} seed {seed}: {:?} | {:?}",
                s.name,
                &text[..at],
                &text[at..]
            ));
        }
        match parse_output(&text, s, tools, &ToolChoice::Required) {
            Ok(out)
                if out.tool_calls.len() == calls.len()
                    && out
                        .tool_calls
                        .iter()
                        .zip(&calls)
                        .all(|(a, b)| a.name == b.name && a.arguments == b.arguments) => {}
            other => failures.push(format!(
                "{} seed {seed}: read back {other:?} from {text:?}",
                s.name
            )),
        }
        texts.push(text);
    }
    texts
}

/// Every registered syntax accepts what its own renderer writes (the spelling of earlier turns
/// and prompt examples), and its strict parser reads it back: grammar, renderer and parser
/// from one entry agree, for entries no shared template exercises too.
#[test]
fn every_syntax_accepts_what_it_renders() {
    let tools = tools();
    let checker = ByteChecker::new().expect("checker");
    let mut failures = Vec::new();
    for s in REGISTRY {
        own_round_trip(s, &tools, &checker, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// vLLM's templates of families the registry does not know (`tests/data/unseen-families`)
/// whose calls are derived: the shape found in each; where the template writes argument
/// values as a model does (JSON) the template's own calls round-trip, and where it spells
/// them its own way (Python calls with `{{ value }}`, FunctionGemma's quoted numbers) the
/// calls toolgram writes in the derived syntax do — under llguidance and llama.cpp's GBNF engine, read back by the
/// strict parser.
#[test]
fn syntaxes_derived_from_unseen_families_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/unseen-families/templates");
    let tools = tools();
    let mut report = Report::new();
    // (file, the shape found, and where the template writes values its own way the calls'
    // opener, closer and separator, which its own spelling alone does not check)
    let python = ("[", "]", ", ");
    let gemma = ("<start_function_call>call:", "<end_function_call>", "");
    for (file, shape, own_values) in [
        (
            "tool_chat_template_granite_20b_fc.jinja",
            "a JSON object",
            None,
        ),
        (
            "tool_chat_template_internlm2_tool.jinja",
            "a JSON object",
            None,
        ),
        (
            "tool_chat_template_llama3.2_pythonic.jinja",
            "Python calls",
            Some(python),
        ),
        (
            "tool_chat_template_llama4_pythonic.jinja",
            "Python calls",
            Some(python),
        ),
        (
            "tool_chat_template_toolace.jinja",
            "Python calls",
            Some(python),
        ),
        (
            "tool_chat_template_gemma3_pythonic.jinja",
            "Python calls",
            Some(python),
        ),
        (
            "tool_chat_template_functiongemma.jinja",
            "strings between \"<escape>\"",
            Some(gemma),
        ),
    ] {
        let source = std::fs::read_to_string(dir.join(file)).expect("vLLM's template");
        let template = ChatTemplate::new(&source, "<s>", "</s>").expect("compiles");
        let found = detect(&template, &source);
        assert_eq!(found.syntax.name, "derived", "{file}: {}", found.how);
        assert!(found.how.contains(shape), "{file}: {}", found.how);
        if let Some((opener, closer, separator)) = own_values {
            let s = found.syntax;
            let frame = (s.opener(), s.closer(), text_of(s.separator));
            assert_eq!(
                frame,
                (opener.into(), closer.into(), separator.into()),
                "{file}"
            );
            let mut failures = Vec::new();
            let strings = own_round_trip(found.syntax, &tools, &report.checker, &mut failures);
            report.failures.extend(failures);
            let grammar = compile_ir(
                &tools,
                &ToolChoice::Required,
                true,
                found.syntax,
                &CompileOptions::default(),
                false,
            )
            .map(|ir| gbnf::emit(&ir.grammar));
            match grammar {
                Ok(grammar) => report
                    .gbnf_jobs
                    .push((file.to_owned(), Job { grammar, strings })),
                Err(e) => report.failures.push(format!("{file}: no GBNF: {e}")),
            }
            report.checked.push(file.to_owned());
        } else {
            round_trip(file, &template, found.syntax, &tools, &mut report);
        }
    }
    report.check_gbnf();
    assert!(report.failures.is_empty(), "{}", report.failures.join("\n"));
    assert_eq!(report.checked.len(), 7, "{:?}", report.not_rendered);
}
