//! The HTTP round trip against a real (minimal) server on loopback: 429/5xx are retried with
//! backoff, other errors are not, and the API key travels only in the header.

use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;
use toolgram_providers::{HttpOptions, Kind, lookup, post_json};

/// Serves `replies` (status line + body) one per connection; returns the requests seen.
fn serve(
    replies: Vec<(&'static str, &'static str)>,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for (status, body) in replies {
            let Ok((mut s, _)) = listener.accept() else {
                break;
            };
            let mut buf = vec![0u8; 65536];
            let n = s.read(&mut buf).unwrap_or(0);
            seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(reply.as_bytes());
        }
        seen
    });
    (url, handle)
}

fn opts() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(10),
        retries: 2,
        backoff: Duration::from_millis(10),
        api_key: Some("sk-test-secret".into()),
    }
}

fn kind(name: &str) -> Kind {
    lookup(name).expect("registered")
}

#[test]
fn server_errors_and_rate_limits_are_retried_then_succeed() {
    let (url, server) = serve(vec![
        ("503 Service Unavailable", "{}"),
        ("429 Too Many Requests", "{}"),
        ("200 OK", r#"{"ok": true}"#),
    ]);
    let reply = post_json(
        kind("openai-chat"),
        &format!("{url}/v1/chat/completions"),
        &json!({"a": 1}),
        &opts(),
    )
    .expect("third try succeeds");
    assert_eq!(reply, json!({"ok": true}));
    let seen = server.join().expect("server");
    assert_eq!(seen.len(), 3);
    assert!(
        seen[0]
            .to_lowercase()
            .contains("authorization: bearer sk-test-secret")
    );
}

#[test]
fn client_errors_are_not_retried_and_keys_stay_out_of_errors() {
    let (url, server) = serve(vec![("400 Bad Request", r#"{"error": "bad tool"}"#)]);
    let err = post_json(
        kind("anthropic"),
        &format!("{url}/v1/messages"),
        &json!({}),
        &opts(),
    )
    .expect_err("400 is final");
    let text = err.to_string();
    assert!(text.contains("400") && text.contains("bad tool"), "{text}");
    assert!(!text.contains("sk-test-secret"));
    let seen = server.join().expect("server");
    assert_eq!(seen.len(), 1);
    assert!(seen[0].to_lowercase().contains("x-api-key: sk-test-secret"));
}
