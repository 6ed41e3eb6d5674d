//! What every test of the `toolgram` binary needs: the repository root and one run of the
//! binary (exit code, stdout, stderr). Test crates use what they need of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The repository root (the binary runs there, so `examples/` and `testdata/` resolve).
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the models are (the real cache: the test model is fetched once for all tests).
pub(crate) fn models_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("TOOLGRAM_MODELS_DIR").unwrap_or_else(|| {
        env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .unwrap_or_else(|| PathBuf::from(".cache"))
            .join("toolgram/models")
    })
}

/// The python of the venv with the clients of `tests/serve/requirements.txt`, made by
/// `scripts/client-venv` (at once when `scripts/prepare-tests` already made it).
pub(crate) fn venv() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new(repo().join("scripts/client-venv"))
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("scripts/client-venv runs");
            assert!(out.status.success(), "scripts/client-venv failed");
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        })
        .clone()
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

/// A `toolgram serve` child on a free loopback port, killed when dropped; its log is kept (and
/// read as it comes, so the server never blocks writing it).
pub(crate) struct ServeChild {
    pub child: std::process::Child,
    pub addr: String,
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl ServeChild {
    /// `toolgram serve --port 0 ARGS…` in the repository root.
    pub(crate) fn start(args: &[&str]) -> Self {
        Self::start_env(args, &[])
    }

    /// [`ServeChild::start`] with extra environment variables.
    pub(crate) fn start_env(args: &[&str], env: &[(&str, &std::path::Path)]) -> Self {
        use std::io::BufRead;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgram"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .args(["serve", "--port", "0"])
            .args(args)
            .current_dir(repo())
            .env_remove("TOOLGRAM_API_KEY")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("toolgram serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let addr = listening_addr(&mut lines.by_ref().inspect(|l| {
            if let (Ok(l), Ok(mut all)) = (l, log.lock()) {
                all.push_str(l);
                all.push('\n');
            }
        }));
        let Some(addr) = addr else {
            let _ = child.kill();
            let log = log.lock().map(|l| l.clone()).unwrap_or_default();
            panic!("the server did not say where it listens:\n{log}");
        };
        let sink = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(mut all) = sink.lock() {
                    all.push_str(&line);
                    all.push('\n');
                }
            }
        });
        Self { child, addr, log }
    }

    /// The OpenAI base URL.
    pub(crate) fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Ask the server to stop, as a service manager does.
    pub(crate) fn terminate(&self) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill -TERM {pid}");
    }

    /// `METHOD PATH` with `body` (JSON) and `headers` over a fresh connection
    /// (`Connection: close`): the connection, the request written.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[&str],
        body: &str,
    ) -> std::net::TcpStream {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(&self.addr).expect("connects");
        s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
            .ok();
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        s.write_all(req.as_bytes()).expect("request written");
        s
    }

    /// The whole answer to `METHOD PATH` with `body`, and how long it took.
    pub(crate) fn ask(
        &self,
        method: &str,
        path: &str,
        body: &str,
    ) -> (String, std::time::Duration) {
        use std::io::Read;
        let started = std::time::Instant::now();
        let mut out = String::new();
        let _ = self.send(method, path, &[], body).read_to_string(&mut out);
        (out, started.elapsed())
    }

    /// The log so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer's status code (0 when there is none).
pub(crate) fn status(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// An HTTP answer's body as JSON (`null` when it is not).
pub(crate) fn body_json(reply: &str) -> serde_json::Value {
    serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap_or_default()
}
