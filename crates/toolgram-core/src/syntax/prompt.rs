//! Prompt-based tool calling: the system-prompt text that describes the tools and shows
//! example calls in the model's own syntax, for models or providers without grammar support
//! (and for chat templates that cannot render tools).
//!
//! It only writes text; it must not parse replies (the lenient parser does) or promise
//! anything: prompt-based replies are always parsed and validated afterwards.

use crate::define::tool::{ToolCall, ToolChoice, ToolSet};
use crate::syntax::CallSyntax;
use crate::syntax::pyjson;
use serde_json::{Map, Value, json};
use toolgram_grammar::schema::keywords;

/// Most example calls shown.
const MAX_EXAMPLES: usize = 3;

/// The block describing `tools` to a template that has no tool support of its own.
pub fn tools_prompt(tools: &ToolSet, syntax: &CallSyntax) -> String {
    let specs: Vec<Value> = tools
        .tools()
        .iter()
        .map(|t| t.to_openai()["function"].clone())
        .collect();
    let example = syntax.render_calls(&[ToolCall {
        id: String::new(),
        name: "<tool name>".into(),
        arguments: json!({"<argument>": "<value>"}),
    }]);
    format!(
        "You can call these tools:\n{}\n\nTo call a tool, reply with only the call, in this form:\n{example}",
        pyjson::to_string(&specs, None)
    )
}

/// Few-shot instructions for prompt mode: what the tool choice demands and one example call
/// per callable tool (up to three), spelled exactly as `syntax` spells calls. Each example's
/// arguments come from the client's schema (its `enum`, `const`, `default`, property names):
/// `client_text` is given them before they are written, so a caller that keeps client text
/// apart from its own markers (the embedded engine escapes special-token strings) can.
pub fn few_shot(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    client_text: &dyn Fn(&mut Value),
) -> String {
    let callable = choice.callable(tools).unwrap_or_default();
    if callable.is_empty() {
        return "Do not call any tool; answer in text.".to_owned();
    }
    let names: Vec<&str> = callable
        .iter()
        .map(|&i| tools.tools()[i].name.as_str())
        .collect();
    let mut out = match (choice.requires_call(), names.as_slice()) {
        (true, [one]) => format!("You must call the tool `{one}`."),
        (true, _) => format!("You must call one of these tools: {}.", names.join(", ")),
        (false, _) => format!(
            "If a tool helps, call one of: {}; otherwise answer in text.",
            names.join(", ")
        ),
    };
    out.push_str(if parallel {
        " You may make several calls, one after another."
    } else {
        " Make at most one call."
    });
    out.push_str(" A call is written exactly like these examples (replace the values):");
    for &i in callable.iter().take(MAX_EXAMPLES) {
        let tool = &tools.tools()[i];
        let mut arguments = example_value(&tool.parameters, "value", 0);
        client_text(&mut arguments);
        let call = ToolCall {
            id: String::new(),
            name: tool.name.clone(),
            arguments,
        };
        out.push_str("\n\n");
        out.push_str(&syntax.render_calls(&[call]));
    }
    out
}

/// A placeholder instance of `schema`, shaped like a real one: required properties (or the
/// first one), the first enum value, `"<name>"` for strings.
pub fn example_value(schema: &Value, name: &str, depth: usize) -> Value {
    let Some(map) = schema.as_object() else {
        return json!(format!("<{name}>"));
    };
    if let Some(v) = map.get("examples").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(v) = map.get("const").or(map.get("default")) {
        return v.clone();
    }
    if let Some(v) = map.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(first) = keywords::alternatives().find_map(|k| map.get(k).and_then(|a| a.get(0))) {
        return example_value(first, name, depth + 1);
    }
    let ty = match map.get("type") {
        Some(Value::Array(list)) => list.iter().find(|t| *t != "null").and_then(Value::as_str),
        Some(t) => t.as_str(),
        None if map.contains_key("properties") => Some("object"),
        None => None,
    };
    match ty {
        Some("object") if depth < 4 => {
            let props = map.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut obj = Map::new();
            for (k, sub) in props.into_iter().flatten() {
                if required.contains(&k.as_str()) || (required.is_empty() && obj.is_empty()) {
                    obj.insert(k.clone(), example_value(sub, k, depth + 1));
                }
            }
            Value::Object(obj)
        }
        Some("array") => {
            let min = map
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1);
            let item = map.get("items").map(|i| example_value(i, name, depth + 1));
            Value::Array(vec![
                item.unwrap_or(json!(format!("<{name}>")));
                min.min(2) as usize
            ])
        }
        Some("integer") => map.get("minimum").cloned().unwrap_or(json!(1)),
        Some("number") => map.get("minimum").cloned().unwrap_or(json!(1.5)),
        Some("boolean") => json!(true),
        Some("null") => Value::Null,
        _ => json!(format!("<{name}>")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::by_name;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"book","parameters":{"type":"object",
                "properties":{"city":{"type":"string"},"nights":{"type":"integer","minimum":1},
                              "cabin":{"enum":["economy","first"]},"note":{"type":"string"}},
                "required":["city","nights","cabin"]}}},
                {"type":"function","function":{"name":"ping","parameters":{"type":"object"}}}]"#,
        )
        .expect("tools")
    }

    #[test]
    fn examples_are_valid_for_their_schema_and_in_the_model_syntax() {
        let hermes = by_name("hermes").expect("hermes");
        let text = few_shot(&tools(), &ToolChoice::Required, false, hermes, &|_| {});
        assert!(text.starts_with("You must call one of these tools: book, ping."));
        assert!(text.contains(
            "<tool_call>\n{\"name\": \"book\", \"arguments\": {\"city\": \"<city>\", \"nights\": 1, \"cabin\": \"economy\"}}\n</tool_call>"
        ));
        let tools = tools();
        let c = ToolCall {
            id: String::new(),
            name: "book".into(),
            arguments: example_value(&tools.tools()[0].parameters, "v", 0),
        };
        assert!(crate::validate::validate_call(&tools, &c).is_ok());
    }

    #[test]
    fn choice_none_and_named_say_so() {
        let mistral = by_name("mistral").expect("mistral");
        assert_eq!(
            few_shot(&tools(), &ToolChoice::None, false, mistral, &|_| {}),
            "Do not call any tool; answer in text."
        );
        let named = few_shot(
            &tools(),
            &ToolChoice::Named("ping".into()),
            true,
            mistral,
            &|_| {},
        );
        assert!(named.starts_with("You must call the tool `ping`. You may make several calls"));
        assert!(named.contains("[TOOL_CALLS][{\"name\": \"ping\", \"arguments\": {}}]"));
    }
}
