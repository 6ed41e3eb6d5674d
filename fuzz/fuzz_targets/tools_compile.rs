//! Fuzz tool-set reading and grammar compilation: any document either is refused with a
//! `DefinitionError` or compiles under every choice and syntax — no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgram_core::syntax::REGISTRY;
use toolgram_core::{ToolChoice, ToolSet, compile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(tools) = ToolSet::from_json_str(text) else { return };
    let first = tools.tools().first().map(|t| t.name.clone()).unwrap_or_default();
    for syntax in REGISTRY {
        for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required, ToolChoice::Named(first.clone())] {
            let _ = compile::compile(&tools, &choice, true, syntax, &Default::default());
        }
    }
});
