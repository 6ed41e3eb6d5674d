//! Running a query: walk the root with `ignore` (respecting `.gitignore`), keep files the
//! filters allow, report lines every other term matches, up to [`MAX_MATCHES`].

use super::{Query, Term};
use crate::definition::{RunContext, ToolError};
use regex::{Regex, RegexBuilder};
use serde_json::{Value, json};

/// Most matching lines reported.
pub(super) const MAX_MATCHES: usize = 200;

fn extensions(lang: &str) -> Result<&'static [&'static str], ToolError> {
    Ok(match lang {
        "rust" => &["rs"],
        "python" => &["py"],
        "js" => &["js", "mjs", "cjs", "jsx"],
        "ts" => &["ts", "tsx"],
        "go" => &["go"],
        "java" => &["java"],
        "c" => &["c", "h"],
        "cpp" => &["cc", "cpp", "cxx", "hpp", "hh"],
        "md" => &["md"],
        other => return Err(ToolError::Input(format!("unknown language `{other}`"))),
    })
}

/// The definition keywords a `type:` names.
fn kinds(kind: Option<&str>) -> Result<&'static str, ToolError> {
    Ok(match kind {
        None => "fn|def|function|func|struct|class|enum|trait|interface|type|const|let|var",
        Some("fn") => "fn|def|function|func",
        Some("struct") => "struct",
        Some("class") => "class",
        Some("enum") => "enum",
        Some("trait") => "trait|interface",
        Some(other) => {
            return Err(ToolError::Input(format!(
                "unknown definition type `{other}`"
            )));
        }
    })
}

fn compile(pattern: &str, case_insensitive: bool) -> Result<Regex, ToolError> {
    RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ToolError::Input(format!("regex: {e}")))
}

/// Run `q` under `ctx`.
pub(super) fn run(q: &Query, ctx: &RunContext) -> Result<Value, ToolError> {
    let root = ctx
        .root
        .as_ref()
        .ok_or_else(|| ToolError::Input("code_search needs a root directory (--root)".into()))?;
    let mut line_tests: Vec<Regex> = Vec::new();
    let mut exts: Option<&[&str]> = None;
    let mut glob = None;
    let (mut def, mut kind) = (None, None);
    for t in &q.terms {
        match t {
            Term::Word(w) => line_tests.push(compile(&regex::escape(w), true)?),
            Term::Exact(e) => line_tests.push(compile(&regex::escape(e), false)?),
            Term::Regex(r) => line_tests.push(compile(r, false)?),
            Term::Filter { key, value } => match key.as_str() {
                "lang" => exts = Some(extensions(value)?),
                "path" => {
                    glob = Some(
                        globset::Glob::new(value)
                            .map_err(|e| ToolError::Input(format!("path glob: {e}")))?
                            .compile_matcher(),
                    )
                }
                "def" => def = Some(value.clone()),
                "type" => kind = Some(value.clone()),
                other => return Err(ToolError::Input(format!("unknown filter `{other}`"))),
            },
        }
    }
    if def.is_some() || kind.is_some() {
        // The defined name contains NAME (`def:parse` finds `parse_config`).
        let name = def.as_deref().map_or_else(
            || r"\w+".to_owned(),
            |n| format!(r"\w*{}\w*", regex::escape(n)),
        );
        let words = kinds(kind.as_deref())?;
        line_tests.push(compile(&format!(r"\b(?:{words})\s+{name}\b"), false)?);
    }
    let mut matches = Vec::new();
    let mut truncated = false;
    'files: for entry in ignore::WalkBuilder::new(root).build().flatten() {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap_or(path);
        if let Some(exts) = exts
            && !path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
        {
            continue;
        }
        if let Some(g) = &glob
            && !g.is_match(rel)
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if line_tests.iter().all(|r| r.is_match(line)) {
                if matches.len() == MAX_MATCHES {
                    truncated = true;
                    break 'files;
                }
                matches.push(json!({"path": rel.to_string_lossy(), "line": i + 1,
                    "text": line.chars().take(300).collect::<String>()}));
            }
        }
    }
    Ok(json!({"matches": matches, "truncated": truncated}))
}
