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
//!   Synopsis blocks (plain ``` fences) are not read there. It must not run the commands: most
//!   load a model or reach a server.
//! - [`synopses`]: the synopses — inline `` `toolgram … --flag …` `` spans and plain ``` blocks
//!   opening with `toolgram` — and [`check_synopsis`]: every flag a synopsis names exists on
//!   its subcommand, takes a value where the synopsis shows one, and accepts every literal value
//!   it shows (`on|off`, `lark|gbnf`; placeholders in capitals are not tried).

use clap::{CommandFactory, Parser};
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
        if let Some(lang) = fence(line) {
            in_shell = match in_shell {
                Some(_) => None,
                None => Some(matches!(lang, "sh" | "bash" | "shell" | "console")),
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

/// The info string of a line that opens or closes a code fence (CommonMark: three backticks
/// or more, and no backtick after them), `None` for any other line.
fn fence(line: &str) -> Option<&str> {
    let info = line.trim_start().strip_prefix("```")?;
    (!info.contains('`')).then_some(info.trim())
}

/// `(line number, synopsis)`: each inline code span that starts with `toolgram ` and names a
/// flag, and each line of a plain ``` block that starts with `toolgram ` (its continuation
/// lines joined).
fn synopses(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // Inside a fence: whether it is plain, and the synopsis being read.
    let mut block: Option<(bool, Option<(usize, String)>)> = None;
    let mut prose = String::new();
    let mut prose_lines = Vec::new();
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = fence(line) {
            block = match block.take() {
                Some((_, current)) => {
                    out.extend(current);
                    None
                }
                None => Some((info.is_empty(), None)),
            };
            continue;
        }
        match &mut block {
            Some((true, current)) if trimmed.starts_with("toolgram ") => {
                out.extend(current.take());
                *current = Some((i + 1, trimmed.to_owned()));
            }
            Some((true, Some((_, text)))) => {
                text.push(' ');
                text.push_str(trimmed);
            }
            Some(_) => {}
            None => {
                prose_lines.push((prose.len(), i + 1));
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    let line_at = |at: usize| {
        prose_lines
            .iter()
            .rev()
            .find(|(start, _)| *start <= at)
            .map_or(0, |(_, n)| *n)
    };
    let mut rest = prose.as_str();
    let mut offset = 0;
    while let Some(open) = rest.find("`toolgram ") {
        let span = &rest[open + 1..];
        let Some(close) = span.find('`') else { break };
        // A span opened with two backticks (`` `toolgram …` ``) talks about synopses; it is
        // not one.
        let before = rest[..open].trim_end_matches(' ');
        let quoted = before.ends_with('`');
        let text = span[..close]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if text.contains("--") && !quoted {
            out.push((line_at(offset + open), text));
        }
        offset += open + 1 + close + 1;
        rest = &span[close + 1..];
    }
    out
}

/// What is wrong with one synopsis: each flag checked against the subcommand it belongs to.
fn check_synopsis(synopsis: &str) -> Vec<String> {
    let root = Cli::command();
    let words: Vec<&str> = synopsis.split_whitespace().skip(1).collect();
    let mut problems = Vec::new();
    // The subcommand path: words naming subcommands.
    let mut path: Vec<clap::Command> = vec![root.clone()];
    let mut reading_path = true;
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        // A lone `|` before a sibling subcommand starts that subcommand's form; elsewhere it
        // separates alternative flags.
        let sibling = path.len() > 2
            && words
                .get(i + 1)
                .is_some_and(|w| path[path.len() - 2].find_subcommand(w).is_some());
        if word == "|" {
            if sibling {
                path.truncate(path.len() - 1);
                reading_path = true;
            }
            i += 1;
            continue;
        }
        if reading_path && !word.starts_with(['-', '[', '(', '<', '"']) {
            let parent = path.last().expect("a command");
            let names: Vec<&str> = word.split('|').collect();
            if let Some(sub) = parent.find_subcommand(names[0]) {
                for other in &names[1..] {
                    if parent.find_subcommand(other).is_none() {
                        problems.push(format!("no subcommand `{other}`"));
                    }
                }
                path.push(sub.clone());
                i += 1;
                continue;
            }
        }
        reading_path = false;
        let bare = word.trim_start_matches(['[', '(']);
        if let Some(flag) = bare.strip_prefix("--") {
            let closed = flag.ends_with([']', ')']);
            let flag = flag.trim_end_matches([']', ')', '…']);
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (
                    n.trim_end_matches('['),
                    Some(v.trim_start_matches('<').trim_end_matches('>')),
                ),
                None => (flag.split('[').next().unwrap_or(flag), None),
            };
            let shown = inline.or_else(|| {
                let next = words.get(i + 1)?;
                (!closed && !next.starts_with(['-', '[', '(', '|', '<'])).then_some(*next)
            });
            problems.extend(check_flag(&path, name, shown, inline.is_some()));
        }
        i += 1;
    }
    problems
}

/// One flag of a synopsis on the deepest command of `path` (or a global one above it), with
/// the value the synopsis shows (after `=` when `equals`).
fn check_flag(
    path: &[clap::Command],
    name: &str,
    shown: Option<&str>,
    equals: bool,
) -> Vec<String> {
    let Some(arg) = path
        .iter()
        .rev()
        .find_map(|c| c.get_arguments().find(|a| a.get_long() == Some(name)))
    else {
        let cmd = path.last().map_or("toolgram", clap::Command::get_name);
        return vec![format!("`{cmd}` has no `--{name}`")];
    };
    let Some(value) = shown.map(|v| v.trim_matches(['[', ']', '(', ')', '…'])) else {
        return Vec::new();
    };
    if value.is_empty() || value.starts_with(['"', '$', '…']) {
        return Vec::new();
    }
    if !arg.get_action().takes_values() {
        return vec![format!(
            "`--{name}` is shown with a value (`{value}`) but takes none"
        )];
    }
    let literal = |v: &&str| !v.is_empty() && !v.chars().any(|c| c.is_ascii_uppercase());
    // The flag alone in a command of its own: what its value parser says of each value.
    let alone = clap::Command::new("toolgram").arg(arg.clone().required(false));
    let mut problems = Vec::new();
    for alternative in value.split('|').filter(literal) {
        let mut argv = vec!["toolgram".to_owned(), format!("--{name}")];
        if equals {
            argv[1] = format!("--{name}={alternative}");
        } else {
            argv.push(alternative.to_owned());
        }
        if let Err(e) = alone.clone().try_get_matches_from(argv) {
            let why = e.to_string();
            let why = why.lines().next().unwrap_or_default().to_owned();
            problems.push(format!("`--{name} {alternative}`: {why}"));
        }
    }
    problems
}

#[test]
fn every_flag_of_every_synopsis_exists_and_takes_the_values_shown() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (mut checked, mut failures) = (0, Vec::new());
    for doc in documents(&repo) {
        let text = std::fs::read_to_string(&doc).expect("readable document");
        for (line, synopsis) in synopses(&text) {
            checked += 1;
            for problem in check_synopsis(&synopsis) {
                failures.push(format!("{}:{line}: {problem}", doc.display()));
            }
        }
    }
    assert!(checked >= 15, "only {checked} synopses found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_synopsis_is_read_flag_by_flag_and_a_switch_shown_with_a_value_is_caught() {
    let found = synopses(
        "- `toolgram parse [--thinking on|off]` — x, not `` `toolgram … --flag` ``\n```\ntoolgram serve [--port 8080]\n  [--plan[=on|off|count]]\ntoolgram devices [--json]\n```\n```sh\ntoolgram call --tools f x\n```\n",
    );
    assert_eq!(
        found,
        vec![
            (
                3,
                "toolgram serve [--port 8080] [--plan[=on|off|count]]".to_owned()
            ),
            (5, "toolgram devices [--json]".to_owned()),
            (1, "toolgram parse [--thinking on|off]".to_owned()),
        ]
    );
    assert_eq!(
        check_synopsis("toolgram serve [--port 8080] [--plan[=on|off|count]]"),
        Vec::<String>::new()
    );
    assert_eq!(
        check_synopsis("toolgram serve [--plan=sometimes] [--nope N]").len(),
        2,
        "an unknown value and an unknown flag"
    );
    assert_eq!(
        check_synopsis("toolgram devices --json yes"),
        vec!["`--json` is shown with a value (`yes`) but takes none".to_owned()]
    );
    assert!(
        check_synopsis("toolgram tools list | grammar NAME --format gbnf | run NAME --input -")
            .is_empty()
    );
    assert!(
        check_synopsis("toolgram eval bfcl [--model M | --provider P | --base-url URL]").is_empty(),
        "a `|` between flags"
    );
    assert_eq!(
        fence("  ```` fence) (docs)"),
        None,
        "inline code, not a fence"
    );
}
