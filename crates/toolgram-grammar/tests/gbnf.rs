//! The GBNF reader and writer against llama.cpp's own parser cases and sample grammars.

mod common;

use toolgram_grammar::{Expr, Grammar, Rule, gbnf, lark};

#[test]
fn llama_cpp_parser_cases_parse_or_fail_as_llama_cpp_does() {
    let mut checked = 0;
    for case in common::jsonl("llamacpp_grammar_parser_cases.jsonl") {
        let Some(ok) = case["expect_parse_ok"].as_bool() else {
            continue;
        };
        let src = case["grammar"].as_str().expect("grammar");
        let got = gbnf::parse(src);
        assert_eq!(got.is_ok(), ok, "{src:?}: {got:?}");
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} cases");
}

#[test]
fn every_sample_grammar_parses_and_its_emitted_form_is_a_fixpoint() {
    let samples = common::sample_grammars();
    assert!(samples.len() >= 8);
    for (name, text) in samples {
        let g = gbnf::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let once = gbnf::emit(&g);
        let again = gbnf::parse(&once).unwrap_or_else(|e| panic!("{name} emitted: {e}\n{once}"));
        assert_eq!(gbnf::emit(&again), once, "{name}");
        // Lark classes come back normalised by regex-syntax: compare from the second pass.
        let first = lark::emit(&g, lark::LarkDialect::Llguidance);
        let back = lark::parse(&first).unwrap_or_else(|e| panic!("{name} lark: {e}\n{first}"));
        let second = lark::emit(&back, lark::LarkDialect::Llguidance);
        let third = lark::parse(&second).unwrap_or_else(|e| panic!("{name} lark: {e}\n{second}"));
        assert_eq!(
            lark::emit(&third, lark::LarkDialect::Llguidance),
            second,
            "{name}"
        );
    }
}

#[test]
fn refusals_carry_line_and_column() {
    let e = gbnf::parse("root ::= a\na ::= \"x\" | b\n").expect_err("b is undefined");
    assert_eq!((e.line, e.column), (2, 13), "{e}");
    let e = gbnf::parse("root ::= \"a\"\n  | \"b\"\n").expect_err("| cannot start a line");
    assert_eq!(e.line, 2, "{e}");
    let e = gbnf::parse("root ::= [a-\n").expect_err("unterminated class");
    assert_eq!((e.line, e.column), (2, 1), "{e}");
}

#[test]
fn names_are_legal_for_llama_cpp_and_unreferenced_rules_are_dropped() {
    let g = Grammar {
        rules: vec![
            Rule {
                name: "root".into(),
                expr: Expr::rule("my_rule"),
            },
            Rule {
                name: "my_rule".into(),
                expr: Expr::repeat(Expr::lit("x"), 3000, Some(3500)),
            },
            Rule {
                name: "unused".into(),
                expr: Expr::lit("y"),
            },
        ],
    };
    let out = gbnf::emit(&g);
    assert!(out.starts_with("root ::= "), "{out}");
    assert!(!out.contains("unused"), "{out}");
    assert!(!out.contains('_'), "{out}");
    assert!(!out.contains("3000"), "{out}");
    gbnf::parse(&out).expect("re-parses");
}
