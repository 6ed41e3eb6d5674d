//! The Responses API's tools and `tool_choice`, written: flat strict function tools, flat
//! freeform custom tools, and OpenAI's `tool_choice` with a named or allowed function flat.
//! Reading is [`crate::chat::tools`]'s (it takes both OpenAI shapes). This module must not
//! decide which tools are sent.

use crate::chat;
use serde_json::{Value, json};
use toolgram_core::ToolChoice;

/// A strict function tool, flat.
pub fn write_function(name: String, description: String, parameters: Value) -> Value {
    json!({"type": "function", "name": name, "description": description,
        "parameters": parameters, "strict": true})
}

/// A freeform custom tool, flat, its grammar as Lark.
pub fn write_custom(name: String, description: String, lark: String) -> Value {
    json!({"type": "custom", "name": name, "description": description,
        "format": {"type": "grammar", "syntax": "lark", "definition": lark}})
}

/// The Responses API's `tool_choice`: OpenAI's, with a named or allowed function flat.
pub fn write_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Named(n) => json!({"type": "function", "name": n}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools", "mode": if *required { "required" } else { "auto" },
            "tools": tools.iter().map(|n| json!({"type": "function", "name": n})).collect::<Vec<_>>(),
        }),
        other => chat::tools::write_choice(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tools and choices written flat read back through the reader both APIs share.
    #[test]
    fn flat_tools_and_choices_read_back_the_same() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let item = write_function("search".into(), "Search.".into(), schema.clone());
        let tool = chat::tools::read(&item, "/0")
            .expect("a function")
            .expect("reads");
        assert_eq!((tool.name.as_str(), &tool.parameters), ("search", &schema));
        for c in [
            ToolChoice::Auto,
            ToolChoice::Named("search".into()),
            ToolChoice::AllowedTools {
                tools: vec!["search".into()],
                required: true,
            },
        ] {
            let body = json!({"tool_choice": write_choice(&c)});
            let o = body.as_object().expect("object");
            assert_eq!(chat::tools::read_choice(o, true), Ok(c));
        }
    }
}
