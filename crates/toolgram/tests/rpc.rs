//! Layers on other hosts: `toolgram worker` processes, each in a network namespace of its own
//! (loopback ports where none can be made), hold part of the test model's layers for
//! `toolgram serve --rpc`. The same greedy call comes back as all-local on
//! Chat Completions, Responses and Anthropic Messages; `/health` says where the layers went; a
//! worker killed mid-stream, cut off the network (or stopped), or never there is a typed error
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

/// A host for a worker: a network namespace of its own, joined to this one by a veth pair
/// (`10.77.N.1` here, `10.77.N.2` there) — or, where namespaces cannot be made (no root, no
/// `ip`), this machine's loopback. Removed when dropped.
struct Host {
    /// The namespace and the veth end on this side.
    netns: Option<(String, String)>,
    /// The address the worker listens on.
    ip: String,
}

impl Host {
    fn new(n: u32) -> Self {
        let tag = std::process::id() % 10_000;
        let (ns, here, there) = (
            format!("tg{tag}h{n}"),
            format!("tg{tag}a{n}"),
            format!("tg{tag}b{n}"),
        );
        let subnet = format!("10.77.{}", (tag % 100) * 2 + n);
        let made = [
            format!("ip netns add {ns}"),
            format!("ip link add {here} type veth peer name {there} netns {ns}"),
            format!("ip addr add {subnet}.1/24 dev {here}"),
            format!("ip link set {here} up"),
            format!("ip netns exec {ns} ip addr add {subnet}.2/24 dev {there}"),
            format!("ip netns exec {ns} ip link set {there} up"),
            format!("ip netns exec {ns} ip link set lo up"),
        ]
        .iter()
        .all(|cmd| sh(cmd));
        if made {
            return Self {
                netns: Some((ns, here)),
                ip: format!("{subnet}.2"),
            };
        }
        let _ = sh(&format!("ip netns del {ns}"));
        eprintln!("no network namespace could be made here: the workers run on loopback");
        Self {
            netns: None,
            ip: "127.0.0.1".into(),
        }
    }

    /// Cut this host off the network (its packets dropped: silence, not a reset); false on
    /// loopback, where there is no link to cut.
    fn cut_off(&self) -> bool {
        self.netns
            .as_ref()
            .is_some_and(|(_, here)| sh(&format!("ip link set {here} down")))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some((ns, here)) = &self.netns {
            // Both ends of the pair go with this one (the namespace's cleanup may lag).
            let _ = sh(&format!("ip link del {here}"));
            let _ = sh(&format!("ip netns del {ns}"));
        }
    }
}

fn sh(cmd: &str) -> bool {
    let words: Vec<&str> = cmd.split(' ').collect();
    Command::new(words[0])
        .args(&words[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A `toolgram worker` on `host`, killed when dropped.
struct Worker {
    child: Child,
    endpoint: String,
    /// What it said on stderr when it started.
    said: String,
}

impl Worker {
    fn start(host: &Host) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let endpoint = format!("{}:{port}", host.ip);
        let bin = env!("CARGO_BIN_EXE_toolgram");
        let worker = ["worker", "--listen", &endpoint, "--threads", "1"];
        let mut cmd = match &host.netns {
            // `ip netns exec` runs the worker itself (exec), so its pid is the worker's.
            Some((ns, _)) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, bin]).args(worker);
                c
            }
            None => {
                let mut c = Command::new(bin);
                c.args(worker);
                c
            }
        };
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgram worker starts");
        let mut said = String::new();
        let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        while !said.contains("toolgram worker: serving") {
            let mut line = String::new();
            let n = std::io::BufRead::read_line(&mut stderr, &mut line).expect("stderr");
            assert!(n > 0, "the worker stopped: {said}");
            said.push_str(&line);
        }
        // Listening once a connection is taken (the worker drops one that sends nothing).
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&endpoint).is_err() {
            assert!(Instant::now() < deadline, "the worker never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            endpoint,
            said,
        }
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
    let hosts = (Host::new(1), Host::new(2));
    let (a, b) = (Worker::start(&hosts.0), Worker::start(&hosts.1));
    // A worker reachable from other hosts says, loudly, that anyone there can use it.
    if hosts.0.netns.is_some() {
        assert!(
            a.said.contains("WARNING") && a.said.contains("no authentication"),
            "{}",
            a.said
        );
    }
    let mut server = serve(&[&a, &b], &[]);
    let whole = health(&server);
    assert_eq!(whole["status"], "ok", "{whole}");
    let h = offload(&whole);
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
    let host = Host::new(1);
    let worker = Worker::start(&host);
    let mut server = serve(&[&worker], &["--rpc-timeout-s", "5"]);
    assert_eq!(calls(&server).len(), 3);
    // Mid-stream: a long reply, the worker killed once its first words arrived.
    let endless = json!({"messages": [{"role": "user", "content": "Tell me a long story."}],
        "max_tokens": 400, "stream": true, "logit_bias": {"0": -100, "2": -100},
        "repeated_text": "keep"});
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
    let whole = health(&server);
    // What a key-less load-balancer probe sees, too.
    assert_eq!(whole["status"], "degraded", "{whole}");
    let h = offload(&whole);
    assert_eq!(h["workers"][0]["state"], "lost", "{h}");
    assert!(h["workers"][0]["error"].is_string(), "{h}");
    exits_zero(&mut server);
}

#[test]
fn a_worker_that_stops_answering_is_lost_within_its_timeout() {
    let _one = serial();
    let host = Host::new(1);
    let worker = Worker::start(&host);
    let mut server = serve(&[&worker], &["--rpc-timeout-s", "3"]);
    // Its host cut off the network, or (on loopback) the worker itself stopped.
    let stopped = !host.cut_off();
    if stopped {
        worker.signal("-STOP");
    }
    let (path, body) = &requests()[0];
    let (reply, took) = server.ask("POST", path, &body.to_string());
    if stopped {
        worker.signal("-CONT");
    }
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
fn a_worker_given_no_layers_is_said_so_and_not_watched() {
    let _one = serial();
    let host = Host::new(1);
    let worker = Worker::start(&host);
    let (code, stdout, stderr) = toolgram(&[
        "call",
        "--model",
        "test",
        "--rpc",
        &worker.endpoint,
        "--gpu-layers",
        "0",
        "--no-cache",
        "--tools",
        "examples/weather.json",
        "What is the weather in Paris?",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let reply: Value = serde_json::from_str(&stdout).expect("JSON reply");
    let offload = &reply["toolgram"]["timings"]["offload"];
    assert_eq!(offload["workers"][0]["state"], "no layers", "{offload}");
    assert_eq!(offload["local_layers"], 31, "{offload}");
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
