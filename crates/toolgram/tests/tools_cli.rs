//! `toolgram tools` as a user runs it: list, grammar in every format, run with a JSON result
//! or a JSON error and a non-zero exit; `sql_query` on a real SQLite file; a tool from a
//! manifest; every grammar tool called by the default model.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn toolgram(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgram"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("stdin");
    }
    let out = child.wait_with_output().expect("finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn math_eval_runs_from_the_command_line() {
    let (code, out, err) = toolgram(&["tools", "list"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains("\"math_eval\"")), "{out}");
    let (code, out, err) = toolgram(
        &["tools", "run", "math_eval", "--input", "-"],
        "2^10 / 4 - 1/2\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["result"]["value"], "511/2");
    assert_eq!(v["result"]["decimal"], "255.5");
    let (code, _, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], "1/(3-3)");
    assert_ne!(code, 0);
    let e: Value = serde_json::from_str(err.lines().last().unwrap_or("")).expect("JSON error");
    assert_eq!(e["error"]["type"], "invalid_input");
    let (code, _, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], "rm -rf /");
    assert_ne!(code, 0, "{err}");
    for format in ["lark", "lark-openai", "gbnf", "json-schema"] {
        let (code, out, err) = toolgram(&["tools", "grammar", "math_eval", "--format", format], "");
        assert_eq!(code, 0, "{format}: {err}");
        assert!(!out.is_empty());
    }
}

#[test]
fn call_uses_a_builtin_grammar_tool_on_the_default_model() {
    let dir = std::env::temp_dir().join(format!("toolgram-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tools = dir.join("tools.json");
    std::fs::write(&tools, r#"[{"type": "builtin", "name": "math_eval"}]"#).expect("write");
    let tools = tools.to_string_lossy().into_owned();
    let (code, out, err) = toolgram(
        &[
            "call",
            "--tools",
            &tools,
            "--tool-choice",
            "required",
            "What is 17 times 23, minus 5?",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let msg: Value = serde_json::from_str(&out).expect("one JSON object");
    let call = &msg["tool_calls"][0];
    assert_eq!(call["type"], "custom", "{msg}");
    assert_eq!(call["custom"]["name"], "math_eval");
    let input = call["custom"]["input"].as_str().expect("raw input text");
    // The input is in the tool's grammar (validated after parsing) and runs.
    let (code, out, err) = toolgram(&["tools", "run", "math_eval", "--input", "-"], input);
    assert_eq!(code, 0, "{input}: {err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["result"]["value"].is_string(), "{v}");
    // An unknown built-in is refused before any model is loaded.
    std::fs::write(
        dir.join("bad.json"),
        r#"[{"type": "builtin", "name": "nope"}]"#,
    )
    .expect("write");
    let bad = dir.join("bad.json").to_string_lossy().into_owned();
    let (code, _, err) = toolgram(&["call", "--tools", &bad, "hi"], "");
    assert_ne!(code, 0);
    assert!(
        err.contains("invalid_tools") && err.contains("math_eval"),
        "{err}"
    );
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-cli-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("ws/src")).expect("temp dir");
    std::fs::write(dir.join("ws/notes.txt"), "hello\nworld\n").expect("write");
    std::fs::write(
        dir.join("ws/src/main.rs"),
        "fn parse_config() {}\nfn main() { parse_config(); }\n",
    )
    .expect("write");
    let conn = rusqlite::Connection::open(dir.join("shop.sqlite")).expect("creates");
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
         INSERT INTO customers VALUES (1, 'Ada', 'London'), (2, 'Linus', 'Helsinki');
         INSERT INTO orders VALUES (1, 1, 10.5), (2, 1, 20), (3, 2, 5);",
    )
    .expect("fills");
    std::fs::write(
        dir.join("dice.lark"),
        "start: COUNT \"d\" SIDES\nCOUNT: /[1-9]/\nSIDES: \"4\" | \"6\" | \"8\" | \"12\" | \"20\"\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("dice.toml"),
        "name = \"roll_dice\"\ndescription = \"Roll dice: COUNTdSIDES, e.g. 3d8\"\n\
         grammar = \"dice.lark\"\n[fields]\ncount = \"COUNT\"\nsides = \"SIDES\"\n",
    )
    .expect("write");
    dir
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn sql_query_is_generated_from_the_database_given() {
    let dir = scratch("sql");
    let db = s(&dir.join("shop.sqlite"));
    for format in ["lark", "lark-openai", "gbnf", "json-schema"] {
        let (code, out, err) = toolgram(
            &[
                "tools",
                "grammar",
                "sql_query",
                "--db",
                &db,
                "--format",
                format,
            ],
            "",
        );
        assert_eq!(code, 0, "{format}: {err}");
        // The grammar forms spell names character by character; the JSON form names them.
        assert!(!out.is_empty() && (format != "json-schema" || out.contains("customer_id")));
    }
    let (code, out, err) = toolgram(
        &["tools", "run", "sql_query", "--db", &db, "--input", "-"],
        "select name, sum(orders.total) as spent from customers join orders on customer_id = customers.id group by name order by sum(orders.total) desc",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["result"]["rows"],
        serde_json::json!([["Ada", 30.5], ["Linus", 5.0]])
    );
    for bad in [
        "DELETE FROM customers",
        "SELECT * FROM users",
        "SELECT email FROM customers",
    ] {
        let (code, _, err) = toolgram(
            &["tools", "run", "sql_query", "--db", &db, "--input", "-"],
            bad,
        );
        assert_ne!(code, 0, "{bad}");
        assert!(err.contains("invalid_input"), "{bad}: {err}");
    }
    let (code, _, err) = toolgram(&["tools", "grammar", "sql_query"], "");
    assert_ne!(code, 0);
    assert!(
        err.contains("invalid_tool") && err.contains("--db"),
        "{err}"
    );
}

#[test]
fn a_tool_from_a_manifest_runs_and_prints_its_grammar() {
    let dir = scratch("manifest");
    let manifest = s(&dir.join("dice.toml"));
    let (code, out, err) = toolgram(&["tools", "run", &manifest, "--input", "-"], "3d8");
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["result"]["input"]["fields"]["sides"], "8");
    let (code, out, err) = toolgram(&["tools", "grammar", &manifest, "--format", "gbnf"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("root ::="), "{out}");
    let (code, _, err) = toolgram(&["tools", "run", &manifest, "--input", "-"], "3d7");
    assert_ne!(code, 0);
    assert!(err.contains("invalid_input"), "{err}");
}

/// Every built-in tool (and one from a manifest) through `toolgram call` on the default
/// model, its call then run by `toolgram tools run`.
#[test]
fn every_grammar_tool_is_called_by_the_default_model_and_its_call_runs() {
    let dir = scratch("call");
    let ws = s(&dir.join("ws"));
    let db = s(&dir.join("shop.sqlite"));
    let cases: [(&str, &str, Vec<&str>); 6] = [
        (
            r#"{"type": "builtin", "name": "sql_query", "db": "shop.sqlite"}"#,
            "How many customers live in London?",
            vec!["--db", &db],
        ),
        (
            r#"{"type": "builtin", "name": "shell_constrained"}"#,
            "Show the first 5 lines of notes.txt",
            vec!["--root", &ws],
        ),
        (
            r#"{"type": "builtin", "name": "code_search"}"#,
            "Find the definition of the function parse_config in the Rust files",
            vec!["--root", &ws],
        ),
        (
            r#"{"type": "builtin", "name": "regex_tester"}"#,
            "Check whether the regex \\d{3}-\\d{4} matches the strings '555-1234' and 'abc'",
            vec![],
        ),
        (
            r#"{"type": "builtin", "name": "apply_patch"}"#,
            "Create a new file hello.txt containing the single line: hi there",
            vec!["--root", &ws],
        ),
        (
            r#"{"type": "grammar_file", "path": "dice.toml"}"#,
            "Roll three eight-sided dice",
            vec![],
        ),
    ];
    for (tool, prompt, run_args) in cases {
        let tools = dir.join("tools.json");
        std::fs::write(&tools, format!("[{tool}]")).expect("write");
        let (code, out, err) = toolgram(
            &[
                "call",
                "--tools",
                &s(&tools),
                "--tool-choice",
                "required",
                prompt,
            ],
            "",
        );
        assert_eq!(code, 0, "{tool}: {err}");
        let msg: Value = serde_json::from_str(&out).expect("one JSON object");
        let call = &msg["tool_calls"][0];
        assert_eq!(call["type"], "custom", "{msg}");
        let name = call["custom"]["name"].as_str().expect("name").to_owned();
        let input = call["custom"]["input"].as_str().expect("raw input text");
        let tool_arg = if name == "roll_dice" {
            s(&dir.join("dice.toml"))
        } else {
            name.clone()
        };
        let mut args = vec!["tools", "run", tool_arg.as_str(), "--input", "-"];
        args.extend(run_args.iter().copied());
        let (code, out, err) = toolgram(&args, input);
        assert_eq!(code, 0, "{name} {input:?}: {err}");
        let v: Value = serde_json::from_str(&out).expect("JSON");
        eprintln!("{name}: {input:?} → {}", v["result"]);
    }
    let created = std::fs::read_to_string(dir.join("ws/hello.txt")).expect("the patch ran");
    assert!(created.contains("hi there"), "{created}");
}

/// The question that made the default model select `SUM(total)` from `customers` alone
/// (`total` is a column of `orders`): the grammar ties a one-table select list to its table,
/// so the model has to join — and the answer is right. Without that tie, the call fails
/// validation (the same query repeated) instead.
#[test]
fn the_default_model_joins_when_a_column_belongs_to_another_table() {
    let dir = scratch("join");
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "builtin", "name": "sql_query", "db": "shop.sqlite"}]"#,
    )
    .expect("write");
    let (code, out, err) = toolgram(
        &[
            "call",
            "--tools",
            &s(&tools),
            "--tool-choice",
            "required",
            "Which customer spent the most in total? Give the name and the sum.",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let msg: Value = serde_json::from_str(&out).expect("one JSON object");
    let input = msg["tool_calls"][0]["custom"]["input"]
        .as_str()
        .expect("raw input text");
    assert!(input.to_ascii_uppercase().contains(" JOIN "), "{input}");
    let db = s(&dir.join("shop.sqlite"));
    let (code, out, err) = toolgram(
        &["tools", "run", "sql_query", "--input", "-", "--db", &db],
        input,
    );
    assert_eq!(code, 0, "{input}: {err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    eprintln!("{input} → {}", v["result"]["rows"]);
    assert_eq!(v["result"]["rows"][0][0], "Ada", "{input}: {out}");
}
