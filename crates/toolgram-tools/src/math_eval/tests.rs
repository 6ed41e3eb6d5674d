use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;

fn run(text: &str) -> Result<Value, ToolError> {
    let input = MathEval.parse(text)?;
    MathEval.run(&input, &RunContext::default())
}

#[test]
fn exact_rationals_and_typed_failures() {
    let v = run("(1/3 + 1/6) * 2^3").expect("runs");
    assert_eq!(
        v,
        serde_json::json!({"value": "4", "decimal": "4", "exact": true})
    );
    assert_eq!(
        run("1/3").expect("runs")["decimal"],
        "0.333333333333333333333333333333"
    );
    assert_eq!(run("-2.5 * 2").expect("runs")["value"], "-5");
    assert_eq!(run("sqrt(9/4)").expect("runs")["value"], "3/2");
    assert_eq!(run("sqrt(2)").expect("runs")["exact"], false);
    // Every shown place is right (not an f64's 16 digits padded out).
    let root2 = run("sqrt(2)").expect("runs")["decimal"]
        .as_str()
        .map(str::to_owned);
    assert_eq!(
        root2.as_deref().map(|d| &d[..30]),
        Some("1.4142135623730950488016887242")
    );
    let pi2 = run("pi^2").expect("runs")["decimal"]
        .as_str()
        .map(str::to_owned);
    // All 30 places: a 30-digit `pi` would make the last ones `…872`.
    assert_eq!(pi2.as_deref(), Some("9.869604401089358618834490999876"));
    assert_eq!(run("max(1, 7/2, 3)").expect("runs")["value"], "7/2");
    assert_eq!(run("round(2.5) + floor(-1.5)").expect("runs")["value"], "1");
    assert!(matches!(run("1/(2-2)"), Err(ToolError::Input(m)) if m.contains("division by zero")));
    assert!(matches!(run("2^100000"), Err(ToolError::Input(m)) if m.contains("overflow")));
    assert!(matches!(run("2^0.5"), Err(ToolError::Input(_))));
    assert!(matches!(run("sqrt(-1)"), Err(ToolError::Input(_))));
    assert!(matches!(run("1 +"), Err(ToolError::Syntax { .. })));
    assert!(matches!(run("cos(1)"), Err(ToolError::Syntax { .. })));
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    // Texts that differ in any token parse to different inputs.
    let texts = [
        "1+2", "1-2", "(1+2)", "1.5+2", "pi+2", "-1+2", "abs(1)+2", "1+2^2",
    ];
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(MathEval.parse(a).ok(), MathEval.parse(b).ok(), "{a} vs {b}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn generated_texts_round_trip(text in texts(&MathEval)) {
        check_round_trip(&MathEval, &text);
    }
}

#[test]
fn generated_texts_cover_the_grammar() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = texts(&MathEval);
    let samples: Vec<String> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("sample").current())
        .collect();
    for needle in ["(", "+", "*", "/", "^", "-", ".", "pi", ","] {
        assert!(
            samples.iter().any(|s| s.contains(needle)),
            "no sample has {needle:?}: {samples:?}"
        );
    }
}
