//! Calls hidden in text: whether a reply's text carries a call to an offered tool, which no
//! client can run. A hidden call is text that names an offered tool together with its
//! arguments — a JSON object naming the tool beside an arguments object (`{"name": "f",
//! "arguments": {…}}`, OpenAI's `{"function": {…}}` too, whatever the arguments hold), the
//! tool's name shortly before an object whose keys include its parameter names, or
//! `name(key=…)` —, or a JSON object of exactly one offered tool's arguments (all its
//! required parameters, no other keys) under any name. A definition echoed back (the tool's
//! schema, or its properties' schemas) is not a call.
//!
//! It judges text: it finds objects with serde_json alone (and, for the single-quoted dicts
//! small models write, the keys by a scan of its own) and shares no code with the parsers
//! whose output it judges (`parse::strict`, `parse::lenient`). This module must not build
//! calls or change a reply.

use crate::define::tool::Tool;
use serde_json::{Map, Value};

/// A call found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenCall {
    /// The offered tool it calls.
    pub tool: String,
    /// How it was written.
    pub form: HiddenForm,
    /// Where it starts in the text (bytes).
    pub at: usize,
}

/// How a hidden call was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenForm {
    /// An object naming the tool beside its arguments.
    NamedObject,
    /// The tool's name, then an object of its parameters.
    NameThenArguments,
    /// `name(key=…)` or `name({…})`.
    CallSyntax,
    /// An object of exactly one tool's arguments, under no name.
    BareArguments,
}

impl HiddenForm {
    /// As the reply's `toolgram.hidden_call.form` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NamedObject => "an object naming the tool and its arguments",
            Self::NameThenArguments => "the tool's name, then its arguments",
            Self::CallSyntax => "name(arguments)",
            Self::BareArguments => "the arguments of exactly one tool, unnamed",
        }
    }
}

/// Keys that name the tool in a call object, and keys that hold its arguments.
const NAME_KEYS: &[&str] = &["name", "function", "tool", "tool_name", "function_name"];
const ARGUMENT_KEYS: &[&str] = &["arguments", "parameters", "args", "input", "params"];

/// How far before an object the tool's name may stand (`Function name: f\n\nArguments: {…}`).
const NAME_REACH: usize = 160;

/// Opening braces looked at in one text at most, and bytes a single-quoted dict is scanned
/// for its end: a reply's text is bounded by its token limit, and these bound the work on a
/// text of nothing but braces.
const MAX_STARTS: usize = 512;
const MAX_DICT_BYTES: usize = 8192;

/// The first call to one of `tools` that `text` carries, if any.
pub fn hidden_call(text: &str, tools: &[Tool]) -> Option<HiddenCall> {
    let tools: Vec<&Tool> = tools.iter().filter(|t| t.grammar.is_none()).collect();
    if tools.is_empty() || text.is_empty() {
        return None;
    }
    let objects = objects(text);
    let mut found: Vec<HiddenCall> = objects
        .iter()
        .filter_map(|o| judge_object(text, o, &tools))
        .collect();
    found.extend(call_syntax(text, &tools));
    found.into_iter().min_by_key(|h| h.at)
}

/// An object found in text: where it starts, and its keys and value (the value only when it
/// is JSON; a single-quoted dict gives its top-level keys alone).
struct Found {
    start: usize,
    keys: Vec<String>,
    value: Option<Map<String, Value>>,
}

/// Every outermost object in `text`, JSON or a single-quoted dict.
fn objects(text: &str) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut starts) = (0, 0);
    while i < bytes.len() && starts < MAX_STARTS {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        starts += 1;
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(o))) = stream.next() {
            let end = i + stream.byte_offset();
            out.push(Found {
                start: i,
                keys: o.keys().cloned().collect(),
                value: Some(o),
            });
            i = end;
            continue;
        }
        if let Some((keys, end)) = dict_keys(text, i) {
            out.push(Found {
                start: i,
                keys,
                value: None,
            });
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The top-level keys of a Python-style dict opening at `start` (`{'city': 'Paris'}`), and
/// where it ends; `None` when the braces do not close or no key is quoted.
fn dict_keys(text: &str, start: usize) -> Option<(Vec<String>, usize)> {
    let bytes = text.as_bytes();
    let (mut depth, mut i, mut keys) = (0usize, start, Vec::new());
    let end = bytes.len().min(start + MAX_DICT_BYTES);
    while i < end {
        match bytes[i] {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (!keys.is_empty()).then_some((keys, i + 1));
                }
            }
            q @ (b'\'' | b'"') => {
                let close = text[i + 1..end].find(q as char)? + i + 1;
                let after = text[close + 1..].trim_start();
                if depth == 1 && after.starts_with(':') {
                    keys.push(text[i + 1..close].to_owned());
                }
                i = close;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn params(tool: &Tool) -> Option<&Map<String, Value>> {
    tool.parameters.get("properties").and_then(Value::as_object)
}

fn required(tool: &Tool) -> Vec<&str> {
    tool.parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether `keys` include one of `tool`'s parameter names.
fn names_a_param_of(keys: &[String], tool: &Tool) -> bool {
    params(tool).is_some_and(|p| keys.iter().any(|k| p.contains_key(k)))
}

/// Whether `keys` are exactly a call's arguments of `tool`: every required one, none other.
fn arguments_of(keys: &[String], tool: &Tool) -> bool {
    let required = required(tool);
    let only_params = params(tool).is_some_and(|p| keys.iter().all(|k| p.contains_key(k)));
    !required.is_empty() && only_params && required.iter().all(|r| keys.iter().any(|k| k == r))
}

/// Whether `o` is (part of) `tool`'s definition echoed back: its schema, or its properties'
/// schemas by name.
fn is_definition(o: &Map<String, Value>, tool: &Tool) -> bool {
    let schema_like = o.get("type").and_then(Value::as_str) == Some("object")
        && o.get("properties").is_some_and(Value::is_object);
    let own_properties =
        params(tool).is_some_and(|p| !o.is_empty() && o.iter().all(|(k, v)| p.get(k) == Some(v)));
    schema_like || own_properties
}

fn judge_object(text: &str, found: &Found, tools: &[&Tool]) -> Option<HiddenCall> {
    let at = found.start;
    if let Some(o) = &found.value {
        if let Some(tool) = named_call(o, tools) {
            return Some(HiddenCall {
                tool,
                form: HiddenForm::NamedObject,
                at,
            });
        }
        if tools.iter().any(|t| is_definition(o, t)) {
            return None;
        }
    }
    let before = &text[floor(text, at.saturating_sub(NAME_REACH))..at];
    let named = tools
        .iter()
        .filter(|t| mentions(before, &t.name))
        .max_by_key(|t| before.rfind(t.name.as_str()));
    if let Some(t) = named.filter(|t| names_a_param_of(&found.keys, t)) {
        let form = if before.trim_end().ends_with('(') {
            HiddenForm::CallSyntax
        } else {
            HiddenForm::NameThenArguments
        };
        return Some(HiddenCall {
            tool: t.name.clone(),
            form,
            at: at - before.len() + before.rfind(t.name.as_str()).unwrap_or(0),
        });
    }
    let mut fits = tools.iter().filter(|t| arguments_of(&found.keys, t));
    match (fits.next(), fits.next()) {
        (Some(t), None) => Some(HiddenCall {
            tool: t.name.clone(),
            form: HiddenForm::BareArguments,
            at,
        }),
        _ => None,
    }
}

/// The offered tool an object calls by name beside its arguments (also one level down, as
/// OpenAI's `{"type": "function", "function": {"name", "arguments"}}`).
fn named_call(o: &Map<String, Value>, tools: &[&Tool]) -> Option<String> {
    let direct = || {
        let name = NAME_KEYS
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))?;
        let tool = tools.iter().find(|t| t.name == name)?;
        let args = ARGUMENT_KEYS.iter().find_map(|k| o.get(*k))?;
        let args = match args {
            Value::Object(a) => a.clone(),
            // OpenAI's wire form: the arguments as a JSON string.
            Value::String(s) => match serde_json::from_str(s) {
                Ok(Value::Object(a)) => a,
                _ => return None,
            },
            _ => return None,
        };
        (!is_definition(&args, tool)).then(|| tool.name.clone())
    };
    direct().or_else(|| {
        o.values()
            .filter_map(Value::as_object)
            .find_map(|inner| named_call(inner, tools))
    })
}

/// `name(key=…)`: an offered tool's name, an opening parenthesis, and one of its parameters
/// given by keyword.
fn call_syntax(text: &str, tools: &[&Tool]) -> Vec<HiddenCall> {
    let mut out = Vec::new();
    for tool in tools {
        let mut from = 0;
        while let Some(i) = text[from..].find(tool.name.as_str()).map(|i| i + from) {
            from = i + tool.name.len();
            if !word_at(text, i, tool.name.len()) {
                continue;
            }
            let rest = text[from..].trim_start();
            let Some(inside) = rest.strip_prefix('(') else {
                continue;
            };
            let key: String = inside
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = inside.trim_start()[key.len()..].trim_start();
            let keyword = after.starts_with('=') && !after.starts_with("==");
            if keyword && params(tool).is_some_and(|p| p.contains_key(&key)) {
                out.push(HiddenCall {
                    tool: tool.name.clone(),
                    form: HiddenForm::CallSyntax,
                    at: i,
                });
                break;
            }
        }
    }
    out
}

/// Whether `name` stands in `text` as a word (not inside a longer name).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name)
        .any(|(i, _)| word_at(text, i, name.len()))
}

fn word_at(text: &str, i: usize, len: usize) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
    let before = text[..i].chars().next_back().is_none_or(|c| !part(c));
    let after = text[i + len..].chars().next().is_none_or(|c| !part(c));
    before && after
}

/// The largest char boundary of `text` at or before `i`.
fn floor(text: &str, i: usize) -> usize {
    (0..=i)
        .rev()
        .find(|&b| text.is_char_boundary(b))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define::tool::ToolSet;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"distance_calculator_calculate",
                "parameters":{"type":"object","properties":{
                    "coordinate_1":{"type":"array"},"coordinate_2":{"type":"array"}},
                    "required":["coordinate_1","coordinate_2"]}}},
               {"type":"function","function":{"name":"calculate_velocity",
                "parameters":{"type":"object","properties":{
                    "distance":{"type":"number"},"duration":{"type":"number"},
                    "unit":{"type":"string"}},"required":["distance","duration"]}}},
               {"type":"function","function":{"name":"get_weather",
                "parameters":{"type":"object","properties":{"city":{"type":"string"}},
                    "required":["city"]}}}]"#,
        )
        .expect("tools")
    }

    fn judged(text: &str) -> Option<(String, HiddenForm)> {
        hidden_call(text, tools().tools()).map(|h| (h.tool, h.form))
    }

    #[test]
    fn the_calls_small_models_hide_in_prose_are_found() {
        let cases = [
            (
                "Function name: distance_calculator_calculate\n\nArguments: {\"coordinate_1\": [3, 2], \"coordinate_2\": [-5, 0]}",
                "distance_calculator_calculate",
                HiddenForm::NameThenArguments,
            ),
            (
                "Response:\n{\"name\": \"calculate_velocity\", \"arguments\": {\"distance\": 50, \"duration\": 2}}",
                "calculate_velocity",
                HiddenForm::NamedObject,
            ),
            (
                "```json\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}}\n```",
                "get_weather",
                HiddenForm::NamedObject,
            ),
            (
                "I would call get_weather(city=\"Paris\") for that.",
                "get_weather",
                HiddenForm::CallSyntax,
            ),
            (
                "Use get_weather({'city': 'Paris'}).",
                "get_weather",
                HiddenForm::CallSyntax,
            ),
            (
                "Here you go: {\"distance\": 10, \"duration\": 4}",
                "calculate_velocity",
                HiddenForm::BareArguments,
            ),
            (
                "```xml\n{\"name\": \"calculate_velocity\", \"arguments\": {}}\n```",
                "calculate_velocity",
                HiddenForm::NamedObject,
            ),
            (
                "Function name: calculate_velocity\nArguments: {\"distance\": 3, \"required\": [\"distance\"]}",
                "calculate_velocity",
                HiddenForm::NameThenArguments,
            ),
        ];
        for (text, tool, form) in cases {
            assert_eq!(judged(text), Some((tool.to_owned(), form)), "{text}");
        }
    }

    #[test]
    fn declines_mentions_and_echoed_definitions_are_not_calls() {
        let texts = [
            "I cannot help with that: none of the tools fits.",
            "The tool get_weather needs a city; which city do you mean?",
            "get_weather takes {\"city\": {\"type\": \"string\"}}",
            "{\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}",
            "Function signatures: {\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}}",
            "{\"name\": \"not_offered\", \"arguments\": {\"city\": 1}}",
            "The answer is {\"result\": 42}.",
            "{\"city\": \"Paris\", \"country\": \"France\"}",
            "{\"distance\": 10}",
            "my_get_weather(city=1) is another function",
            "if get_weather(city) == x",
            "{{{{{{{{{{",
            "{'unclosed': ",
        ];
        for text in texts {
            assert_eq!(judged(text), None, "{text}");
        }
    }

    #[test]
    fn grammar_tools_and_an_empty_pool_find_nothing() {
        assert_eq!(hidden_call("get_weather(city=1)", &[]), None);
        let braces = "{".repeat(100_000);
        assert_eq!(judged(&braces), None);
    }
}
