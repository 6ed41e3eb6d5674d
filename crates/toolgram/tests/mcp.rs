//! `toolgram call --mcp` against REAL MCP servers over stdio: a server written with the
//! official Python SDK (`tests/mcp/notes_server.py`) whose tool the default model calls in
//! the loop — the file written by the server, the steps listed, an `isError` result shown to
//! the model —, the reference filesystem server (`@modelcontextprotocol/server-filesystem`,
//! installed by `scripts/mcp-servers`) writing a file, a tool list that changes (the runtime's
//! `ToolSources` on a server that says so), a result that breaks its `outputSchema` (the SDK's
//! low-level server), and servers that fail: a command that does not exist, one that never
//! answers (over stdio and over HTTP), one that exits during a call; the notes server over
//! streamable HTTP, declared by its URL. And `toolgram serve --mcp` driven by the official
//! SDKs (`tests/serve/mcp_clients.py`): OpenAI's Responses `mcp` tool and Anthropic's MCP
//! connector, streamed and not, approvals, and no URL a request names ever reached.

mod common;
use common::{ServeChild, toolgram, venv};

use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use toolgram_runtime::{McpError, ToolSources};

/// A fresh notes folder for one test.
fn notes_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("notes folder");
    dir
}

/// The command line of the test server `script` (in `tests/mcp/`, on the Python SDK).
fn sdk_server(script: &str) -> String {
    format!(
        "{} {}",
        venv().display(),
        common::repo()
            .join("crates/toolgram/tests/mcp")
            .join(script)
            .display()
    )
}

/// The test server `script` as declared: named by its script.
fn named(script: &str) -> (String, String) {
    (script.to_owned(), sdk_server(script))
}

/// The notes server's command line over `dir`.
fn notes_server(dir: &std::path::Path) -> String {
    format!("{} {}", sdk_server("notes_server.py"), dir.display())
}

/// `serve --mcp notes=NOTES_SERVER` on the default model, used by the OpenAI and Anthropic
/// SDKs as their hosted MCP tools: every note they ask for is written by the server-side
/// loop, and the URLs they send are never reached (the script's assertions).
#[test]
fn serve_runs_the_loop_for_responses_mcp_tools_and_anthropics_mcp_servers() {
    let dir = notes_dir("serve");
    let declared = format!("notes={}", notes_server(&dir));
    let server = ServeChild::start(&["--mcp", &declared]);
    let out = std::process::Command::new(venv())
        .arg(common::repo().join("crates/toolgram/tests/serve/mcp_clients.py"))
        .args([server.base().as_str(), &dir.display().to_string()])
        .output()
        .expect("python runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{stdout}\n{stderr}\nserver log:\n{}",
        server.log()
    );
    assert!(stdout.contains("no URL reached: ok"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `toolgram call --mcp NOTES_SERVER --tool-choice CHOICE ARGS…` over a fresh notes folder
/// `name`, which succeeds: the folder, the reply and stderr.
fn call_notes(name: &str, choice: &str, args: &[&str]) -> (PathBuf, Value, String) {
    let dir = notes_dir(name);
    let server = notes_server(&dir);
    let mut all = vec!["call", "--mcp", server.as_str(), "--tool-choice", choice];
    all.extend(args);
    let (code, out, err) = toolgram(&all);
    assert_eq!(code, 0, "{err}");
    (dir, reply(&out), err)
}

fn reply(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `--events` with `--mcp`: a `tool_step` line as the call ends, then the reply's events and
/// the reply, which lists the same step.
#[test]
fn events_show_each_step_as_it_ends_then_the_reply() {
    let dir = notes_dir("events");
    let server = notes_server(&dir);
    let prompt = "Write a note named hello.txt containing hello world";
    let (code, out, err) = toolgram(&[
        "call",
        "--mcp",
        &server,
        "--tool-choice",
        "required",
        "--events",
        prompt,
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(reply).collect();
    let step = lines
        .iter()
        .position(|l| l["type"] == "tool_step")
        .unwrap_or_else(|| panic!("no tool_step line: {out}"));
    assert_eq!(lines[step]["tool"], "write_note", "{out}");
    assert_eq!(lines[step]["is_error"], false, "{out}");
    let last = lines.last().expect("a reply");
    assert_eq!(
        last["toolgram"]["steps"][0]["id"], lines[step]["id"],
        "{out}"
    );
    let name = lines[step]["arguments"]["name"].as_str().expect("a name");
    let file = std::path::Path::new(name).file_name().expect("a file name");
    assert!(dir.join(file).exists(), "the server wrote {name}: {out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_model_writes_a_file_through_an_mcp_server_and_the_reply_lists_the_steps() {
    let prompt = "Write a note named hello.txt containing hello world";
    let (dir, json, err) = call_notes("write", "required", &[prompt]);
    let steps = json["toolgram"]["steps"].as_array().expect("steps");
    let first = &steps[0];
    assert_eq!(first["tool"], "write_note", "{json}");
    assert_eq!(first["is_error"], false, "{json}");
    assert!(
        first["server"]
            .as_str()
            .is_some_and(|s| s.contains("notes_server.py"))
    );
    // The server wrote the file its arguments named, with their text.
    let name = first["arguments"]["name"].as_str().expect("a name");
    let text = first["arguments"]["text"].as_str().expect("a text");
    let written = std::fs::read_to_string(dir.join(name)).expect("the server wrote the note");
    assert_eq!(written, text);
    assert!(
        first["result"]
            .as_str()
            .is_some_and(|r| r.starts_with("wrote")),
        "{json}"
    );
    assert!(
        err.contains("mcp: write_note("),
        "progress on stderr: {err}"
    );
    // `required` holds for the first reply only: the loop ends with an answer, not at
    // `--max-steps` with the note written again and again.
    assert!(steps.len() < 8, "{json}");
    assert!(
        !json["toolgram"]["warnings"]
            .to_string()
            .contains("--max-steps"),
        "{json}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The notes server over streamable HTTP (the Python SDK's own HTTP server), declared by its
/// URL: the default model's call writes the note through it.
#[test]
fn a_server_over_streamable_http_runs_the_calls_of_the_loop() {
    let dir = notes_dir("http");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut server = std::process::Command::new(venv())
        .arg(common::repo().join("crates/toolgram/tests/mcp/notes_server.py"))
        .arg(&dir)
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the notes server starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP server never listened");
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let prompt = "Write a note named hello.txt containing hello world";
    let (code, out, err) = toolgram(&["call", "--mcp", &url, "--tool-choice", "required", prompt]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{err}");
    let json = reply(&out);
    let step = &json["toolgram"]["steps"][0];
    assert_eq!(step["tool"], "write_note", "{json}");
    assert_eq!(step["server"], url.as_str(), "{json}");
    let name = step["arguments"]["name"].as_str().expect("a name");
    let file = std::path::Path::new(name).file_name().expect("a file name");
    assert!(dir.join(file).exists(), "the server wrote {name}: {json}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reference filesystem server's binary, installed by `scripts/mcp-servers` (at once when
/// `scripts/prepare-tests` already did).
fn filesystem_server() -> PathBuf {
    let out = std::process::Command::new(common::repo().join("scripts/mcp-servers"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("scripts/mcp-servers runs");
    assert!(out.status.success(), "scripts/mcp-servers failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("mcp-server-filesystem")
}

#[test]
fn the_reference_filesystem_server_writes_the_file_the_model_asks_for() {
    let dir = notes_dir("fs");
    let server = format!("{} {}", filesystem_server().display(), dir.display());
    let file = dir.join("hello.txt");
    let prompt = format!("Create {} containing hello world", file.display());
    // Of its 14 tools the default model picks `create_directory` unasked (docs/mcp.md): the
    // tool is named here; the 1.5B picks `write_file` with no flag.
    let (code, out, err) = toolgram(&[
        "call",
        "--mcp",
        &server,
        "--tool-choice",
        "write_file",
        &prompt,
    ]);
    assert_eq!(code, 0, "{err}");
    let json = reply(&out);
    let first = &json["toolgram"]["steps"][0];
    assert_eq!(first["tool"], "write_file", "{json}");
    assert_eq!(first["is_error"], false, "{json}");
    let path = first["arguments"]["path"].as_str().expect("a path");
    let written = std::fs::read_to_string(path).expect("the server wrote the file");
    assert_eq!(
        written,
        first["arguments"]["content"].as_str().unwrap_or_default()
    );
    assert!(
        err.contains("mcp: 14 tool(s)") || err.contains("tool(s): read_file"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_error_result_goes_back_to_the_model_as_an_error() {
    let prompt = "Read the note called missing.txt";
    let (dir, json, _) = call_notes("error", "read_note", &["--max-steps", "2", prompt]);
    let first = &json["toolgram"]["steps"][0];
    assert_eq!(first["tool"], "read_note", "{json}");
    assert_eq!(first["is_error"], true, "{json}");
    assert!(
        first["result"]
            .as_str()
            .is_some_and(|r| r.contains("no note called")),
        "{json}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tool_list_that_changes_is_read_again_before_the_next_step() {
    let sources =
        ToolSources::start(&[named("vault_server.py")], Duration::from_secs(60)).expect("starts");
    let names = |s: &ToolSources| -> Vec<String> {
        s.tools()
            .expect("listed")
            .into_iter()
            .map(|t| t.tool.name)
            .collect()
    };
    assert_eq!(names(&sources), ["open_vault"]);
    let before = sources.refresh().expect("listed");
    let opened = sources
        .call("open_vault", &json!({}), None)
        .expect("a result");
    assert_eq!(opened.text, "the vault is open");
    // The notification is read by the client's own task: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while names(&sources) != ["read_vault"] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(names(&sources), ["read_vault"]);
    assert!(sources.find("open_vault").is_none());
    assert_eq!(
        sources.refresh().expect("listed"),
        before + 1,
        "a loop sees the list changed"
    );
    let read = sources
        .call("read_vault", &json!({}), None)
        .expect("a result");
    assert_eq!(read.text, "the vault holds 3 gold bars");
}

#[test]
fn a_result_that_breaks_its_output_schema_or_a_refused_call_is_an_error_result() {
    let sources =
        ToolSources::start(&[named("schema_server.py")], Duration::from_secs(60)).expect("starts");
    let r = sources
        .call("forecast", &json!({}), None)
        .expect("a result");
    assert!(r.is_error, "{r:?}");
    assert!(r.text.contains("outputSchema"), "{}", r.text);
    assert_eq!(r.structured, Some(json!({"celsius": "warm"})));
    // A JSON-RPC error is the call's answer (the loop shows it to the model), not a failure
    // of the server.
    match sources.call("refuse", &json!({}), None) {
        Err(McpError::Refused { message, .. }) => {
            assert!(message.contains("no calls today"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_that_exits_during_a_call_is_a_typed_error_not_a_hang() {
    let sources =
        ToolSources::start(&[named("crash_server.py")], Duration::from_secs(20)).expect("starts");
    assert!(sources.find("crash").is_some());
    let started = Instant::now();
    let e = sources
        .call("crash", &json!({}), None)
        .expect_err("the server exited");
    assert!(
        matches!(e, McpError::Failed { .. } | McpError::Timeout { .. }),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(25), "{e}");
}

/// `toolgram call --mcp SERVER ARGS… Hello`, which fails with a `tool_source_error`: stderr.
fn fails_on_server(server: &str, args: &[&str]) -> String {
    let mut all = vec!["call", "--mcp", server];
    all.extend(args);
    all.push("Hello");
    let (code, _, err) = toolgram(&all);
    assert_ne!(code, 0);
    assert!(err.contains("tool_source_error"), "{err}");
    err
}

#[test]
fn a_server_that_cannot_start_or_never_answers_is_a_typed_error_within_its_timeout() {
    let err = fails_on_server("toolgram-no-such-mcp-server --stdio", &[]);
    assert!(err.contains("did not start"), "{err}");
    // `sleep` reads nothing and answers nothing: `initialize` times out.
    let started = Instant::now();
    let err = fails_on_server("sleep 120", &["--mcp-timeout-s", "2"]);
    assert!(err.contains("within 2 s"), "{err}");
    // Over streamable HTTP: nothing listening, and a listener that never answers.
    let err = fails_on_server("http://127.0.0.1:9/mcp", &["--mcp-timeout-s", "5"]);
    assert!(
        err.contains("did not start") || err.contains("within 5 s"),
        "{err}"
    );
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/mcp", silent.local_addr().expect("its address"));
    std::thread::spawn(move || {
        // Accept and hold every connection, answering nothing.
        let held: Vec<_> = silent.incoming().map_while(Result::ok).collect();
        drop(held);
    });
    let err = fails_on_server(&url, &["--mcp-timeout-s", "2"]);
    assert!(err.contains("within 2 s"), "{err}");
    // A declaration that cannot be used is the operator's request, not the server's failure.
    let (code, _, err) = toolgram(&["call", "--mcp", "notes 'unbalanced", "Hello"]);
    assert_ne!(code, 0);
    assert!(err.contains("invalid_request"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
