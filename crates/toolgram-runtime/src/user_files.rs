//! What a user names on a command line, read into the runtime's values: a JSON Schema file, a
//! `response_format` from a file (a JSON Schema, or a Lark or GBNF grammar — GBNF read into
//! Lark, refused with line and column where it cannot be read, never half-read) and a call
//! syntax by name.
//!
//! This module must not run anything.

use crate::error::RunError;
use crate::request::ResponseFormat;
use serde_json::Value;
use std::path::Path;
use toolgram_core::syntax::{self, CallSyntax};
use toolgram_grammar::lark::LarkDialect;

/// The format in `schema` (a JSON Schema file) or `grammar` (`.lark`, or `.gbnf` in
/// llama.cpp's dialect read into Lark); one of them must be given.
pub fn read_format_file(
    grammar: Option<&Path>,
    schema: Option<&Path>,
) -> Result<ResponseFormat, RunError> {
    if let Some(p) = schema {
        let v: Value = serde_json::from_str(&read(p, "schema")?)
            .map_err(|e| RunError::InvalidSchema(format!("{}: not JSON: {e}", p.display())))?;
        return Ok(ResponseFormat::JsonSchema(v));
    }
    let Some(p) = grammar else {
        let what = "give --grammar or --schema";
        return Err(RunError::InvalidRequest(what.to_owned()));
    };
    let text = read(p, "grammar")?;
    match p.extension().and_then(|e| e.to_str()) {
        Some("lark") => Ok(ResponseFormat::Lark(text)),
        Some("gbnf") => {
            let g = toolgram_grammar::gbnf::parse(&text)
                .map_err(|e| RunError::InvalidGrammar(format!("{}: {e}", p.display())))?;
            let lark = toolgram_grammar::lark::emit(&g, LarkDialect::Llguidance);
            Ok(ResponseFormat::Lark(lark))
        }
        Some(other) => Err(RunError::InvalidGrammar(format!(
            "{}: unknown grammar format `.{other}` (use .lark or .gbnf)",
            p.display()
        ))),
        None => Err(RunError::InvalidGrammar(format!(
            "{}: name the file .lark or .gbnf",
            p.display()
        ))),
    }
}

/// A JSON Schema file.
pub fn read_schema_file(path: &Path) -> Result<Value, RunError> {
    serde_json::from_str(&read(path, "schema")?)
        .map_err(|e| RunError::InvalidSchema(format!("{}: not JSON: {e}", path.display())))
}

/// The call syntax registered under `name` (or an alias of it).
pub fn named_syntax(name: &str) -> Result<&'static CallSyntax, RunError> {
    syntax::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = syntax::REGISTRY.iter().map(|s| s.name).collect();
        RunError::InvalidRequest(format!(
            "unknown call syntax `{name}`; known: {}",
            names.join(", ")
        ))
    })
}

fn read(path: &Path, what: &str) -> Result<String, RunError> {
    std::fs::read_to_string(path)
        .map_err(|e| RunError::Io(format!("cannot read {what} {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_syntax_names_the_known_ones() {
        assert_eq!(named_syntax("hermes").unwrap().name, "hermes");
        let err = named_syntax("nope").unwrap_err();
        assert_eq!(err.kind(), "invalid_request");
        assert!(err.to_string().contains("known: hermes"), "{err}");
    }

    #[test]
    fn a_format_file_is_read_by_its_kind() {
        let dir = std::env::temp_dir().join(format!("toolgram-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gbnf = dir.join("g.gbnf");
        std::fs::write(&gbnf, "root ::= \"yes\" | \"no\"\n").unwrap();
        let lark = read_format_file(Some(&gbnf), None).unwrap();
        assert!(
            matches!(lark, ResponseFormat::Lark(ref t) if t.starts_with("start: ")),
            "{lark:?}"
        );
        std::fs::write(&gbnf, "root ::= (\n").unwrap();
        let bad = read_format_file(Some(&gbnf), None).unwrap_err();
        assert_eq!(bad.kind(), "invalid_grammar");
        let txt = dir.join("g.txt");
        std::fs::write(&txt, "x").unwrap();
        assert_eq!(
            read_format_file(Some(&txt), None).unwrap_err().kind(),
            "invalid_grammar"
        );
        let schema = dir.join("s.json");
        std::fs::write(&schema, "{").unwrap();
        assert_eq!(
            read_format_file(None, Some(&schema)).unwrap_err().kind(),
            "invalid_schema"
        );
        let missing = dir.join("missing.lark");
        assert_eq!(
            read_format_file(Some(&missing), None).unwrap_err().kind(),
            "io_error"
        );
        assert_eq!(
            read_format_file(None, None).unwrap_err().kind(),
            "invalid_request"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
