//! Post-parse validation of call arguments against the tool's JSON Schema and its custom
//! rules ([`crate::define::rules::ArgumentRule`]), with messages written for the model (`missing required argument
//! 'title' for tool 'get_inputs'`).
//!
//! Also here: the pool filter for escape-hatch tools ([`filter_pool`]), duplicate-call
//! detection ([`repeated_calls`]), runaway calls inside one reply ([`runaway`]) and calls
//! hidden in a reply's text ([`hidden_call`]). It checks and reports; it must not change arguments. The
//! retry loop that feeds these messages back to a model lives outside the pure core.

mod hidden_call;
mod pool;
mod repeat;
mod rules_schema;
mod runaway;

pub use hidden_call::{HiddenCall, HiddenForm, hidden_call};
pub use pool::filter_pool;
pub use repeat::{RepeatedCall, repeated_calls, repeated_calls_since};
pub use rules_schema::{MAX_VARIANTS, with_rules};
pub use runaway::{Runaway, RunawayKind, Written, runaway};

use crate::define::tool::{ToolCall, ToolSet};
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use thiserror::Error;

/// One reason a call's arguments are not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ArgumentError {
    /// The tool called.
    pub tool: String,
    /// JSON pointer into the arguments.
    pub pointer: String,
    /// The message for the model.
    pub message: String,
}

/// Check one call; all problems are returned, in schema order.
pub fn validate_call(tools: &ToolSet, call: &ToolCall) -> Result<(), Vec<ArgumentError>> {
    let Some(index) = tools.position(&call.name) else {
        let names: Vec<&str> = tools.tools().iter().map(|t| t.name.as_str()).collect();
        return Err(vec![ArgumentError {
            tool: call.name.clone(),
            pointer: String::new(),
            message: format!(
                "there is no tool '{}'; the tools are: {}",
                call.name,
                names.join(", ")
            ),
        }]);
    };
    let Some(validator) = tools.validator(index) else {
        return Ok(());
    };
    let mut errors: Vec<ArgumentError> = validator
        .iter_errors(&call.arguments)
        .map(|e| {
            let pointer = e.instance_path.to_string();
            let arg = pointer.trim_start_matches('/').replace('/', ".");
            let message = match &e.kind {
                ValidationErrorKind::Required { property } => {
                    let p = property
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| property.to_string());
                    let full = if arg.is_empty() {
                        p
                    } else {
                        format!("{arg}.{p}")
                    };
                    format!(
                        "missing required argument '{full}' for tool '{}'",
                        call.name
                    )
                }
                ValidationErrorKind::Enum { options } => {
                    let opts = options
                        .as_array()
                        .map(|a| a.iter().map(show).collect::<Vec<_>>().join(", "))
                        .unwrap_or_default();
                    format!("'{arg}' must be one of {opts}")
                }
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    format!(
                        "unknown argument(s) {} for tool '{}'",
                        unexpected.join(", "),
                        call.name
                    )
                }
                _ if arg.is_empty() => format!("arguments for tool '{}': {e}", call.name),
                _ => format!("'{arg}': {e}"),
            };
            ArgumentError {
                tool: call.name.clone(),
                pointer,
                message,
            }
        })
        .collect();
    if let Some(spec) = tools.tools().get(index).and_then(|t| t.grammar.as_ref())
        && errors.is_empty()
    {
        errors.extend(grammar_input_error(
            &call.name,
            &spec.definition,
            &call.arguments,
        ));
        if let Some(check) = spec.check.as_ref().filter(|_| errors.is_empty()) {
            let text = call.arguments.get("input").and_then(Value::as_str);
            if let Err(message) = check.check(text.unwrap_or("")) {
                errors.push(ArgumentError {
                    tool: call.name.clone(),
                    pointer: "/input".into(),
                    message: format!("'input' for tool '{}': {message}", call.name),
                });
            }
        }
    }
    let rules = tools.tools().get(index).map_or(&[][..], |t| &t.rules[..]);
    errors.extend(rules.iter().filter_map(|rule| {
        rule.check(&call.name, &call.arguments)
            .map(|message| ArgumentError {
                tool: call.name.clone(),
                pointer: rule.at.clone(),
                message,
            })
    }));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A grammar tool's `input` must be text in its grammar (checked with the grammar itself).
fn grammar_input_error(tool: &str, definition: &str, args: &Value) -> Option<ArgumentError> {
    let text = args.get("input").and_then(Value::as_str).unwrap_or("");
    let grammar = toolgram_grammar::lark::parse(definition).ok()?;
    let message = match toolgram_grammar::tree::parse_tree(&grammar, text) {
        Ok(_) => return None,
        Err(toolgram_grammar::tree::TreeError::NoMatch { offset }) => format!(
            "'input' is not in the grammar of tool '{tool}': it stops matching after {:?}",
            text.get(..offset).unwrap_or(text)
        ),
        Err(e) => format!("'input' for tool '{tool}': {e}"),
    };
    Some(ArgumentError {
        tool: tool.to_owned(),
        pointer: "/input".into(),
        message,
    })
}

fn show(v: &Value) -> String {
    v.as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_written_for_the_model() {
        let tools = ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"book","parameters":{"type":"object",
                "properties":{"title":{"type":"string"},"cabin":{"enum":["economy","business"]}},"required":["title"]}}}]"#,
        )
        .expect("valid tools");
        let call = ToolCall {
            id: "c".into(),
            name: "book".into(),
            arguments: json!({"cabin": "first"}),
        };
        let msgs: Vec<String> = validate_call(&tools, &call)
            .expect_err("invalid")
            .into_iter()
            .map(|e| e.message)
            .collect();
        assert!(
            msgs.contains(&"missing required argument 'title' for tool 'book'".to_owned()),
            "{msgs:?}"
        );
        assert!(
            msgs.contains(&"'cabin' must be one of economy, business".to_owned()),
            "{msgs:?}"
        );
        let ok = ToolCall {
            arguments: json!({"title": "x"}),
            ..call
        };
        assert_eq!(validate_call(&tools, &ok), Ok(()));
    }

    #[test]
    fn declared_rules_are_checked_after_the_schema_and_told_to_the_model() {
        let tools = ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"weather","description":"Weather now.",
                "parameters":{"type":"object","properties":{"city":{"type":"string"},"lat_lon":{"type":"string"}}},
                "x-toolgram":{"rules":[{"exactly_one_of":["city","lat_lon"]}]}}}]"#,
        )
        .expect("valid tools");
        let call = |arguments| ToolCall {
            id: "c".into(),
            name: "weather".into(),
            arguments,
        };
        let errs = validate_call(&tools, &call(json!({"city": "Oslo", "lat_lon": "59,10"})))
            .expect_err("both given");
        assert_eq!(
            errs[0].message,
            "'city', 'lat_lon' cannot be given together for tool 'weather'; give exactly one"
        );
        assert!(validate_call(&tools, &call(json!({}))).is_err());
        assert_eq!(
            validate_call(&tools, &call(json!({"lat_lon": "59,10"}))),
            Ok(())
        );
        assert_eq!(
            tools.to_openai()[0]["function"]["description"],
            "Weather now. Give exactly one of: city, lat_lon."
        );
    }

    #[test]
    fn rule_and_extension_mistakes_are_definition_errors() {
        let err = |ext: &str| {
            ToolSet::from_json_str(&format!(
                r#"[{{"type":"function","function":{{"name":"t","parameters":{{"type":"object",
                    "properties":{{"a":{{}},"b":{{}}}}}},"x-toolgram":{ext}}}}}]"#
            ))
            .expect_err("refused")
        };
        let e = err(r#"{"rules":[{"mutually_exclusive":["a","c"]}]}"#);
        assert_eq!(e.pointer, "/0/function/x-toolgram/rules/0");
        assert!(e.message.contains("'c'"), "{e}");
        let e = err(r#"{"rule":[]}"#);
        assert_eq!(e.pointer, "/0/function/x-toolgram/rule");
    }

    #[test]
    fn grammar_tools_read_in_both_openai_shapes_and_check_their_input() {
        let lark = "start: NUM (\"+\" NUM)*\nNUM: /[0-9]+/\n";
        let chat = json!([{"type": "custom", "custom": {"name": "calc", "description": "sum",
            "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": lark}}}}]);
        let responses = json!([{"type": "custom", "name": "calc",
            "format": {"type": "grammar", "syntax": "lark", "definition": lark}}]);
        for doc in [chat, responses] {
            let tools = ToolSet::from_value(&doc).expect("valid custom tool");
            assert!(tools.tools()[0].grammar.is_some());
            let call = |input: &str| ToolCall {
                id: "c".into(),
                name: "calc".into(),
                arguments: json!({"input": input}),
            };
            assert_eq!(validate_call(&tools, &call("1+22")), Ok(()));
            let err = validate_call(&tools, &call("1+x")).expect_err("not in the grammar");
            assert!(
                err[0].message.contains("stops matching after \"1+\""),
                "{err:?}"
            );
        }
        let bad = r#"[{"type":"custom","name":"calc","format":{"type":"grammar","syntax":"lark","definition":"start: ("}}]"#;
        let e = ToolSet::from_json_str(bad).expect_err("bad grammar");
        assert_eq!(e.pointer, "/0/format/definition");
    }

    #[test]
    fn an_input_check_runs_after_the_grammar_and_its_message_goes_back() {
        let lark = "start: NUM (\"/\" NUM)*\nNUM: /[0-9]+/\n";
        let doc = json!([{"type": "custom", "name": "div",
            "format": {"type": "grammar", "syntax": "lark", "definition": lark}}]);
        let mut tools = ToolSet::from_value(&doc).expect("valid custom tool");
        let no_zero =
            crate::InputCheck::new(|text| match text.split('/').skip(1).any(|d| d == "0") {
                true => Err("division by zero".into()),
                false => Ok(()),
            });
        assert!(tools.set_input_check("div", no_zero.clone()));
        assert!(!tools.set_input_check("nope", no_zero));
        let call = |input: &str| ToolCall {
            id: "c".into(),
            name: "div".into(),
            arguments: json!({"input": input}),
        };
        assert_eq!(validate_call(&tools, &call("6/3")), Ok(()));
        let err = validate_call(&tools, &call("6/0")).expect_err("the check refuses it");
        assert_eq!(err[0].pointer, "/input");
        assert_eq!(err[0].message, "'input' for tool 'div': division by zero");
        // The grammar speaks first: text outside it never reaches the check.
        let err = validate_call(&tools, &call("6/x")).expect_err("not in the grammar");
        assert!(err[0].message.contains("not in the grammar"), "{err:?}");
    }
}
