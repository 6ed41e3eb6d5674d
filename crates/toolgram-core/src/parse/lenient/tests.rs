//! Unit tests of the lenient reader on hand-written replies.

use super::*;
use serde_json::json;

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}, "cfg": {"type": "object"}}}),
        escape_hatch: Vec::new(),
        repeatable: false,
        rules: Vec::new(),
        grammar: None,
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
            template: None,
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

mod props {
    use super::*;
    use crate::define::tool::ToolCall;
    use crate::syntax::CallBody;
    use proptest::prelude::*;
    use serde_json::Value;

    fn loose_tools() -> [Tool; 2] {
        let t = |n: &str| Tool {
            name: n.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            escape_hatch: Vec::new(),
            repeatable: false,
            rules: Vec::new(),
            grammar: None,
        };
        [t("add"), t("get_weather")]
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i32>().prop_map(|n| json!(n)),
            any::<bool>().prop_map(Value::Bool),
            "x[a-z ]{0,8}y".prop_map(Value::String),
        ]
    }

    fn nested() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// JSON-bodied families carry any JSON; text-valued ones scalars (their values are text).
    fn json_bodied(s: &CallSyntax) -> bool {
        matches!(
            s.body,
            CallBody::Json
                | CallBody::JsonKeyed { .. }
                | CallBody::JsonNamedKey
                | CallBody::NameThenArgs { .. }
                | CallBody::Harmony
        )
    }

    proptest! {
        /// Calls rendered in any registered syntax read back as the same calls.
        #[test]
        fn render_then_lenient_parse_round_trips(
            args in prop::collection::vec(
                (prop::collection::btree_map("[a-z]{1,5}", scalar(), 0..4),
                 prop::collection::btree_map("[a-z]{1,5}", nested(), 0..3)), 1..4),
            which in 0..REGISTRY.len(),
        ) {
            let syntax = &REGISTRY[which];
            let calls: Vec<ToolCall> = args.into_iter().enumerate().map(|(i, (flat, deep))| ToolCall {
                id: format!("call_{i}"),
                name: if i % 2 == 0 { "add".into() } else { "get_weather".into() },
                arguments: Value::Object(if json_bodied(syntax) { deep } else { flat }.into_iter().collect()),
            }).collect();
            let text = syntax.render_calls(&calls);
            let tools = loose_tools();
            let out = parse(&text, &LenientOptions {
                syntax: SyntaxChoice::Named(syntax),
                tools: Some(&tools),
                ..Default::default()
            });
            let out = out.map_err(|e| TestCaseError::fail(format!("{}: {e} in {text:?}", syntax.name)))?;
            let got: Vec<(String, Value)> = out.tool_calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect();
            let want: Vec<(String, Value)> = calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect();
            prop_assert_eq!(got, want, "{} read {:?}", syntax.name, text);
        }

        /// No input panics the reader, under any syntax and option.
        #[test]
        fn arbitrary_text_never_panics(
            text in "(\\PC|<tool_call>|</think>|\\[TOOL_CALLS\\]|<\\|channel\\|>|<\\|message\\|>|\\{|\\}|\"|<function=|<parameter=|\\(|=){0,40}",
            which in 0..=REGISTRY.len(),
            flags in 0u8..8,
        ) {
            let syntax = REGISTRY.get(which).map_or(SyntaxChoice::Auto, SyntaxChoice::Named);
            let tools = loose_tools();
            let _ = parse(&text, &LenientOptions {
                syntax,
                tools: (flags & 1 == 1).then_some(&tools[..]),
                thinking: flags & 2 == 2,
                reasoning_format: if flags & 4 == 4 { ReasoningFormat::Auto } else { ReasoningFormat::None },
                partial: flags & 1 == 0,
                template: None,
            });
        }
    }
}

/// MiniMax M3's elements are read by the schema: a string keeps text that looks like
/// elements, a nested string keeps digits, an empty element is the empty object or array
/// its schema names, and without a schema children are read as elements.
#[test]
fn xml_elements_are_read_by_their_schema() {
    let mut t = tool("note");
    t.parameters = json!({"type": "object", "properties": {
        "html": {"type": "string"},
        "meta": {"type": "object", "properties": {"code": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object"}}});
    let tools = [t];
    let opts = LenientOptions {
        syntax: SyntaxChoice::Only(crate::syntax::by_name("minimax-m3").expect("registered")),
        tools: Some(&tools),
        ..Default::default()
    };
    let g = "]<]minimax[>[";
    let text = format!(
        "<tool_call>\n{g}<invoke name=\"note\">{g}<html><b>hi</b>{g}</html>{g}<meta>{g}<code>42{g}</code>{g}</meta>{g}<tags>{g}</tags>{g}<opts>{g}</opts>{g}<free>{g}<a>1{g}</a>{g}</free>{g}</invoke>\n{g}</tool_call>"
    );
    let out = parse(&text, &opts).expect("reads");
    assert_eq!(
        out.tool_calls[0].arguments,
        json!({"html": "<b>hi</b>", "meta": {"code": "42"}, "tags": [], "opts": {}, "free": {"a": 1}}),
        "{out:?}"
    );
}

/// Muse Glimmer's header names the tool, then its invoke tag names it again: both must agree.
#[test]
fn a_header_and_a_call_naming_different_tools_is_no_call() {
    let tools = [tool("get_weather"), tool("add")];
    let opts = LenientOptions {
        syntax: SyntaxChoice::Only(crate::syntax::by_name("muse-glimmer").expect("registered")),
        tools: Some(&tools),
        ..Default::default()
    };
    let call = |header: &str| {
        format!(
            " to={header}<|message|><atem:function_calls>\n<atem:invoke name=\"add\">\n<atem:parameter name=\"city\">x</atem:parameter>\n</atem:invoke>\n</atem:function_calls>"
        )
    };
    let out = parse(&call("add"), &opts).expect("reads");
    assert_eq!(out.tool_calls.len(), 1, "{out:?}");
    let out = parse(&call("get_weather"), &opts).expect("reads");
    assert!(out.tool_calls.is_empty(), "{out:?}");
}

/// ` to=` in plain text is not Muse Glimmer's header: only a name and then a beginning of its
/// call tag at the end of a reply is a truncated call.
#[test]
fn to_equals_in_text_is_not_a_truncated_header() {
    let tools = [tool("get_weather")];
    for syntax in [
        SyntaxChoice::Auto,
        SyntaxChoice::Only(crate::syntax::by_name("muse-glimmer").expect("registered")),
    ] {
        let opts = LenientOptions {
            syntax,
            tools: Some(&tools),
            ..Default::default()
        };
        let text = "Use convert(x, to='EUR') for that.";
        let out = parse(text, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.tool_calls.is_empty(), "{out:?}");
        assert_eq!(out.content, text);
        for cut in [" to=get_wea", " to=get_weather<|mess"] {
            assert!(
                matches!(parse(cut, &opts), Err(ParseError::Truncated { .. })),
                "{cut}"
            );
        }
    }
}
