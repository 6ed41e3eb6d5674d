//! One tool pool, one construction, three targets: the call union compiled for llguidance
//! (the embedded engine), for llama.cpp's GBNF and for OpenAI's Lark — then a reply in the
//! model's syntax read back into a typed call and validated, with the same definitions.
//!
//! `cargo run -p toolgram-core --example one_union`

use toolgram_core::compile::{self, ir::compile_ir};
use toolgram_core::{ToolChoice, ToolSet, parse, syntax, validate};
use toolgram_grammar::lark::LarkDialect;
use toolgram_grammar::{gbnf, lark};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = ToolSet::from_json_str(
        r#"[{"type": "function", "function": {"name": "get_weather",
              "parameters": {"type": "object",
                             "properties": {"city": {"type": "string"},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
                             "required": ["city"]}}},
            {"type": "function", "function": {"name": "get_time",
              "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}]"#,
    )?;
    let hermes = syntax::by_name("hermes").ok_or("hermes is registered")?;
    let choice = ToolChoice::Auto;
    let opts = compile::CompileOptions::default();

    let plan = compile::compile(&tools, &choice, true, hermes, &opts)?;
    println!("# llguidance Lark (embedded engine)\n{}", plan.lark);
    let ir = compile_ir(&tools, &choice, true, hermes, &opts, false)?;
    println!(
        "# GBNF (llama.cpp, llama-server)\n{}",
        gbnf::emit(&ir.grammar)
    );
    println!(
        "# Lark (OpenAI custom tools)\n{}",
        lark::emit(&ir.grammar, LarkDialect::OpenAi)
    );

    let reply = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let out = parse::parse_output(reply, hermes, &tools, &plan.choice)?;
    for call in &out.tool_calls {
        match validate::validate_call(&tools, call) {
            Ok(()) => println!("valid call: {} {}", call.name, call.arguments),
            Err(errors) => errors.iter().for_each(|e| println!("invalid: {e}")),
        }
    }
    Ok(())
}
