//! `regex_tester`: a regular expression in the `regex` crate's syntax, its flags, and the
//! strings to try it on. The grammar spells the regex syntax itself (branches, groups incl.
//! named ones, classes with ranges, escapes, anchors, counted and lazy quantifiers), so an
//! unbalanced group or a dangling quantifier cannot be written; whatever the grammar still
//! lets through and the `regex` crate refuses is a typed error. The run reports, per string,
//! whether it matches and every match with its span and groups. Control characters are not
//! in the grammar (write `\t`, `\n`): inside a JSON string a model's `\b` would otherwise
//! arrive as a backspace rather than a word boundary.
//!
//! Example (a regex line, then one quoted string per line):
//! ```text
//! /(?P<year>\d{4})-(\d{2})/i
//! "due 2026-11 and 2027-01"
//! ```

mod input;

mod run;

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value;
use toolgram_grammar::tree::ParseTree;

/// Sample texts the grammar must accept and refuse: every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "/(?P<y>\\d{4})-(\\d{2})/i\n\"due 2026-11\"",
        "/a+?|[^a-z0-9_]/\n\"x\"\n\"y\"",
    ],
    refused: &["/(a/\n\"x\"", "/*a/\n\"x\"", "/a/"],
};

pub use input::Test;

/// The tool.
pub struct RegexTester;

const GRAMMAR: &str = r#"start: "/" regex "/" FLAGS? (_nl STRING)+
regex: branch ("|" branch)*
branch: piece*
piece: atom quant?
quant: QUANT "?"?
atom: LITERAL | ESCAPE | "." | "^" | "$" | class | group
group: "(" GROUPMOD? regex ")"
class: "[" "^"? "-"? class_item+ "-"? "]"
class_item: CLASS_CHAR ("-" CLASS_CHAR)? | ESCAPE
_nl: "\n"
QUANT: "*" | "+" | "?" | /\{[0-9]{1,3}(,[0-9]{0,3})?\}/
GROUPMOD: "?:" | /\?P?<[A-Za-z_][A-Za-z0-9_]{0,30}>/
ESCAPE: /\\[dDwWsSbBAztnr.\\\/\-\[\]\(\)\{\}\*\+\?\|\^\$]/
CLASS_CHAR: /[^\]\\\-\[\x00-\x1f]/
LITERAL: /[^\\\/\.\^\$\|\(\)\[\]\{\}\*\+\?\x00-\x1f]/
FLAGS: /[imsx]{1,4}/
STRING: /"[^"\x00-\x1f]{0,200}"/
"#;

impl GrammarTool for RegexTester {
    type Input = Test;

    fn name(&self) -> &str {
        "regex_tester"
    }

    fn description(&self) -> String {
        "Try a regular expression (Rust `regex` syntax) on strings. First line `/regex/flags` \
         (flags i m s x), then one \"quoted string\" per line. Example:\n/(\\d{4})-(\\d{2})/\n\"due 2026-11\""
            .into()
    }

    fn lark(&self) -> String {
        GRAMMAR.to_owned()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Test, ToolError> {
        let regex = tree
            .child("regex")
            .ok_or_else(|| ToolError::Grammar("no regex".into()))?;
        let strings = tree
            .children_named("STRING")
            .map(|s| {
                let t = s.text(src);
                t.get(1..t.len().saturating_sub(1)).unwrap_or("").to_owned()
            })
            .collect();
        Ok(Test {
            pattern: regex.text(src).to_owned(),
            flags: tree
                .child("FLAGS")
                .map_or(String::new(), |f| f.text(src).to_owned()),
            strings,
        })
    }

    fn emit(&self, t: &Test) -> String {
        let mut out = format!("/{}/{}", t.pattern, t.flags);
        for s in &t.strings {
            out.push_str(&format!("\n\"{s}\""));
        }
        out
    }

    fn run(&self, input: &Test, _ctx: &RunContext) -> Result<Value, ToolError> {
        run::run(input)
    }
}

#[cfg(test)]
mod tests;
