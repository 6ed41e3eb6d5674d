//! The prompt-prefix cache on disk, as a user meets it: a repeated one-shot `toolgram call`
//! with the same tools evaluates only its new turn and makes the same call; a truncated or
//! altered state file is ignored with a note and the call still succeeds; `--no-cache` neither
//! reads nor writes; `toolgram cache list|clear`. Runs the real binary on the test model, with
//! the cache in a scratch folder.

mod common;

use common::toolgram_env;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the models are (the real cache: the test model is fetched once for all tests).
fn models_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("TOOLGRAM_MODELS_DIR").unwrap_or_else(|| {
        env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .unwrap_or_else(|| PathBuf::from(".cache"))
            .join("toolgram/models")
    })
}

struct Scratch {
    xdg: PathBuf,
    models: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let xdg = std::env::temp_dir().join(format!("toolgram-cache-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&xdg);
        Self {
            xdg,
            models: models_dir(),
        }
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        toolgram_env(
            args,
            &[
                ("XDG_CACHE_HOME", self.xdg.as_path()),
                ("TOOLGRAM_MODELS_DIR", self.models.as_path()),
            ],
        )
    }

    /// One call; (cached prompt tokens, the call's name and arguments, stderr).
    fn call(&self, extra: &[&str]) -> (u64, String, String) {
        let mut args = vec![
            "call",
            "--model",
            "test",
            "--tools",
            "examples/weather.json",
            // A named tool keeps the tiny test model's greedy call short on every CPU
            // (under `required` it picked `send_email` and ran away on AVX-512 machines).
            "--tool-choice",
            "get_weather",
        ];
        args.extend_from_slice(extra);
        args.push("What is the weather in Paris?");
        let (code, out, err) = self.run(&args);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).expect("one JSON reply");
        let cached = v["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .expect("cached_tokens");
        (cached, v["tool_calls"][0]["function"].to_string(), err)
    }

    fn entries(&self) -> Vec<Value> {
        let (code, out, err) = self.run(&["cache", "list"]);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.xdg);
    }
}

fn state_file(entries: &[Value]) -> PathBuf {
    assert_eq!(entries.len(), 1, "{entries:?}");
    PathBuf::from(entries[0]["path"].as_str().expect("path"))
}

fn damage(path: &Path, how: &str) {
    let mut bytes = std::fs::read(path).expect("state file");
    match how {
        "truncate" => bytes.truncate(bytes.len() / 2),
        _ => {
            let mid = bytes.len() / 2;
            for b in &mut bytes[mid..mid + 64] {
                *b ^= 0x5a;
            }
        }
    }
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn repeated_calls_reuse_the_stored_prefix_and_damaged_files_are_ignored() {
    let s = Scratch::new();
    let (cold, call, _) = s.call(&[]);
    assert_eq!(cold, 0, "nothing stored yet");
    let entries = s.entries();
    let file = state_file(&entries);
    let stored = entries[0]["tokens"].as_u64().expect("tokens");

    let (warm, again, _) = s.call(&[]);
    assert_eq!(
        warm, stored,
        "the whole tool block comes from the stored state"
    );
    assert_eq!(
        again, call,
        "the same call with and without the stored state"
    );

    for how in ["truncate", "alter"] {
        damage(&file, how);
        let (cached, after, err) = s.call(&[]);
        assert_eq!(cached, 0, "{how}: a damaged state is not used");
        assert_eq!(after, call, "{how}");
        assert!(
            err.contains("ignoring a stored prompt prefix"),
            "{how}: no note on stderr: {err}"
        );
        // The prompt was evaluated and stored again.
        assert_eq!(state_file(&s.entries()), file);
    }

    let (code, out, err) = s.run(&["cache", "clear"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"removed\":1"), "{out}");
    let (cached, _, _) = s.call(&["--no-cache"]);
    assert_eq!(cached, 0);
    assert!(s.entries().is_empty(), "--no-cache writes nothing");
}
