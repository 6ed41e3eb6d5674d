//! `code_search`: a query DSL over a source tree — bare words (all must appear on the line,
//! any case), `"exact text"`, `/regex/` (the `regex` crate's syntax), and filters
//! `def:NAME` (a definition whose name contains NAME), `type:fn|struct|class|enum|trait` (which kind of
//! definition), `lang:rust|python|js|ts|go|java|c|cpp|md` and `path:GLOB`. Runs over `--root`
//! with ripgrep's walker (`ignore`: `.gitignore` and hidden files respected); matches are
//! capped.
//!
//! Example: `def:parse type:fn lang:rust path:src/** "Result"`.

mod input;

mod run;

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value;
use toolgram_grammar::tree::ParseTree;

/// Sample texts the grammar must accept and refuse: every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "def:parse type:fn lang:rust",
        "def",
        "\"exact text\" path:src/**",
        "/fn \\w+/ config",
    ],
    refused: &["def:", "a  b", "\"open", "x;y"],
};

pub use input::{Query, Term};

/// The tool.
pub struct CodeSearch;

const GRAMMAR: &str = r#"start: term (_sp term)*
term: FILTER | EXACT | REGEX | WORD
_sp: " "
FILTER: /(def|type|lang|path):[A-Za-z0-9_.*\/-]{1,100}/
EXACT: /"[^"\\\n]{1,200}"/
REGEX: /\/[^\/\n]{1,200}\//
WORD: /[A-Za-z0-9_]{1,100}/
"#;

impl GrammarTool for CodeSearch {
    type Input = Query;

    fn name(&self) -> &str {
        "code_search"
    }

    fn description(&self) -> String {
        "Search the source tree. Examples: `def:parse lang:rust` (definitions whose name contains parse), \
         `\"TODO\" path:src/**`, `/fn \\w+_test/ lang:rust`, `config load` (lines with both words). \
         Filters: def:NAME type:fn|struct|class|enum|trait lang:LANG path:GLOB."
            .into()
    }

    fn lark(&self) -> String {
        GRAMMAR.to_owned()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Query, ToolError> {
        let mut terms = Vec::new();
        for t in tree.children_named("term") {
            let Some(inner) = t.children.first() else {
                return Err(ToolError::Grammar("empty term".into()));
            };
            let text = inner.text(src);
            let strip = |s: &str| s.get(1..s.len().saturating_sub(1)).unwrap_or("").to_owned();
            terms.push(match inner.name.as_str() {
                "FILTER" => {
                    let (key, value) = text.split_once(':').unwrap_or((text, ""));
                    Term::Filter {
                        key: key.to_owned(),
                        value: value.to_owned(),
                    }
                }
                "EXACT" => Term::Exact(strip(text)),
                "REGEX" => Term::Regex(strip(text)),
                "WORD" => Term::Word(text.to_owned()),
                other => return Err(ToolError::Grammar(format!("unexpected `{other}`"))),
            });
        }
        Ok(Query { terms })
    }

    fn emit(&self, q: &Query) -> String {
        q.terms
            .iter()
            .map(|t| match t {
                Term::Word(w) => w.clone(),
                Term::Exact(e) => format!("\"{e}\""),
                Term::Regex(r) => format!("/{r}/"),
                Term::Filter { key, value } => format!("{key}:{value}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn run(&self, input: &Query, ctx: &RunContext) -> Result<Value, ToolError> {
        run::run(input, ctx)
    }
}

#[cfg(test)]
mod tests;
