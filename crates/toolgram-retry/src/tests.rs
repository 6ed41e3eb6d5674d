//! The loop against scripted models: replies are fixed in advance, the validator is real.

use super::*;
use serde_json::json;
use std::collections::VecDeque;
use toolgram_core::ToolCall;

struct Scripted {
    replies: VecDeque<Result<ModelReply, AttemptError<String>>>,
    seen: Vec<Vec<ChatMessage>>,
}

impl CallModel for Scripted {
    type Error = String;
    fn attempt(&mut self, messages: &[ChatMessage]) -> Result<ModelReply, AttemptError<String>> {
        self.seen.push(messages.to_vec());
        self.replies
            .pop_front()
            .unwrap_or(Err(AttemptError::Fatal("script ran out".into())))
    }
}

fn scripted(replies: Vec<Result<ModelReply, AttemptError<String>>>) -> Scripted {
    Scripted {
        replies: replies.into(),
        seen: Vec::new(),
    }
}

fn tools() -> ToolSet {
    ToolSet::from_json_str(
        r#"[{"type":"function","function":{"name":"book","parameters":{"type":"object",
            "properties":{"title":{"type":"string"},
                          "cabin":{"enum":["economy","premium","business","first"]}},
            "required":["title","cabin"]}}},
            {"type":"function","function":{"name":"search","parameters":{"type":"object",
            "properties":{"q":{"type":"string"}},"required":["q"]}}}]"#,
    )
    .expect("tools")
}

fn call(name: &str, args: serde_json::Value) -> Result<ModelReply, AttemptError<String>> {
    Ok(ModelReply {
        tool_calls: vec![ToolCall {
            id: "call_0".into(),
            name: name.into(),
            arguments: args,
        }],
        raw: format!("{name}(…)"),
        ..ModelReply::default()
    })
}

fn user() -> Vec<ChatMessage> {
    vec![ChatMessage::text("user", "book a flight")]
}

#[test]
fn an_invalid_first_attempt_is_fed_back_and_repaired() {
    let mut m = scripted(vec![
        call("book", json!({"cabin": "luxury"})),
        call("book", json!({"title": "Oslo", "cabin": "first"})),
    ]);
    let out = run(
        &mut m,
        &tools(),
        &ToolChoice::Required,
        &user(),
        RetryPolicy::default(),
    )
    .expect("repaired");
    assert_eq!(out.attempts, 2);
    assert_eq!(out.reply.tool_calls[0].arguments["title"], "Oslo");
    let errors = &out.failed[0].errors;
    assert!(errors.contains(&"missing required argument 'title' for tool 'book'".to_owned()));
    assert!(
        errors.contains(&"'cabin' must be one of economy, premium, business, first".to_owned())
    );
    // The second attempt saw the bad call and the error as a tool message answering it.
    let second = &m.seen[1];
    let assistant = &second[1];
    let ids: Vec<&str> = assistant
        .tool_calls
        .iter()
        .flatten()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(second[2].role, "tool");
    assert_eq!(second[2].tool_call_id.as_deref(), Some(ids[0]));
    assert!(
        second[2]
            .content
            .as_deref()
            .unwrap_or("")
            .contains("must be one of")
    );
}

#[test]
fn the_budget_ends_in_a_clear_error_never_an_invalid_call() {
    let mut m = scripted(vec![
        call("book", json!({"title": 1, "cabin": "first"})),
        call("book", json!({"title": "x"})),
        call("book", json!({"cabin": "first"})),
    ]);
    let err = run(
        &mut m,
        &tools(),
        &ToolChoice::Required,
        &user(),
        RetryPolicy::default(),
    )
    .expect_err("never valid");
    assert!(matches!(err, RetryError::Exhausted { .. }));
    assert_eq!(err.failed().len(), 3);
    assert!(err.to_string().contains("3 attempt(s)"));
}

#[test]
fn the_same_mistake_twice_stops_the_loop() {
    let mut m = scripted(vec![
        call("book", json!({"cabin": "first"})),
        call("book", json!({"cabin": "first"})),
        call("book", json!({"title": "x", "cabin": "first"})),
    ]);
    let policy = RetryPolicy {
        max_attempts: 5,
        consecutive_blocked: 2,
    };
    let err = run(&mut m, &tools(), &ToolChoice::Required, &user(), policy).expect_err("blocked");
    assert!(matches!(err, RetryError::Blocked { .. }));
    assert_eq!(m.seen.len(), 2);
}

#[test]
fn unreadable_text_and_missing_calls_are_retried_with_a_note() {
    let mut m = scripted(vec![
        Err(AttemptError::Unreadable {
            raw: "{\"name\": \"bok\"".into(),
            message: "there is no tool 'bok'".into(),
        }),
        Ok(ModelReply {
            content: Some("I cannot".into()),
            raw: "I cannot".into(),
            ..ModelReply::default()
        }),
        call("search", json!({"q": "flights"})),
    ]);
    let policy = RetryPolicy {
        max_attempts: 3,
        consecutive_blocked: 3,
    };
    let out = run(&mut m, &tools(), &ToolChoice::Required, &user(), policy).expect("third");
    assert_eq!(out.attempts, 3);
    assert_eq!(m.seen[1][2].role, "user");
    assert!(out.failed[1].errors[0].starts_with("a tool call is required"));
}

#[test]
fn a_named_choice_refuses_other_tools_and_fatal_errors_stop_at_once() {
    let choice = ToolChoice::Named("book".into());
    let mut m = scripted(vec![
        call("search", json!({"q": "x"})),
        Err(AttemptError::Fatal("gone".into())),
    ]);
    let err = run(&mut m, &tools(), &choice, &user(), RetryPolicy::default()).expect_err("fatal");
    assert!(matches!(err, RetryError::Model { .. }));
    assert!(err.failed()[0].errors[0].contains("may not be called here"));
}

#[test]
fn text_is_valid_under_auto() {
    let mut m = scripted(vec![Ok(ModelReply {
        content: Some("Hello".into()),
        raw: "Hello".into(),
        ..ModelReply::default()
    })]);
    let out = run(
        &mut m,
        &tools(),
        &ToolChoice::Auto,
        &user(),
        RetryPolicy::default(),
    )
    .expect("ok");
    assert_eq!(out.attempts, 1);
    assert!(out.failed.is_empty());
}
