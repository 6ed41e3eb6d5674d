//! Grammar ("custom") tools in a tools file, in both of OpenAI's shapes — Chat Completions
//! `{"type":"custom","custom":{"name","description","format":{"type":"grammar","grammar":
//! {"syntax":"lark","definition"}}}}` and Responses `{"type":"custom","name","description",
//! "format":{"type":"grammar","syntax":"lark","definition"}}` — read into a [`Tool`] whose
//! `grammar` holds the Lark text and whose `parameters` are the JSON fallback shape
//! (`{"input": <text in the grammar>}`). A `regex` grammar becomes a one-terminal Lark
//! grammar, and a `text` format (or none) the grammar of any text. The grammar is read by
//! core's Lark reader when the tool set is read, so a bad grammar is a definition error with
//! line and column — as is one past a bound: [`MAX_DEFINITION_BYTES`] here, and the reader's
//! nesting, rule and reference-depth limits.

use crate::define::tool::{GrammarSpec, Tool};
use crate::error::DefinitionError;
use serde_json::{Map, Value, json};
use toolgram_grammar::lark;

/// The JSON fallback shape of a grammar tool.
pub fn fallback_parameters(definition: &str) -> Value {
    json!({"type": "object", "properties": {"input": {"type": "string",
        "description": format!("Text in this Lark grammar:\n{definition}")}},
        "required": ["input"], "additionalProperties": false})
}

/// Longest grammar definition a custom tool may have. Tool grammars are a few KiB; the
/// definition is also told to the model in the JSON fallback's description.
pub const MAX_DEFINITION_BYTES: usize = 256 * 1024;

/// The grammar of a free-text custom tool: any text.
const ANY_TEXT: &str = "start: /[\\s\\S]*/\n";

/// A `grammar` format's definition as Lark — Lark as written, or a regex (whole input) as the
/// one terminal of a Lark grammar — and the JSON pointer of the definition.
fn grammar_definition(
    name: &str,
    format: &Map<String, Value>,
    base: &str,
) -> Result<(String, String), DefinitionError> {
    let (grammar, gat) = match format.get("grammar").and_then(Value::as_object) {
        Some(g) => (g, format!("{base}/format/grammar")),
        None => (format, format!("{base}/format")),
    };
    let definition = grammar
        .get("definition")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            DefinitionError::new(
                Some(name),
                format!("{gat}/definition"),
                "missing `definition`",
            )
        })?;
    let at = format!("{gat}/definition");
    match grammar.get("syntax").and_then(Value::as_str).unwrap_or("") {
        "lark" => Ok((definition.to_owned(), at)),
        "regex" => Ok((format!("start: /{}/\n", slashes_escaped(definition)), at)),
        other => Err(DefinitionError::new(
            Some(name),
            format!("{gat}/syntax"),
            format!("grammar syntax `{other}` is not supported (use `lark` or `regex`)"),
        )),
    }
}

/// A regex with its unescaped `/` escaped, to stand between Lark's slashes.
fn slashes_escaped(re: &str) -> String {
    let mut out = String::with_capacity(re.len());
    let mut escaped = false;
    for c in re.chars() {
        if c == '/' && !escaped {
            out.push('\\');
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    out
}

/// Read one `{"type": "custom", …}` entry.
pub fn read(obj: &Map<String, Value>, at: &str) -> Result<Tool, DefinitionError> {
    // Chat Completions nests the tool under `custom`; Responses puts it at the top level.
    let (body, base) = match obj.get("custom").and_then(Value::as_object) {
        Some(inner) => (inner, format!("{at}/custom")),
        None => (obj, at.to_owned()),
    };
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| DefinitionError::new(None, format!("{base}/name"), "missing string `name`"))?
        .to_owned();
    let description = body
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let (definition, at) = match body.get("format").and_then(Value::as_object) {
        // No format, or `{"type": "text"}`: any text is the input.
        None => (ANY_TEXT.to_owned(), format!("{base}/format")),
        Some(format) => match format.get("type").and_then(Value::as_str) {
            Some("text") => (ANY_TEXT.to_owned(), format!("{base}/format")),
            Some("grammar") => grammar_definition(&name, format, &base)?,
            _ => {
                return Err(DefinitionError::new(
                    Some(&name),
                    format!("{base}/format/type"),
                    "a custom tool's format is `grammar` (Lark or regex) or `text`",
                ));
            }
        },
    };
    grammar_tool(name, description, definition, &at)
}

/// A grammar tool from its name, description and Lark `definition` (checked: within
/// [`MAX_DEFINITION_BYTES`], and it parses; `at` is the definition's JSON pointer in what it
/// was read from), its JSON fallback derived from the definition: what a `custom` entry, a
/// built-in or a manifest tool becomes.
pub fn grammar_tool(
    name: String,
    description: String,
    definition: String,
    at: &str,
) -> Result<Tool, DefinitionError> {
    if definition.len() > MAX_DEFINITION_BYTES {
        return Err(DefinitionError::new(
            Some(&name),
            at,
            format!(
                "the grammar definition has {} bytes, over the limit of {MAX_DEFINITION_BYTES} (the limit on grammar definition bytes)",
                definition.len()
            ),
        ));
    }
    lark::parse(&definition)
        .map_err(|e| DefinitionError::new(Some(&name), at, format!("Lark: {e}")))?;
    Ok(Tool {
        parameters: fallback_parameters(&definition),
        name,
        description,
        grammar: Some(GrammarSpec {
            definition,
            check: None,
            checked_after: false,
        }),
        ..Tool::default()
    })
}

#[cfg(test)]
mod tests {
    use crate::ToolSet;
    use serde_json::json;

    fn grammar_of(tool: serde_json::Value) -> Result<String, String> {
        ToolSet::from_value(&json!([tool]))
            .map(|t| {
                t.tools()[0]
                    .grammar
                    .as_ref()
                    .map(|g| g.definition.clone())
                    .unwrap_or_default()
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn regex_and_text_formats_become_lark_grammars() {
        let regex = grammar_of(json!({"type": "custom", "name": "dice", "format":
            {"type": "grammar", "syntax": "regex", "definition": "[1-9]d(4|6)/x"}}));
        assert_eq!(regex, Ok("start: /[1-9]d(4|6)\\/x/\n".to_owned()));
        let text =
            grammar_of(json!({"type": "custom", "name": "note", "format": {"type": "text"}}));
        assert!(text.is_ok_and(|g| g.contains("[\\s\\S]*")));
        let bare = grammar_of(json!({"type": "custom", "name": "note"}));
        assert!(bare.is_ok());
        let bad = grammar_of(json!({"type": "custom", "name": "x", "format":
            {"type": "grammar", "syntax": "ebnf", "definition": "x"}}));
        assert!(bad.is_err_and(|e| e.contains("ebnf")));
        let bad_regex = grammar_of(json!({"type": "custom", "name": "x", "format":
            {"type": "grammar", "syntax": "regex", "definition": "(unclosed"}}));
        assert!(
            bad_regex.is_err(),
            "a regex the reader cannot take is a definition error"
        );
    }

    fn lark_tool(definition: &str) -> serde_json::Value {
        json!({"type": "custom", "custom": {"name": "g", "format":
            {"type": "grammar", "grammar": {"syntax": "lark", "definition": definition}}}})
    }

    #[test]
    fn grammars_past_a_limit_are_definition_errors_naming_it() {
        // The 1 MB grammar of 500,000 nested groups: refused for its size.
        let n = 500_000;
        let huge = format!("start: {}\"a\"{}", "(".repeat(n), ")".repeat(n));
        let e = grammar_of(lark_tool(&huge)).expect_err("too long");
        assert!(e.contains("limit on grammar definition bytes"), "{e}");
        // 10,000 groups fit the size but not the nesting limit (and overflowed the reader).
        let n = 10_000;
        let deep = format!("start: {}\"a\"{}", "(".repeat(n), ")".repeat(n));
        let e = grammar_of(lark_tool(&deep)).expect_err("too deep");
        assert!(e.contains("limit on nesting depth"), "{e}");
        assert!(e.contains("/custom/format/grammar/definition"), "{e}");
    }
}
