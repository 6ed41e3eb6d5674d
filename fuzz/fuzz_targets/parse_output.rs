//! Fuzz the strict parser: any text, any registered syntax, any tool choice — no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgram_core::syntax::REGISTRY;
use toolgram_core::{ToolChoice, ToolSet, parse};

fn tools() -> &'static ToolSet {
    static TOOLS: OnceLock<ToolSet> = OnceLock::new();
    TOOLS.get_or_init(|| {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
                {"type":"function","function":{"name":"add","parameters":{"type":"object"}}}]"#,
        )
        .unwrap_or_else(|e| panic!("fixture tools are valid: {e}"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let syntax = &REGISTRY[usize::from(selector) % REGISTRY.len()];
    let choice = match selector / 64 {
        0 => ToolChoice::Auto,
        1 => ToolChoice::Required,
        2 => ToolChoice::None,
        _ => ToolChoice::Named("add".into()),
    };
    let _ = parse::parse_output(text, syntax, tools(), &choice);
});
