//! Fuzz the lenient parser: any text, any registered syntax or auto, any options — no panic,
//! and a truncated call is never returned as a complete call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgram_core::Tool;
use toolgram_core::parse::lenient::{self, LenientOptions, ReasoningFormat, SyntaxChoice};
use toolgram_core::syntax::REGISTRY;

fn tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        ["get_weather", "add"]
            .iter()
            .map(|n| Tool {
                name: (*n).into(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}}),
                ..Tool::default()
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Some((&flags, rest)) = rest.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let syntax = REGISTRY
        .get(usize::from(selector) % (REGISTRY.len() + 1))
        .map_or(SyntaxChoice::Auto, SyntaxChoice::Named);
    let opts = LenientOptions {
        syntax,
        tools: (flags & 1 == 1).then(tools),
        thinking: flags & 2 == 2,
        reasoning_format: match (flags >> 2) & 3 {
            0 => ReasoningFormat::None,
            1 => ReasoningFormat::Auto,
            _ => ReasoningFormat::Deepseek,
        },
        partial: flags & 16 == 16,
    };
    if let Ok(out) = lenient::parse(text, &opts) {
        assert!(opts.partial || out.tool_calls.iter().all(|c| !c.partial));
    }
});
