//! The tasks are checked without a model: every reference input does its task once run, no
//! task is passed by another task's answer, and each comparison rule holds on hand-made
//! results.

use super::run::execute;
use super::*;
use crate::run::EvalMode;
use serde_json::json;
use toolgram_tools::{BuildOptions, builtin};

fn with_tool(tool: &str, f: impl Fn(&TaskFile, &Fixture, &dyn toolgram_tools::DynTool)) {
    let file = task_file(tool).expect("the task file reads");
    let fixture = Fixture::new(&file).expect("fixture");
    let exec = builtin(
        tool,
        &BuildOptions {
            db: fixture.db().map(std::path::Path::to_path_buf),
        },
    )
    .expect("a built-in tool");
    f(&file, &fixture, exec.as_ref());
}

#[test]
fn every_tool_has_at_least_fifteen_tasks_and_every_reference_does_its_task() {
    for tool in TOOLS {
        with_tool(tool, |file, fixture, exec| {
            assert!(file.tasks.len() >= 15, "{tool}: {}", file.tasks.len());
            for task in &file.tasks {
                let (result, verdict) =
                    execute(file, fixture, exec, task, &task.reference, "ref").expect("runs");
                assert_eq!(verdict, Ok(()), "{tool}/{}: {result}", task.id);
            }
        });
    }
}

#[test]
fn no_task_is_passed_by_another_tasks_answer() {
    for tool in TOOLS {
        with_tool(tool, |file, fixture, exec| {
            let n = file.tasks.len();
            for (i, task) in file.tasks.iter().enumerate() {
                let other = &file.tasks[(i + 1) % n];
                let (result, verdict) =
                    execute(file, fixture, exec, task, &other.reference, "other").expect("runs");
                assert!(
                    verdict.is_err(),
                    "{tool}/{} passed with {}'s answer: {result}",
                    task.id,
                    other.id
                );
            }
        });
    }
}

#[test]
fn the_pool_is_the_grammar_tool_with_its_executor_checks() {
    with_tool("sql_query", |file, fixture, _| {
        let tools = tool_set(file, fixture, EvalMode::Grammar).expect("pool");
        let tool = tools.get("sql_query").expect("the tool");
        let spec = tool.grammar.as_ref().expect("a grammar tool");
        assert!(spec.check.is_some(), "the executor's check is attached");
        assert!(
            spec.definition.contains("customers"),
            "built from the database"
        );
        assert!(!spec.checked_after, "decoded under its grammar");
        let fallback = tool_set(file, fixture, EvalMode::Fallback).expect("pool");
        let spec = fallback.tools()[0]
            .grammar
            .as_ref()
            .expect("a grammar tool");
        assert!(
            spec.checked_after && spec.check.is_some(),
            "text free, checked after"
        );
    });
}

#[test]
fn the_model_sees_the_files_it_must_edit_and_the_names_it_may_search() {
    let patch = task_file("apply_patch").expect("reads");
    let msg = patch.tasks[1].user_message(&patch);
    assert!(msg.contains("app.py:\n```\nimport requests\n"), "{msg}");
    let search = task_file("code_search").expect("reads");
    let msg = search.tasks[0].user_message(&search);
    assert!(
        msg.contains("The workspace holds: README.md, app/server.py"),
        "{msg}"
    );
}

#[test]
fn an_unknown_tool_has_no_tasks() {
    let err = task_file("nope").expect_err("no such tool");
    assert!(err.to_string().contains("math_eval"), "{err}");
}

fn expect(v: serde_json::Value) -> Expect {
    serde_json::from_value(v).expect("an expectation")
}

#[test]
fn numbers_agree_to_a_relative_millionth() {
    let e = expect(json!({"number": 409.8}));
    let dir = std::env::temp_dir();
    assert_eq!(e.check(&json!({"decimal": "409.8000000001"}), &dir), Ok(()));
    assert!(e.check(&json!({"decimal": "409.9"}), &dir).is_err());
    assert!(e.check(&json!({"error": "x"}), &dir).is_err());
}

#[test]
fn rows_are_a_set_unless_ordered_and_integers_equal_reals() {
    let dir = std::env::temp_dir();
    let rows = json!([["a", 1], ["b", 2.5]]);
    let unordered = expect(json!({"rows": [["b", 2.5], ["a", 1.0]]}));
    assert_eq!(unordered.check(&json!({ "rows": rows }), &dir), Ok(()));
    let ordered = expect(json!({"rows": [["b", 2.5], ["a", 1]], "ordered": true}));
    assert!(ordered.check(&json!({ "rows": rows }), &dir).is_err());
    let extra = expect(json!({"rows": [["a", 1]]}));
    assert!(extra.check(&json!({ "rows": rows }), &dir).is_err());
}

#[test]
fn the_file_tree_must_match_exactly() {
    let dir = std::env::temp_dir().join(format!("toolgram-eval-expect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("dir");
    std::fs::write(dir.join("src/a.py"), "x = 1\n").expect("write");
    let e = |files: serde_json::Value| expect(json!({ "files": files }));
    assert_eq!(
        e(json!({"src/a.py": "x = 1\n"})).check(&json!({}), &dir),
        Ok(())
    );
    let changed = e(json!({"src/a.py": "x = 2\n"})).check(&json!({}), &dir);
    assert!(changed.is_err_and(|m| m.contains("src/a.py")));
    let missing = e(json!({"src/a.py": "x = 1\n", "b.py": ""})).check(&json!({}), &dir);
    assert!(missing.is_err_and(|m| m.contains("b.py is missing")));
    std::fs::write(dir.join("extra.txt"), "").expect("write");
    let extra = e(json!({"src/a.py": "x = 1\n"})).check(&json!({}), &dir);
    assert!(extra.is_err_and(|m| m.contains("extra.txt should not exist")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_lines_must_and_must_not_appear() {
    let dir = std::env::temp_dir();
    let e = expect(json!({"stdout": ["^3 notes\\.txt$"], "stdout_not": ["^beta"]}));
    assert_eq!(e.check(&json!({"stdout": "3 notes.txt\n"}), &dir), Ok(()));
    assert!(e.check(&json!({"stdout": "alpha\nbeta\n"}), &dir).is_err());
    assert!(
        e.check(&json!({"stdout": "3 notes.txt\nbeta\n"}), &dir)
            .is_err()
    );
}

#[test]
fn matches_must_include_the_expected_and_no_more_than_allowed() {
    let dir = std::env::temp_dir();
    let found = |n: usize| json!({"matches": (1..=n).map(|l| json!({"path": "a.rs", "line": l})).collect::<Vec<_>>()});
    let e = expect(json!({"matches": [["a.rs", 1]]}));
    assert_eq!(e.check(&found(1), &dir), Ok(()));
    assert!(e.check(&found(2), &dir).is_err(), "exactly one by default");
    let roomy = expect(json!({"matches": [["a.rs", 1]], "max_matches": 3}));
    assert_eq!(roomy.check(&found(2), &dir), Ok(()));
    let absent = expect(json!({"matches": [["b.rs", 1]], "max_matches": 3}));
    assert!(absent.check(&found(2), &dir).is_err());
}

#[test]
fn regex_cases_check_matching_text_and_groups() {
    let dir = std::env::temp_dir();
    let result = json!({"results": [
        {"string": "at 14:30", "is_match": true,
         "matches": [{"text": "14:30", "groups": [{"text": "14"}, {"text": "30"}]}]},
        {"string": "none", "is_match": false, "matches": []}]});
    let e = |cases: serde_json::Value| expect(json!({ "cases": cases }));
    let ok = e(
        json!([{"string": "at 14:30", "is_match": true, "text": "14:30",
        "groups": ["14", "30"]}, {"string": "none", "is_match": false}]),
    );
    assert_eq!(ok.check(&result, &dir), Ok(()));
    let groups = e(json!([{"string": "at 14:30", "is_match": true, "groups": ["14"]}]));
    assert!(groups.check(&result, &dir).is_err());
    let untested = e(json!([{"string": "at 9:00", "is_match": true}]));
    assert!(
        untested
            .check(&result, &dir)
            .is_err_and(|m| m.contains("not tested"))
    );
    let wrong = e(json!([{"string": "none", "is_match": true}]));
    assert!(wrong.check(&result, &dir).is_err());
}
