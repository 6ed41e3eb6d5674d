//! The prompt-prefix cache on disk, as a user meets it: a repeated one-shot `toolgram call`
//! with the same tools evaluates only its new turn and makes the same call; a truncated or
//! altered state file is ignored with a note and the call still succeeds; `--no-cache` neither
//! reads nor writes; a prompt that changed one line reuses the stored tokens before the change;
//! `toolgram cache list|clear`. Runs the real binary on the test model, with
//! the cache in a scratch folder.

mod common;

use common::{models_dir, toolgram_env};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Scratch {
    xdg: PathBuf,
    models: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let xdg =
            std::env::temp_dir().join(format!("toolgram-cache-cli-{name}-{}", std::process::id()));
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
    let s = Scratch::new("repeated");
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

/// A prompt that changed one line (an agent's system prompt names its folder and the date)
/// reuses the stored state up to the change: the tokens before it are not evaluated again.
#[test]
fn a_prompt_that_changed_one_line_reuses_the_stored_tokens_before_it() {
    let s = Scratch::new("changed");
    let base = "You are a careful assistant for a travel agency. Answer briefly, call a tool when one fits, and never invent a city. ".repeat(3);
    let (cold, call, _) = s.call(&["--system", &format!("{base}Today is Monday.")]);
    assert_eq!(cold, 0, "nothing stored yet");
    let stored = s.entries()[0]["tokens"].as_u64().expect("tokens");
    let (warm, again, _) = s.call(&["--system", &format!("{base}Today is Tuesday.")]);
    assert!(
        warm >= 16 && warm < stored,
        "{warm} of the {stored} stored tokens reused: the ones before the changed line"
    );
    assert_eq!(again, call, "the same call");
}
