//! Unit tests of the lenient reader on hand-written replies.

use super::*;
use serde_json::json;

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}, "cfg": {"type": "object"}}}),
        escape_hatch: Vec::new(),
    }
}

fn read(text: &str) -> Result<LenientOutput, ParseError> {
    let tools = [tool("get_weather"), tool("add")];
    parse(
        text,
        &LenientOptions {
            tools: Some(&tools),
            ..Default::default()
        },
    )
}

#[test]
fn prose_then_hermes_call_with_slips() {
    let out = read(
        "Sure!\n<tool_call>\n{'name': 'get_weather', arguments: {city: 'Oslo',},}\n</tool_call>",
    )
    .expect("reads");
    assert_eq!(out.content, "Sure!");
    assert_eq!(out.tool_calls[0].arguments, json!({"city": "Oslo"}));
    assert!(!out.repairs.is_empty());
}

#[test]
fn fenced_bare_json_and_double_encoding() {
    let out = read("```json\n{\"name\": \"add\", \"arguments\": \"{\\\"cfg\\\": \\\"{\\\\\\\"a\\\\\\\": 1}\\\"}\"}\n```")
        .expect("reads");
    assert_eq!(out.tool_calls[0].arguments, json!({"cfg": {"a": 1}}));
}

#[test]
fn code_explanation_is_not_a_call() {
    let t = "To call it, write:\n```\n<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>\n```";
    let out = read(t).expect("reads");
    assert!(out.tool_calls.is_empty());
}

#[test]
fn unknown_tool_and_truncation_are_errors() {
    assert_eq!(
        read("<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>"),
        Err(ParseError::UnknownTool("nope".into()))
    );
    assert!(matches!(
        read("<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": "),
        Err(ParseError::Truncated { .. })
    ));
}

#[test]
fn partial_mode_marks_the_call() {
    let tools = [tool("add")];
    let out = parse(
        "<|tool_call_start|>[add(a=",
        &LenientOptions {
            tools: Some(&tools),
            partial: true,
            ..Default::default()
        },
    )
    .expect("partial reads");
    assert!(out.tool_calls[0].partial);
    assert_eq!(
        out.tool_calls[0].partial_arguments.as_deref(),
        Some("{\"a\":")
    );
}
