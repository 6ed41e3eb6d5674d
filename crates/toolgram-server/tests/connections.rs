//! The server's connections and security checks on loopback, in-process: a runtime on a
//! provider that a small mock answers (no model loads), raw HTTP/1.1 from std sockets. Slow
//! headers, a body that stops, the connection cap, the bounded drain, the content type, the
//! Host and Origin checks, the stored Responses' byte bound, `metadata`'s bounds, the notes of
//! unknown fields, and `no_valid_call` counted for streams.

use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgram_providers::{Config, Overrides};
use toolgram_runtime::{Backend, ModelEntry, ModelSet, ProviderConfig, Residency};
use toolgram_server::app::Stored;
use toolgram_server::{App, ServerConfig};

/// A mock llama-server: every request gets a completion of plain text, no call.
fn mock_provider() -> SocketAddr {
    let listener = StdListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || answer_with_text(stream));
        }
    });
    addr
}

fn answer_with_text(mut s: TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let body_start = loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&seen[..body_start]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() < body_start + length {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let body = json!({"id": "x", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "I will not call a tool."}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}})
    .to_string();
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(reply.as_bytes());
}

fn app(config: ServerConfig) -> Arc<App> {
    let overrides = Overrides {
        base_url: Some(format!("http://{}", mock_provider())),
        model: Some("mock".into()),
        ..Overrides::default()
    };
    let provider = Config::default()
        .resolve("llama-server", &overrides)
        .expect("resolves");
    let backend = Backend::Provider(ProviderConfig {
        provider,
        stream: false,
    });
    Arc::new(App::new(
        ModelSet::new(vec![ModelEntry::new("m", backend)], Residency::default())
            .expect("a model set"),
        config,
    ))
}

/// A server on a loopback port, on its own tokio runtime; `stop` starts the drain.
struct Server {
    addr: SocketAddr,
    app: Arc<App>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Server {
    fn start(config: ServerConfig) -> Self {
        let app = app(config);
        let listener = StdListener::bind("127.0.0.1:0").expect("binds");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done) = std::sync::mpsc::channel();
        let serving = Arc::clone(&app);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("tokio");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let shutdown = async move {
                    let _ = stopped.await;
                };
                toolgram_server::conn::serve_on(listener, serving, shutdown)
                    .await
                    .expect("serves");
            });
            rt.shutdown_timeout(Duration::from_secs(1));
            let _ = done_tx.send(());
        });
        Self {
            addr,
            app,
            stop: Some(stop),
            done,
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).expect("connects");
        s.set_read_timeout(Some(Duration::from_secs(20))).ok();
        s
    }

    /// One request with these headers and body; the whole reply.
    fn ask(&self, method: &str, path: &str, headers: &[&str], body: &str) -> String {
        let mut s = self.connect();
        let mut req = format!("{method} {path} HTTP/1.1\r\n");
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ));
        s.write_all(req.as_bytes()).expect("written");
        read_all(s)
    }

    /// A JSON POST from a loopback client.
    fn post(&self, path: &str, body: &Value) -> String {
        self.ask(
            "POST",
            path,
            &["Host: 127.0.0.1", "Content-Type: application/json"],
            &body.to_string(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn read_all(mut s: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status_of(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// How long until the server closes `s` (reading whatever it sends), at most `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(100))).ok();
    let mut buf = [0u8; 1024];
    while started.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(started.elapsed()),
            Ok(_) => {}
        }
    }
    None
}

fn config() -> ServerConfig {
    ServerConfig {
        port: 0,
        ..ServerConfig::default()
    }
}

#[test]
fn headers_trickled_past_the_header_timeout_and_an_idle_connection_are_closed() {
    let server = Server::start(ServerConfig {
        header_read_timeout: Duration::from_secs(1),
        ..config()
    });
    // A header line every 200 ms: each byte arrives in time, the whole never does.
    let mut slow = server.connect();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("written");
    let mut trickle = slow.try_clone().expect("clone");
    std::thread::spawn(move || {
        for i in 0..100 {
            std::thread::sleep(Duration::from_millis(200));
            if trickle
                .write_all(format!("X-{i}: a\r\n").as_bytes())
                .is_err()
            {
                return;
            }
        }
    });
    let mut idle = server.connect();
    let slow_closed = closed_within(&mut slow, Duration::from_secs(10));
    assert!(slow_closed.is_some(), "still open after 10 s");
    let idle_closed = closed_within(&mut idle, Duration::from_secs(10));
    assert!(
        idle_closed.is_some(),
        "an idle connection still open after 10 s"
    );
    // A prompt client is served as before.
    let ok = server.ask("GET", "/health", &["Host: 127.0.0.1"], "");
    assert_eq!(status_of(&ok), 200, "{ok}");
}

#[test]
fn a_body_that_stops_arriving_gets_408_and_the_connection_closes() {
    let server = Server::start(ServerConfig {
        body_read_timeout: Duration::from_secs(1),
        ..config()
    });
    let mut s = server.connect();
    s.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    )
    .expect("written");
    let started = Instant::now();
    let reply = read_all(s);
    assert_eq!(status_of(&reply), 408, "{reply}");
    assert!(reply.contains("--body-read-timeout-s"), "{reply}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_connection_over_the_cap_gets_503_naming_it_and_a_freed_slot_serves_again() {
    let server = Server::start(ServerConfig {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(30),
        ..config()
    });
    let held: Vec<TcpStream> = (0..2).map(|_| server.connect()).collect();
    // Let the server accept both before the third arrives.
    std::thread::sleep(Duration::from_millis(300));
    let over = server.ask("GET", "/health", &["Host: 127.0.0.1"], "");
    assert_eq!(status_of(&over), 503, "{over}");
    assert!(over.contains("--max-connections"), "{over}");
    drop(held);
    // The server may see the two closes a moment after this side: count the 503s until then.
    let (mut served, mut refused) = (String::new(), 1);
    for _ in 0..50 {
        served = server.ask("GET", "/health", &["Host: 127.0.0.1"], "");
        if status_of(&served) == 200 {
            break;
        }
        refused += usize::from(status_of(&served) == 503);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status_of(&served), 200, "{served}");
    let metrics = server.ask("GET", "/metrics", &["Host: 127.0.0.1"], "");
    assert!(
        metrics.contains(&format!("toolgram_connections_refused_total {refused}\n")),
        "{refused} refused: {metrics}"
    );
}

#[test]
fn the_drain_ends_within_its_bound_with_a_slow_body_and_slow_headers_open() {
    let mut server = Server::start(ServerConfig {
        header_read_timeout: Duration::from_secs(120),
        body_read_timeout: Duration::from_secs(120),
        drain_timeout: Duration::from_secs(1),
        ..config()
    });
    let mut body = server.connect();
    body.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    )
    .expect("written");
    let mut headers = server.connect();
    headers
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("written");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    drop(server.stop.take());
    server
        .done
        .recv_timeout(Duration::from_secs(10))
        .expect("the server stops within 10 s");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(closed_within(&mut body, Duration::from_secs(2)).is_some());
    assert!(closed_within(&mut headers, Duration::from_secs(2)).is_some());
    assert!(TcpStream::connect(server.addr).is_err(), "still accepting");
}

#[test]
fn a_body_must_be_sent_as_json() {
    let server = Server::start(config());
    let body = r#"{"messages":[{"role":"user","content":"Hi"}]}"#;
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut headers = vec!["Host: 127.0.0.1".to_owned()];
        headers.extend(ct.map(|c| format!("Content-Type: {c}")));
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages"] {
            let reply = server.ask("POST", path, &headers, body);
            assert_eq!(status_of(&reply), 415, "{ct:?} {path}: {reply}");
            assert!(reply.contains("application/json"), "{reply}");
        }
    }
    // Parameters and case do not matter: this body is read (and refused for what it says).
    let reply = server.ask(
        "POST",
        "/v1/chat/completions",
        &[
            "Host: 127.0.0.1",
            "Content-Type: Application/JSON; charset=utf-8",
        ],
        "[]",
    );
    assert_eq!(status_of(&reply), 400, "{reply}");
}

#[test]
fn on_a_loopback_bind_only_loopback_hosts_and_origins_are_answered() {
    let server = Server::start(config());
    for host in ["localhost:8080", "127.0.0.1", "[::1]:1234", "127.0.0.2"] {
        let reply = server.ask("GET", "/health", &[&format!("Host: {host}")], "");
        assert_eq!(status_of(&reply), 200, "{host}: {reply}");
    }
    let ok = server.ask(
        "GET",
        "/health",
        &["Host: localhost", "Origin: http://localhost:3000"],
        "",
    );
    assert_eq!(status_of(&ok), 200, "{ok}");
    for headers in [
        vec!["Host: attacker.example"],
        vec!["Host: attacker.example:8080"],
        vec!["Host: 127.0.0.1", "Origin: http://attacker.example"],
        vec!["Host: 127.0.0.1", "Origin: null"],
    ] {
        let reply = server.ask("GET", "/health", &headers, "");
        assert_eq!(status_of(&reply), 403, "{headers:?}: {reply}");
        let post = server.ask(
            "POST",
            "/v1/messages",
            &[headers.as_slice(), &["Content-Type: application/json"]].concat(),
            "{}",
        );
        assert_eq!(status_of(&post), 403, "{headers:?}: {post}");
        assert!(
            post.contains("permission_error") || post.contains("forbidden"),
            "{post}"
        );
    }
    // Bound to every interface, the server is meant to be reached by other names.
    let open = Server::start(ServerConfig {
        host: "0.0.0.0".into(),
        ..config()
    });
    let reply = open.ask("GET", "/health", &["Host: toolgram.example"], "");
    assert_eq!(status_of(&reply), 200, "{reply}");
}

#[test]
fn metadata_within_openais_bounds_only() {
    let server = Server::start(config());
    let many: serde_json::Map<String, Value> =
        (0..17).map(|i| (format!("k{i}"), json!("v"))).collect();
    for (metadata, says) in [
        (Value::Object(many), "17 pairs"),
        (json!({"k".repeat(65): "v"}), "longer than 64"),
        (json!({"k": "v".repeat(513)}), "longer than 512"),
        (json!({"k": 1}), "must be a string"),
        (json!(vec![0; 100_000]), "must be an object"),
    ] {
        let reply = server.post(
            "/v1/responses",
            &json!({"input": "Hi", "metadata": metadata}),
        );
        assert_eq!(status_of(&reply), 400, "{reply}");
        assert!(reply.contains(r#""param":"metadata""#), "{reply}");
        assert!(reply.contains(says), "{says}: {reply}");
    }
}

#[test]
fn stored_responses_are_bounded_by_their_bytes() {
    let server = Server::start(ServerConfig {
        max_stored_bytes: 40_000,
        ..config()
    });
    let stored = |i: usize, bytes: usize| Stored {
        id: format!("resp-{i}"),
        messages: Vec::new(),
        body: json!({"pad": "x".repeat(bytes)}).to_string(),
    };
    for i in 0..40 {
        server.app.store(stored(i, 2_000));
    }
    let (count, bytes) = server.app.stored_size();
    assert!(bytes <= 40_000, "{bytes} bytes kept");
    assert!((15..40).contains(&count), "{count} kept");
    assert!(server.app.stored("resp-39").is_some(), "the newest is kept");
    assert!(
        server.app.stored("resp-0").is_none(),
        "the oldest is dropped"
    );
    // One over a quarter of the bound is not stored at all.
    server.app.store(stored(99, 10_001));
    assert!(server.app.stored("resp-99").is_none());
    let metrics = server.ask("GET", "/metrics", &["Host: 127.0.0.1"], "");
    assert!(
        metrics.contains(&format!("toolgram_stored_response_bytes {bytes}")),
        "{metrics}"
    );
}

#[test]
fn streams_count_no_valid_call_as_replies_do() {
    let server = Server::start(config());
    let tool = json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"]}}});
    let chat = |stream: bool| {
        json!({"messages": [{"role": "user", "content": "Weather in Lima?"}],
            "tools": [tool], "tool_choice": "required", "max_attempts": 1, "stream": stream})
    };
    let responses = |stream: bool| {
        json!({"input": "Weather in Lima?", "tools": [{"type": "function",
            "name": "get_weather", "parameters": tool["function"]["parameters"]}],
            "tool_choice": "required", "max_attempts": 1, "stream": stream})
    };
    let failures = || {
        let m = server.ask("GET", "/metrics", &["Host: 127.0.0.1"], "");
        m.lines()
            .find_map(|l| l.strip_prefix("toolgram_no_valid_call_total "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    };
    let mut expected = 0;
    for stream in [false, true] {
        let reply = server.post("/v1/chat/completions", &chat(stream));
        assert!(reply.contains("no_valid_call"), "{reply}");
        expected += 1;
        assert_eq!(failures(), expected, "chat, stream: {stream}");
        let reply = server.post("/v1/responses", &responses(stream));
        assert!(reply.contains("no_valid_call"), "{reply}");
        expected += 1;
        assert_eq!(failures(), expected, "responses, stream: {stream}");
    }
}

#[test]
fn notes_of_unknown_fields_are_few_and_short_whatever_the_names() {
    let body: serde_json::Map<String, Value> = (0..40)
        .map(|i| (format!("{i}{}", "x".repeat(3 << 20)), json!(0)))
        .collect();
    let notes = toolgram_server::params::ignored_fields(&body, &[], &[]);
    assert_eq!(notes.len(), toolgram_server::params::MAX_IGNORED_NOTES + 1);
    assert!(notes.iter().all(|n| n.len() < 200), "{:?}", notes[0]);
    assert!(notes[0].contains("(3145729 bytes)"), "{}", notes[0]);
    assert!(notes.last().is_some_and(|n| n.contains("24 more fields")));
}

/// Without the key `/health` says only whether the server is up; the models and their loads
/// are the key holder's.
#[test]
fn health_without_the_key_says_only_its_status() {
    let server = Server::start(ServerConfig {
        api_key: Some("k".into()),
        ..config()
    });
    let open = server.ask("GET", "/health", &["Host: 127.0.0.1"], "");
    assert_eq!(status_of(&open), 200, "{open}");
    let body: Value =
        serde_json::from_str(open.split("\r\n\r\n").nth(1).unwrap_or("")).expect("JSON");
    assert_eq!(body, json!({"status": "ok"}), "{open}");
    let keyed = server.ask(
        "GET",
        "/health",
        &["Host: 127.0.0.1", "Authorization: Bearer k"],
        "",
    );
    assert!(keyed.contains("\"models\""), "{keyed}");
}

/// A name that is no model, under `--strict-model-names`, is repeated in the 404 cut short; a
/// key given twice is refused whichever value comes first; `max_attempts` past its bound is
/// clamped and the reply says so.
#[test]
fn echoed_names_are_clipped_keys_given_twice_refused_and_clamps_said() {
    let server = Server::start(ServerConfig {
        strict_model_names: true,
        ..config()
    });
    let huge = "m".repeat(3 << 20);
    let reply = server.post(
        "/v1/chat/completions",
        &json!({"model": huge, "messages": [{"role": "user", "content": "Hi"}]}),
    );
    assert_eq!(status_of(&reply), 404, "{}", &reply[..200.min(reply.len())]);
    assert!(reply.len() < 4096, "the 404 is {} bytes", reply.len());
    assert!(reply.contains("bytes)"), "its length said: {reply}");
    for twice in [
        r#"{"model":"nope","model":"m","messages":[{"role":"user","content":"Hi"}]}"#,
        r#"{"model":"m","model":"nope","messages":[{"role":"user","content":"Hi"}]}"#,
    ] {
        let reply = server.ask(
            "POST",
            "/v1/chat/completions",
            &["Host: 127.0.0.1", "Content-Type: application/json"],
            twice,
        );
        assert_eq!(status_of(&reply), 400, "{reply}");
        assert!(reply.contains("given twice"), "{reply}");
    }
    let reply = server.post(
        "/v1/chat/completions",
        &json!({"model": "m", "messages": [{"role": "user", "content": "Hi"}],
            "max_attempts": 1_000_000}),
    );
    assert_eq!(status_of(&reply), 200, "{reply}");
    assert!(
        reply.contains("`max_attempts` 1000000 is outside 1 to 8"),
        "{reply}"
    );
}
