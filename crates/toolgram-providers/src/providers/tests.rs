//! The registry listed: every provider is found by each of its names, has a default URL, and
//! renders a one-tool request on every path its documented capabilities offer.

use super::{REGISTRY, lookup, names};
use crate::render::render;
use crate::spec::RenderInput;
use std::collections::BTreeSet;
use toolgram_core::define::request::{CallShape, Path};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax};

fn one_tool() -> ToolSet {
    ToolSet::from_json_str(
        r#"[{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"]}}}]"#,
    )
    .expect("valid tools")
}

#[test]
fn every_registered_provider_is_named_once_has_a_url_and_renders_a_one_tool_request() {
    let mut seen = BTreeSet::new();
    for p in REGISTRY {
        for n in std::iter::once(p.name).chain(p.aliases.iter().copied()) {
            assert!(seen.insert(n), "`{n}` is registered twice");
            assert_eq!(lookup(n).map(|k| k.name()).ok(), Some(p.name()), "{n}");
        }
        let url = p.default_base_url();
        assert!(
            url.starts_with("http://") || url.starts_with("https://"),
            "{p:?}: {url}"
        );
        let caps = p.capabilities();
        let tools = one_tool();
        let messages = [ChatMessage::text("user", "Weather in Paris?")];
        let paths = [
            (Path::Grammar, caps.grammar),
            (Path::StrictJson, caps.strict_json),
            (Path::Prompt, true),
        ];
        for (path, offered) in paths {
            let r = render(&RenderInput {
                kind: p,
                messages: &messages,
                tools: &tools,
                shape: &CallShape {
                    choice: ToolChoice::Required,
                    parallel: false,
                    ..CallShape::default()
                },
                model: Some("m"),
                path,
                syntax: syntax::by_name("hermes").expect("hermes"),
                temperature: None,
                max_tokens: None,
                stream: false,
            });
            match r {
                Ok(r) => {
                    assert!(offered, "{p:?} rendered {path:?} it does not offer");
                    assert!(
                        r.endpoint.starts_with('/'),
                        "{p:?} {path:?}: {}",
                        r.endpoint
                    );
                    assert!(
                        r.body.to_string().contains("get_weather"),
                        "{p:?} {path:?}: {}",
                        r.body
                    );
                }
                Err(e) => assert!(!offered, "{p:?} {path:?}: {e}"),
            }
        }
        assert!(
            render(&RenderInput {
                kind: p,
                messages: &messages,
                tools: &tools,
                shape: &CallShape {
                    choice: ToolChoice::Auto,
                    parallel: false,
                    ..CallShape::default()
                },
                model: None,
                path: Path::Json,
                syntax: syntax::by_name("hermes").expect("hermes"),
                temperature: None,
                max_tokens: None,
                stream: false,
            })
            .is_err(),
            "json is the embedded engine's path"
        );
    }
    let err = lookup("nope").map(|k| k.name()).expect_err("unknown");
    for n in names() {
        assert!(err.to_string().contains(n), "{err}");
    }
}

#[test]
fn the_providers_doc_lists_every_registered_provider() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/providers.md"
    ))
    .expect("docs/providers.md");
    for n in names() {
        assert!(
            doc.contains(&format!("| `{n}` |")),
            "docs/providers.md: no row for `{n}`"
        );
    }
}
