//! Every `toolgram …` command shown in README.md and docs/ parses as this binary's arguments.
//!
//! # Contents
//!
//! - [`shell_blocks`]: the lines of the ```sh / ```bash / ```console code blocks of a Markdown
//!   file, continuation lines (`\`) joined.
//! - [`invocations`]: the toolgram argument lists in one such line: `toolgram ARGS`,
//!   `cargo run … -p toolgram -- ARGS`, and the same inside `$( … )`, cut at the first shell
//!   operator (`|`, `&&`, `;`, `&`, redirections) or comment.
//! - The test: each one goes through clap as `main` parses it, so a renamed flag, a removed
//!   subcommand or a placeholder left in a runnable block (`[--limit N]`, `FILE`) fails CI.
//!   Synopsis blocks (plain ``` fences) are not read. It must not run the commands: most load a
//!   model or reach a server.

use clap::Parser;
use std::path::{Path, PathBuf};
use toolgram::Cli;

/// The Markdown files whose shell blocks are checked: README.md and every `docs/**/*.md`.
fn documents(repo: &Path) -> Vec<PathBuf> {
    let mut out = vec![repo.join("README.md")];
    let mut dirs = vec![repo.join("docs")];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    out
}

/// `(line number, command line)` for each line of a shell code block, continuations joined.
fn shell_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_shell: Option<bool> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            in_shell = match in_shell {
                Some(_) => None,
                None => Some(matches!(lang.trim(), "sh" | "bash" | "shell" | "console")),
            };
            continue;
        }
        if in_shell != Some(true) {
            continue;
        }
        let text = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        joined.push_str(text.trim_end_matches('\\'));
        joined.push(' ');
        if text.ends_with('\\') {
            pending = Some((start, joined));
        } else {
            out.push((start, joined.trim().to_owned()));
        }
    }
    out
}

/// Where a shell word ends the command it belongs to.
fn ends_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&" | "<" | ">" | ">>")
        || word.starts_with('#')
        || word.starts_with("2>")
        || word.starts_with("1>")
        || word.starts_with('>')
}

/// The toolgram argument lists in one command line (without the program name).
fn invocations(line: &str) -> Vec<Vec<String>> {
    let mut lines = vec![line.to_owned()];
    // Command substitutions: `"$(toolgram model path default)"` is a command of its own.
    let mut rest = line;
    while let Some(at) = rest.find("$(") {
        let inner = &rest[at + 2..];
        let Some(end) = inner.find(')') else { break };
        lines.push(inner[..end].to_owned());
        rest = &inner[end..];
    }
    let mut out = Vec::new();
    for line in lines {
        let words =
            shlex::split(&line).unwrap_or_else(|| panic!("not one shell command line: {line}"));
        let mut segment: Vec<&str> = Vec::new();
        for word in words.iter().map(String::as_str).chain([";"]) {
            if !ends_command(word) {
                segment.push(word);
                continue;
            }
            if let Some(args) = toolgram_args(&segment) {
                out.push(args);
            }
            segment.clear();
        }
    }
    out
}

/// `toolgram ARGS` or `cargo run … -p toolgram -- ARGS` (leading `VAR=value` words skipped).
fn toolgram_args(segment: &[&str]) -> Option<Vec<String>> {
    let words: Vec<&str> = segment
        .iter()
        .copied()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect();
    let args = match words.as_slice() {
        ["toolgram", args @ ..] => args,
        ["cargo", "run", rest @ ..] if rest.windows(2).any(|w| w == ["-p", "toolgram"]) => {
            let dashes = rest.iter().position(|w| *w == "--")?;
            &rest[dashes + 1..]
        }
        _ => return None,
    };
    Some(args.iter().map(|a| (*a).to_owned()).collect())
}

#[test]
fn every_documented_command_parses() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in documents(&repo) {
        let text = std::fs::read_to_string(&doc).expect("readable document");
        for (line, command) in shell_blocks(&text) {
            for args in invocations(&command) {
                checked += 1;
                let argv = std::iter::once("toolgram".to_owned()).chain(args);
                if let Err(e) = Cli::try_parse_from(argv) {
                    let why = e.to_string();
                    let why = why.lines().next().unwrap_or_default().to_owned();
                    failures.push(format!("{}:{line}: {command}\n    {why}", doc.display()));
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} documented commands found");
    assert!(
        failures.is_empty(),
        "{} of {checked} documented commands do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn invocations_are_found_inside_pipes_substitutions_and_cargo_run() {
    let found = invocations(
        "echo x | FOO=1 toolgram tools run math_eval --input - 2>/dev/null && \
         llama-server -m \"$(toolgram model path default)\" # toolgram nope",
    );
    let want: Vec<Vec<String>> = vec![
        vec![
            "tools".into(),
            "run".into(),
            "math_eval".into(),
            "--input".into(),
            "-".into(),
        ],
        vec!["model".into(), "path".into(), "default".into()],
    ];
    assert_eq!(found, want);
    let found = invocations("scripts/x && cargo run --release -p toolgram -- call --tools f 'a b'");
    assert_eq!(found, vec![vec!["call", "--tools", "f", "a b"]]);
    let blocks = shell_blocks("```sh\ntoolgram a \\\n  --b\n```\n```\ntoolgram synopsis\n```\n");
    assert_eq!(blocks, vec![(2, "toolgram a  --b".to_owned())]);
}
