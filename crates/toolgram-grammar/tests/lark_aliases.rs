//! Lark aliases (`expansion -> name`) name a parse-tree node; the language stays the same, so a
//! grammar with them reads as the grammar without them — as in the `apply_patch` grammar a
//! coding agent sends for its freeform tool.

use toolgram_grammar::lark::parse;

#[test]
fn an_alias_is_read_as_the_expansion_it_names() {
    let with = parse("start: line+\nline: \"+\" /(.*)/ LF -> added\n    | \"-\" LF -> removed\n%import common.LF\n")
        .expect("aliases are read");
    let without = parse("start: line+\nline: \"+\" /(.*)/ LF\n    | \"-\" LF\n%import common.LF\n")
        .expect("reads");
    assert_eq!(with, without);
}

#[test]
fn an_arrow_without_a_name_is_refused() {
    let err = parse("start: \"a\" ->\n").expect_err("no alias name");
    assert!(err.to_string().contains("alias name"), "{err}");
}
