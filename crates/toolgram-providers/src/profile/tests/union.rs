//! The call-union schema and the pool-wide limits, on small pools.

use super::*;
use serde_json::json;
use toolgram_core::define::tool::{Tool, ToolSet};

fn pool(tools: Vec<(&str, Value)>) -> ToolSet {
    let tools = tools
        .into_iter()
        .map(|(n, p)| Tool {
            name: n.into(),
            description: String::new(),
            parameters: p,
            escape_hatch: Vec::new(),
            repeatable: false,
            rules: Vec::new(),
            grammar: None,
        })
        .collect();
    ToolSet::new(tools).expect("valid pool")
}

fn weather_and_tree() -> ToolSet {
    pool(vec![
        (
            "weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}),
        ),
        (
            "tree",
            json!({"type": "object", "properties": {"label": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#"}}, "leaf": {"$ref": "#/$defs/leaf"}},
            "required": ["label", "kids", "leaf"], "$defs": {"leaf": {"type": "string", "maxLength": 3}}}),
        ),
    ])
}

#[test]
fn openai_union_is_a_discriminated_any_of_that_validates_calls() {
    let u = call_union_schema(&weather_and_tree(), true, Profile::OpenAiStrict).expect("renders");
    let members = &u.schema["properties"][CALLS_KEY]["items"]["anyOf"];
    assert_eq!(
        members[0]["properties"]["name"],
        json!({"type": "string", "const": "weather"})
    );
    assert_eq!(
        members[1]["properties"]["arguments"],
        json!({"$ref": "#/$defs/tree"})
    );
    assert_eq!(
        u.schema["$defs"]["tree"]["properties"]["leaf"],
        json!({"$ref": "#/$defs/tree.leaf"})
    );
    assert_eq!(u.enforced_after_parse.len(), 1, "maxLength of tree.leaf");
    let v = jsonschema::validator_for(&u.schema).expect("a valid JSON Schema");
    let good = json!({"calls": [
        {"name": "weather", "arguments": {"city": "Oslo", "days": null}},
        {"name": "tree", "arguments": {"label": "a", "leaf": "x", "kids": [{"label": "b", "kids": [], "leaf": "y"}]}}]});
    assert!(v.is_valid(&good));
    let wrong_args = json!({"calls": [{"name": "weather", "arguments": {"label": "a", "kids": [], "leaf": "x"}}]});
    assert!(!v.is_valid(&wrong_args));
    assert!(!v.is_valid(&json!({"calls": []})));
}

#[test]
fn single_call_union_and_other_profiles() {
    let one = pool(vec![(
        "weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )]);
    let u = call_union_schema(&one, false, Profile::Anthropic).expect("renders");
    assert_eq!(
        u.schema["properties"][CALL_KEY]["properties"]["name"]["const"],
        json!("weather")
    );
    let g = call_union_schema(&one, true, Profile::Gemini).expect("renders");
    assert_eq!(g.schema["properties"][CALLS_KEY]["type"], json!("ARRAY"));
    assert_eq!(
        g.schema["properties"][CALLS_KEY]["items"]["properties"]["name"],
        json!({"type": "STRING", "enum": ["weather"]})
    );
    assert!(matches!(
        call_union_schema(&weather_and_tree(), false, Profile::Gemini),
        Err(ProfileError::Unsupported { .. })
    ));
    assert_eq!(
        call_union_schema(&pool(vec![]), false, Profile::Gemini),
        Err(ProfileError::EmptyPool)
    );
}

#[test]
fn the_union_counts_towards_openai_nesting() {
    let mut inner = json!({"type": "object", "properties": {}});
    for _ in 1..9 {
        inner = json!({"type": "object", "properties": {"x": inner}, "required": ["x"]});
    }
    let deep = pool(vec![("deep", inner)]);
    assert!(render_tools(&deep, Profile::OpenAiStrict).is_ok());
    let e = call_union_schema(&deep, false, Profile::OpenAiStrict);
    assert!(
        matches!(e, Err(ProfileError::OverLimit { value: 11, .. })),
        "{e:?}"
    );
}

#[test]
fn anthropic_pool_limits_are_errors() {
    let t = |i: usize| {
        (
            format!("t{i}"),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        )
    };
    let tools: Vec<(String, Value)> = (0..21).map(t).collect();
    let p = pool(tools.iter().map(|(n, s)| (n.as_str(), s.clone())).collect());
    assert!(matches!(
        render_tools(&p, Profile::Anthropic),
        Err(ProfileError::OverLimit {
            value: 21,
            max: 20,
            ..
        })
    ));
    let optional: serde_json::Map<String, Value> = (0..25)
        .map(|i| (format!("o{i}"), json!({"type": "string"})))
        .collect();
    let p = pool(vec![(
        "opt",
        json!({"type": "object", "properties": optional}),
    )]);
    assert!(matches!(
        render_tools(&p, Profile::Anthropic),
        Err(ProfileError::OverLimit {
            value: 25,
            max: 24,
            ..
        })
    ));
    let unions: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("u{i}"), json!({"type": ["string", "integer"]})))
        .collect();
    let names: Vec<String> = unions.keys().cloned().collect();
    let p = pool(vec![(
        "uni",
        json!({"type": "object", "properties": unions, "required": names}),
    )]);
    assert!(matches!(
        render_tools(&p, Profile::Anthropic),
        Err(ProfileError::OverLimit {
            value: 17,
            max: 16,
            ..
        })
    ));
    assert!(render_tools(&p, Profile::OpenAiStrict).is_ok());
}
