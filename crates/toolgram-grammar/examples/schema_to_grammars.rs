//! A JSON Schema compiled once to the grammar IR, then written for two engines: GBNF for
//! llama.cpp and the Lark OpenAI accepts for custom tools — with what the grammar leaves to
//! a validator listed, never dropped.
//!
//! `cargo run -p toolgram-grammar --example schema_to_grammars [SCHEMA.json]`

use serde_json::json;
use toolgram_grammar::gbnf;
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::schema::{SchemaOptions, to_grammar};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema = match std::env::args().nth(1) {
        Some(path) => serde_json::from_str(&std::fs::read_to_string(path)?)?,
        None => json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["city"]
        }),
    };
    let (grammar, notes) = to_grammar(&schema, &SchemaOptions::default())?;
    println!("# GBNF (llama.cpp)\n{}", gbnf::emit(&grammar));
    println!(
        "# Lark (OpenAI custom tools)\n{}",
        lark::emit(&grammar, LarkDialect::OpenAi)
    );
    for n in notes {
        println!("note: `{}` at {} — {:?}", n.keyword, n.pointer, n.kind);
    }
    Ok(())
}
