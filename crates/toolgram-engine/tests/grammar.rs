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
