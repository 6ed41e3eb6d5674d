//! Layers on other hosts: `toolgram worker` processes on loopback ports hold part of the test
//! model's layers for `toolgram serve --rpc`. The same greedy call comes back as all-local on
//! Chat Completions, Responses and Anthropic Messages; `/health` says where the layers went; a
//! worker killed (between requests or mid-stream), stopped, or never there is a typed error
//! in time, and the server still exits 0.

mod common;
use common::{ServeChild, body_json, status, toolgram};

use serde_json::{Value, json};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One scenario at a time: workers and servers share the machine's cores.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `toolgram worker` on a free loopback port, killed when dropped.
struct Worker {
    child: Child,
    endpoint: String,
}

impl Worker {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let endpoint = format!("127.0.0.1:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
            .args(["worker", "--listen", &endpoint, "--threads", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolgram worker starts");
        // Listening once a connection is taken (the worker drops one that sends nothing).
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&endpoint).is_err() {
            assert!(Instant::now() < deadline, "the worker never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, endpoint }
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill").args([sig, &pid]).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill {sig} {pid}");
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(rpc: &[&Worker], extra: &[&str]) -> ServeChild {
    let list = rpc
        .iter()
        .map(|w| w.endpoint.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let mut args = vec!["--model", "test", "--no-cache", "--parallel", "1"];
    args.extend(["--threads", "1"]);
    if !rpc.is_empty() {
        args.extend(["--rpc", &list]);
    }
    args.extend(extra);
    ServeChild::start(&args)
}

const WEATHER: &str =
    r#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#;

/// The same question on each API, a call required.
fn requests() -> [(&'static str, Value); 3] {
    let schema: Value = serde_json::from_str(WEATHER).expect("schema");
    let question = "What is the weather in Paris?";
    [
        (
            "/v1/chat/completions",
            json!({"messages": [{"role": "user", "content": question}],
                "tools": [{"type": "function", "function": {"name": "get_weather",
                    "description": "Current weather", "parameters": schema}}],
                "tool_choice": "required", "max_tokens": 64}),
        ),
        (
            "/v1/responses",
            json!({"input": question, "tools": [{"type": "function", "name": "get_weather",
                "description": "Current weather", "parameters": schema}],
                "tool_choice": "required", "max_output_tokens": 64}),
        ),
        (
            "/v1/messages",
            json!({"model": "test", "max_tokens": 64,
                "messages": [{"role": "user", "content": question}],
                "tools": [{"name": "get_weather", "description": "Current weather",
                    "input_schema": schema}],
                "tool_choice": {"type": "any"}}),
        ),
    ]
}

/// The call a reply carries, whatever its API: name and arguments as JSON text.
fn the_call(path: &str, body: &Value) -> (String, String) {
    let (name, args) = match path {
        "/v1/chat/completions" => {
            let f = &body["choices"][0]["message"]["tool_calls"][0]["function"];
            (f["name"].clone(), f["arguments"].clone())
        }
        "/v1/responses" => {
            let item = body["output"]
                .as_array()
                .and_then(|o| o.iter().find(|i| i["type"] == "function_call"))
                .cloned()
                .unwrap_or_default();
            (item["name"].clone(), item["arguments"].clone())
        }
        _ => {
            let block = body["content"]
                .as_array()
                .and_then(|c| c.iter().find(|b| b["type"] == "tool_use"))
                .cloned()
                .unwrap_or_default();
            (
                block["name"].clone(),
                Value::String(block["input"].to_string()),
            )
        }
    };
    (
        name.as_str().unwrap_or_default().to_owned(),
        args.as_str().unwrap_or_default().to_owned(),
    )
}

fn calls(server: &ServeChild) -> Vec<(String, String)> {
    requests()
        .iter()
        .map(|(path, body)| {
            let (reply, _) = server.ask("POST", path, &body.to_string());
            assert_eq!(status(&reply), 200, "{path}: {reply}\n{}", server.log());
            let call = the_call(path, &body_json(&reply));
            assert_eq!(call.0, "get_weather", "{path}: {reply}");
            call
        })
        .collect()
}

fn health(server: &ServeChild) -> Value {
    let (reply, _) = server.ask("GET", "/health", "");
    body_json(&reply)
}

/// The offload object of the (only) model in `/health`.
fn offload(health: &Value) -> Value {
    let found = health["models"]
        .as_array()
        .and_then(|m| m.first())
        .map(|m| m["offload"].clone())
        .unwrap_or_else(|| health["offload"].clone());
    assert!(found.is_object(), "no offload in /health: {health}");
    found
}

fn exits_zero(server: &mut ServeChild) {
    server.terminate();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(st) = server.child.try_wait().expect("wait") {
            assert!(st.success(), "serve exited {st}:\n{}", server.log());
            return;
        }
        assert!(Instant::now() < deadline, "serve did not exit");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_workers_give_the_all_local_call_on_every_api() {
    let _one = serial();
    let local = {
        let mut server = serve(&[], &[]);
        let calls = calls(&server);
        exits_zero(&mut server);
        calls
    };
    let (a, b) = (Worker::start(), Worker::start());
    let mut server = serve(&[&a, &b], &[]);
    let h = offload(&health(&server));
    let workers = h["workers"].as_array().cloned().unwrap_or_default();
    assert_eq!(workers.len(), 2, "{h}");
    assert!(workers.iter().all(|w| w["state"] == "up"), "{h}");
    // The test model: 30 blocks and its output layer over three hosts, 10 kept here.
    assert_eq!(h["layers"], 31, "{h}");
    assert_eq!(h["local_layers"], 10, "{h}");
    assert_eq!(h["gpu_layers"], 21, "{h}");
    let devices = h["devices"].to_string();
    assert!(
        devices.contains(&a.endpoint) && devices.contains(&b.endpoint),
        "{h}"
    );
    assert_eq!(calls(&server), local, "the workers changed the greedy call");
    exits_zero(&mut server);
}

#[test]
fn a_killed_worker_is_a_typed_error_in_time_and_serve_still_exits_zero() {
    let _one = serial();
    let worker = Worker::start();
    let mut server = serve(&[&worker], &["--rpc-timeout-s", "5"]);
    assert_eq!(calls(&server).len(), 3);
    // Mid-stream: a long reply, the worker killed once its first words arrived.
    let endless = json!({"messages": [{"role": "user", "content": "Tell me a long story."}],
        "max_tokens": 400, "stream": true, "logit_bias": {"0": -100, "2": -100}});
    let mut stream = server.send("POST", "/v1/chat/completions", &[], &endless.to_string());
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"content\"") {
        let n = stream.read(&mut buf).expect("the stream goes on");
        assert!(
            n > 0,
            "the stream ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    worker.signal("-KILL");
    let killed = Instant::now();
    let mut rest = String::new();
    let _ = stream.read_to_string(&mut rest);
    assert!(
        killed.elapsed() < Duration::from_secs(15),
        "{:?}",
        killed.elapsed()
    );
    assert!(
        rest.contains("worker_unavailable"),
        "{rest}\n{}",
        server.log()
    );
    // The next request: refused at once, by name.
    let (path, body) = &requests()[0];
    let (reply, took) = server.ask("POST", path, &body.to_string());
    assert_eq!(status(&reply), 503, "{reply}");
    assert_eq!(
        body_json(&reply)["error"]["code"],
        "worker_unavailable",
        "{reply}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    let h = offload(&health(&server));
    assert_eq!(h["workers"][0]["state"], "lost", "{h}");
    assert!(h["workers"][0]["error"].is_string(), "{h}");
    exits_zero(&mut server);
}

#[test]
fn a_worker_that_stops_answering_is_lost_within_its_timeout() {
    let _one = serial();
    let worker = Worker::start();
    let mut server = serve(&[&worker], &["--rpc-timeout-s", "3"]);
    worker.signal("-STOP");
    let (path, body) = &requests()[0];
    let (reply, took) = server.ask("POST", path, &body.to_string());
    worker.signal("-CONT");
    assert_eq!(status(&reply), 503, "{reply}\n{}", server.log());
    let error = &body_json(&reply)["error"];
    assert_eq!(error["code"], "worker_unavailable", "{reply}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or("")
            .contains("within 3 s"),
        "{reply}"
    );
    assert!(took < Duration::from_secs(3 + 10), "{took:?}");
    exits_zero(&mut server);
}

#[test]
fn a_worker_nobody_listens_at_is_refused_by_name_before_the_model_loads() {
    let _one = serial();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let endpoint = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let (code, _, stderr) = toolgram(&[
        "call",
        "--model",
        "test",
        "--rpc",
        &endpoint,
        "--tools",
        "examples/weather.json",
        "What is the weather in Paris?",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&endpoint) && stderr.contains("refused"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}
