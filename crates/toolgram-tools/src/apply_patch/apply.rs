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

/// Where `want` (lines) occurs in `have` at or after `from`: exact, then ignoring trailing
/// whitespace, then ignoring whitespace at both ends (the reference implementation's order).
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
    let levels: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    levels
        .iter()
        .find_map(|eq| starts.iter().copied().find(|&i| fits(i, eq)))
}

fn apply_chunks(path: &str, text: &str, chunks: &[Chunk]) -> Result<String, ToolError> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut cursor = 0;
    for (n, c) in chunks.iter().enumerate() {
        let fail = |why: String| ToolError::Run(format!("{path}, chunk {}: {why}", n + 1));
        if let Some(anchor) = &c.anchor {
            let at = find(&lines, &[anchor.as_str()], cursor, false)
                .ok_or_else(|| fail(format!("anchor line not found: {anchor:?}")))?;
            cursor = at + 1;
        }
        let old: Vec<&str> = c
            .lines
            .iter()
            .filter(|(k, _)| *k != LineKind::Add)
            .map(|(_, t)| t.as_str())
            .collect();
        let new: Vec<String> = c
            .lines
            .iter()
            .filter(|(k, _)| *k != LineKind::Remove)
            .map(|(_, t)| t.clone())
            .collect();
        let at = find(&lines, &old, cursor, c.end_of_file).ok_or_else(|| {
            fail(format!(
                "context not found: {:?}",
                old.iter().take(3).collect::<Vec<_>>()
            ))
        })?;
        let added = new.len();
        lines.splice(at..at + old.len(), new);
        cursor = at + added;
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') || text.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Apply `p` under `ctx.root`.
pub fn apply(p: &Patch, ctx: &RunContext) -> Result<Value, ToolError> {
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
                    return Err(ToolError::Run(format!("Delete File {path}: no such file")));
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
                let text = current(&plan, &full)
                    .ok_or_else(|| ToolError::Run(format!("Update File {path}: no such file")))?;
                let new = apply_chunks(path, &text, chunks)?;
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
