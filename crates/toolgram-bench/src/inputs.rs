//! The files a benchmark reads besides its datasets: a tools file (its JSON, sent to a peer
//! as it is, and the tools read from it) and a prompts file.
//!
//! Reading only: this module must not run anything.

use crate::BenchError;
use serde_json::Value;
use std::path::Path;
use toolgram_core::ToolSet;

/// A tools file: its JSON (sent to peers as it is) and the tools read from it.
pub fn read_tools(path: &Path) -> Result<(Value, ToolSet), BenchError> {
    let json = read_json(path)?;
    let tools = ToolSet::from_value(&json).map_err(|e| input(path, e.to_string()))?;
    Ok((json, tools))
}

/// User prompts from a JSON file: an array of strings or of objects with `prompt`.
pub fn read_prompts(path: &Path) -> Result<Vec<String>, BenchError> {
    let doc = read_json(path)?;
    let prompts: Vec<String> = doc
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().or_else(|| p["prompt"].as_str()))
        .map(str::to_owned)
        .collect();
    if prompts.is_empty() {
        let what = "no prompts (an array of strings or of objects with `prompt`)";
        return Err(input(path, what.to_owned()));
    }
    Ok(prompts)
}

fn read_json(path: &Path) -> Result<Value, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| input(path, format!("not JSON: {e}")))
}

fn input(path: &Path, message: String) -> BenchError {
    BenchError::Input {
        file: path.to_path_buf(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in the system's temporary folder, removed when dropped.
    struct Temp(std::path::PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn file(text: &str) -> Temp {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = format!("toolgram-bench-inputs-{}-{n}.json", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).expect("temp file");
        Temp(path)
    }

    #[test]
    fn prompts_are_strings_or_objects_with_prompt() {
        let f = file(r#"["a", {"prompt": "b"}, {"other": 1}, 3]"#);
        assert_eq!(read_prompts(&f.0).unwrap(), ["a", "b"]);
    }

    #[test]
    fn a_prompts_file_without_prompts_is_an_input_error() {
        let f = file(r#"{"prompt": "not in an array"}"#);
        let err = read_prompts(&f.0).unwrap_err();
        assert!(matches!(err, BenchError::Input { .. }), "{err}");
        assert!(err.to_string().contains("no prompts"), "{err}");
    }

    #[test]
    fn a_tools_file_keeps_its_json_beside_the_tools() {
        let doc = r#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]"#;
        let f = file(doc);
        let (json, tools) = read_tools(&f.0).unwrap();
        assert_eq!(json, serde_json::from_str::<Value>(doc).unwrap());
        assert_eq!(tools.tools().len(), 1);
    }

    #[test]
    fn unreadable_and_malformed_files_are_typed_errors() {
        let missing = std::env::temp_dir().join("toolgram-bench-inputs-missing.json");
        assert!(matches!(read_tools(&missing), Err(BenchError::Io { .. })));
        let f = file("{not json");
        let err = read_tools(&f.0).unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
    }
}
