//! Grammar behaviour under llguidance without a model (byte-level vocabulary): think
//! blocks, the bare-call rules, acceptance of exact strings.

use toolgram_core::compile::{CompileOptions, compile};

use toolgram_core::define::request::Think;
use toolgram_core::{ToolChoice, ToolSet, syntax};
use toolgram_engine::ByteChecker;

fn tools() -> ToolSet {
    ToolSet::from_json_str(
        r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
            "properties":{"city":{"type":"string"}},"required":["city"]}}}]"#,
    )
    .expect("tools")
}

fn grammar(choice: ToolChoice, think: Think) -> String {
    let opts = CompileOptions {
        think,
        ..CompileOptions::default()
    };
    let hermes = syntax::by_name("hermes").expect("hermes");
    compile(&tools(), &choice, false, hermes, &opts)
        .expect("compiles")
        .lark
}

const CALL: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";

#[test]
fn a_required_think_block_must_open_and_close_before_the_call() {
    let c = ByteChecker::new().expect("checker");
    let g = c
        .compile(&grammar(ToolChoice::Required, Think::Required))
        .expect("compiles");
    assert!(c.accepts(
        &g,
        &format!("<think>\nRome, so weather.\n</think>\n\n{CALL}")
    ));
    assert!(c.accepts(&g, &format!("<think>a < b </thin</think>{CALL}")));
    assert!(!c.accepts(&g, CALL), "the block is required");
    assert!(!c.accepts(&g, &format!("<think>\nno end\n{CALL}")));
}

#[test]
fn an_optional_think_block_may_be_left_out() {
    let c = ByteChecker::new().expect("checker");
    let g = c
        .compile(&grammar(ToolChoice::Auto, Think::Optional))
        .expect("compiles");
    assert!(c.accepts(&g, CALL));
    assert!(c.accepts(&g, "<think>hm</think>\nJust text."));
    assert!(c.accepts(&g, "Just text."));
    let off = c
        .compile(&grammar(ToolChoice::Required, Think::Off))
        .expect("compiles");
    assert!(!c.accepts(&off, &format!("<think>x</think>{CALL}")));
}

/// Harmony (GPT-OSS): a call is a commentary message to `functions.NAME` in the model's or
/// the template's header spelling; reasoning is the analysis message; `auto` may answer on
/// the final channel; `<|call|>` may end the reply or be left to the engine's stop.
#[test]
fn harmony_messages_are_calls_answers_and_reasoning() {
    let c = ByteChecker::new().expect("checker");
    let harmony = syntax::by_name("gpt-oss").expect("gpt-oss");
    let compiled = |choice: ToolChoice, think: Think, parallel: bool| {
        let opts = CompileOptions {
            think,
            ..CompileOptions::default()
        };
        let lark = compile(&tools(), &choice, parallel, harmony, &opts)
            .expect("compiles")
            .lark;
        c.compile(&lark).expect("llguidance takes it")
    };
    let args = r#"{"city": "Rome"}"#;
    let model = format!(
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{args}"
    );
    let template = format!(" to=functions.get_weather<|channel|>commentary json<|message|>{args}");
    let analysis = "<|channel|>analysis<|message|>Rome, so weather.<|end|><|start|>assistant";
    let required = compiled(ToolChoice::Required, Think::Off, false);
    for call in [&model, &template] {
        assert!(c.accepts(&required, call), "{call}");
        assert!(c.accepts(&required, &format!("{call}<|call|>")), "{call}");
    }
    assert!(
        !c.accepts(&required, &format!("{analysis}{model}")),
        "think is off"
    );
    assert!(!c.accepts(&required, "<|channel|>final<|message|>Hi"));
    assert!(!c.accepts(
        &required,
        &format!("{model}<|call|><|start|>assistant{model}")
    ));
    let unknown = model.replace("get_weather", "get_time");
    assert!(!c.accepts(&required, &unknown));
    let auto = compiled(ToolChoice::Auto, Think::Optional, true);
    assert!(c.accepts(&auto, "<|channel|>final<|message|>It is sunny."));
    assert!(c.accepts(&auto, &format!("{analysis}{model}")));
    assert!(c.accepts(
        &auto,
        &format!("{analysis}{model}<|call|><|start|>assistant{template}<|call|>")
    ));
    assert!(!c.accepts(&auto, &format!("{analysis}{analysis}{model}")));
    let thinking = compiled(ToolChoice::Required, Think::Required, false);
    assert!(!c.accepts(&thinking, &model), "the analysis is required");
    assert!(c.accepts(
        &thinking,
        "<|channel|>analysis<|message|>a <|en b<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"Rome\"}"
    ));
}

/// Gemma 4: `call:NAME{key:VALUE}` with bare keys in sorted order and `<|"|>`-quoted
/// strings; a nested object is Gemma-spelled, its shape left to the validator and said so.
#[test]
fn gemma_calls_are_spelled_gemma_s_way() {
    let c = ByteChecker::new().expect("checker");
    let gemma = syntax::by_name("gemma4").expect("gemma4");
    let pool = ToolSet::from_json_str(
        r#"[{"type":"function","function":{"name":"book","parameters":{"type":"object",
            "properties":{"where":{"type":"string"},"nights":{"type":"integer","minimum":1},
            "guest":{"type":"object","properties":{"name":{"type":"string"}}}},
            "required":["where","nights"]}}}]"#,
    )
    .expect("tools");
    let compiled = compile(
        &pool,
        &ToolChoice::Required,
        false,
        gemma,
        &CompileOptions::default(),
    )
    .expect("compiles");
    let deferred: Vec<(&str, &str)> = compiled
        .deferred
        .iter()
        .map(|d| (d.pointer.as_str(), d.keyword.as_str()))
        .collect();
    assert_eq!(deferred, [("/properties/guest", "type")]);
    let g = c.compile(&compiled.lark).expect("llguidance takes it");
    let q = "<|\"|>";
    assert!(c.accepts(
        &g,
        &format!("<|tool_call>call:book{{nights:2,where:{q}Rome{q}}}<tool_call|>")
    ));
    assert!(c.accepts(
        &g,
        &format!("<|tool_call>call:book{{guest:{{name:{q}Ada{q}}},nights:2,where:{q}Rome{q}}}<tool_call|>")
    ));
    for wrong in [
        format!("<|tool_call>call:book{{where:{q}Rome{q},nights:2}}<tool_call|>"),
        "<|tool_call>call:book{nights:2,where:\"Rome\"}<tool_call|>".to_owned(),
        format!("<|tool_call>call:book{{nights:0,where:{q}Rome{q}}}<tool_call|>"),
        format!("<|tool_call>call:book{{where:{q}Rome{q}}}<tool_call|>"),
    ] {
        assert!(!c.accepts(&g, &wrong), "{wrong}");
    }
}

/// Tagged parameters (Qwen3-Coder): a required parameter cannot be left out, an undeclared
/// one cannot be added (the object is closed), and a raw value cannot run into the next tag.
#[test]
fn tagged_calls_keep_required_parameters_and_nothing_else() {
    let c = ByteChecker::new().expect("checker");
    let coder = syntax::by_name("qwen3-coder").expect("qwen3-coder");
    let lark = compile(
        &tools(),
        &ToolChoice::Required,
        false,
        coder,
        &CompileOptions::default(),
    )
    .expect("compiles")
    .lark;
    let g = c.compile(&lark).expect("llguidance takes it");
    let call = |args: serde_json::Value| {
        coder.render_calls(&[toolgram_core::ToolCall {
            id: "call_0".into(),
            name: "get_weather".into(),
            arguments: args,
        }])
    };
    let good = call(serde_json::json!({"city": "Rome"}));
    assert!(c.accepts(&g, &good), "{good}");
    for bad in [
        call(serde_json::json!({})),
        call(serde_json::json!({"city": "Rome", "country": "IT"})),
        call(serde_json::json!({"city": "Rome</parameter>"})),
    ] {
        assert!(!c.accepts(&g, &bad), "{bad}");
    }
}

/// Under `auto`, a Hermes reply that opens with `{` is a bare call: opened with `{"` it is
/// spelled exactly as inside `<tool_call>` (so most of it is forced); opened with `{` and
/// whitespace it is an indented object with any spacing.
#[test]
fn a_bare_call_is_json_dumps_after_a_brace_quote_and_free_when_indented() {
    let c = ByteChecker::new().expect("checker");
    let opts = CompileOptions {
        // The opener must be a special token for the bare form (ids of the byte vocabulary).
        special_tokens: [
            ("<tool_call>".to_owned(), 1),
            ("</tool_call>".to_owned(), 2),
        ]
        .into(),
        ..CompileOptions::default()
    };
    let hermes = syntax::by_name("hermes").expect("hermes");
    let lark = compile(&tools(), &ToolChoice::Auto, false, hermes, &opts)
        .expect("compiles")
        .lark;
    let g = c.compile(&lark).expect("llguidance takes it");
    let dumps = r#"{"name": "get_weather", "arguments": {"city": "Rome"}}"#;
    let indented =
        "{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"city\": \"Rome\"\n  }\n}";
    let fenced = format!("```json\n{indented}\n```");
    let compact = r#"{"name":"get_weather","arguments":{"city":"Rome"}}"#;
    let half = "{\"name\": \"get_weather\",\n \"arguments\": {\"city\": \"Rome\"}}";
    assert!(c.accepts(&g, dumps));
    assert!(c.accepts(&g, indented));
    assert!(c.accepts(&g, &fenced));
    assert!(
        !c.accepts(&g, compact),
        "after {{\" the spelling is json.dumps'"
    );
    assert!(!c.accepts(&g, half), "one spelling per call");
    assert!(!c.accepts(&g, r#"{"name": "nope", "arguments": {}}"#));
    assert!(c.accepts(&g, "Rome is sunny."));
}

/// A newline may follow the last bare call: Qwen's vocabulary merges it into the call's last
/// token (`}}\n`), and a grammar that read it only as the separator would forbid the end
/// there and make the model write another call.
#[test]
fn a_newline_may_end_bare_calls() {
    let c = ByteChecker::new().expect("checker");
    let opts = CompileOptions {
        special_tokens: [
            ("<tool_call>".to_owned(), 1),
            ("</tool_call>".to_owned(), 2),
        ]
        .into(),
        ..CompileOptions::default()
    };
    let hermes = syntax::by_name("hermes").expect("hermes");
    let dumps = r#"{"name": "get_weather", "arguments": {"city": "Rome"}}"#;
    for parallel in [false, true] {
        let lark = compile(&tools(), &ToolChoice::Auto, parallel, hermes, &opts)
            .expect("compiles")
            .lark;
        let g = c.compile(&lark).expect("llguidance takes it");
        assert!(c.accepts(&g, &format!("{dumps}\n")), "parallel {parallel}");
        assert!(c.accepts(&g, &format!("```json\n{dumps}\n```\n")));
        assert!(!c.accepts(&g, &format!("{dumps}\n\n")), "one newline only");
        assert_eq!(c.accepts(&g, &format!("{dumps}\n{dumps}\n")), parallel);
    }
}

/// The same for calls without a closing marker (Llama 3's JSON calls): a newline may end
/// them, where it would otherwise have to start another call.
#[test]
fn a_newline_may_end_calls_without_a_closing_marker() {
    let c = ByteChecker::new().expect("checker");
    let llama = syntax::by_name("llama3-json").expect("llama3-json");
    let lark = compile(
        &tools(),
        &ToolChoice::Required,
        true,
        llama,
        &CompileOptions::default(),
    )
    .expect("compiles")
    .lark;
    let g = c.compile(&lark).expect("llguidance takes it");
    let call = llama.render_calls(&[toolgram_core::ToolCall {
        id: "call_0".into(),
        name: "get_weather".into(),
        arguments: serde_json::json!({"city": "Rome"}),
    }]);
    assert!(c.accepts(&g, &call), "{call}");
    assert!(c.accepts(&g, &format!("{call}\n")), "{call}");
    assert!(!c.accepts(&g, &format!("{call}\n\n")), "{call}");
}

/// Functionary v3.2's generation prompt writes the first call's `>>>`: the reply starts with
/// a call's body or with the text recipient's `all\n`; later calls open in full.
#[test]
fn a_reply_the_prompt_opened_starts_inside_the_first_call() {
    let c = ByteChecker::new().expect("checker");
    let v32 = syntax::by_name("functionary-v3.2").expect("functionary-v3.2");
    let grammar = |choice: &ToolChoice| {
        let lark = compile(&tools(), choice, true, v32, &CompileOptions::default())
            .expect("compiles")
            .lark;
        c.compile(&lark).expect("llguidance takes it")
    };
    let call = "get_weather\n{\"city\": \"Rome\"}";
    let two = format!("{call}>>>get_weather\n{{\"city\": \"Oslo\"}}");
    let auto = grammar(&ToolChoice::Auto);
    for ok in [call, two.as_str(), "all\nIt is sunny."] {
        assert!(c.accepts(&auto, ok), "{ok:?}");
    }
    for bad in [
        ">>>get_weather\n{\"city\": \"Rome\"}",
        "It is sunny.",
        "all\nSee >>>x",
    ] {
        assert!(!c.accepts(&auto, bad), "{bad:?}");
    }
    let required = grammar(&ToolChoice::Required);
    assert!(c.accepts(&required, call));
    assert!(!c.accepts(&required, "all\nIt is sunny."));
}

/// A template that leaves the calls section open (R1-Distill-Llama) makes the section's
/// closer optional: the grammar and the strict parser take the reply with or without it;
/// the registry's own entry still requires it. Both reading paths: a name-then-JSON body
/// (DeepSeek R1) and a JSON list (Mistral).
#[test]
fn a_section_left_open_may_end_without_its_closer() {
    use toolgram_core::parse::parse_output;
    use toolgram_core::syntax::{CallSyntax, text_of};
    let c = ByteChecker::new().expect("checker");
    let call = toolgram_core::ToolCall {
        id: "call_0".into(),
        name: "get_weather".into(),
        arguments: serde_json::json!({"city": "Rome"}),
    };
    for name in ["deepseek-r1", "mistral"] {
        let closed = syntax::by_name(name).expect("registered");
        let open: &'static CallSyntax = Box::leak(Box::new(CallSyntax {
            section_close_optional: true,
            ..*closed
        }));
        let whole = closed.render_calls(std::slice::from_ref(&call));
        let close = text_of(closed.section_close);
        let unclosed = whole
            .strip_suffix(close.as_str())
            .expect("ends with the closer");
        for (s, takes_unclosed) in [(closed, false), (open, true)] {
            let lark = compile(
                &tools(),
                &ToolChoice::Required,
                true,
                s,
                &CompileOptions::default(),
            )
            .expect("compiles")
            .lark;
            let g = c.compile(&lark).expect("llguidance takes it");
            assert!(c.accepts(&g, &whole), "{name}: {whole}");
            assert_eq!(
                c.accepts(&g, unclosed),
                takes_unclosed,
                "{name}: {unclosed}"
            );
            let parsed = parse_output(unclosed, s, &tools(), &ToolChoice::Required);
            assert_eq!(parsed.is_ok(), takes_unclosed, "{name}: {parsed:?}");
            if let Ok(out) = parsed {
                assert_eq!(out.tool_calls.len(), 1, "{name}");
                assert_eq!(out.tool_calls[0].arguments, call.arguments, "{name}");
            }
            assert!(parse_output(&whole, s, &tools(), &ToolChoice::Required).is_ok());
        }
    }
}

/// After Qwen's `</tool_call>` the default model writes `\n` and then ends its turn: the
/// calls section must accept that newline as an end, not only as the start of another call
/// (read only as the separator, it forced a second call under `tool_choice: required`).
#[test]
fn a_newline_after_the_last_tagged_call_may_end_the_reply() {
    let hermes = syntax::by_name("hermes").expect("hermes");
    let c = ByteChecker::new().expect("checker");
    for (choice, parallel) in [
        (ToolChoice::Required, true),
        (ToolChoice::Required, false),
        (ToolChoice::Auto, true),
    ] {
        let lark = compile(
            &tools(),
            &choice,
            parallel,
            hermes,
            &CompileOptions::default(),
        )
        .expect("compiles")
        .lark;
        let g = c.compile(&lark).expect("llguidance compiles it");
        assert!(c.accepts(&g, &format!("{CALL}\n")), "{choice:?} {parallel}");
        assert!(c.accepts(&g, CALL), "{choice:?} {parallel}");
        if parallel {
            assert!(c.accepts(&g, &format!("{CALL}\n{CALL}\n")), "{choice:?}");
        }
    }
}
