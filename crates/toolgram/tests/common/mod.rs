//! What every test of the `toolgram` binary needs: the repository root and one run of the
//! binary (exit code, stdout, stderr). Test crates use what they need of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The repository root (the binary runs there, so `examples/` and `testdata/` resolve).
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run `toolgram ARGS…` in the repository root.
pub(crate) fn toolgram(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `toolgram ARGS…` in the repository root with extra environment variables.
pub(crate) fn toolgram_env(
    args: &[&str],
    env: &[(&str, &std::path::Path)],
) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgram"));
    cmd.args(args).current_dir(repo());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Write `text` to a file `name` in this process's scratch folder.
pub(crate) fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write temp file");
    p
}
