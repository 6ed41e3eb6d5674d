//! A structure-aware fuzzer of the Lark reader, on proptest: grammars built from what the
//! reader knows — nested groups (past the nesting limit too), rule references and chains of
//! them (past the depth limit too), alternations, quantifiers, aliases, strings, ranges,
//! regexes with flags, special tokens, directives and comments — with random characters
//! spliced in, and plain random text. No input may panic or overflow the stack; a grammar that
//! reads is also written in both Lark dialects, moved inside a JSON string, checked for left
//! recursion and used to parse a short text, so the walkers behind the reader are fuzzed too.
//!
//! 2,000 cases by default (a few seconds); `PROPTEST_CASES=1000000` for a long run.

use proptest::prelude::*;
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::{json_string, tree};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["start", "a", "b", "_c", "TERM", "undefined"])
            .prop_map(str::to_owned),
        1 => "[a-zA-Z_][a-zA-Z0-9_.]{0,6}",
    ]
}

fn quantifier() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "?",
            "*",
            "+",
            "",
            " ~ 2",
            "{,3}",
            "{2,}",
            "{99999999999}"
        ])
        .prop_map(str::to_owned),
        (0u32..1200, 0u32..1200).prop_map(|(a, b)| format!("{{{a},{b}}}")),
        (0u32..9, 0u32..9).prop_map(|(a, b)| format!(" ~ {a}..{b}")),
    ]
}

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => name(),
        3 => any::<String>().prop_map(|s| format!("{s:?}")),
        1 => "[a-z\"\\\\]{0,4}".prop_map(|s| format!("\"{s}\"")),
        2 => "[^/\n]{0,12}".prop_map(|r| format!("/{r}/")),
        1 => ("[imsxlu]{0,3}", "[()|*+?a-c\\[\\]{}0-9,^$.\\\\]{0,10}")
            .prop_map(|(f, r)| format!("/{r}/{f}")),
        1 => ("[a-z]", "[a-z]").prop_map(|(a, b)| format!("\"{a}\"..\"{b}\"")),
        1 => (0u32..300_000).prop_map(|i| format!("<[{i}]>")),
        1 => prop::sample::select(vec!["<|im_end|>", "<[^5]>", "<[x]>", "<", "\"\"i"])
            .prop_map(str::to_owned),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    atom().prop_recursive(6, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..5).prop_map(|v| v.join(" ")),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join(" | ")),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join("\n    | ")),
            inner.clone().prop_map(|e| format!("({e})")),
            inner.clone().prop_map(|e| format!("[{e}]")),
            (inner.clone(), quantifier()).prop_map(|(e, q)| format!("{e}{q}")),
            (inner.clone(), name()).prop_map(|(e, n)| format!("{e} -> {n}")),
            (inner, 0usize..200, any::<bool>()).prop_map(|(e, n, square)| {
                let (o, c) = if square { ("[", "]") } else { ("(", ")") };
                format!("{}{e}{}", o.repeat(n), c.repeat(n))
            }),
        ]
    })
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (prop::sample::select(vec!["", "?", "!"]), name(), expr())
            .prop_map(|(p, n, e)| format!("{p}{n}: {e}")),
        1 => prop::sample::select(vec![
            "%import common.NUMBER",
            "%import common.WS -> b",
            "%import common.NOPE",
            "%import other.X",
            "%llguidance {}",
            "%ignore WS",
            "// a comment",
            "# a comment",
            "start.2: \"a\"",
            "a{x}: x",
        ])
        .prop_map(str::to_owned),
    ]
}

/// `start` and a chain of `n` rules, each referencing the next inside `groups` groups.
fn chain() -> impl Strategy<Value = String> {
    (1usize..1100, 0usize..3).prop_map(|(n, groups)| {
        let mut g = format!("start: a{n}\na0: \"x\"\n");
        for k in 1..=n {
            let (o, c) = ("(".repeat(groups), ")".repeat(groups));
            g.push_str(&format!("a{k}: \"y\" {o}a{}{c}\n", k - 1));
        }
        g
    })
}

fn grammar() -> impl Strategy<Value = String> {
    let lines = || prop::collection::vec(line(), 1..7).prop_map(|v| v.join("\n"));
    let spliced = (
        lines(),
        prop::collection::vec((any::<usize>(), any::<char>()), 1..6),
    )
        .prop_map(|(mut g, edits)| {
            for (at, c) in edits {
                let mut at = at % (g.len() + 1);
                while !g.is_char_boundary(at) {
                    at -= 1;
                }
                g.insert(at, c);
            }
            g
        });
    prop_oneof![
        6 => lines(),
        3 => spliced,
        1 => chain(),
        1 => any::<String>(),
        1 => "[()\\[\\]|\"a-c: \n?*+~.]{0,64}".prop_map(|s| format!("start: {s}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn the_lark_reader_never_panics(src in grammar(), text in "[abxy\"]{0,6}") {
        match lark::parse(&src) {
            Err(e) => prop_assert!(e.line >= 1 && e.column >= 1, "{e}"),
            Ok(g) => {
                lark::emit(&g, LarkDialect::Llguidance);
                lark::emit(&g, LarkDialect::OpenAi);
                lark::emit(&json_string::inside_json_string(&g), LarkDialect::Llguidance);
                let _ = g.left_recursive();
                let _ = tree::parse_tree(&g, &text);
            }
        }
    }
}
