//! Strict parse of constrained output: text → content + typed [`ToolCall`]s, read with the
//! same [`CallSyntax`] declaration that produced the grammar.
//!
//! JSON bodies are read here; the other bodies by the family readers of [`super::lenient`]
//! for the same entry, with no repair allowed. Text that stops inside a call is
//! [`ParseError::Truncated`], never a call. This parser repairs nothing.

use crate::define::request::Think;
use crate::define::tool::{Tool, ToolCall, ToolChoice, ToolSet};
use crate::error::ParseError;
use crate::parse::lenient::{self, LenientOptions, SyntaxChoice};
use crate::syntax::{CallBody, CallSyntax, JSON_FENCE, Reasoning, text_of};
use serde_json::Value;

/// What a model's reply says: optional text, then calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedOutput {
    /// Text before the calls (or the whole reply when there are none), trimmed; `None` if empty.
    pub content: Option<String>,
    /// The calls, in order; ids are `call_0`, `call_1`, … (callers make them unique).
    pub tool_calls: Vec<ToolCall>,
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn truncated(&self) -> ParseError {
        ParseError::Truncated {
            partial: self.text.to_owned(),
        }
    }

    fn expect(&mut self, want: &str) -> Result<(), ParseError> {
        let rest = self.rest();
        if rest.starts_with(want) {
            self.pos += want.len();
            Ok(())
        } else if want.starts_with(rest) {
            Err(self.truncated())
        } else {
            Err(ParseError::Malformed {
                offset: self.pos,
                message: format!("expected {want:?}"),
            })
        }
    }

    fn json_value(&mut self) -> Result<Value, ParseError> {
        let mut stream = serde_json::Deserializer::from_str(self.rest()).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                self.pos += stream.byte_offset();
                Ok(v)
            }
            Some(Err(e)) if e.is_eof() => Err(self.truncated()),
            Some(Err(e)) => Err(ParseError::Malformed {
                offset: self.pos + stream.byte_offset(),
                message: e.to_string(),
            }),
            None => Err(self.truncated()),
        }
    }
}

/// Parse `text` produced under `choice` in `syntax` for the pool `tools`.
#[allow(
    clippy::too_many_lines,
    reason = "the strict reader's cases per call body, in grammar order"
)]
pub fn parse_output(
    text: &str,
    syntax: &'static CallSyntax,
    tools: &ToolSet,
    choice: &ToolChoice,
) -> Result<ParsedOutput, ParseError> {
    // Content is the text without the markers the template writes around an answer's text.
    let content = |s: &str| {
        let text = syntax
            .text_markers
            .iter()
            .fold(s.to_owned(), |t, m| t.replace(m, ""));
        Some(text.trim().to_owned()).filter(|t| !t.is_empty())
    };
    if *choice == ToolChoice::None {
        return Ok(ParsedOutput {
            content: content(text),
            tool_calls: Vec::new(),
        });
    }
    if syntax.body != CallBody::Json {
        return read_exactly(text, syntax, tools, choice);
    }
    let opener = syntax.opener();
    let lead = text.len() - text.trim_start().len();
    let fenced = syntax.bare_calls && text[lead..].starts_with(JSON_FENCE.0);
    let content_end = lead;
    let lead = if fenced {
        lead + JSON_FENCE.0.len()
    } else {
        lead
    };
    let text = if fenced {
        text.trim_end()
            .strip_suffix(JSON_FENCE.1.trim_start())
            .unwrap_or(text)
            .trim_end()
    } else {
        text
    };
    let bare = if opener.is_empty() {
        text.get(lead..).is_some_and(|t| t.starts_with('{'))
    } else {
        syntax.bare_calls && text.get(lead..).is_some_and(|t| t.starts_with('{'))
    };
    let start = if bare {
        Some(lead)
    } else if opener.is_empty() {
        None
    } else {
        text.find(&opener)
    };
    let Some(start) = start else {
        // As for the other bodies: an empty reply stopped before a call only where one was
        // due, and a reply without one where one was due is not a call.
        let stopped_early = if text.trim().is_empty() {
            choice.requires_call()
        } else {
            !opener.is_empty() && ends_with_prefix_of(text, &opener)
        };
        if stopped_early {
            return Err(ParseError::Truncated {
                partial: text.to_owned(),
            });
        }
        if choice.requires_call() {
            return Err(ParseError::Malformed {
                offset: 0,
                message: format!("expected a call opening with {opener:?}"),
            });
        }
        return Ok(ParsedOutput {
            content: content(text),
            tool_calls: Vec::new(),
        });
    };
    let allowed = choice.callable(tools).map_err(|e| ParseError::Malformed {
        offset: 0,
        message: e.to_string(),
    })?;
    let mut cur = Cursor { text, pos: start };
    let markers = |p: &[crate::syntax::Piece]| if bare { String::new() } else { text_of(p) };
    cur.expect(&markers(syntax.section_open))?;
    let (call_open, call_close, sep) = (
        markers(syntax.call_open),
        markers(syntax.call_close),
        text_of(syntax.separator),
    );
    let mut calls = Vec::new();
    loop {
        cur.expect(&call_open)?;
        let at = cur.pos;
        let obj = cur.json_value()?;
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .ok_or(ParseError::Malformed {
                offset: at,
                message: "a call needs a string `name`".into(),
            })?;
        let arguments = obj
            .get(syntax.args_key)
            .filter(|a| a.is_object())
            .cloned()
            .ok_or_else(|| ParseError::Malformed {
                offset: at,
                message: format!("a call needs an object `{}`", syntax.args_key),
            })?;
        match tools.position(name) {
            Some(i) if allowed.contains(&i) => {}
            _ => return Err(ParseError::UnknownTool(name.to_owned())),
        }
        calls.push(ToolCall {
            id: format!("call_{}", calls.len()),
            name: name.to_owned(),
            arguments,
        });
        cur.expect(&call_close)?;
        // A separator of whitespace is optional (templates differ in the gap).
        let after_sep = if sep.trim().is_empty() {
            Some(cur.rest().trim_start())
        } else {
            cur.rest().strip_prefix(sep.as_str()).map(str::trim_start)
        };
        let next_call = |r: &str| {
            if call_open.is_empty() {
                r.starts_with('{')
            } else {
                r.starts_with(&call_open)
            }
        };
        match after_sep {
            Some(r) if next_call(r) => cur.pos = text.len() - r.len(),
            _ => break,
        }
    }
    if !(syntax.section_close_optional && cur.rest().trim().is_empty()) {
        cur.expect(&markers(syntax.section_close))?;
    }
    if !cur.rest().trim().is_empty() {
        return Err(ParseError::Malformed {
            offset: cur.pos,
            message: "unexpected text after the tool calls".into(),
        });
    }
    let content_end = if bare { content_end } else { start };
    Ok(ParsedOutput {
        content: content(&text[..content_end]),
        tool_calls: calls,
    })
}

/// Calls of the other bodies (tagged parameters, a name then JSON, …): read by the family
/// readers the lenient parser uses for the same registry entry, this family only, and
/// refused if any of its repairs was needed — constrained output needs none.
fn read_exactly(
    text: &str,
    syntax: &'static CallSyntax,
    tools: &ToolSet,
    choice: &ToolChoice,
) -> Result<ParsedOutput, ParseError> {
    let allowed = choice.callable(tools).map_err(|e| ParseError::Malformed {
        offset: 0,
        message: e.to_string(),
    })?;
    let offered: Vec<Tool> = allowed.iter().map(|&i| tools.tools()[i].clone()).collect();
    let opts = LenientOptions {
        syntax: SyntaxChoice::Only(syntax),
        tools: Some(&offered),
        ..LenientOptions::default()
    };
    let out = lenient::parse(text, &opts)?;
    if out.tool_calls.is_empty() {
        let opener = syntax.opener();
        // An empty reply is a stop before the call only where a call was due.
        let stopped_early = if text.trim().is_empty() {
            choice.requires_call()
        } else {
            ends_with_prefix_of(text, &opener)
        };
        if stopped_early {
            return Err(ParseError::Truncated {
                partial: text.to_owned(),
            });
        }
        if choice.requires_call() {
            return Err(ParseError::Malformed {
                offset: 0,
                message: format!("expected a call opening with {opener:?}"),
            });
        }
    }
    if let Some(repair) = out.repairs.first() {
        return Err(ParseError::Malformed {
            offset: 0,
            message: format!("not in the `{}` syntax as written: {repair}", syntax.name),
        });
    }
    if !out.tool_calls.is_empty() {
        // The family reader forgives a missing closing marker and text after the calls;
        // constrained output has neither.
        let last = syntax.closer();
        let open_end =
            syntax.section_close_optional && text.trim_end().ends_with(&text_of(syntax.call_close));
        if !last.is_empty() && !text.trim_end().ends_with(&last) && !open_end {
            return Err(ParseError::Truncated {
                partial: text.to_owned(),
            });
        }
        // Read as the family reader read it: the prompt's opener restored, the text
        // recipient's header not content.
        let mut whole = lenient::reopened(text, syntax);
        for n in syntax.noise {
            whole = whole.replace(n, "");
        }
        let mut before = whole
            .find(&syntax.opener())
            .map_or("", |i| &whole[..i])
            .to_owned();
        for m in syntax.text_markers {
            before = before.replace(m, "");
        }
        let before = before.trim();
        if out.content != before {
            return Err(ParseError::Malformed {
                offset: 0,
                message: "unexpected text after the tool calls".into(),
            });
        }
    }
    Ok(ParsedOutput {
        content: Some(out.content).filter(|c| !c.is_empty()),
        tool_calls: out
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(n, c)| ToolCall {
                id: format!("call_{n}"),
                name: c.name,
                arguments: c.arguments,
            })
            .collect(),
    })
}

/// A planned reply's plan line ([`crate::compile::PLAN_PREFIX`] and its count), split from
/// what follows it: `(Some(line), rest)`, or `(None, text)` where the text has none.
pub fn split_plan(text: &str) -> (Option<String>, &str) {
    let lead = text.len() - text.trim_start().len();
    match text[lead..].strip_prefix(crate::compile::PLAN_PREFIX) {
        Some(rest) => {
            let end = rest.find('\n').map_or(rest.len(), |n| n + 1);
            let line = text[lead..lead + crate::compile::PLAN_PREFIX.len() + end].trim();
            (Some(line.to_owned()), &rest[end..])
        }
        None => (None, text),
    }
}

/// Split a reply produced with thinking on into its reasoning block (trimmed) and the rest;
/// `reasoning` is the block's markers ([`CallSyntax::reasoning`]). With [`Think::Off`], or
/// when the reply does not open with a complete block, there is no reasoning and the text
/// is returned whole.
pub fn split_reasoning(text: &str, think: Think, reasoning: Reasoning) -> (Option<String>, &str) {
    let (open, close) = (reasoning.open_text(), reasoning.close_text());
    if think == Think::Off {
        return (None, text);
    }
    let Some(body) = text.trim_start().strip_prefix(open.as_str()) else {
        return (None, text);
    };
    match body.find(close.as_str()) {
        Some(end) => (
            Some(body[..end].trim().to_owned()),
            &body[end + close.len()..],
        ),
        None => (None, text),
    }
}

/// Whether `text` ends with a proper prefix of `marker` that is more than whitespace (a
/// marker that opens with a space, Muse Glimmer's ` to=`, is not begun by every space).
fn ends_with_prefix_of(text: &str, marker: &str) -> bool {
    (1..marker.len()).any(|n| {
        marker.is_char_boundary(n) && !marker[..n].trim().is_empty() && text.ends_with(&marker[..n])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{REGISTRY, by_name};
    use proptest::prelude::*;
    use serde_json::json;

    /// Under `auto` a model may answer with nothing at all: that is no call, in every
    /// syntax; where a call was due it is a stop before the call.
    #[test]
    fn an_empty_reply_is_no_call_unless_one_was_due() {
        for s in REGISTRY {
            let out = parse_output(" \n", s, &tools(), &ToolChoice::Auto);
            assert_eq!(out, Ok(ParsedOutput::default()), "{}", s.name);
            let out = parse_output("", s, &tools(), &ToolChoice::Required);
            assert!(
                matches!(out, Err(ParseError::Truncated { .. })),
                "{}: {out:?}",
                s.name
            );
        }
        // A reply that ends in a space has not begun Muse Glimmer's ` to=` opener.
        let muse = by_name("muse-glimmer").expect("registered");
        let out = parse_output("It is sunny ", muse, &tools(), &ToolChoice::Auto);
        assert_eq!(out.map(|o| o.content), Ok(Some("It is sunny".into())));
    }

    /// Markers a template writes around an answer's text are not content, on the JSON
    /// path (Hermes) and the family-reader path (Qwen3-Coder), and stay in arguments.
    #[test]
    fn text_markers_are_not_content_but_stay_in_arguments() {
        for name in ["hermes", "qwen3-coder"] {
            let entry = by_name(name).expect("registered");
            let s: &'static CallSyntax = Box::leak(Box::new(CallSyntax {
                text_markers: &["<answer>", "</answer>"],
                ..*entry
            }));
            let call = ToolCall {
                id: String::new(),
                name: "get_weather".into(),
                arguments: json!({"city": "<answer>Paris</answer>"}),
            };
            let text = format!("<answer>Checking.</answer>{}", s.render_calls(&[call]));
            let out = parse_output(&text, s, &tools(), &ToolChoice::Auto)
                .unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
            assert_eq!(out.content.as_deref(), Some("Checking."), "{name}");
            assert_eq!(
                out.tool_calls[0].arguments,
                json!({"city": "<answer>Paris</answer>"}),
                "{name}"
            );
        }
    }

    #[test]
    fn reasoning_is_split_only_when_thinking_is_on() {
        let text = "<think>\nweigh it\n</think>\n\nHello";
        assert_eq!(
            split_reasoning(text, Think::Optional, Reasoning::THINK),
            (Some("weigh it".to_owned()), "\n\nHello")
        );
        assert_eq!(
            split_reasoning(text, Think::Off, Reasoning::THINK),
            (None, text)
        );
        assert_eq!(
            split_reasoning("<think> unfinished", Think::Required, Reasoning::THINK),
            (None, "<think> unfinished")
        );
        assert_eq!(
            split_reasoning("Hi", Think::Optional, Reasoning::THINK),
            (None, "Hi")
        );
    }

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
                {"type":"function","function":{"name":"add","parameters":{"type":"object"}}},
                {"type":"function","function":{"name":"typed","parameters":{"type":"object","properties":{
                    "s":{"type":"string"},"n":{"type":"integer"},"b":{"type":"boolean"},
                    "l":{"type":"array","items":{"type":"integer"}},
                    "o":{"type":"object","properties":{"k":{"type":"string"}}}}}}}]"#,
        )
        .expect("valid tools")
    }

    #[test]
    fn hermes_text_then_call() {
        let s = by_name("hermes").expect("registered");
        let t = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
        let out = parse_output(t, s, &tools(), &ToolChoice::Auto).expect("parses");
        assert_eq!(out.content.as_deref(), Some("Let me check."));
        assert_eq!(out.tool_calls[0].arguments, json!({"city": "Oslo"}));
    }

    #[test]
    fn harmony_calls_answers_and_reasoning() {
        let s = by_name("gpt-oss").expect("registered");
        let analysis = "<|channel|>analysis<|message|>Oslo, so weather.<|end|><|start|>assistant";
        let call = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}";
        let whole = format!("{analysis}{call}");
        let (reasoning, rest) = split_reasoning(&whole, Think::Optional, s.reasoning());
        assert_eq!(reasoning.as_deref(), Some("Oslo, so weather."));
        assert_eq!(rest, call);
        for text in [
            call.to_owned(),
            format!("{call}<|call|>"),
            " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Oslo\"}"
                .into(),
        ] {
            let out = parse_output(&text, s, &tools(), &ToolChoice::Required).expect("parses");
            assert_eq!(out.tool_calls.len(), 1, "{text}");
            assert_eq!(out.tool_calls[0].arguments, json!({"city": "Oslo"}));
            assert_eq!(out.content, None);
        }
        let answer = parse_output(
            "<|channel|>final<|message|>Sunny.",
            s,
            &tools(),
            &ToolChoice::Auto,
        )
        .expect("parses");
        assert_eq!(answer.content.as_deref(), Some("Sunny."));
        let cut = parse_output(&call[..call.len() - 3], s, &tools(), &ToolChoice::Required);
        assert!(matches!(cut, Err(ParseError::Truncated { .. })), "{cut:?}");
    }

    #[test]
    fn a_whitespace_separator_may_be_left_out() {
        let s = by_name("hermes").expect("registered");
        let one = |city: &str| {
            format!(
                "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}\n</tool_call>"
            )
        };
        for gap in ["", "\n", "\n\n"] {
            let t = format!("{}{gap}{}", one("Oslo"), one("Rome"));
            let out = parse_output(&t, s, &tools(), &ToolChoice::Auto).expect("parses");
            let cities: Vec<&Value> = out
                .tool_calls
                .iter()
                .map(|c| &c.arguments["city"])
                .collect();
            assert_eq!(cities, [&json!("Oslo"), &json!("Rome")], "gap {gap:?}");
        }
    }

    #[test]
    fn hermes_bare_json_is_a_call() {
        let s = by_name("hermes").expect("registered");
        let t = "{\"name\": \"add\", \"arguments\": {}}\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}";
        let out = parse_output(t, s, &tools(), &ToolChoice::Auto).expect("parses");
        assert_eq!(out.tool_calls.len(), 2);
        assert_eq!(out.content, None);
    }

    #[test]
    fn hermes_fenced_json_is_a_call() {
        let s = by_name("hermes").expect("registered");
        let t = "```json\n{\"name\": \"add\", \"arguments\": {}}\n```";
        let out = parse_output(t, s, &tools(), &ToolChoice::Auto).expect("parses");
        assert_eq!((out.tool_calls.len(), out.content), (1, None));
    }

    #[test]
    fn truncated_call_is_never_a_call() {
        let s = by_name("hermes").expect("registered");
        for t in [
            "<tool_call>\n{\"name\": \"add\", \"argu",
            "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool",
            "hi <tool_",
        ] {
            assert!(
                matches!(
                    parse_output(t, s, &tools(), &ToolChoice::Auto),
                    Err(ParseError::Truncated { .. })
                ),
                "{t}"
            );
        }
    }

    #[test]
    fn unknown_or_disallowed_tool_is_an_error() {
        let s = by_name("generic-json").expect("registered");
        let t = "{\"name\": \"nope\", \"arguments\": {}}";
        assert_eq!(
            parse_output(t, s, &tools(), &ToolChoice::Required),
            Err(ParseError::UnknownTool("nope".into()))
        );
        let t = "{\"name\": \"add\", \"arguments\": {}}";
        assert!(parse_output(t, s, &tools(), &ToolChoice::Named("get_weather".into())).is_err());
    }

    /// Arguments for the `typed` tool: each declared property or not, in declared order.
    fn arb_typed_args() -> impl Strategy<Value = Value> {
        (
            proptest::option::of("[A-Za-z0-9 ,.!?'-]{0,16}"),
            proptest::option::of(any::<i32>()),
            proptest::option::of(any::<bool>()),
            proptest::option::of(prop::collection::vec(any::<i16>(), 0..3)),
            proptest::option::of("[a-z ]{0,8}"),
        )
            .prop_map(|(s, n, b, l, o)| {
                let mut m = serde_json::Map::new();
                let mut put = |k: &str, v: Option<Value>| {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                };
                put("s", s.map(Value::String));
                put("n", n.map(|n| json!(n)));
                put("b", b.map(Value::Bool));
                put("l", l.map(|l| json!(l)));
                put("o", o.map(|o| json!({"k": o})));
                Value::Object(m)
            })
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "\\PC{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Arbitrary text never panics the parser, in any syntax and under any choice; and a
        /// prefix of a valid call is never read as a call.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}", cut in 0usize..200, which in 0..REGISTRY.len()) {
            let syntax = &REGISTRY[which];
            for choice in [ToolChoice::Auto, ToolChoice::Required, ToolChoice::None, ToolChoice::Named("add".into())] {
                let _ = parse_output(&text, syntax, &tools(), &choice);
            }
            let full = syntax.render_calls(&[ToolCall { id: "call_0".into(), name: "add".into(), arguments: json!({"a": [1, "x"]}) }]);
            let cut = full.char_indices().map(|(i, _)| i).nth(cut % full.chars().count()).unwrap_or(0);
            // Where the syntax's last closing marker is optional (harmony's `<|call|>`, an
            // end-of-generation token), the call without it is whole.
            let whole = syntax.closer().is_empty()
                && full.strip_suffix(text_of(syntax.call_close).as_str()) == Some(&full[..cut]);
            if cut > 0 && !whole {
                let r = parse_output(&full[..cut], syntax, &tools(), &ToolChoice::Required);
                prop_assert!(r.is_err(), "prefix {:?} parsed as {:?}", &full[..cut], r);
            }
        }

        /// Whatever arguments a call carries, rendering it in any registered syntax and
        /// parsing the text back gives the same calls. Bodies that spell values as text
        /// (tagged parameters) are typed by the schema, so their calls follow one.
        #[test]
        fn render_then_parse_round_trips(
            args in prop::collection::vec(prop::collection::btree_map("[a-z]{1,5}", arb_json(), 0..4), 1..4),
            typed in prop::collection::vec(arb_typed_args(), 1..4),
            prefix in "[A-Za-z ,.]{0,20}",
            which in 0..REGISTRY.len(),
        ) {
            let syntax = &REGISTRY[which];
            let calls: Vec<ToolCall> = if syntax.body == CallBody::Json {
                args.into_iter().enumerate().map(|(i, m)| ToolCall {
                    id: format!("call_{i}"),
                    name: if i % 2 == 0 { "add".into() } else { "get_weather".into() },
                    arguments: Value::Object(m.into_iter().collect()),
                }).collect()
            } else {
                typed.into_iter().enumerate().map(|(i, arguments)| ToolCall {
                    id: format!("call_{i}"),
                    name: "typed".into(),
                    arguments,
                }).collect()
            };
            let rendered = syntax.render_calls(&calls);
            let out = parse_output(&rendered, syntax, &tools(), &ToolChoice::Required).expect("round trip parses");
            prop_assert_eq!(&out.tool_calls, &calls);
            if !syntax.opener().is_empty() {
                // Text goes first; where the prompt opened the first call, it is the text
                // recipient's, and the first call opens in full after it.
                let with_text = match syntax.prompt_opens {
                    Some(header) => format!("{header}{prefix}{}{rendered}", syntax.opener()),
                    None => format!("{prefix}{rendered}"),
                };
                let out = parse_output(&with_text, syntax, &tools(), &ToolChoice::Auto).expect("parses after text");
                prop_assert_eq!(out.tool_calls, calls);
                prop_assert_eq!(out.content, Some(prefix.trim().to_owned()).filter(|s| !s.is_empty()));
            }
        }
    }
}
