//! What `toolgram serve` does with no lever flags (issue 69, "Right by default"), on the
//! default model through its Chat API as a client sends it: `parallel_tool_calls` left out
//! (true, as in OpenAI's API) gets the plan — two cities, two calls, where the unplanned
//! reply stops after one — and its plan line is not sent to a client that asked for neither
//! reasoning nor the plan; one that sets `plan` gets the line as reasoning; `plan: false` is
//! the unplanned reply; a `plan` the server cannot read is a 400 naming the field; streamed,
//! the planned reply's deltas carry its calls and never the plan line.

mod common;
use common::{ServeChild, body_json, status};

use serde_json::{Value, json};

const CHAT: &str = "/v1/chat/completions";

fn weather_request(extra: &[(&str, Value)]) -> String {
    let mut body = json!({
        "model": "default",
        "messages": [{"role": "user", "content": "What is the weather in Paris and in Rome?"}],
        "tools": [{"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}],
        "temperature": 0,
        "max_tokens": 200,
    });
    for (k, v) in extra {
        body[*k] = v.clone();
    }
    body.to_string()
}

/// The assistant message of a 200 reply.
fn message(server: &ServeChild, body: &str) -> Value {
    let (reply, _) = server.ask("POST", CHAT, body);
    assert_eq!(status(&reply), 200, "{reply}\n{}", server.log());
    body_json(&reply)["choices"][0]["message"].clone()
}

fn cities(msg: &Value) -> Vec<String> {
    msg["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let args = c["function"]["arguments"].as_str()?;
                    let args: Value = serde_json::from_str(args).ok()?;
                    args["city"].as_str().map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_plan_is_on_by_default_and_its_line_goes_only_to_a_client_that_asks() {
    let server = ServeChild::start(&["--model", "default", "--no-cache", "--threads", "2"]);
    let by_default = message(&server, &weather_request(&[]));
    assert_eq!(cities(&by_default), ["Paris", "Rome"], "{by_default}");
    assert!(
        by_default
            .get("reasoning_content")
            .is_none_or(Value::is_null),
        "the default plan's line is not sent: {by_default}"
    );
    let asked = message(&server, &weather_request(&[("plan", json!(true))]));
    assert_eq!(cities(&asked), ["Paris", "Rome"], "{asked}");
    let line = asked["reasoning_content"].as_str().unwrap_or_default();
    assert!(line.ends_with("needed: 2"), "{asked}");
    let unplanned = message(&server, &weather_request(&[("plan", json!(false))]));
    assert_eq!(cities(&unplanned), ["Paris"], "{unplanned}");
    let (reply, _) = server.ask("POST", CHAT, &weather_request(&[("plan", json!("yes"))]));
    assert_eq!(status(&reply), 400, "{reply}");
    assert!(reply.contains("`plan`"), "{reply}");
    let (streamed, _) = server.ask("POST", CHAT, &weather_request(&[("stream", json!(true))]));
    assert_eq!(status(&streamed), 200, "{streamed}");
    assert!(!streamed.contains("Number of tool calls"), "{streamed}");
    let mut names = Vec::new();
    let mut arguments = vec![String::new(); 2];
    for data in streamed.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let calls = chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .cloned();
        for call in calls.unwrap_or_default() {
            let i = call["index"].as_u64().unwrap_or(0) as usize;
            if let Some(name) = call["function"]["name"].as_str() {
                names.push(name.to_owned());
            }
            if let (Some(a), Some(all)) =
                (call["function"]["arguments"].as_str(), arguments.get_mut(i))
            {
                all.push_str(a);
            }
        }
    }
    assert_eq!(names, ["get_weather", "get_weather"], "{streamed}");
    assert!(
        arguments[0].contains("Paris") && arguments[1].contains("Rome"),
        "{arguments:?}"
    );
}
