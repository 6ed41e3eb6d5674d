//! Where the layers go, as a user runs it. The default (CPU) build refuses a GPU layer count,
//! naming the feature, and runs `--gpu-layers 0` and `auto` on the CPU; the Vulkan build
//! (`scripts/build-vulkan-toolgram`, run by `scripts/prepare-tests`) offloads every layer of
//! the test model to Mesa's software Vulkan driver (lavapipe) and makes the same call as the
//! CPU build, with llama.cpp's own log saying the layers are on the Vulkan device.

mod common;
use common::toolgram;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const PROMPT: &str = "What's the weather like in Paris today?";

fn weather_call(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "call",
        "--model",
        "test",
        "--tools",
        "examples/weather.json",
        "--tool-choice",
        "required",
        "--max-tokens",
        "64",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push(PROMPT.to_owned());
    args
}

/// The default (CPU) build on the weather call.
fn cpu_call(extra: &[&str]) -> (i32, String, String) {
    let args = weather_call(extra);
    toolgram(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn message(stdout: &str, stderr: &str) -> Value {
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {stdout}\n{stderr}"))
}

/// The calls of a reply, without their ids.
fn calls(msg: &Value) -> Vec<(Value, Value)> {
    msg["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["function"]["name"].clone(),
                c["function"]["arguments"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_cpu_build_refuses_gpu_layers_and_names_the_feature() {
    for layers in ["4", "all"] {
        let (code, stdout, stderr) = cpu_call(&["--gpu-layers", layers]);
        assert_ne!(code, 0, "{stdout}");
        let last = stderr.lines().last().unwrap_or_default();
        let err: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        assert_eq!(err["error"]["type"], "gpu_unavailable", "{stderr}");
        let text = err["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains("--features vulkan"), "{text}");
    }
    let (code, _, stderr) = toolgram(&["call", "--gpu-layers", "lots", "x"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("a layer count, `all` or `auto`"),
        "{stderr}"
    );
}

#[test]
fn a_cpu_build_runs_auto_and_zero_on_the_cpu_and_says_so() {
    for layers in ["auto", "0"] {
        let (code, stdout, stderr) = cpu_call(&["--gpu-layers", layers]);
        assert_eq!(code, 0, "{stderr}");
        let offload = &message(&stdout, &stderr)["toolgram"]["timings"]["offload"];
        assert_eq!(offload["backend"], "CPU", "{offload}");
        assert_eq!(offload["gpu_layers"], 0);
        assert_eq!(offload["requested"], layers);
        assert!(offload["layers"].as_u64().is_some_and(|n| n > 1));
        // No GPU backend built: nothing fell back, so nothing to say.
        assert_eq!(offload["fallback"], Value::Null);
    }
}

#[test]
fn devices_lists_the_cpu_and_no_gpu_backend_in_the_default_build() {
    let (code, stdout, stderr) = toolgram(&["devices", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = message(&stdout, &stderr);
    assert_eq!(doc["backends_built"], serde_json::json!([]));
    let devices = doc["devices"].as_array().expect("devices");
    assert!(devices.iter().any(|d| d["type"] == "cpu"), "{doc}");
    let (code, stdout, _) = toolgram(&["devices"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("GPU backends built: none"), "{stdout}");
}

/// The Vulkan build `scripts/build-vulkan-toolgram` leaves in the cache.
fn vulkan_binary() -> PathBuf {
    let cache = std::env::var_os("TOOLGRAM_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/toolgram"),
        PathBuf::from,
    );
    let bin = cache.join("vulkan/toolgram");
    assert!(
        bin.is_file(),
        "{} is missing: run scripts/prepare-tests (it builds toolgram --features vulkan)",
        bin.display()
    );
    bin
}

#[test]
fn the_vulkan_build_offloads_every_layer_to_lavapipe_and_makes_the_cpu_builds_call() {
    let bin = vulkan_binary();
    let (code, stdout, stderr) = cpu_call(&["--gpu-layers", "0"]);
    assert_eq!(code, 0, "{stderr}");
    let on_cpu = message(&stdout, &stderr);

    let out = Command::new(&bin)
        // The whole prompt evaluated on the device, none of it from the CPU run's cache.
        .args(weather_call(&["--gpu-layers", "all", "--no-cache"]))
        .current_dir(common::repo())
        // ggml's Vulkan backend skips CPU-type devices (lavapipe is one) unless named.
        .env("GGML_VK_VISIBLE_DEVICES", "0")
        // llama.cpp's own log: where it put the layers.
        .env("TOOLGRAM_LOG", "info")
        .output()
        .expect("the Vulkan build runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let on_vulkan = message(&stdout, &stderr);
    let offload = &on_vulkan["toolgram"]["timings"]["offload"];
    assert_eq!(offload["backend"], "Vulkan", "{offload}");
    assert_eq!(offload["gpu_layers"], offload["layers"], "{offload}");
    assert!(
        offload["devices"][0]
            .as_str()
            .is_some_and(|d| d.starts_with("Vulkan0 (llvmpipe")),
        "{offload}"
    );
    let n = offload["layers"].as_u64().expect("layer count");
    assert!(
        stderr.contains(&format!("offloaded {n}/{n} layers to GPU")),
        "llama.cpp does not report the layers on the GPU: {stderr}"
    );
    assert!(stderr.contains("Vulkan0 model buffer size"), "{stderr}");

    assert_eq!(on_vulkan["finish_reason"], "tool_calls");
    assert!(!calls(&on_vulkan).is_empty());
    assert_eq!(calls(&on_vulkan), calls(&on_cpu), "{on_vulkan}\n{on_cpu}");
}

/// Every command that loads a model exits 0 after a success with every layer on the device
/// (issue 48: on CUDA `call` printed its answer and then aborted in `llama_free` at exit, 134).
/// Lavapipe stands in for a GPU: a backend whose contexts, models and buffers must be freed
/// before the process ends.
#[test]
fn every_command_on_the_vulkan_build_exits_0_after_a_success() {
    let bin = vulkan_binary();
    let on_device = |args: &[&str]| {
        let out = Command::new(&bin)
            .args(args)
            .args(["--model", "test", "--gpu-layers", "all"])
            .current_dir(common::repo())
            .env("GGML_VK_VISIBLE_DEVICES", "0")
            .output()
            .expect("the Vulkan build runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let schema = std::env::temp_dir().join(format!("toolgram-gpu-{}.json", std::process::id()));
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"cold":{"type":"boolean"}},"required":["cold"]}"#,
    )
    .expect("schema written");
    let generated = on_device(&[
        "generate",
        "--max-tokens",
        "16",
        "--schema",
        &schema.to_string_lossy(),
        "Is it cold? Answer in JSON.",
    ]);
    let _ = std::fs::remove_file(&schema);
    assert!(generated.contains("cold"), "{generated}");
    on_device(&[
        "bench",
        "call",
        "--tools",
        "examples/weather.json",
        "--runs",
        "1",
        "--max-tokens",
        "48",
        PROMPT,
    ]);
    served_then_terminated(&bin);
}

/// `serve` on the device: one request answered, then SIGTERM; the process must exit 0.
fn served_then_terminated(bin: &std::path::Path) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(bin)
        .args([
            "serve",
            "--model",
            "test",
            "--gpu-layers",
            "all",
            "--port",
            "0",
        ])
        .args(["--no-cache", "--parallel", "1"])
        .current_dir(common::repo())
        .env("GGML_VK_VISIBLE_DEVICES", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = common::listening_addr(&mut lines).expect("the server says where it listens");
    let reply = common::post_raw(
        &addr,
        "/v1/chat/completions",
        r#"{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4}"#,
    );
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    // The rest of its log, so a crash at exit shows.
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("serve exits");
    assert_eq!(status.code(), Some(0), "{}", rest.join("\n"));
}
