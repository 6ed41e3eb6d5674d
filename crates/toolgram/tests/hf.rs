//! `hf:` model references against a local server that answers the Hugging Face Hub's routes
//! (`/api/models/REPO/revision/main?blobs=true`, `/REPO/resolve/COMMIT/FILE` with `Range`) for
//! the test model's GGUF: the fetch, its resume, the checksum, the cache's reuse (offline too),
//! each refusal's message, and `toolgram call --model hf:…` making a real call.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use toolgram_engine::hf::{self, HfError, HfRef, HubConfig};
use toolgram_engine::models;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const TOKEN: &str = "hf_secret";

/// Every request the hub saw: its path and its `Range` header.
type Seen = Mutex<Vec<(String, Option<String>)>>;

/// A hub with repos `t/smol` (the GGUF and a README), `t/gated` (the same behind a token),
/// `t/corrupt` (a listed sha256 the bytes do not have); anything else is 404.
struct Hub {
    addr: String,
    /// Every request: its path and its `Range` header.
    seen: Arc<Seen>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Hub {
    fn start(gguf: Arc<Vec<u8>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
        let addr = listener.local_addr().expect("addr").to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let sha = sha256_hex(&gguf);
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (gguf, log, sha) = (gguf.clone(), log.clone(), sha.clone());
                std::thread::spawn(move || answer(conn, &gguf, &log, &sha));
            }
        });
        Self { addr, seen }
    }

    fn config(&self, cache: &Path, token: Option<&str>) -> HubConfig {
        HubConfig {
            endpoint: format!("http://{}", self.addr),
            token: token.map(str::to_owned),
            cache: cache.to_path_buf(),
            offline: false,
        }
    }

    fn downloads(&self) -> Vec<Option<String>> {
        let seen = self.seen.lock().expect("log");
        seen.iter()
            .filter(|(p, _)| p.contains("/resolve/"))
            .map(|(_, r)| r.clone())
            .collect()
    }
}

fn answer(conn: TcpStream, gguf: &[u8], log: &Seen, sha: &str) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let (mut range, mut auth) = (None, None);
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("range:") {
            range = Some(v.trim().to_owned());
        }
        if let Some(v) = h
            .strip_prefix("authorization:")
            .or(h.strip_prefix("Authorization:"))
        {
            auth = Some(v.trim().to_owned());
        }
    }
    log.lock().expect("log").push((path.clone(), range.clone()));
    let repo = path
        .strip_prefix("/api/models/")
        .or_else(|| path.strip_prefix('/'))
        .unwrap_or_default();
    let repo = repo.splitn(3, '/').take(2).collect::<Vec<_>>().join("/");
    let authorized = repo != "t/gated" || auth.as_deref() == Some(&format!("Bearer {TOKEN}"));
    let mut out = conn;
    let send = |out: &mut TcpStream, status: &str, body: &[u8], extra: &str| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        );
        let _ = out.write_all(head.as_bytes());
        let _ = out.write_all(body);
    };
    if !["t/smol", "t/gated", "t/corrupt"].contains(&repo.as_str()) {
        return send(
            &mut out,
            "404 Not Found",
            br#"{"error":"Repository not found"}"#,
            "",
        );
    }
    if !authorized {
        return send(
            &mut out,
            "401 Unauthorized",
            br#"{"error":"Access denied"}"#,
            "",
        );
    }
    if path.starts_with("/api/models/") {
        let listed = if repo == "t/corrupt" {
            "0".repeat(64)
        } else {
            sha.to_owned()
        };
        let body = serde_json::json!({
            "sha": COMMIT,
            "siblings": [
                {"rfilename": "README.md"},
                {"rfilename": "smol-Q4_1.gguf", "lfs": {"sha256": listed, "size": gguf.len()}},
            ],
        });
        return send(
            &mut out,
            "200 OK",
            body.to_string().as_bytes(),
            "Content-Type: application/json\r\n",
        );
    }
    if path.ends_with(&format!("/resolve/{COMMIT}/smol-Q4_1.gguf")) {
        let from = range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok());
        return match from {
            Some(n) if n < gguf.len() => send(
                &mut out,
                "206 Partial Content",
                &gguf[n..],
                &format!(
                    "Content-Range: bytes {n}-{}/{}\r\n",
                    gguf.len() - 1,
                    gguf.len()
                ),
            ),
            _ => send(&mut out, "200 OK", gguf, ""),
        };
    }
    send(&mut out, "404 Not Found", b"{}", "")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolgram-hf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn test_gguf() -> (PathBuf, Arc<Vec<u8>>) {
    let path = models::resolve(Some("test")).expect("the test model");
    let bytes = std::fs::read(&path).expect("reads");
    (path, Arc::new(bytes))
}

fn reference(s: &str) -> HfRef {
    HfRef::parse(s).expect("valid").expect("an hf: reference")
}

#[test]
fn a_reference_is_fetched_resumed_checked_linked_and_then_reused_offline_too() {
    let (_, gguf) = test_gguf();
    let hub = Hub::start(gguf.clone());
    let cache = scratch("fetch");
    // A download cut after 1 MiB resumes from there.
    let blobs = cache.join("models--t--smol/blobs");
    std::fs::create_dir_all(&blobs).expect("blobs");
    let sha = sha256_hex(&gguf);
    std::fs::write(blobs.join(format!("{sha}.incomplete")), &gguf[..1 << 20]).expect("partial");
    let path =
        hf::fetch_from(&reference("hf:t/smol:q4_1"), &hub.config(&cache, None)).expect("fetched");
    assert_eq!(
        path,
        cache.join(format!("models--t--smol/snapshots/{COMMIT}/smol-Q4_1.gguf"))
    );
    assert_eq!(hub.downloads(), vec![Some("bytes=1048576-".to_owned())]);
    assert_eq!(
        std::fs::read(&path).expect("reads").as_slice(),
        gguf.as_slice()
    );
    assert!(
        std::fs::symlink_metadata(&path)
            .expect("link")
            .file_type()
            .is_symlink(),
        "the hub's layout: a snapshot links to its blob"
    );
    assert_eq!(
        std::fs::read_to_string(cache.join("models--t--smol/refs/main")).expect("ref"),
        COMMIT
    );
    // Fetched again (default quant: the only GGUF), nothing is downloaded.
    let again = hf::fetch_from(&reference("hf:t/smol"), &hub.config(&cache, None)).expect("cached");
    assert_eq!((again, hub.downloads().len()), (path.clone(), 1));
    // Offline, and with the hub gone, the cache answers.
    let offline = HubConfig {
        offline: true,
        ..hub.config(&cache, None)
    };
    assert_eq!(
        hf::fetch_from(&reference("hf:t/smol/smol-Q4_1.gguf"), &offline).ok(),
        Some(path.clone())
    );
    let gone = HubConfig {
        endpoint: "http://127.0.0.1:9".into(),
        ..hub.config(&cache, None)
    };
    assert_eq!(
        hf::fetch_from(&reference("hf:t/smol"), &gone).ok(),
        Some(path)
    );
    let empty = scratch("gone");
    let e = hf::fetch_from(
        &reference("hf:t/smol"),
        &HubConfig {
            cache: empty,
            ..gone
        },
    )
    .expect_err("nothing cached, no hub");
    assert!(matches!(e, HfError::Unreachable { .. }), "{e}");
}

#[test]
fn each_refusal_says_what_to_do() {
    let (_, gguf) = test_gguf();
    let hub = Hub::start(gguf);
    let cache = scratch("refusals");
    let said = |r: &str, token: Option<&str>| {
        hf::fetch_from(&reference(r), &hub.config(&cache, token))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| format!("error: {e}"))
    };
    let missing = said("hf:t/nope", None);
    assert!(missing.contains("no such repo"), "{missing}");
    let gated = said("hf:t/gated", None);
    assert!(gated.contains("HF_TOKEN"), "{gated}");
    let wrong_token = said("hf:t/gated", Some("hf_wrong"));
    assert!(
        wrong_token.contains("HF_TOKEN may not read"),
        "{wrong_token}"
    );
    let with_token = said("hf:t/gated", Some(TOKEN));
    assert!(with_token.ends_with("smol-Q4_1.gguf"), "{with_token}");
    let quant = said("hf:t/smol:IQ2_XS", None);
    assert!(
        quant.contains("IQ2_XS") && quant.contains("smol-Q4_1.gguf"),
        "{quant}"
    );
    let corrupt = said("hf:t/corrupt", None);
    assert!(corrupt.contains("sha256 mismatch"), "{corrupt}");
    let blobs = cache.join("models--t--corrupt/blobs");
    let left = std::fs::read_dir(&blobs).map_or(0, |d| d.count());
    assert_eq!(left, 0, "a file that fails its checksum is not kept");
    let (code, _, err) = toolgram(&["model", "fetch", "hf:t"]);
    assert_ne!(code, 0);
    assert!(err.contains("hf:OWNER/REPO"), "{err}");
}

#[test]
fn call_and_model_fetch_take_an_hf_reference() {
    let (_, gguf) = test_gguf();
    let hub = Hub::start(gguf.clone());
    let home = scratch("cli");
    let endpoint = PathBuf::from(format!("http://{}", hub.addr));
    let env: [(&str, &Path); 2] = [("HF_ENDPOINT", &endpoint), ("HF_HOME", &home)];
    let (code, out, err) = toolgram_env(&["model", "fetch", "hf:t/smol:Q4_1"], &env);
    assert_eq!(code, 0, "{err}");
    let path = home.join(format!(
        "hub/models--t--smol/snapshots/{COMMIT}/smol-Q4_1.gguf"
    ));
    assert_eq!(out.trim(), path.display().to_string());
    let tools = temp_file(
        "hf-tools.json",
        r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#,
    );
    let tools = tools.display().to_string();
    let args = [
        "call",
        "--model",
        "hf:t/smol:Q4_1",
        "--tools",
        &tools,
        "--tool-choice",
        "required",
        "--max-tokens",
        "64",
        "What is the weather in Paris?",
    ];
    let (code, out, err) = toolgram_env(&args, &env);
    assert_eq!(code, 0, "{err}");
    let reply: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        reply["tool_calls"][0]["function"]["name"], "get_weather",
        "{out}"
    );
    assert_eq!(
        hub.downloads().len(),
        1,
        "the second command used the cache"
    );
    let mut f = std::fs::File::open(&path).expect("opens");
    let mut head = [0u8; 4];
    f.read_exact(&mut head).expect("reads");
    assert_eq!(&head, b"GGUF");
}
