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

/// The `HOST:PORT` a `toolgram serve` says it listens on, read from its stderr `lines` (the
/// lines after it are left for the caller).
pub(crate) fn listening_addr(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
) -> Option<String> {
    lines.map_while(Result::ok).find_map(|l| {
        l.split("on http://")
            .nth(1)
            .map(|r| r.split('/').next().unwrap_or("").to_owned())
    })
}

/// POST `body` as JSON to `path` on `addr` over a fresh connection (`Connection: close`) and
/// read the whole raw answer, status line and headers included.
pub(crate) fn post_raw(addr: &str, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connects");
    s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .ok();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("headers written");
    s.write_all(body.as_bytes()).expect("body written");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}
