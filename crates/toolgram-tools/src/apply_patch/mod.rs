//! `apply_patch`: OpenAI's V4A patch format — `*** Begin Patch`, then `*** Add File: p` (`+`
//! lines), `*** Delete File: p`, `*** Update File: p` (optional `*** Move to: q`, then chunks
//! of ` `/`-`/`+` lines, each after the first opened by `@@` with an optional anchor line;
//! consecutive `@@` lines narrow the search step by step; an empty line is an empty context
//! line, as Codex reads it; an optional `*** End of File`), then `*** End Patch`. The language
//! is that of Codex's `apply_patch.lark`; text from outside the grammar may also carry what
//! Codex's reader tolerates (padded markers, a heredoc wrapper, CRLF), rewritten before parsing.
//!
//! Applied to a workspace root as Codex's reference applies it: relative paths only, no `..`,
//! no symlink escape; context matched exactly, then ignoring trailing, then surrounding
//! whitespace, then typographic punctuation; a chunk of only `+` lines goes after its anchor,
//! or at the end of the file; an updated file ends with a newline; an update with a move and
//! no chunks is a rename, one with neither is refused. Where Codex writes as it goes, this is
//! all or nothing — every change is planned in memory and nothing is written if any operation
//! fails — and `Add File` refuses an existing file (as OpenAI's Python reference does) rather
//! than overwrite it. Errors name the file and the chunk.

mod input;

mod apply;

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value;
use toolgram_grammar::tree::ParseTree;

/// Sample texts the grammar must accept and refuse: every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "*** Begin Patch\n*** Update File: src/a.py\n def f():\n-    return 1\n+    return 2\n*** End Patch",
        "*** Begin Patch\n*** Add File: b.md\n+hello\n*** Delete File: c.txt\n*** End Patch\n",
    ],
    refused: &[
        "*** Begin Patch\nrm -rf /\n*** End Patch",
        "*** Begin Patch\n*** End Patch",
        "*** Add File: x\n+y\n",
    ],
};

pub use input::{Chunk, FileOp, LineKind, Patch};

/// The tool.
pub struct ApplyPatch;

const GRAMMAR: &str = r#"start: "*** Begin Patch" _nl op+ "*** End Patch" _nl?
op: add | delete | update
add: "*** Add File: " PATH _nl add_line*
add_line: "+" LINE _nl
delete: "*** Delete File: " PATH _nl
update: "*** Update File: " PATH _nl move? first_chunk? chunk*
move: "*** Move to: " PATH _nl
first_chunk: change+ eof?
chunk: header change* eof?
header: "@@" (" " ANCHOR)? _nl
change: CHANGE_KIND LINE _nl | _nl
eof: "*** End of File" _nl
_nl: "\n"
CHANGE_KIND: " " | "-" | "+"
PATH: /[^\/\s][^\n]{0,300}/
ANCHOR: /[^\n]{1,300}/
LINE: /[^\n]{0,1000}/
"#;

/// The lines that open a file operation.
const FILE_HEADERS: [&str; 3] = ["*** Add File: ", "*** Delete File: ", "*** Update File: "];

fn bad(what: &str) -> ToolError {
    ToolError::Grammar(format!("unexpected parse shape at `{what}`"))
}

fn chunk(t: &ParseTree, src: &str) -> Chunk {
    let header = t.child("header");
    Chunk {
        anchor: header
            .and_then(|h| h.child("ANCHOR"))
            .map(|a| a.text(src).to_owned()),
        header: header.is_some(),
        lines: t
            .children_named("change")
            .map(|c| {
                let kind = match c.child("CHANGE_KIND").map(|k| k.text(src)) {
                    Some("-") => LineKind::Remove,
                    Some("+") => LineKind::Add,
                    _ => LineKind::Context,
                };
                (kind, c.child("LINE").map_or("", |l| l.text(src)).to_owned())
            })
            .collect(),
        end_of_file: t.child("eof").is_some(),
    }
}

impl GrammarTool for ApplyPatch {
    type Input = Patch;

    fn name(&self) -> &str {
        "apply_patch"
    }

    fn description(&self) -> String {
        "Edit files with a V4A patch. In an update, lines starting with a space are unchanged \
         context, '-' lines are removed, '+' lines are added; '*** Add File:' takes '+' lines; \
         '*** Delete File:' takes none; '*** Move to:' after an update renames. Paths are \
         relative. Examples (a new file; a changed line):\n*** Begin Patch\n\
         *** Add File: docs/todo.md\n+# TODO\n*** End Patch\n\n*** Begin Patch\n\
         *** Update File: app.py\n def main():\n-    x = 1\n+    x = 2\n*** End Patch"
            .into()
    }

    fn lark(&self) -> String {
        GRAMMAR.to_owned()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Patch, ToolError> {
        let mut ops = Vec::new();
        for op in tree.children_named("op") {
            let inner = op.children.first().ok_or_else(|| bad("op"))?;
            let path = inner
                .child("PATH")
                .map(|p| p.text(src).to_owned())
                .ok_or_else(|| bad("path"))?;
            ops.push(match inner.name.as_str() {
                "add" => FileOp::Add {
                    path,
                    lines: inner
                        .children_named("add_line")
                        .map(|l| l.child("LINE").map_or("", |x| x.text(src)).to_owned())
                        .collect(),
                },
                "delete" => FileOp::Delete { path },
                "update" => FileOp::Update {
                    path,
                    move_to: inner
                        .child("move")
                        .and_then(|m| m.child("PATH"))
                        .map(|p| p.text(src).to_owned()),
                    chunks: inner
                        .children
                        .iter()
                        .filter(|c| c.name == "first_chunk" || c.name == "chunk")
                        .map(|c| chunk(c, src))
                        .collect(),
                },
                other => return Err(bad(other)),
            });
        }
        Ok(Patch { ops })
    }

    fn emit(&self, p: &Patch) -> String {
        let mut out = String::from("*** Begin Patch\n");
        for op in &p.ops {
            match op {
                FileOp::Add { path, lines } => {
                    out.push_str(&format!("*** Add File: {path}\n"));
                    for l in lines {
                        out.push_str(&format!("+{l}\n"));
                    }
                }
                FileOp::Delete { path } => out.push_str(&format!("*** Delete File: {path}\n")),
                FileOp::Update {
                    path,
                    move_to,
                    chunks,
                } => {
                    out.push_str(&format!("*** Update File: {path}\n"));
                    if let Some(m) = move_to {
                        out.push_str(&format!("*** Move to: {m}\n"));
                    }
                    for c in chunks {
                        if c.header {
                            match &c.anchor {
                                Some(a) => out.push_str(&format!("@@ {a}\n")),
                                None => out.push_str("@@\n"),
                            }
                        }
                        for (kind, text) in &c.lines {
                            let mark = match kind {
                                LineKind::Context => ' ',
                                LineKind::Remove => '-',
                                LineKind::Add => '+',
                            };
                            out.push_str(&format!("{mark}{text}\n"));
                        }
                        if c.end_of_file {
                            out.push_str("*** End of File\n");
                        }
                    }
                }
            }
        }
        out.push_str("*** End Patch");
        out
    }

    fn run(&self, input: &Patch, ctx: &RunContext) -> Result<Value, ToolError> {
        apply::apply(input, ctx)
    }

    /// What Codex's reader also takes: the whole text padded or CRLF-ended, a heredoc wrapper
    /// (`<<'EOF'` … `EOF`), and whitespace around the begin/end and file-header markers.
    fn lenient_rewrite(&self, text: &str) -> Option<String> {
        let mut body = text.trim();
        if let Some(inner) = ["<<'EOF'", "<<\"EOF\"", "<<EOF"]
            .iter()
            .find_map(|h| body.strip_prefix(h))
        {
            body = inner.trim().strip_suffix("EOF")?.trim();
        }
        let lines: Vec<&str> = body.split('\n').map(|l| l.trim_end_matches('\r')).collect();
        let last = lines.len().saturating_sub(1);
        let fixed: Vec<&str> = lines
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let t = line.trim();
                let marker = (i == 0 && t == "*** Begin Patch")
                    || (i == last && t == "*** End Patch")
                    || FILE_HEADERS.iter().any(|h| t.starts_with(h));
                if marker { t } else { line }
            })
            .collect();
        Some(fixed.join("\n"))
    }
}

#[cfg(test)]
mod tests;
