//! Any text given to every built-in grammar tool's parser (the grammar itself, through core's
//! parse trees, then the tool's lenient rewrite) and its pre-run check: a typed input or a
//! typed error, never a panic. Every registered tool, built with the sample options
//! (`sql_query` over its sample schema).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgram_tools::{BUILTINS, DynTool, sample_options};

thread_local! {
    static TOOLS: Vec<Box<dyn DynTool>> = {
        let dir = std::env::temp_dir().join(format!("toolgram-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        let opts = sample_options(&dir).expect("sample database");
        BUILTINS.iter().filter_map(|e| (e.build)(&opts).ok()).collect()
    };
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.len() > 2_000 {
        return;
    }
    TOOLS.with(|tools| {
        for tool in tools {
            let _ = tool.parse_to_json(text);
            let _ = tool.check_text(text);
        }
    });
});
