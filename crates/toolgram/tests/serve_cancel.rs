//! Cancellation frees the engine: `toolgram serve` (test model, one lane) given a run past its
//! `--timeout-s` answers 504 with what it decoded and its usage, and a client that leaves
//! before the first event of its stream (or its non-streamed reply) stops its prefill at
//! once; in both cases the next request is served at once.

mod common;
use common::repo;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One server at a time: they share the machine's cores with the engine.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `toolgram serve` child on the test model with one lane, killed when dropped.
struct Served {
    child: Child,
    addr: String,
}

impl Served {
    fn start(extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
            .args(["serve", "--model", "test", "--port", "0", "--no-cache"])
            .args(["--parallel", "1", "--max-sessions", "1", "--threads", "2"])
            .args(extra)
            .current_dir(repo())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgram serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("on http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or("").to_owned());
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(300))
            .expect("the server says where it listens");
        Self { child, addr }
    }

    /// POST `body` to the Chat Completions route; the connection, the request written.
    fn post(&self, body: &str) -> TcpStream {
        let mut s = TcpStream::connect(&self.addr).expect("connects");
        s.set_read_timeout(Some(Duration::from_secs(120))).ok();
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        s.write_all(req.as_bytes()).expect("request written");
        s
    }

    /// The whole answer to `body`, and how long it took.
    fn ask(&self, body: &str) -> (String, Duration) {
        let started = Instant::now();
        let mut out = String::new();
        let _ = self.post(body).read_to_string(&mut out);
        (out, started.elapsed())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const PLAIN: &str = r#"{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}"#;

fn status(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A prompt of about `n` tokens that shares no prefix with another `word`'s.
fn long_prompt(word: &str, n: usize, stream: bool) -> String {
    format!(
        r#"{{"messages":[{{"role":"user","content":"{}"}}],"max_tokens":1,"stream":{stream}}}"#,
        format!("{word} ").repeat(n)
    )
}

#[test]
fn a_run_past_its_timeout_gets_504_with_its_partial_text_and_usage_then_the_next_is_served() {
    let _one = serial();
    let server = Served::start(&["--timeout-s", "5"]);
    // The end-of-generation tokens made unlikely: the reply runs to its token limit.
    let endless = r#"{"messages":[{"role":"user","content":"Tell me a very long story about the sea."}],
        "max_tokens":2000,"logit_bias":{"0":-100,"2":-100}}"#;
    let (reply, took) = server.ask(endless);
    assert_eq!(status(&reply), 504, "{reply}");
    assert!(took < Duration::from_secs(5 + 2 + 2), "{took:?}");
    let body: serde_json::Value =
        serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap_or("")).expect("JSON body");
    let details = &body["error"]["toolgram"];
    assert!(details["partial"].is_string(), "{body}");
    assert!(
        details["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 0,
        "{body}"
    );
    // The timed-out run freed the lane: the next request is not a 504 too.
    let (next, _) = server.ask(PLAIN);
    assert_eq!(status(&next), 200, "{next}");
}

#[test]
fn a_client_that_leaves_before_the_first_event_stops_its_prefill_at_once() {
    let _one = serial();
    let server = Served::start(&["--timeout-s", "120"]);
    // How long the prefill of such a prompt takes here.
    let (reply, prefill) = server.ask(&long_prompt("sky", 4000, false));
    assert_eq!(status(&reply), 200, "{reply}");
    eprintln!("a 4,000-token prefill: {prefill:?}");
    for (word, stream) in [("sea", true), ("sun", false)] {
        let leaving = server.post(&long_prompt(word, 4000, stream));
        std::thread::sleep(Duration::from_millis(300));
        drop(leaving);
        let (next, took) = server.ask(PLAIN);
        assert_eq!(status(&next), 200, "{next}");
        assert!(
            took < prefill / 2,
            "stream {stream}: the next request waited {took:?} (a whole prefill is {prefill:?})"
        );
    }
}
