//! Applying a parsed patch to a workspace root, all or nothing: every file's new content is
//! computed in memory first (paths confined to the root, symlinks resolved), and only when
//! every chunk found its place is anything written or removed.

use super::{Chunk, FileOp, LineKind, Patch};
use crate::definition::{RunContext, ToolError};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// `rel` as a path inside `root`; the existing part of it must resolve inside too.
fn confined(root: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    let p = Path::new(rel);
    if p.is_absolute() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(ToolError::Input(format!(
            "{rel}: only plain relative paths inside the workspace"
        )));
    }
    let full = root.join(p);
    // The deepest existing ancestor must resolve inside the root (no symlink escape).
    let mut probe = full.clone();
    while !probe.exists() {
        if !probe.pop() {
            break;
        }
    }
    let real = probe
        .canonicalize()
        .map_err(|e| ToolError::Input(format!("{rel}: {e}")))?;
    if !real.starts_with(root) {
        return Err(ToolError::Input(format!(
            "{rel} resolves outside the workspace root"
        )));
    }
    Ok(full)
}

/// Typographic punctuation and odd spaces read as their ASCII forms (the reference
/// implementation's last, most tolerant pass: a patch written with `-` and `"` still finds
/// a line written with `–` and `“`).
fn ascii_punctuation(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}'..='\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// Where `want` (lines) occurs in `have` at or after `from` (only at the very end when
/// `at_end`): exact, then ignoring trailing whitespace, then ignoring whitespace at both
/// ends, then also reading typographic punctuation as ASCII (the reference order).
fn find(have: &[String], want: &[&str], from: usize, at_end: bool) -> Option<usize> {
    if want.is_empty() {
        return Some(if at_end { have.len() } else { from });
    }
    let fits = |i: usize, eq: &dyn Fn(&str, &str) -> bool| {
        i + want.len() <= have.len() && want.iter().zip(&have[i..]).all(|(w, h)| eq(w, h))
    };
    let starts: Vec<usize> = if at_end {
        have.len().checked_sub(want.len()).into_iter().collect()
    } else {
        (from..=have.len().saturating_sub(want.len())).collect()
    };
    let levels: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| ascii_punctuation(a) == ascii_punctuation(b),
    ];
    levels
        .iter()
        .find_map(|eq| starts.iter().copied().find(|&i| fits(i, eq)))
}

/// The file's lines as the format sees them: split on `\n` (a `\r` stays part of its line,
/// so CRLF files keep their endings), without the empty piece after a final newline.
fn file_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Apply `chunks` to `text`. Context lines are kept as the file has them (a loose match
/// never rewrites them); added lines take the file's CRLF endings when it has them.
fn apply_chunks(path: &str, text: &str, chunks: &[Chunk]) -> Result<String, ToolError> {
    let mut lines = file_lines(text);
    let crlf = lines.first().is_some_and(|l| l.ends_with('\r'));
    let added = |t: &str| {
        if crlf && !t.ends_with('\r') {
            format!("{t}\r")
        } else {
            t.to_owned()
        }
    };
    let mut cursor = 0;
    for (n, c) in chunks.iter().enumerate() {
        let fail = |why: String| ToolError::Run(format!("{path}, chunk {}: {why}", n + 1));
        if let Some(anchor) = &c.anchor {
            let at = find(&lines, &[anchor.as_str()], cursor, false)
                .ok_or_else(|| fail(format!("anchor line not found: {anchor:?}")))?;
            cursor = at + 1;
        }
        let mut old: Vec<&str> = c
            .lines
            .iter()
            .filter(|(k, _)| *k != LineKind::Add)
            .map(|(_, t)| t.as_str())
            .collect();
        if old.is_empty() {
            // Only added lines: right after the anchor when there is one, else at the end.
            let at = if c.anchor.is_some() && !c.end_of_file {
                cursor
            } else {
                lines.len()
            };
            let new: Vec<String> = c.lines.iter().map(|(_, t)| added(t)).collect();
            cursor = at + new.len();
            lines.splice(at..at, new);
            continue;
        }
        let mut found = find(&lines, &old, cursor, c.end_of_file);
        if found.is_none() && old.last() == Some(&"") {
            // A last empty old line may stand for the file's final newline.
            old.pop();
            found = find(&lines, &old, cursor, c.end_of_file);
        }
        let at = found.ok_or_else(|| {
            fail(format!(
                "context not found: {:?}",
                old.iter().take(3).collect::<Vec<_>>()
            ))
        })?;
        let mut new = Vec::new();
        let mut k = 0; // index into `old`; past its end once a final empty line was let go
        for (kind, t) in &c.lines {
            match kind {
                LineKind::Context => {
                    if let Some(kept) = lines.get(at + k).filter(|_| k < old.len()) {
                        new.push(kept.clone());
                    }
                    k += 1;
                }
                LineKind::Remove => k += 1,
                LineKind::Add => new.push(added(t)),
            }
        }
        cursor = at + new.len();
        lines.splice(at..at + old.len(), new);
    }
    // The format has no "no newline at end of file" marker: an updated file ends with one.
    let mut out = lines.join("\n");
    if !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Apply `p` under `ctx.root`.
pub(super) fn apply(p: &Patch, ctx: &RunContext) -> Result<Value, ToolError> {
    let root = ctx
        .root
        .as_ref()
        .ok_or_else(|| ToolError::Input("apply_patch needs a workspace root (--root)".into()))?
        .canonicalize()
        .map_err(|e| ToolError::Input(format!("workspace root: {e}")))?;
    // Planned final state: path → Some(content) to write, None to remove.
    let mut plan: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    let mut changed = Vec::new();
    let current = |plan: &BTreeMap<PathBuf, Option<String>>, full: &Path| -> Option<String> {
        match plan.get(full) {
            Some(state) => state.clone(),
            None => std::fs::read_to_string(full).ok(),
        }
    };
    for op in &p.ops {
        match op {
            FileOp::Add { path, lines } => {
                let full = confined(&root, path)?;
                if current(&plan, &full).is_some() {
                    return Err(ToolError::Run(format!("Add File {path}: the file exists")));
                }
                let mut text = lines.join("\n");
                text.push('\n');
                plan.insert(full, Some(text));
                changed.push(json!({"op": "add", "path": path}));
            }
            FileOp::Delete { path } => {
                let full = confined(&root, path)?;
                if current(&plan, &full).is_none() {
                    let what = if full.is_dir() {
                        "a directory, not a file"
                    } else {
                        "no such file"
                    };
                    return Err(ToolError::Run(format!("Delete File {path}: {what}")));
                }
                plan.insert(full, None);
                changed.push(json!({"op": "delete", "path": path}));
            }
            FileOp::Update {
                path,
                move_to,
                chunks,
            } => {
                let full = confined(&root, path)?;
                if chunks.is_empty() && move_to.is_none() {
                    return Err(ToolError::Run(format!(
                        "Update File {path}: nothing to change (give a chunk or a *** Move to:)"
                    )));
                }
                let text = current(&plan, &full)
                    .ok_or_else(|| ToolError::Run(format!("Update File {path}: no such file")))?;
                let new = if chunks.is_empty() {
                    text // a pure rename keeps the bytes
                } else {
                    apply_chunks(path, &text, chunks)?
                };
                match move_to {
                    Some(to) => {
                        let dest = confined(&root, to)?;
                        plan.insert(full, None);
                        plan.insert(dest, Some(new));
                        changed.push(json!({"op": "update", "path": path, "moved_to": to}));
                    }
                    None => {
                        plan.insert(full, Some(new));
                        changed.push(json!({"op": "update", "path": path}));
                    }
                }
            }
        }
    }
    // Every chunk found its place: now write.
    for (full, state) in &plan {
        let io = |e: std::io::Error| ToolError::Run(format!("{}: {e}", full.display()));
        match state {
            Some(text) => {
                if let Some(dir) = full.parent() {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                std::fs::write(full, text).map_err(io)?;
            }
            None => {
                if full.exists() {
                    std::fs::remove_file(full).map_err(io)?;
                }
            }
        }
    }
    Ok(json!({"applied": changed}))
}
