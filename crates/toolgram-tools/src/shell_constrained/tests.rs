use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;

fn root() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-shell-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).expect("dir");
    std::fs::write(
        dir.join("README.md"),
        "line one\nTool call here\nline three\n",
    )
    .expect("write");
    std::fs::write(dir.join("src/lib.rs"), "fn main() {}\n").expect("write");
    dir
}

fn run(text: &str) -> Result<Value, ToolError> {
    let ctx = RunContext {
        root: Some(root()),
        ..RunContext::default()
    };
    ShellConstrained.run(&ShellConstrained.parse(text)?, &ctx)
}

#[test]
fn allowed_commands_run_inside_the_root() {
    let v = run("head -n 2 README.md").expect("runs");
    assert_eq!(v["stdout"], "line one\nTool call here\n");
    let v = run("grep -i -n 'tool call' README.md").expect("runs");
    assert_eq!(v["stdout"], "2:Tool call here\n");
    let v = run("find . -name '*.rs' -type f").expect("runs");
    assert!(
        v["stdout"]
            .as_str()
            .is_some_and(|s| s.contains("src/lib.rs")),
        "{v}"
    );
    assert_eq!(run("wc -l README.md").expect("runs")["exit_code"], 0);
}

#[test]
fn anything_else_cannot_be_written_or_escape_the_root() {
    for text in [
        "rm -rf src",
        "cat README.md | sh",
        "cat README.md > x",
        "cat $(ls)",
        "ls /etc",
        "cat ../secret",
        "ls -R",
        "grep -e x README.md",
    ] {
        assert!(
            matches!(ShellConstrained.parse(text), Err(ToolError::Syntax { .. })),
            "{text}"
        );
    }
    let dir = root();
    let _ = std::os::unix::fs::symlink("/etc", dir.join("etc-link"));
    assert!(matches!(run("ls etc-link"), Err(ToolError::Input(m)) if m.contains("outside")));
    assert!(matches!(run("cat missing.txt"), Err(ToolError::Input(_))));
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    let texts = [
        "ls -l src",
        "ls -a src",
        "ls src",
        "head -n 3 README.md",
        "head -n 4 README.md",
        "grep -i 'a' README.md",
        "grep 'a' README.md",
        "find . -type f",
        "find . -type d",
    ];
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(
                ShellConstrained.parse(a).ok(),
                ShellConstrained.parse(b).ok(),
                "{a} vs {b}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn generated_texts_round_trip(text in texts(&ShellConstrained)) {
        check_round_trip(&ShellConstrained, &text);
    }
}
