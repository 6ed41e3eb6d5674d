use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;

fn run(text: &str) -> Result<Value, ToolError> {
    RegexTester.run(&RegexTester.parse(text)?, &RunContext::default())
}

#[test]
fn matches_spans_and_named_groups_are_reported() {
    let v =
        run("/(?P<year>\\d{4})-(\\d{2})/\n\"due 2026-11 and 2027-01\"\n\"none\"").expect("runs");
    let first = &v["results"][0];
    assert_eq!(first["is_match"], true);
    assert_eq!(first["matches"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["matches"][0]["span"], serde_json::json!([4, 11]));
    assert_eq!(first["matches"][0]["groups"][0]["name"], "year");
    assert_eq!(first["matches"][0]["groups"][0]["text"], "2026");
    assert_eq!(v["results"][1]["is_match"], false);
    let ci = run("/hello/i\n\"HeLLo\"").expect("runs");
    assert_eq!(ci["results"][0]["is_match"], true);
    let dash = run("/[a-z.+-]+@[-a-z]+/\n\"a.b+c@d-e\"").expect("a dash first or last in a class");
    assert_eq!(dash["results"][0]["is_match"], true);
    let lazy = run("/a+?/\n\"aaa\"").expect("runs");
    assert_eq!(
        lazy["results"][0]["matches"].as_array().map(Vec::len),
        Some(3)
    );
}

#[test]
fn broken_regexes_cannot_be_written_or_are_typed_errors() {
    for text in [
        "/(a/\n\"x\"",
        "/a)/\n\"x\"",
        "/*a/\n\"x\"",
        "/[a/\n\"x\"",
        "/a/q\n\"x\"",
        "/a/",
    ] {
        assert!(
            matches!(RegexTester.parse(text), Err(ToolError::Syntax { .. })),
            "{text}"
        );
    }
    // In the grammar but refused by the regex crate: a reversed class range.
    assert!(matches!(run("/[z-a]/\n\"x\""), Err(ToolError::Input(m)) if m.contains("regex")));
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    let texts = [
        "/a/\n\"x\"",
        "/b/\n\"x\"",
        "/a/i\n\"x\"",
        "/a/\n\"y\"",
        "/a/\n\"x\"\n\"x\"",
    ];
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(
                RegexTester.parse(a).ok(),
                RegexTester.parse(b).ok(),
                "{a} vs {b}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn generated_texts_round_trip(text in texts(&RegexTester)) {
        check_round_trip(&RegexTester, &text);
    }
}
