use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;

fn root() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-search-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).expect("dir");
    std::fs::create_dir_all(dir.join("target")).expect("dir");
    std::fs::write(dir.join(".gitignore"), "target/\n").expect("write");
    std::fs::write(dir.join("src/lib.rs"), "pub fn parse(x: &str) -> Result<u8, ()> {\n    // TODO handle config load\n    Ok(0)\n}\nstruct Parser;\n").expect("write");
    std::fs::write(
        dir.join("src/app.py"),
        "def parse(x):\n    return x  # TODO\n",
    )
    .expect("write");
    std::fs::write(dir.join("target/gen.rs"), "fn parse() {} // TODO\n").expect("write");
    // The walker only honours .gitignore inside a git repository (as ripgrep does).
    std::fs::create_dir_all(dir.join(".git")).expect("dir");
    dir
}

fn run(text: &str) -> Vec<(String, u64)> {
    let ctx = RunContext {
        root: Some(root()),
        ..RunContext::default()
    };
    let v = CodeSearch
        .run(&CodeSearch.parse(text).expect("parses"), &ctx)
        .expect("runs");
    let mut out: Vec<(String, u64)> = v["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["path"].as_str().unwrap_or("").to_owned(),
                m["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn queries_find_definitions_words_and_respect_gitignore() {
    assert_eq!(
        run("def:parse type:fn lang:rust"),
        vec![("src/lib.rs".to_owned(), 1)]
    );
    assert_eq!(
        run("def:parse"),
        vec![("src/app.py".to_owned(), 1), ("src/lib.rs".to_owned(), 1)]
    );
    assert_eq!(
        run("\"TODO\" path:src/*.py"),
        vec![("src/app.py".to_owned(), 2)]
    );
    assert_eq!(run("config load"), vec![("src/lib.rs".to_owned(), 2)]);
    assert_eq!(run("/Result<u\\d,/"), vec![("src/lib.rs".to_owned(), 1)]);
    assert_eq!(run("type:struct"), vec![("src/lib.rs".to_owned(), 5)]);
    // A part of the defined name is enough (case as written).
    assert_eq!(run("def:Pars"), vec![("src/lib.rs".to_owned(), 5)]);
    assert_eq!(
        run("def:arse type:fn lang:python"),
        vec![("src/app.py".to_owned(), 1)]
    );
    assert!(
        run("TODO").iter().all(|(p, _)| !p.starts_with("target")),
        "gitignored"
    );
}

#[test]
fn bad_queries_are_refused() {
    for text in ["def:", "rm -rf", "lang:rust;ls", "\"unclosed"] {
        assert!(CodeSearch.parse(text).is_err(), "{text}");
    }
    let ctx = RunContext {
        root: Some(root()),
        ..RunContext::default()
    };
    let q = CodeSearch.parse("lang:cobol x").expect("parses");
    assert!(matches!(CodeSearch.run(&q, &ctx), Err(ToolError::Input(_))));
    let q = CodeSearch.parse("/(/").expect("parses");
    assert!(matches!(CodeSearch.run(&q, &ctx), Err(ToolError::Input(_))));
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    let texts = ["a b", "a c", "\"a b\"", "/a b/", "def:a", "lang:a", "a"];
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(
                CodeSearch.parse(a).ok(),
                CodeSearch.parse(b).ok(),
                "{a} vs {b}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn generated_texts_round_trip(text in texts(&CodeSearch)) {
        check_round_trip(&CodeSearch, &text);
    }
}
