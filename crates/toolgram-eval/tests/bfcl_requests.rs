//! Every request BFCL's own handler would send for the shared non-live AST categories and
//! irrelevance (its tool conversion, `format: float` and `optional` flags included) passes the
//! check `toolgram serve` runs before queueing a request: none is refused; the keywords
//! toolgram does not know come back as warnings naming tool and pointer.

use serde_json::Value;
use std::path::Path;
use toolgram_core::ChatMessage;
use toolgram_core::syntax;
use toolgram_eval::bfcl::{DEFAULT_CATEGORIES, convert, read_category};
use toolgram_runtime::{Request, check_before_load, tools_from_json};

#[test]
fn no_request_bfcl_sends_is_refused_and_unknown_keywords_are_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/bfcl");
    let hermes = syntax::by_name("hermes").expect("hermes");
    let (mut items, mut refused, mut warnings) = (0, Vec::new(), Vec::new());
    for category in DEFAULT_CATEGORIES {
        for item in read_category(&dir, category).unwrap_or_else(|e| panic!("{category}: {e}")) {
            items += 1;
            let tools: Vec<Value> = item
                .functions
                .iter()
                .map(|f| convert::openai_tool_as_bfcl_sends(f, item.language).expect("converts"))
                .collect();
            let checked = tools_from_json(Value::Array(tools), Path::new("."))
                .map(|tools| Request::new(vec![ChatMessage::text("user", "q")], tools))
                .and_then(|req| check_before_load(&req, hermes));
            match checked {
                Ok(c) => warnings.extend(c.warnings),
                Err(e) => refused.push(format!("{}: {e}", item.id)),
            }
        }
    }
    eprintln!(
        "{items} items, {} refused, {} warnings",
        refused.len(),
        warnings.len()
    );
    assert_eq!(items, 1390);
    assert!(refused.is_empty(), "{refused:#?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("tool `lawsuit_info` at /properties/year: `optional`")),
        "{warnings:#?}"
    );
}
