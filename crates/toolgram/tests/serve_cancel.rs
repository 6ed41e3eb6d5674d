//! Cancellation frees the engine: `toolgram serve` (test model, one lane) given a run past its
//! `--timeout-s` answers 504 with what it decoded and its usage, and a client that leaves
//! before the first event of its stream (or its non-streamed reply) stops its prefill at
//! once; in both cases the next request is served at once. At the end of a SIGTERM drain a
//! run still going answers 503 with what it decoded, and the server exits 0; `/health`
//! answers at once while heavy requests are read and checked.

mod common;
use common::{ServeChild, status};

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One server at a time: they share the machine's cores with the engine.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `toolgram serve` child on the test model with one lane.
fn start(extra: &[&str]) -> ServeChild {
    let mut args = vec!["--model", "test", "--no-cache", "--parallel", "1"];
    args.extend(["--max-sessions", "1", "--threads", "2"]);
    args.extend(extra);
    ServeChild::start(&args)
}

const CHAT: &str = "/v1/chat/completions";

const PLAIN: &str = r#"{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}"#;

/// A prompt of about `n` tokens that shares no prefix with another `word`'s.
fn long_prompt(word: &str, n: usize, stream: bool) -> String {
    format!(
        r#"{{"messages":[{{"role":"user","content":"{}"}}],"max_tokens":1,"stream":{stream}}}"#,
        format!("{word} ").repeat(n)
    )
}

/// A reply that runs to its token limit: the end-of-generation tokens made unlikely, and text
/// that repeats itself kept (the test model loops).
const ENDLESS: &str = r#"{"messages":[{"role":"user","content":"Tell me a very long story about the sea."}],
        "max_tokens":2000,"logit_bias":{"0":-100,"2":-100},"repeated_text":"keep"}"#;

#[test]
fn a_run_past_its_timeout_gets_504_with_its_partial_text_and_usage_then_the_next_is_served() {
    let _one = serial();
    let server = start(&["--timeout-s", "5"]);
    let (reply, took) = server.ask("POST", CHAT, ENDLESS);
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
    let (next, _) = server.ask("POST", CHAT, PLAIN);
    assert_eq!(status(&next), 200, "{next}");
}

#[test]
fn a_client_that_leaves_before_the_first_event_stops_its_prefill_at_once() {
    let _one = serial();
    let server = start(&["--timeout-s", "120"]);
    // How long the prefill of such a prompt takes here.
    let (reply, prefill) = server.ask("POST", CHAT, &long_prompt("sky", 4000, false));
    assert_eq!(status(&reply), 200, "{reply}");
    eprintln!("a 4,000-token prefill: {prefill:?}");
    for (word, stream) in [("sea", true), ("sun", false)] {
        let leaving = server.send("POST", CHAT, &[], &long_prompt(word, 4000, stream));
        std::thread::sleep(Duration::from_millis(300));
        drop(leaving);
        let (next, took) = server.ask("POST", CHAT, PLAIN);
        assert_eq!(status(&next), 200, "{next}");
        assert!(
            took < prefill / 2,
            "stream {stream}: the next request waited {took:?} (a whole prefill is {prefill:?})"
        );
    }
}

#[test]
fn at_the_end_of_the_drain_a_run_in_flight_answers_503_with_its_partial_text_and_the_server_exits_0()
 {
    let _one = serial();
    let mut server = start(&["--timeout-s", "120", "--drain-timeout-s", "1"]);
    let started = Instant::now();
    let in_flight = {
        let addr = server.addr.clone();
        std::thread::spawn(move || common::post_raw(&addr, "/v1/chat/completions", ENDLESS))
    };
    // Let it decode a while, then stop the server: the drain (1 s) ends long before the
    // reply's 2,000 tokens would.
    std::thread::sleep(Duration::from_millis(1500));
    server.terminate();
    let reply = in_flight.join().expect("the client thread");
    assert_eq!(status(&reply), 503, "{reply}");
    let body: serde_json::Value =
        serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap_or("")).expect("JSON body");
    assert_eq!(body["error"]["code"], "shutting_down", "{body}");
    let details = &body["error"]["toolgram"];
    assert!(
        !details["partial"].as_str().unwrap_or("").is_empty(),
        "{body}"
    );
    assert!(
        details["usage"]["completion_tokens"].as_u64().unwrap_or(0) > 0,
        "{body}"
    );
    let exited = server.child.wait().expect("the server exits");
    assert!(exited.success(), "{exited:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

/// Heavy requests, each read and checked off the async workers: a grammar nested far past
/// the limit, one with 40,000 rules, a 250,000-entry `logit_bias`, and the most tools a
/// request may carry, each with a schema of many fields.
fn heavy_requests() -> Vec<String> {
    let custom = |definition: &str| {
        serde_json::json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1,
            "tools": [{"type": "custom", "name": "g", "description": "a grammar tool",
                "format": {"type": "grammar", "syntax": "lark", "definition": definition}}]})
        .to_string()
    };
    let nested = format!("start: {}\"a\"{}", "(".repeat(100_000), ")".repeat(100_000));
    let rules: String = std::iter::once("start: r0\n".to_owned())
        .chain((0..40_000).map(|k| format!("r{k}: \"y\"\n")))
        .collect();
    let bias: serde_json::Map<String, serde_json::Value> =
        (0..250_000).map(|k| (k.to_string(), 1.into())).collect();
    let field = |k: usize| {
        (
            format!("field_{k}"),
            serde_json::json!({"type": "string", "enum": ["north", "south", "east", "west"]}),
        )
    };
    let tools: Vec<serde_json::Value> = (0..500)
        .map(|t| {
            let props: serde_json::Map<String, serde_json::Value> = (0..12).map(field).collect();
            serde_json::json!({"type": "function", "function": {"name": format!("tool_{t}"),
                "description": "one of many", "parameters": {"type": "object",
                "properties": props, "required": ["field_0"]}}})
        })
        .collect();
    vec![
        custom(&nested),
        custom(&rules),
        serde_json::json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1,
            "logit_bias": bias})
        .to_string(),
        serde_json::json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1,
            "tools": tools, "tool_choice": "required"})
        .to_string(),
    ]
}

#[test]
fn health_answers_at_once_while_heavy_requests_are_read_and_checked() {
    let _one = serial();
    let server = start(&["--timeout-s", "60", "--max-body-bytes", "16777216"]);
    let addr = server.addr.clone();
    let heavy: Vec<_> = heavy_requests()
        .into_iter()
        .flat_map(|body| [body.clone(), body])
        .map(|body| {
            let addr = addr.clone();
            std::thread::spawn(move || common::post_raw(&addr, "/v1/chat/completions", &body))
        })
        .collect();
    let mut slowest = Duration::ZERO;
    while !heavy.iter().all(std::thread::JoinHandle::is_finished) {
        let (reply, took) = server.ask("GET", "/health", "");
        assert_eq!(status(&reply), 200, "{reply}");
        slowest = slowest.max(took);
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("the slowest /health under the heavy requests: {slowest:?}");
    assert!(slowest < Duration::from_millis(500), "{slowest:?}");
    for h in heavy {
        let reply = h.join().expect("a client thread");
        let code = status(&reply);
        assert!(
            (200..500).contains(&code),
            "{}",
            reply.chars().take(600).collect::<String>()
        );
    }
    let (next, _) = server.ask("POST", CHAT, PLAIN);
    assert_eq!(status(&next), 200, "{next}");
}
