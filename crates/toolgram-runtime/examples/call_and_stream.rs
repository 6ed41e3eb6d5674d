//! One runtime, two requests: a tool call printed as `toolgram call` prints it, then the same
//! request streamed (the second evaluates only its new turn: the tools are cached).
//!
//! `cargo run --release -p toolgram-runtime --example call_and_stream [MODEL]` — MODEL is a
//! registry name or a GGUF path (default: `test`, the small test model).

use std::io::Write;
use toolgram_core::{ChatMessage, ToolChoice};
use toolgram_runtime::{
    Backend, EmbeddedConfig, Event, Request, RunError, Runtime, tools_from_json,
};

fn main() -> Result<(), RunError> {
    let model = std::env::args().nth(1).unwrap_or_else(|| "test".into());
    let runtime = Runtime::new(Backend::Embedded(EmbeddedConfig {
        model: Some(model),
        ..EmbeddedConfig::default()
    }))?;
    let tools = tools_from_json(
        serde_json::json!([{"type": "function", "function": {
            "name": "get_weather", "description": "Get the current weather for a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                "required": ["city"]}}}]),
        ".".as_ref(),
    )?;
    let mut req = Request::new(vec![ChatMessage::text("user", "Weather in Oslo?")], tools);
    req.shape.choice = ToolChoice::Required;
    println!("{}", runtime.run(&runtime.ready(req.clone())?)?.to_json());

    req.messages = vec![ChatMessage::text("user", "And in Lima, in fahrenheit?")];
    let mut out = std::io::stdout();
    for event in runtime.stream(&runtime.ready(req)?)? {
        match event {
            Event::ToolCallStart { name, .. } => print!("{name}("),
            Event::ToolCallDelta { arguments, .. } => print!("{arguments}"),
            Event::ToolCallEnd { .. } => println!(")"),
            Event::Done(reply) => println!("{}", reply.to_json()),
            Event::Failed(e) => return Err(e),
            _ => {}
        }
        let _ = out.flush();
    }
    Ok(())
}
