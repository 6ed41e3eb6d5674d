//! What the parsing-case tests share: the syntax `toolgram parse --template` would use for a
//! case, and one reading compared with the message a case expects (content and reasoning
//! trimmed, call names, arguments as parsed JSON or, for a partial call, as text without
//! whitespace, ids where the case gives one). Must not hold per-case or per-family rules.

use serde_json::Value;
use toolgram_core::parse::lenient::{LenientOutput, SyntaxChoice};

/// The syntax to read a case with: detected from its template as `toolgram parse
/// --template` detects it (a rendered probe, else a derived syntax), every registered one
/// without a template.
pub(crate) fn syntax_for(template: Option<&str>) -> SyntaxChoice {
    match template {
        Some(source) => {
            SyntaxChoice::Named(toolgram_engine::template::detect_source(source).syntax)
        }
        None => SyntaxChoice::Auto,
    }
}

/// What a case's expectation says and is compared (all of it unless its source does not
/// assert a part).
pub(crate) struct Checked {
    pub(crate) content: bool,
    pub(crate) reasoning: bool,
    pub(crate) arguments: bool,
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `out` against `expect` (`{content, reasoning_content, tool_calls: [{name, arguments,
/// id?}]}`, arguments as JSON text): the first difference, in words.
pub(crate) fn compare(
    out: &LenientOutput,
    expect: &Value,
    checked: &Checked,
) -> Result<(), String> {
    let want_content = expect["content"].as_str().unwrap_or("").trim();
    if checked.content && out.content != want_content {
        return Err(format!("content {:?} != {want_content:?}", out.content));
    }
    let want_reasoning = expect["reasoning_content"].as_str().unwrap_or("").trim();
    if checked.reasoning && out.reasoning_content != want_reasoning {
        return Err(format!(
            "reasoning {:?} != {want_reasoning:?}",
            out.reasoning_content
        ));
    }
    let want: Vec<&Value> = expect["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if want.len() != out.tool_calls.len() {
        return Err(format!(
            "{} calls != {}: {:?}",
            out.tool_calls.len(),
            want.len(),
            out.tool_calls
        ));
    }
    for (w, g) in want.iter().zip(&out.tool_calls) {
        let name_ok = w["name"].as_str() == Some(g.name.as_str());
        let wargs = w["arguments"].as_str().unwrap_or("");
        let args_ok = !checked.arguments
            || match &g.partial_arguments {
                Some(p) => squash(p) == squash(wargs),
                None => serde_json::from_str::<Value>(wargs).is_ok_and(|a| a == g.arguments),
            };
        let id_ok = match w["id"].as_str() {
            Some(id) if !id.is_empty() => id == g.id,
            _ => true,
        };
        if !(name_ok && args_ok && id_ok) {
            return Err(format!("call {g:?} != {w}"));
        }
    }
    Ok(())
}
