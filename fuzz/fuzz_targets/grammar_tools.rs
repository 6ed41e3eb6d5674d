//! Any text given to every built-in grammar tool's parser (the grammar itself, through core's
//! parse trees, then the tool's lenient rewrite) and its pre-run check: a typed input or a
//! typed error, never a panic. `sql_query` is built from a
//! schema-only SQLite file made here.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgram_tools::{BuildOptions, DynTool, builtin, names};

thread_local! {
    static TOOLS: Vec<Box<dyn DynTool>> = {
        let db = std::env::temp_dir().join(format!("toolgram-fuzz-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&db);
        let conn = rusqlite::Connection::open(&db).expect("temp db");
        conn.execute_batch(
            "CREATE TABLE customers (id INTEGER, name TEXT, city TEXT);
             CREATE TABLE orders (id INTEGER, customer_id INTEGER, total REAL);",
        )
        .expect("schema");
        let opts = BuildOptions { db: Some(db) };
        names().iter().filter_map(|n| builtin(n, &opts).ok()).collect()
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
