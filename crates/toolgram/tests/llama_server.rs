//! `toolgram call --provider llama-server` against a REAL llama-server on loopback (built
//! from the llama.cpp sources vendored in the `llama-cpp-python` sdist by
//! `scripts/build-llama-server`, which `scripts/install-build-deps` runs), with the default
//! model: the grammar path (our GBNF, never together with `tools`), the strict JSON path, the
//! prompt path when both are switched off, a streamed reply, and `--no-fallback` refusing a
//! downgrade; the embedded engine and llama-server replying in one shape, repeats reported and
//! refused alike; and `toolgram serve` as a gateway in front of it.

mod common;
use common::{repo, toolgram};

use serde_json::Value;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary `scripts/build-llama-server` made (it prints the path; it builds only
/// when the cache is empty).
fn server_binary() -> PathBuf {
    let out = Command::new(repo().join("scripts/build-llama-server"))
        .output()
        .expect("scripts/build-llama-server runs");
    assert!(
        out.status.success(),
        "scripts/build-llama-server failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A llama-server child on a free loopback port, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let (code, model, stderr) = toolgram(&["model", "path", "default"]);
    assert_eq!(code, 0, "{stderr}");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let child = Command::new(server_binary())
        .args([
            "-m",
            model.trim(),
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .args(["-t", "2", "-c", "4096"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120) {
        let ok = health(port);
        if ok {
            return server;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("llama-server did not become healthy in 120 s");
}

/// `GET /health` says `ok` (a plain HTTP/1.0 request: the server answers 503 while loading).
fn health(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let mut reply = String::new();
    s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_ok()
        && s.read_to_string(&mut reply).is_ok()
        && reply.starts_with("HTTP/1.1 200")
        && reply.contains("ok")
}

fn call(server: &Server, extra: &[&str], prompt: &str) -> (i32, String, String) {
    let mut args = vec![
        "call",
        "--provider",
        "llama-server",
        "--base-url",
        &server.url,
        "--tools",
        "examples/weather.json",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    toolgram(&args)
}

fn valid_weather_call(stdout: &str, path: &str) -> Value {
    let msg: Value = serde_json::from_str(stdout).expect("one JSON object");
    assert_eq!(msg["toolgram"]["path"], path, "{msg}");
    let call = &msg["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{msg}");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or("")).expect("JSON");
    assert!(
        args["city"].as_str().is_some_and(|c| c.contains("Paris")),
        "{msg}"
    );
    if let Some(unit) = args.get("unit") {
        assert!(unit == "celsius" || unit == "fahrenheit", "{msg}");
    }
    msg
}

#[test]
fn llama_server_becomes_a_reliable_tool_caller_on_every_path() {
    let server = start_server();
    let q = "What's the weather like in Paris today?";
    // Grammar path: our GBNF, the call union in Qwen's <tool_call> syntax.
    for choice in ["required", "auto", "get_weather"] {
        let (code, out, err) = call(&server, &["--tool-choice", choice], q);
        assert_eq!(code, 0, "{choice}: {err}");
        valid_weather_call(&out, "grammar");
    }
    // Streamed (server-sent events, tool-call text assembled, then read the same way).
    let (code, out, err) = call(&server, &["--stream", "--tool-choice", "required"], q);
    assert_eq!(code, 0, "{err}");
    valid_weather_call(&out, "grammar");
    // Grammar switched off: strict JSON Schema (llama-server's json_schema), said so.
    let (code, out, err) = call(
        &server,
        &["--disable", "grammar", "--tool-choice", "required"],
        q,
    );
    assert_eq!(code, 0, "{err}");
    let msg = valid_weather_call(&out, "strict_json");
    assert!(
        msg["toolgram"]["path_reason"]
            .as_str()
            .is_some_and(|r| r.contains("fell back"))
    );
    // Both off: prompt path (lenient parser + validator + retries).
    let (code, out, err) = call(
        &server,
        &[
            "--disable",
            "grammar",
            "--disable",
            "strict-json",
            "--tool-choice",
            "required",
        ],
        q,
    );
    assert_eq!(code, 0, "{err}");
    valid_weather_call(&out, "prompt");
    // --no-fallback: the missing capability is an error, not a downgrade.
    let (code, _, err) = call(&server, &["--disable", "grammar", "--no-fallback"], q);
    assert_ne!(code, 0);
    let last: Value = serde_json::from_str(err.lines().last().unwrap_or("")).expect("JSON error");
    assert_eq!(last["error"]["type"], "capability_missing", "{err}");
}

/// The warnings of a reply's `toolgram` object, as text.
fn warnings(msg: &Value) -> String {
    msg["toolgram"]["warnings"].to_string()
}

#[test]
fn the_plan_reaches_llama_server_in_its_grammar_and_a_call_bias_is_refused_by_name() {
    let server = start_server();
    let q = "What's the weather like in Paris and in Lima today?";
    // A call required: one planned request; the count the grammar made it write is the
    // number of calls it then made.
    let (code, out, err) = call(
        &server,
        &[
            "--parallel-tool-calls",
            "--plan",
            "--tool-choice",
            "required",
        ],
        q,
    );
    assert_eq!(code, 0, "{err}");
    let msg = valid_weather_call(&out, "grammar");
    let plan = msg["reasoning_content"].as_str().unwrap_or_default();
    let count: usize = plan
        .strip_prefix("Number of tool calls needed: ")
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the plan line, asked for, is returned as reasoning: {msg}"));
    assert_eq!(
        msg["tool_calls"].as_array().map(Vec::len),
        Some(count),
        "{msg}"
    );
    assert!(!warnings(&msg).contains("`plan` is off"), "{msg}");
    // `auto`, the plan on by default: call or text first, a call counted in a second request;
    // the plan line, not asked for, stays out of the reply.
    let (code, out, err) = call(&server, &["--parallel-tool-calls"], q);
    assert_eq!(code, 0, "{err}");
    let msg: Value = serde_json::from_str(&out).expect("one JSON object");
    assert!(msg["reasoning_content"].is_null(), "{msg}");
    assert!(!warnings(&msg).contains("`plan` is off"), "{msg}");
    // A call bias acts at one decoding step, which no provider field can say: refused.
    let (code, _, err) = call(&server, &["--call-bias", "4"], q);
    assert_ne!(code, 0);
    let last: Value = serde_json::from_str(err.lines().last().unwrap_or("")).expect("JSON error");
    assert!(
        last["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`call_bias`")),
        "{err}"
    );
}

/// A JSON value's shape: keys and types, array items by their first element.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::String(_) => Value::from("string"),
        Value::Number(_) => Value::from("number"),
        Value::Bool(_) => Value::from("bool"),
        Value::Null => Value::from("null"),
    }
}

#[test]
fn the_embedded_engine_and_llama_server_reply_in_one_shape() {
    let server = start_server();
    let q = "What's the weather like in Paris today?";
    let (code, embedded, err) = toolgram(&[
        "call",
        "--tools",
        "examples/weather.json",
        "--tool-choice",
        "required",
        q,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, remote, err) = call(&server, &["--tool-choice", "required"], q);
    assert_eq!(code, 0, "{err}");
    let (mut embedded, mut remote) = (
        valid_weather_call(&embedded, "grammar"),
        valid_weather_call(&remote, "grammar"),
    );
    // Where the layers are is the embedded engine's to say; a provider's reply says null.
    let offload = |r: &mut Value| r["toolgram"]["timings"]["offload"].take();
    assert!(offload(&mut embedded)["backend"].is_string(), "{embedded}");
    assert_eq!(offload(&mut remote), Value::Null, "{remote}");
    assert_eq!(shape(&embedded), shape(&remote), "{embedded}\n{remote}");
    assert_eq!(embedded["toolgram"]["provider"], "embedded");
    assert_eq!(remote["toolgram"]["provider"], "llama-server");

    // A call that repeats an earlier one is listed on both paths, and refused on both with
    // --refuse-repeats.
    let dir = std::env::temp_dir().join(format!("toolgram-repeats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "function", "function": {"name": "get_time", "description": "The current time.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}}]"#,
    )
    .expect("tools file");
    let messages = dir.join("messages.json");
    std::fs::write(
        &messages,
        r#"[{"role": "user", "content": "What time is it?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
              "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
            {"role": "user", "content": "And now?"}]"#,
    )
    .expect("messages file");
    let (tools, messages) = (tools.to_string_lossy(), messages.to_string_lossy());
    let base = [
        "call",
        "--tools",
        &*tools,
        "--messages",
        &*messages,
        "--tool-choice",
        "get_time",
    ];
    let remote_args = ["--provider", "llama-server", "--base-url", &server.url];
    for provider in [&[][..], &remote_args[..]] {
        let args: Vec<&str> = base.iter().chain(provider).copied().collect();
        let (code, out, err) = toolgram(&args);
        assert_eq!(code, 0, "{provider:?}: {err}");
        let msg: Value = serde_json::from_str(&out).expect("one JSON object");
        assert_eq!(
            msg["toolgram"]["repeated_calls"],
            serde_json::json!([{"index": 0, "tool": "get_time", "first_seen": "message 1"}]),
            "{msg}"
        );
        let refused: Vec<&str> = args.iter().copied().chain(["--refuse-repeats"]).collect();
        let (code, _, err) = toolgram(&refused);
        assert_ne!(code, 0, "{provider:?}");
        let last: Value =
            serde_json::from_str(err.lines().last().unwrap_or("")).expect("JSON error");
        assert_eq!(last["error"]["type"], "repeated_call", "{err}");
        assert_eq!(
            last["error"]["repeated_calls"][0]["tool"], "get_time",
            "{err}"
        );
    }
}

#[test]
fn toolgram_serve_as_a_gateway_in_front_of_llama_server_returns_valid_calls() {
    use std::io::{BufRead, BufReader};
    let server = start_server();
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .args([
            "serve",
            "--port",
            "0",
            "--provider",
            "llama-server",
            "--base-url",
        ])
        .arg(&server.url)
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgram serve starts");
    let stderr = gateway.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = common::listening_addr(&mut lines).expect("the gateway says where it listens");
    std::thread::spawn(move || for _ in lines {});
    let tools = std::fs::read_to_string(repo().join("examples/weather.json")).expect("tools");
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":"What's the weather like in Paris today?"}}],
            "tools":{tools},"tool_choice":"required","parallel_tool_calls":false}}"#
    );
    let reply = common::post_raw(&addr, "/v1/chat/completions", &body);
    // Several calls allowed: `serve`'s bound on calls per reply and its plan go into the
    // grammar llama-server runs, so neither is said to be off.
    let several = body.replace(
        r#""parallel_tool_calls":false"#,
        r#""parallel_tool_calls":true"#,
    );
    let planned = common::post_raw(&addr, "/v1/chat/completions", &several);
    // Streamed on the grammar path with nothing left to change: the call reaches the client as
    // llama-server writes it (several argument deltas), not in one piece once it is done.
    let streamed = common::post_raw(
        &addr,
        "/v1/chat/completions",
        &body.replacen('{', r#"{"stream":true,"#, 1),
    );
    let _ = gateway.kill();
    let _ = gateway.wait();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let json: Value =
        serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap_or("")).expect("JSON body");
    let call = &json["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{json}");
    let args: Value =
        serde_json::from_str(call["arguments"].as_str().unwrap_or("")).expect("JSON arguments");
    assert!(
        args["city"].as_str().is_some_and(|c| c.contains("Paris")),
        "{json}"
    );
    assert_eq!(json["toolgram"]["provider"], "llama-server", "{json}");
    assert_eq!(json["toolgram"]["path"], "grammar", "{json}");
    assert!(planned.starts_with("HTTP/1.1 200"), "{planned}");
    let planned: Value =
        serde_json::from_str(planned.split("\r\n\r\n").nth(1).unwrap_or("")).expect("JSON body");
    assert!(
        planned["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather",
        "{planned}"
    );
    let said = warnings(&planned);
    assert!(
        !said.contains("bound of") && !said.contains("`plan` is off"),
        "{planned}"
    );
    let deltas: Vec<String> = streamed
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .map(str::to_owned)
        })
        .filter(|a| !a.is_empty())
        .collect();
    assert!(
        deltas.len() >= 2,
        "the arguments came in {} piece(s): {streamed}",
        deltas.len()
    );
    let args: Value = serde_json::from_str(&deltas.concat()).expect("the deltas add up to JSON");
    assert!(
        args["city"].as_str().is_some_and(|c| c.contains("Paris")),
        "{streamed}"
    );
}

#[test]
fn eval_scores_llama_servers_own_tool_calling_strictly_and_leniently() {
    let server = start_server();
    let out = std::env::temp_dir().join(format!("toolgram-eval-peer-{}", std::process::id()));
    let out_s = out.to_string_lossy().into_owned();
    let (code, stdout, stderr) = toolgram(&[
        "eval",
        "bfcl",
        "--data",
        "testdata/bfcl",
        "--category",
        "simple_python",
        "--limit",
        "2",
        "--max-tokens",
        "128",
        "--provider",
        "llama-server",
        "--base-url",
        &server.url,
        "--out",
        &out_s,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| simple_python | native | toolgram | 2 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| simple_python | native-lenient | toolgram | 2 |"),
        "{stdout}"
    );
    let items: Vec<Value> = std::fs::read_to_string(out.join("items.jsonl"))
        .expect("items.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(
        items.len(),
        4,
        "two items, each read strictly and leniently"
    );
    for it in &items {
        assert!(
            it["raw"].as_str().is_some_and(|r| !r.is_empty()),
            "the peer's reply is kept: {it}"
        );
        assert!(it["output_tokens"].as_u64().is_some(), "{it}");
    }
    // The default model writes its calls as fenced JSON that llama-server leaves in `content`:
    // the lenient reading must find them (docs/eval.md: 18 of 20 simple_python items correct).
    let called = |mode: &str| {
        items
            .iter()
            .filter(|i| i["mode"] == mode && i["called"] == true)
            .count()
    };
    assert!(
        called("native-lenient") >= 1,
        "toolgram's parser read no call: {items:?}"
    );
    assert!(called("native-lenient") >= called("native"));
    let _ = std::fs::remove_dir_all(&out);
}
