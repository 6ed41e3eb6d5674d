//! What no client can do to `toolgram serve` (issue 67's probes, on the test model, declared
//! twice as `a` and `b` where two models are needed): a client that stops reading its stream
//! on `a` does not keep `b` from loading; bodies that cannot be read load no model; counting
//! tokens never holds up a request the check refuses; a request's ballots are admitted
//! together and, when every one fails, the reply carries all their tokens; a schema the
//! grammar engine refuses is a 4xx before the queue; a stream the drain ends before its first
//! event gets 503; a models file's path outside its folder is refused; the default deadline
//! is sized to the machine, and `/health` says how.

mod common;
use common::{ServeChild, body_json, status};

use serde_json::{Value, json};
use std::io::Read;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One server at a time: they share the machine's cores with the engine.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const CHAT: &str = "/v1/chat/completions";

/// A models file declaring the test model twice, as `a` and `b`.
fn two_models() -> std::path::PathBuf {
    common::temp_file(
        "two-models.toml",
        "[[model]]\nname = \"a\"\nmodel = \"test\"\nctx_size = 4096\n\n[[model]]\nname = \"b\"\nmodel = \"test\"\nctx_size = 4096\n",
    )
}

/// A server of `a` and `b` (the test model twice) with at most one loaded, and `extra`.
fn two_models_one_loaded(extra: &[&str]) -> ServeChild {
    let file = two_models().to_string_lossy().into_owned();
    let mut args = vec!["--models", file.as_str(), "--max-loaded", "1", "--no-cache"];
    args.extend(extra);
    ServeChild::start(&args)
}

/// A server of the test model with `extra` (its lanes, queue and deadlines).
fn test_model(extra: &[&str]) -> ServeChild {
    let mut args = vec!["--model", "test", "--no-cache", "--threads", "2"];
    args.extend(extra);
    ServeChild::start(&args)
}

/// `GET /metrics`' value of `name{model="…"}` (0 when absent).
fn metric(server: &ServeChild, name: &str, model: &str) -> f64 {
    let (reply, _) = server.ask("GET", "/metrics", "");
    let want = format!("{name}{{model=\"{model}\"}} ");
    reply
        .lines()
        .find_map(|l| l.strip_prefix(&want))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

fn plain(model: &str) -> String {
    json!({"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4})
        .to_string()
}

#[test]
fn a_client_that_stops_reading_its_stream_on_a_does_not_keep_b_from_loading() {
    let _one = serial();
    let server = two_models_one_loaded(&[
        "--min-residency-s",
        "0",
        "--timeout-s",
        "60",
        "--write-timeout-s",
        "8",
        "--max-body-bytes",
        "33554432",
    ]);
    // A Responses stream on `a` whose every response object echoes an 8 MB schema: far more
    // than the sockets buffer, and the client reads none of it.
    let schema = json!({"type": "object", "description": "x".repeat(8 << 20),
        "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let body = json!({"model": "a", "input": "Reply in JSON.", "stream": true,
        "max_output_tokens": 16,
        "text": {"format": {"type": "json_schema", "name": "r", "schema": schema}}})
    .to_string();
    let mut stalled = server.send("POST", "/v1/responses", &[], &body);
    std::thread::sleep(Duration::from_secs(2));
    let (reply, took) = server.ask("POST", CHAT, &plain("b"));
    assert_eq!(status(&reply), 200, "{reply}\n{}", server.log());
    assert_eq!(body_json(&reply)["model"], "b", "{reply}");
    assert!(
        took < Duration::from_secs(6),
        "`b` waited {took:?} behind a stalled reader on `a`"
    );
    // The write deadline closed the stalled connection: what the kernel held is there, then
    // the end — never the stream's last event.
    std::thread::sleep(Duration::from_secs(10));
    stalled.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut got = Vec::new();
    let _ = stalled.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("response.created"), "the stream began");
    assert!(
        !text.contains("response.completed"),
        "the stream ran to its end"
    );
    // `a` loads again for the next request on it.
    let (reply, _) = server.ask("POST", CHAT, &plain("a"));
    assert_eq!(status(&reply), 200, "{reply}");
}

#[test]
fn bodies_that_cannot_be_read_load_no_model() {
    let _one = serial();
    let server = two_models_one_loaded(&[]);
    let loads = |m| metric(&server, "toolgram_model_loads_total", m);
    let before = (loads("a"), loads("b"));
    assert_eq!(before, (1.0, 0.0), "the default model loads at start");
    let invalid = [
        json!({"model": "b"}),
        json!({"model": "b", "messages": "Hi"}),
        json!({"model": "b", "messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"type": "function", "function": {"name": "bad name!"}}]}),
        json!({"model": "b", "messages": [{"role": "user", "content": "Hi"}],
            "tool_choice": {"type": "function", "function": {"name": "nowhere"}}}),
        json!({"model": "b", "messages": [{"role": "user", "content": "Hi"}], "votes": 99}),
    ];
    for (i, body) in invalid.iter().cycle().take(10).enumerate() {
        let mut body = body.clone();
        body["model"] = json!(if i % 2 == 0 { "b" } else { "a" });
        let (reply, _) = server.ask("POST", CHAT, &body.to_string());
        assert_eq!(status(&reply), 400, "{body}: {reply}");
    }
    // A key given twice is refused, whichever comes first.
    for twice in [
        r#"{"model":"nope","model":"b","messages":[{"role":"user","content":"Hi"}]}"#,
        r#"{"model":"b","model":"nope","messages":[{"role":"user","content":"Hi"}]}"#,
    ] {
        let (reply, _) = server.ask("POST", CHAT, twice);
        assert_eq!(status(&reply), 400, "{reply}");
        assert!(reply.contains("`model` is given twice"), "{reply}");
    }
    assert_eq!((loads("a"), loads("b")), before, "{}", server.log());
    assert_eq!(metric(&server, "toolgram_model_unloads_total", "a"), 0.0);
}

/// A reply that runs to its token limit: the end-of-generation tokens made unlikely, and text
/// that repeats itself kept (the test model loops).
fn endless(max_tokens: usize) -> String {
    json!({"messages": [{"role": "user", "content": "Tell me a very long story about the sea."}],
        "max_tokens": max_tokens, "logit_bias": {"0": -100, "2": -100},
        "repeated_text": "keep"})
    .to_string()
}

#[test]
fn counting_tokens_and_refused_schemas_never_wait_behind_a_long_generation() {
    let _one = serial();
    let server = test_model(&["--parallel", "1", "--max-sessions", "1"]);
    let addr = server.addr.clone();
    let long = std::thread::spawn(move || common::post_raw(&addr, CHAT, &endless(1500)));
    std::thread::sleep(Duration::from_millis(800));
    let count =
        json!({"model": "test", "messages": [{"role": "user", "content": "Hi"}]}).to_string();
    let counting: Vec<_> = (0..3)
        .map(|_| {
            let addr = server.addr.clone();
            let body = count.clone();
            std::thread::spawn(move || common::post_raw(&addr, "/v1/messages/count_tokens", &body))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    // Refused by the check: bad tools, and schemas the grammar engine cannot take.
    let many: Vec<Value> = (0..512)
        .map(|t| {
            let props: serde_json::Map<String, Value> = (0..40)
                .map(|k| (format!("p{k}"), json!({"type": "string", "pattern": format!("^[a-z]{{{t},{}}}x{k}$", t + 3)})))
                .collect();
            json!({"type": "function", "function": {"name": format!("t{t}"),
                "parameters": {"type": "object", "properties": props}}})
        })
        .collect();
    // Each with how long its own check may take: milliseconds for the first two; the third
    // compiles 512 tools (about 9 s here) before llguidance refuses it.
    let refused = [
        (
            json!({"messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": 7}}}]}),
            2,
        ),
        (
            json!({"messages": [{"role": "user", "content": "Hi"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "r",
                "schema": {"$ref": "https://example.com/schema.json"}}}}),
            2,
        ),
        (
            json!({"messages": [{"role": "user", "content": "Hi"}], "tools": many,
            "tool_choice": "required"}),
            20,
        ),
    ];
    for (body, seconds) in &refused {
        let (reply, took) = server.ask("POST", CHAT, &body.to_string());
        let code = status(&reply);
        assert!(
            (400..500).contains(&code),
            "{code}: {}",
            reply.chars().take(800).collect::<String>()
        );
        assert!(
            took < Duration::from_secs(*seconds),
            "refused after {took:?}, behind the generation and the counts"
        );
        eprintln!(
            "refused in {took:?}: {}",
            body_json(&reply)["error"]["message"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect::<String>()
        );
    }
    for c in counting {
        let reply = c.join().expect("a counting client");
        assert_eq!(status(&reply), 200, "{reply}");
    }
    let reply = long.join().expect("the long generation");
    assert_eq!(status(&reply), 200, "{reply}");
}

/// A schema whose lexer outgrows the grammar engine only while decoding (nested counted
/// repetitions llguidance builds lazily) is the client's to simplify: a 400 naming the limit,
/// not a 500, beside tools or alone.
#[test]
fn a_schema_past_the_grammar_engines_limits_while_decoding_is_a_400() {
    let _one = serial();
    let server = test_model(&["--parallel", "1", "--max-sessions", "1"]);
    let format = json!({"type": "json_schema", "json_schema": {"name": "r", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "pattern": "^(a{1000}){1000}$"}},
        "required": ["a"]}}});
    let body = json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 64,
        "response_format": format});
    let (reply, _) = server.ask("POST", CHAT, &body.to_string());
    assert_eq!(status(&reply), 400, "{reply}");
    let e = &body_json(&reply)["error"];
    assert_eq!(e["code"], "grammar_limit", "{reply}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or("")
            .contains("LexerTooComplex")
            || e["message"].as_str().unwrap_or("").contains("too complex"),
        "{reply}"
    );
    let (next, _) = server.ask("POST", CHAT, &plain("test"));
    assert_eq!(status(&next), 200, "the server goes on: {next}");
}

#[test]
fn a_requests_ballots_are_admitted_together_and_their_tokens_counted_when_all_fail() {
    let _one = serial();
    let server = test_model(&["--parallel", "2", "--max-sessions", "2", "--max-queue", "2"]);
    // More ballots than the model admits at once (2 running + 2 waiting): refused whole.
    let ask = |votes: usize, max_tokens: usize| {
        json!({"messages": [{"role": "user", "content": "Weather in Paris?"}], "votes": votes,
            "max_tokens": max_tokens, "tool_choice": "required",
            "tools": [{"type": "function", "function": {"name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]}}}]})
        .to_string()
    };
    let (reply, _) = server.ask("POST", CHAT, &ask(5, 64));
    assert_eq!(status(&reply), 400, "{reply}");
    assert!(reply.contains("admitted together"), "{reply}");
    let (reply, _) = server.ask("POST", CHAT, &ask(9, 64));
    assert_eq!(status(&reply), 400, "over --max-votes: {reply}");
    // With one request running, four ballots do not fit: 429 for the whole request.
    let addr = server.addr.clone();
    let long = std::thread::spawn(move || common::post_raw(&addr, CHAT, &endless(600)));
    std::thread::sleep(Duration::from_millis(800));
    let (reply, _) = server.ask("POST", CHAT, &ask(4, 64));
    assert_eq!(status(&reply), 429, "{reply}");
    let reply = long.join().expect("the long generation");
    assert_eq!(status(&reply), 200, "{reply}");
    // Every ballot cut by its token limit: the reply counts all their tokens.
    let (one, _) = server.ask("POST", CHAT, &ask(1, 3));
    let (three, _) = server.ask("POST", CHAT, &ask(3, 3));
    let tokens = |r: &str| {
        body_json(r)["usage"]["completion_tokens"]
            .as_u64()
            .unwrap_or(0)
    };
    assert!(tokens(&one) > 0, "{one}");
    assert_eq!(tokens(&three), 3 * tokens(&one), "{three}\n{one}");
}

#[test]
fn a_stream_the_drain_ends_before_its_first_event_gets_503() {
    let _one = serial();
    let mut server = test_model(&[
        "--parallel",
        "1",
        "--max-sessions",
        "1",
        "--drain-timeout-s",
        "1",
    ]);
    // A prompt whose prefill outlasts the drain: nothing is streamed before it ends.
    let words = "sea ".repeat(3800);
    let body = json!({"messages": [{"role": "user", "content": words}], "max_tokens": 4,
        "stream": true})
    .to_string();
    let addr = server.addr.clone();
    let started = Instant::now();
    let streamed = std::thread::spawn(move || common::post_raw(&addr, CHAT, &body));
    std::thread::sleep(Duration::from_millis(200));
    server.terminate();
    let reply = streamed.join().expect("the client thread");
    eprintln!("answered after {:?}", started.elapsed());
    assert_eq!(status(&reply), 503, "{reply}");
    assert_eq!(
        body_json(&reply)["error"]["code"],
        "shutting_down",
        "{reply}"
    );
    let exited = server.child.wait().expect("the server exits");
    assert!(exited.success(), "{exited:?}");
}

/// An agent's first request can be longer than the deadline allows: its prefill, cut by the
/// deadline, is kept on disk as far as it got, so the retry (here by a fresh server, as after a
/// restart) resumes from there rather than from the start.
#[test]
fn a_prefill_cut_by_its_deadline_is_kept_and_the_retry_resumes_from_it() {
    let _one = serial();
    let xdg = std::env::temp_dir().join(format!("toolgram-limits-kv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&xdg);
    let env = [("XDG_CACHE_HOME", xdg.as_path())];
    let models = common::models_dir();
    let env_models = [env[0], ("TOOLGRAM_MODELS_DIR", models.as_path())];
    let body = json!({"messages": [
        {"role": "system", "content": "You read the notes below carefully. ".repeat(1000)},
        {"role": "user", "content": "Hi"}], "max_tokens": 2})
    .to_string();
    let args = [
        "--model",
        "test",
        "--parallel",
        "1",
        "--max-sessions",
        "1",
        "--threads",
        "2",
    ];
    let cut = ServeChild::start_env(&[&args[..], &["--timeout-s", "1"]].concat(), &env_models);
    let (reply, _) = cut.ask("POST", CHAT, &body);
    assert_eq!(
        status(&reply),
        504,
        "the prefill outlasts a 1 s deadline: {reply}"
    );
    drop(cut);
    let retry = ServeChild::start_env(&[&args[..], &["--timeout-s", "120"]].concat(), &env_models);
    let (reply, _) = retry.ask("POST", CHAT, &body);
    assert_eq!(status(&reply), 200, "{reply}");
    let usage = &body_json(&reply)["usage"];
    let cached = usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
    eprintln!("the retry took {cached} of its {prompt} prompt tokens from the cut prefill");
    assert!(cached >= 512 && cached < prompt, "{usage}");
    let _ = std::fs::remove_dir_all(&xdg);
}

#[test]
fn a_models_file_path_outside_its_folder_is_refused_unless_the_operator_allows_it() {
    let outside = common::temp_file(
        "outside.toml",
        "[[model]]\nmodel = \"../../../../etc/hostname.gguf\"\nchat_template = \"../../../../etc/hostname\"\n",
    );
    let (code, _, stderr) = common::toolgram(&[
        "serve",
        "--port",
        "0",
        "--models",
        &outside.to_string_lossy(),
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("outside"), "{stderr}");
}

/// With no `--timeout-s` a request's time is sized to the machine: `/health` shows each
/// model's measured speed and the deadline it gives — what a prompt filling the context
/// (its per-token time doubling every 6,000 tokens) and a 2,048-token reply take at those
/// rates, 300 s at least; with
/// `--timeout-s` it is that, and nothing is timed.
#[test]
fn the_default_deadline_is_sized_to_the_machine_and_health_says_it() {
    let _one = serial();
    // A context large enough that its sized deadline is above the 300 s floor here, so the
    // test tells a sized deadline from a fixed one.
    let server = test_model(&["--ctx-size", "32768"]);
    let model = (0..60)
        .find_map(|_| {
            let (reply, _) = server.ask("GET", "/health", "");
            let m = body_json(&reply)["models"][0].clone();
            if m["speed"].is_object() {
                return Some(m);
            }
            std::thread::sleep(Duration::from_millis(500));
            None
        })
        .expect("the model is timed within 30 s");
    let speed = &model["speed"];
    let prefill = speed["prefill_tokens_per_s"]
        .as_f64()
        .expect("prefill rate");
    let decode = speed["decode_tokens_per_s"].as_f64().expect("decode rate");
    assert!(prefill > 0.0 && decode > 0.0, "{model}");
    let n_ctx = model["context_tokens"].as_f64().expect("context");
    let sized = (n_ctx / prefill * (1.0 + n_ctx / 6000.0) + 2048.0 / decode).max(300.0);
    let given = model["timeout_s"].as_f64().expect("timeout");
    assert!(
        sized > 300.0,
        "the context must size past the floor: {model}"
    );
    assert!(
        (given - sized).abs() <= sized * 0.05 + 1.0,
        "{given} s given, {sized} s at the rates shown: {model}"
    );
    drop(server);
    let fixed = test_model(&["--timeout-s", "7"]);
    let (reply, _) = fixed.ask("GET", "/health", "");
    let health = body_json(&reply);
    assert_eq!(health["models"][0]["timeout_s"], 7, "{health}");
    assert!(health["models"][0]["speed"].is_null(), "{health}");
    assert!(
        health["timeout"]
            .as_str()
            .is_some_and(|t| t.starts_with("fixed"))
    );
}
