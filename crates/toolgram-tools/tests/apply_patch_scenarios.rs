//! `apply_patch` scenarios in a portable layout (the one Codex's reference tests use): each
//! directory holds `patch.txt`, the starting tree `input/`, the final tree `expected/`
//! (absent: unchanged) and, for a refusal, `error.txt` (a part of the error message). The
//! final tree must match byte for byte — a refused patch leaves `input/` as it was. Set
//! `TOOLGRAM_PATCH_SCENARIOS` to a directory of more scenarios in the same layout to run them
//! too (a held-back set: there, a scenario whose tree is unchanged may fail or succeed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toolgram_tools::apply_patch::ApplyPatch;
use toolgram_tools::{DynTool, RunContext};

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if let (Ok(rel), Ok(bytes)) = (path.strip_prefix(root), std::fs::read(&path)) {
                out.insert(rel.to_owned(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(dest, bytes).expect("write");
    }
}

/// Runs one scenario; the reason it failed, if it did.
fn run_scenario(dir: &Path, strict: bool) -> Result<(), String> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let work = std::env::temp_dir().join(format!(
        "toolgram-scenario-{}-{}",
        std::process::id(),
        name.unwrap_or_default()
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("mkdir");
    copy_tree(&dir.join("input"), &work);
    let patch = std::fs::read_to_string(dir.join("patch.txt")).map_err(|e| e.to_string())?;
    let ctx = RunContext {
        root: Some(work.clone()),
        ..RunContext::default()
    };
    let result = ApplyPatch.run_text(&patch, &ctx);
    let expected_dir = dir.join("expected");
    let expected = if expected_dir.exists() {
        tree(&expected_dir)
    } else {
        tree(&dir.join("input"))
    };
    let unchanged = expected == tree(&dir.join("input"));
    match (std::fs::read_to_string(dir.join("error.txt")), &result) {
        (Ok(part), Err(e)) if !e.to_string().contains(part.trim()) => {
            return Err(format!("refused, but with {e:?}, not {part:?}"));
        }
        (Ok(_), Ok(v)) => return Err(format!("must be refused, applied: {v}")),
        (Err(_), Err(e)) if strict || !unchanged => return Err(format!("refused: {e}")),
        _ => {}
    }
    let got = tree(&work);
    let _ = std::fs::remove_dir_all(&work);
    if got != expected {
        let show = |t: &BTreeMap<PathBuf, Vec<u8>>| {
            t.iter()
                .map(|(p, b)| format!("{}: {:?}", p.display(), String::from_utf8_lossy(b)))
                .collect::<Vec<_>>()
        };
        return Err(format!(
            "final tree {:?}, expected {:?}",
            show(&got),
            show(&expected)
        ));
    }
    Ok(())
}

fn scenarios(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("patch.txt").exists())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn every_patch_scenario_ends_in_its_expected_tree() {
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apply_patch");
    let mut failures = Vec::new();
    let mut count = 0;
    let extra = std::env::var_os("TOOLGRAM_PATCH_SCENARIOS").map(PathBuf::from);
    let sets = [(Some(ours), true), (extra, false)];
    for (dir, strict) in sets.iter().filter_map(|(d, s)| d.as_ref().map(|d| (d, *s))) {
        for scenario in scenarios(dir) {
            count += 1;
            if let Err(why) = run_scenario(&scenario, strict) {
                failures.push(format!("{}: {why}", scenario.display()));
            }
        }
    }
    assert!(count >= 32, "scenarios found: {count}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
