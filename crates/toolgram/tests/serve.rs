//! `toolgram serve` as users run it: the real binary on loopback with the test model, driven by
//! the official `openai` and `anthropic` Python SDKs and agent frameworks (installed by this
//! test into a venv it creates), a load test with concurrent clients, a client that goes away
//! mid-stream, and a graceful shutdown.

mod common;
use common::{ServeChild, repo, venv};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One server at a time: they share the machine's two cores with the engine.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `toolgram serve` child on `model`.
fn start_model(model: &str, extra: &[&str]) -> ServeChild {
    let mut args = vec!["--model", model];
    args.extend(extra);
    ServeChild::start(&args)
}

/// A `toolgram serve` child on the test model.
fn start(extra: &[&str]) -> ServeChild {
    start_model("test", extra)
}

/// A chat template with a reasoning block (Qwen3's, from `testdata/`): the test model
/// speaks ChatML too, so it runs under it.
fn reasoning_template() -> String {
    repo()
        .join("testdata/toolcall-parsing/templates/Qwen-Qwen3-0.6B.jinja")
        .to_string_lossy()
        .into_owned()
}

fn bfcl() -> PathBuf {
    repo().join("testdata/bfcl")
}

fn python(script: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(venv())
        .arg(repo().join("crates/toolgram/tests/serve").join(script))
        .args(args)
        .output()
        .expect("python runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A raw HTTP/1.1 request on loopback; returns the stream after the request is written.
fn send(addr: &str, method: &str, path: &str, body: &str, key: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(120))).ok();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("request written");
    s
}

fn read_all(mut s: TcpStream) -> String {
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn the_openai_sdk_gets_valid_calls_streamed_and_not_through_both_apis() {
    let _one = serial();
    let server = start(&["--api-key", "secret"]);
    let (ok, out, err) = python(
        "openai_clients.py",
        &[&server.base(), "secret", &bfcl().to_string_lossy()],
    );
    eprintln!("{out}");
    assert!(ok, "openai_clients.py failed:\n{out}\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}

#[test]
fn the_anthropic_sdk_gets_valid_tool_use_thinking_and_errors_through_the_messages_api() {
    let _one = serial();
    let server = start(&["--api-key", "secret"]);
    let thinking = start(&[
        "--api-key",
        "secret",
        "--chat-template",
        &reasoning_template(),
    ]);
    let (base, bfcl) = (server.base(), bfcl().to_string_lossy().into_owned());
    // Once against the plain template (thinking ignored, and said), once with reasoning.
    for with_thinking in [false, true] {
        let mut args = vec![base.as_str(), "secret", &bfcl];
        let thinking_base = thinking.base();
        if with_thinking {
            args.push(&thinking_base);
        }
        let (ok, out, err) = python("anthropic_clients.py", &args);
        eprintln!("{out}");
        assert!(ok, "anthropic_clients.py failed:\n{out}\n{err}");
        assert!(out.contains("checks passed"), "{out}");
    }
}

#[test]
fn the_openai_sdk_sends_responses_as_coding_agents_do_and_gets_valid_items_and_events() {
    let _one = serial();
    let server = start(&["--api-key", "k"]);
    let thinking = start(&["--api-key", "k", "--chat-template", &reasoning_template()]);
    let (ok, out, err) = python(
        "responses_agents.py",
        &[
            &server.base(),
            "k",
            &bfcl().to_string_lossy(),
            &thinking.base(),
        ],
    );
    eprintln!("{out}");
    assert!(ok, "responses_agents.py failed:\n{out}\n{err}");
    assert!(out.contains("checks passed"), "{out}");
    // Every field an agent sent was either used or said once in the log.
    let log = server.log.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(log.contains("`reasoning` was ignored"), "{log}");
}

#[test]
fn tools_beside_a_response_format_give_a_valid_call_or_a_schema_valid_answer_on_both_models() {
    let _one = serial();
    let tools = repo().join("examples/weather.json");
    for model in ["test", "default"] {
        let server = start_model(model, &["--api-key", "k"]);
        let (ok, out, err) = python(
            "tools_and_format.py",
            &[&server.base(), "k", &tools.to_string_lossy()],
        );
        eprintln!("{model}: {out}");
        assert!(ok, "tools_and_format.py on {model} failed:\n{out}\n{err}");
        assert!(out.contains("checks passed"), "{out}");
    }
}

#[test]
fn pydantic_ai_and_langchain_run_their_tool_loops_unchanged() {
    let _one = serial();
    let server = start(&["--api-key", "k"]);
    let (ok, out, err) = python("agent_frameworks.py", &[&server.base(), "k"]);
    eprintln!("{out}");
    assert!(ok, "agent_frameworks.py failed:\n{out}\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}

/// The status line's code of a raw reply.
fn status_of(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn strict_model_names_aliases_and_refused_hosted_tools_are_the_operators_choice() {
    let _one = serial();
    let server = start(&[
        "--strict-model-names",
        "--model-alias",
        "gpt-4o=SmolLM2-135M-Instruct.Q4_1",
        "--hosted-tools",
        "refuse",
    ]);
    let models = read_all(send(&server.addr, "GET", "/v1/models", "", ""));
    assert!(
        models.contains("\"SmolLM2-135M-Instruct.Q4_1\"") && models.contains("\"gpt-4o\""),
        "{models}"
    );
    let chat = |model: &str, tools: &str| {
        let body = format!(
            r#"{{"model":"{model}","messages":[{{"role":"user","content":"Hi"}}],"max_tokens":4{tools}}}"#
        );
        read_all(send(
            &server.addr,
            "POST",
            "/v1/chat/completions",
            &body,
            "",
        ))
    };
    assert_eq!(status_of(&chat("gpt-4o", "")), 200);
    let unknown = chat("claude-sonnet-4-5", "");
    assert_eq!(status_of(&unknown), 404, "{unknown}");
    let hosted = chat("gpt-4o", r#","tools":[{"type":"web_search"}]"#);
    assert_eq!(status_of(&hosted), 400, "{hosted}");
    assert!(hosted.contains("web_search"), "{hosted}");
    // Anthropic's route answers in Anthropic's error shape.
    let body = r#"{"model":"claude-sonnet-4-5","max_tokens":4,"messages":[{"role":"user","content":"Hi"}]}"#;
    let anthropic = read_all(send(&server.addr, "POST", "/v1/messages", body, ""));
    assert_eq!(status_of(&anthropic), 404, "{anthropic}");
    assert!(
        anthropic.contains(r#""type":"not_found_error""#),
        "{anthropic}"
    );
    // An alias naming another model stops the server before it serves.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .args(["serve", "--model", "test", "--port", "0"])
        .args(["--model-alias", "gpt-4o=some-other-model"])
        .current_dir(repo())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("some-other-model"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn eight_clients_and_a_queue_of_four_get_valid_replies_or_429() {
    let _one = serial();
    let server = start(&["--api-key", "k", "--max-queue", "4"]);
    let (ok, out, err) = python(
        "load.py",
        &[
            &server.base(),
            "k",
            &bfcl().to_string_lossy(),
            "8",
            "4",
            "3",
        ],
    );
    eprintln!("load: {out}");
    assert!(ok, "load.py failed:\n{out}\n{err}");
    let summary: serde_json::Value =
        serde_json::from_str(out.lines().last().unwrap_or("")).expect("a JSON summary");
    assert!(
        summary["burst_accepted"].as_u64().is_some_and(|n| n >= 5),
        "{summary}"
    );
    // The server is still serving after the load, and says where the model's layers are.
    let health = read_all(send(&server.addr, "GET", "/health", "", "k"));
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(
        health.contains(r#""offload":{"backend":"CPU","devices":[],"gpu_layers":0"#),
        "{health}"
    );
}

#[test]
fn a_client_that_goes_away_mid_stream_cancels_its_run_and_the_server_goes_on() {
    let _one = serial();
    let server = start(&[]);
    let body = r#"{"messages":[{"role":"user","content":"Tell me a very long story about the sea."}],
        "max_tokens":400,"stream":true,"repeated_text":"keep"}"#;
    let s = send(&server.addr, "POST", "/v1/chat/completions", body, "");
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    // Read up to the first content delta, then hang up.
    let started = Instant::now();
    while !line.contains("\"content\":\"") && started.elapsed() < Duration::from_secs(120) {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
    }
    assert!(line.contains("\"content\":\""), "a content delta: {line}");
    drop(reader);
    // The disconnect is seen (the run is cancelled), and the next request is served.
    let mut seen = false;
    for _ in 0..100 {
        let metrics = read_all(send(&server.addr, "GET", "/metrics", "", ""));
        if metrics.contains("toolgram_client_disconnects_total 1") {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(seen, "the disconnect was not counted");
    let after = read_all(send(
        &server.addr,
        "POST",
        "/v1/chat/completions",
        r#"{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}"#,
        "",
    ));
    assert!(after.starts_with("HTTP/1.1 200"), "{after}");
}

#[test]
fn sigterm_finishes_the_request_in_flight_then_refuses_new_ones() {
    let _one = serial();
    let mut server = start(&[]);
    let addr = server.addr.clone();
    let in_flight = std::thread::spawn(move || {
        read_all(send(
            &addr,
            "POST",
            "/v1/chat/completions",
            r#"{"messages":[{"role":"user","content":"Write a poem about rivers."}],"max_tokens":120,"repeated_text":"keep"}"#,
            "",
        ))
    });
    // Let the request reach the engine, then ask the server to stop.
    std::thread::sleep(Duration::from_millis(500));
    server.terminate();
    let reply = in_flight.join().expect("the client thread");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("chat.completion"), "{reply}");
    let status = server.child.wait().expect("the server exits");
    assert!(
        status.success(),
        "exit {status:?}: {}",
        server.log.lock().map(|l| l.clone()).unwrap_or_default()
    );
    assert!(
        TcpStream::connect(&server.addr).is_err(),
        "new connections are refused after shutdown"
    );
}

#[test]
fn the_openapi_document_names_every_route_the_server_answers() {
    let _one = serial();
    let server = start(&[]);
    let doc = read_all(send(&server.addr, "GET", "/openapi.json", "", ""));
    let body = doc.split("\r\n\r\n").nth(1).unwrap_or("");
    let spec: serde_json::Value = serde_json::from_str(body).expect("the document is JSON");
    assert_eq!(spec["openapi"], "3.1.0");
    let paths = spec["paths"].as_object().expect("paths");
    for (path, ops) in paths {
        for method in ops.as_object().expect("operations").keys() {
            let concrete = path.replace("{id}", "resp-unknown");
            let resp = read_all(send(
                &server.addr,
                &method.to_uppercase(),
                &concrete,
                "{}",
                "",
            ));
            let status: u16 = resp
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let documented = ops[method]["responses"]
                .as_object()
                .is_some_and(|r| r.contains_key(&status.to_string()));
            assert!(
                documented,
                "{method} {path}: status {status} is not documented"
            );
            assert!(
                status != 404 || path.contains("{id}"),
                "{method} {path}: no route"
            );
        }
    }
    // The file in the repository is what the server serves.
    let file = std::fs::read_to_string(repo().join("crates/toolgram-server/openapi.json"))
        .expect("openapi.json in the repo");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&file).ok(),
        Some(spec)
    );
}

#[test]
fn schemathesis_finds_no_server_error_and_every_reply_matches_the_document() {
    let _one = serial();
    let server = start(&["--api-key", "k", "--max-tokens", "24", "--timeout-s", "60"]);
    let st = venv().with_file_name("st");
    let out = Command::new(st)
        .args(["run", &format!("http://{}/openapi.json", server.addr)])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            "-n",
            "25",
            "-H",
            "Authorization: Bearer k",
            "--request-timeout",
            "90",
            "-w",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
            "--seed",
            "1",
        ])
        .output()
        .expect("schemathesis runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let summary: String = text
        .lines()
        .skip_while(|l| !l.contains("SUMMARY"))
        .collect::<Vec<_>>()
        .join("\n");
    eprintln!("{summary}");
    assert!(out.status.success(), "schemathesis failed:\n{text}");
}

#[test]
fn one_lane_and_a_queue_of_two_admit_exactly_three_and_health_and_the_429_agree() {
    let _one = serial();
    let server = start(&["--parallel", "1", "--max-sessions", "1", "--max-queue", "2"]);
    let body = r#"{"messages":[{"role":"user","content":"Tell me a very long story about the sea."}],"max_tokens":300,"repeated_text":"keep"}"#;
    let request = |addr: String| {
        std::thread::spawn(move || read_all(send(&addr, "POST", "/v1/chat/completions", body, "")))
    };
    // Six at once for one lane and two places in the queue.
    let clients: Vec<_> = (0..6).map(|_| request(server.addr.clone())).collect();
    let mut deepest = 0;
    for _ in 0..10 {
        let health = read_all(send(&server.addr, "GET", "/health", "", ""));
        let body = health.split("\r\n\r\n").nth(1).unwrap_or("");
        let v: serde_json::Value = serde_json::from_str(body).expect("health is JSON");
        deepest = deepest.max(v["queue_depth"].as_u64().expect("queue_depth"));
        std::thread::sleep(Duration::from_millis(50));
    }
    let replies: Vec<String> = clients
        .into_iter()
        .map(|c| c.join().expect("client"))
        .collect();
    let count = |status: u16| replies.iter().filter(|r| status_of(r) == status).count();
    assert_eq!((count(200), count(429)), (3, 3), "{replies:#?}");
    assert!(deepest <= 2, "/health showed {deepest} queued");
    let busy = replies.iter().find(|r| status_of(r) == 429).expect("a 429");
    assert!(busy.contains("2 request(s) already queued"), "{busy}");
}

#[test]
fn the_small_things_an_operator_meets_are_answered_clearly() {
    let _one = serial();
    let server = start(&["--api-key", "k", "--max-body-bytes", "100000"]);
    // 401: a challenge to answer, and the scheme in any case.
    let denied = read_all(send(&server.addr, "GET", "/v1/models", "", "wrong"));
    assert_eq!(status_of(&denied), 401, "{denied}");
    assert!(
        denied
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{denied}"
    );
    // 405 with a JSON body.
    let wrong_method = read_all(send(&server.addr, "GET", "/v1/chat/completions", "", "k"));
    assert_eq!(status_of(&wrong_method), 405, "{wrong_method}");
    assert!(wrong_method.contains("not allowed"), "{wrong_method}");
    // Nesting past serde_json's limit says what limit it hit.
    let deep = format!(
        r#"{{"messages":[{{"role":"user","content":"x"}}],"metadata":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let nested = read_all(send(
        &server.addr,
        "POST",
        "/v1/chat/completions",
        &deep,
        "k",
    ));
    assert_eq!(status_of(&nested), 400, "{nested}");
    assert!(nested.contains("deeper than 128 levels"), "{nested}");
    // A conversation over the context names Responses' own field.
    let long = format!(
        r#"{{"input":"{}","max_output_tokens":4}}"#,
        "sea ".repeat(12_000)
    );
    let over = read_all(send(&server.addr, "POST", "/v1/responses", &long, "k"));
    assert_eq!(status_of(&over), 400, "{over}");
    assert!(over.contains(r#""param":"input""#), "{over}");
    assert!(over.contains("--ctx-size"), "{over}");
    // `call_bias` is a logit from -100 to 100; the reply says the model's lean it biased.
    let tools = r#""tools":[{"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{}}}}]"#;
    let body = |b: &str| {
        format!(
            r#"{{"messages":[{{"role":"user","content":"ping"}}],{tools},"max_tokens":8,"call_bias":{b}}}"#
        )
    };
    let chat = |b: &str| {
        read_all(send(
            &server.addr,
            "POST",
            "/v1/chat/completions",
            &body(b),
            "k",
        ))
    };
    let out_of_range = chat("500");
    assert_eq!(status_of(&out_of_range), 400, "{out_of_range}");
    assert!(
        out_of_range.contains(r#""param":"call_bias""#),
        "{out_of_range}"
    );
    let biased = chat("-100");
    assert_eq!(status_of(&biased), 200, "{biased}");
    assert!(
        biased.contains(r#""call_margin":"#) && !biased.contains(r#""call_margin":null"#),
        "{biased}"
    );
    // `votes` is 1 to 16 ballots; the reply carries the tally.
    let votes = |k: &str| {
        let body = format!(
            r#"{{"messages":[{{"role":"user","content":"ping"}}],{tools},"tool_choice":"required","max_tokens":64,"votes":{k}}}"#
        );
        read_all(send(
            &server.addr,
            "POST",
            "/v1/chat/completions",
            &body,
            "k",
        ))
    };
    let too_many = votes("17");
    assert_eq!(status_of(&too_many), 400, "{too_many}");
    assert!(too_many.contains(r#""param":"votes""#), "{too_many}");
    let voted = votes("3");
    assert_eq!(status_of(&voted), 200, "{voted}");
    assert!(voted.contains(r#""cast":3"#), "{voted}");
    // A 413 closes its kept-alive connection: the unread body is not taken for a request.
    let mut s = TcpStream::connect(&server.addr).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(60))).ok();
    // One byte over the limit: the server reads it all before it answers, so no unread byte
    // resets the connection before the reply is read.
    let big = "x".repeat(100_001);
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{big}",
        server.addr,
        big.len()
    );
    s.write_all(req.as_bytes()).expect("request written");
    let too_large = read_all(s);
    assert_eq!(status_of(&too_large), 413, "{too_large}");
    assert!(
        too_large.to_ascii_lowercase().contains("connection: close"),
        "{too_large}"
    );
}

/// The call grammars compiled so far, as `/metrics` counts them for the one model served.
fn grammars_compiled(addr: &str) -> u64 {
    let metrics = read_all(send(addr, "GET", "/metrics", "", ""));
    metrics
        .lines()
        .find(|l| l.starts_with("toolgram_model_call_grammars_compiled_total{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no grammar count in /metrics:\n{metrics}"))
}

/// A request's tools are read once and its grammar compiled once, by the check before it is
/// queued: the stream and the retry loop read that grammar, whatever API the request came by.
#[test]
fn a_streamed_anthropic_request_with_tools_compiles_its_grammar_once() {
    let _one = serial();
    let server = start(&[]);
    let before = grammars_compiled(&server.addr);
    let messages = r#"{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,
        "tool_choice":{"type":"any"},
        "tools":[{"name":"get_weather","description":"Current weather for a city.",
          "input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],
        "messages":[{"role":"user","content":"What's the weather in Paris?"}]}"#;
    let streamed = read_all(send(&server.addr, "POST", "/v1/messages", messages, ""));
    assert_eq!(status_of(&streamed), 200, "{streamed}");
    assert!(
        streamed.contains(r#""type":"tool_use""#) && streamed.contains("message_stop"),
        "{streamed}"
    );
    assert_eq!(grammars_compiled(&server.addr), before + 1, "{streamed}");
    let chat = r#"{"max_tokens":64,"tool_choice":"required",
        "tools":[{"type":"function","function":{"name":"get_weather",
          "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
        "messages":[{"role":"user","content":"And in Rome?"}]}"#;
    let answered = read_all(send(&server.addr, "POST", "/v1/chat/completions", chat, ""));
    assert_eq!(status_of(&answered), 200, "{answered}");
    assert_eq!(grammars_compiled(&server.addr), before + 2, "{answered}");
}

#[test]
fn metrics_add_up_to_what_the_clients_received() {
    let _one = serial();
    let server = start(&["--api-key", "k", "--max-body-bytes", "200000"]);
    let (ok, out, err) = python("metrics_reconcile.py", &[&server.base(), "k"]);
    eprintln!("{out}");
    assert!(ok, "metrics_reconcile.py failed:\n{out}\n{err}");
    assert!(out.contains("metrics reconciled"), "{out}");
}

/// Two minutes of mixed traffic from concurrent clients (valid, streamed, malformed,
/// oversized, hung up, past the timeout): no 5xx but the 504s it caused, nothing lost,
/// `/metrics` reconciled, RSS bounded, `/health` fast (figures in docs/server.md).
#[test]
fn a_soak_of_mixed_traffic_loses_nothing_and_the_metrics_add_up() {
    let _one = serial();
    let server = start(&[
        "--api-key",
        "k",
        "--max-body-bytes",
        "200000",
        "--parallel",
        "2",
        "--timeout-s",
        "8",
    ]);
    let pid = server.child.id().to_string();
    let (ok, out, err) = python("soak.py", &[&server.base(), "k", &pid, "120", "8"]);
    eprintln!("soak: {out}");
    assert!(ok, "soak.py failed:\n{out}\n{err}");
    assert!(out.contains("soak passed"), "{out}");
}

#[test]
fn an_answered_call_is_not_repeated_and_an_agent_loop_ends_on_the_default_model() {
    let _one = serial();
    let server = start_model("default", &[]);
    let (ok, out, err) = python("repeats.py", &[&server.base()]);
    eprintln!("{out}");
    assert!(ok, "repeats.py failed:\n{out}\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}

#[test]
fn one_server_answers_two_models_by_name_on_every_api_and_unloads_the_least_recently_used() {
    let _one = serial();
    // The second model comes from a models file, the first from --model.
    let file = std::env::temp_dir().join(format!("toolgram-models-{}.toml", std::process::id()));
    std::fs::write(&file, "[[model]]\nmodel = \"default\"\nctx_size = 8192\n").expect("written");
    let server = start(&[
        "--models",
        &file.to_string_lossy(),
        "--max-loaded",
        "1",
        "--min-residency-s",
        "1",
        "--parallel",
        "2",
    ]);
    let (ok, out, err) = python(
        "two_models.py",
        &[
            &server.base(),
            "SmolLM2-135M-Instruct.Q4_1",
            "test",
            "qwen2.5-coder-0.5b-instruct-q4_k_m",
            "default",
        ],
    );
    eprintln!("{out}");
    assert!(ok, "two_models.py failed:\n{out}\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}
