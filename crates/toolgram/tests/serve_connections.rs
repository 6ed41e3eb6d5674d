//! `toolgram serve`'s start and stop as an operator meets them, the real binary on loopback in
//! front of a provider that is never reached (no model loads): SIGTERM with a slow body and
//! slow headers open exits within `--drain-timeout-s`, an empty API key stops it before it
//! serves, and a bind beyond loopback without a key is warned about.

mod common;
use common::repo;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `toolgram serve` in front of a provider on a closed port, with `extra` flags.
fn serve(extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgram"));
    cmd.args(["serve", "--provider", "llama-server"])
        .args([
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--port",
            "0",
        ])
        .args(extra)
        .current_dir(repo())
        .env_remove("TOOLGRAM_API_KEY");
    cmd
}

/// The child, its address, and its stderr so far.
fn start(extra: &[&str]) -> (Child, String, Arc<Mutex<String>>) {
    let mut child = serve(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgram serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let log = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&log);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("on http://").nth(1) {
                let _ = tx.send(rest.split('/').next().unwrap_or("").to_owned());
            }
            if let Ok(mut l) = sink.lock() {
                l.push_str(&line);
                l.push('\n');
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the server says where it listens");
    (child, addr, log)
}

#[test]
fn sigterm_with_a_slow_body_and_slow_headers_open_exits_within_the_drain_bound() {
    let (mut child, addr, log) = start(&[
        "--drain-timeout-s",
        "2",
        "--header-read-timeout-s",
        "300",
        "--body-read-timeout-s",
        "300",
    ]);
    let mut body = TcpStream::connect(&addr).expect("connects");
    body.write_all(
        format!("POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{")
            .as_bytes(),
    )
    .expect("written");
    let mut headers = TcpStream::connect(&addr).expect("connects");
    headers
        .write_all(format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .expect("written");
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    let started = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .is_ok_and(|s| s.success())
    );
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still running 30 s after SIGTERM with --drain-timeout-s 2");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let log = log.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(status.success(), "{status:?}: {log}");
    assert!(took < Duration::from_secs(6), "took {took:?}: {log}");
    assert!(log.contains("after the 2 s drain"), "{log}");
}

#[test]
fn an_empty_api_key_stops_the_server_before_it_serves() {
    let flag = serve(&["--api-key", ""]).output().expect("runs");
    let mut env = serve(&[]);
    env.env("TOOLGRAM_API_KEY", "");
    let env = env.output().expect("runs");
    for out in [flag, env] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains("the API key is empty"), "{err}");
        assert!(!err.contains("on http://"), "{err}");
    }
}

#[test]
fn a_bind_beyond_loopback_without_a_key_is_warned_about() {
    let (mut open, _, log) = start(&["--host", "0.0.0.0"]);
    let (mut keyed, _, keyed_log) = start(&["--host", "0.0.0.0", "--api-key", "k"]);
    let (mut local, _, local_log) = start(&[]);
    for child in [&mut open, &mut keyed, &mut local] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let text = |l: &Arc<Mutex<String>>| l.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(text(&log).contains("WARNING"), "{}", text(&log));
    assert!(text(&log).contains("--api-key"), "{}", text(&log));
    assert!(
        !text(&keyed_log).contains("WARNING"),
        "{}",
        text(&keyed_log)
    );
    assert!(
        !text(&local_log).contains("WARNING"),
        "{}",
        text(&local_log)
    );
}
