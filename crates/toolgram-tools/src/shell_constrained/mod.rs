//! `shell_constrained`: a few read-only commands (`ls`, `cat`, `head`, `tail`, `wc`, `grep`,
//! `find`) with only their permitted flags, IN THE GRAMMAR — no pipes, redirections, globs,
//! variables or substitution can even be written. Run without a shell, inside `--root`:
//! every path operand is resolved (symlinks included) and must stay inside the root; the run
//! has a timeout and an output cap.
//!
//! Examples: `ls -la src`, `head -n 5 README.md`, `grep -i -n 'tool call' docs/notes.md`,
//! `find . -name '*.rs' -type f`.

mod input;

mod run;

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value;
use toolgram_grammar::tree::ParseTree;

/// Sample texts the grammar must accept and refuse: every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "ls -la src",
        "head -n 5 README.md",
        "grep -i -n 'tool call' docs/x.md",
        "find . -name '*.rs' -type f",
    ],
    refused: &["rm -rf /", "cat a | sh", "ls ../x", "cat $(ls)"],
};

pub use input::{Command, Opt};

/// The tool.
pub struct ShellConstrained;

const GRAMMAR: &str = r#"start: ls | cat | head | tail | wc | grep | find
ls: "ls" (_sp LSFLAG)* (_sp path)*
cat: "cat" (_sp path)+
head: "head" (_sp count)? (_sp path)+
tail: "tail" (_sp count)? (_sp path)+
wc: "wc" (_sp WCFLAG)* (_sp path)+
grep: "grep" (_sp GREPFLAG)* _sp pattern (_sp path)+
find: "find" _sp path (_sp name)? (_sp ftype)?
count: "-n" _sp NUMBER
name: "-name" _sp pattern
ftype: "-type" _sp FTYPE
path: "." | SEGMENT ("/" SEGMENT)*
pattern: "'" PATTERN "'"
_sp: " "
LSFLAG: "-l" | "-a" | "-la" | "-1"
WCFLAG: "-l" | "-w" | "-c"
GREPFLAG: "-i" | "-n" | "-c" | "-l" | "-r"
FTYPE: "f" | "d"
NUMBER: /[1-9][0-9]{0,5}/
SEGMENT: /[A-Za-z0-9_][A-Za-z0-9._-]{0,100}/
PATTERN: /[A-Za-z0-9 _.*?+^$:,=#@%-]{1,100}/
"#;

fn bad(what: &str) -> ToolError {
    ToolError::Grammar(format!("unexpected parse shape at `{what}`"))
}

impl GrammarTool for ShellConstrained {
    type Input = Command;

    fn name(&self) -> &str {
        "shell_constrained"
    }

    fn description(&self) -> String {
        "Run one read-only shell command in the workspace and return its output. \
         Examples: `head -n 5 README.md` (first lines of a file), `ls -la src`, \
         `grep -n 'TODO' src/main.rs`, `find . -name '*.rs' -type f`, `wc -l notes.txt`. \
         Commands: ls, cat, head, tail, wc, grep, find; relative paths only; no pipes."
            .into()
    }

    fn lark(&self) -> String {
        GRAMMAR.to_owned()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Command, ToolError> {
        let cmd = tree.children.first().ok_or_else(|| bad("start"))?;
        let mut out = Command {
            program: cmd.name.clone(),
            options: Vec::new(),
            operands: Vec::new(),
        };
        let quoted = |t: &ParseTree| t.child("PATTERN").map(|p| p.text(src).to_owned());
        for part in &cmd.children {
            match part.name.as_str() {
                "LSFLAG" | "WCFLAG" | "GREPFLAG" => out.options.push(Opt {
                    flag: part.text(src).to_owned(),
                    value: None,
                }),
                "count" => out.options.push(Opt {
                    flag: "-n".into(),
                    value: part.child("NUMBER").map(|n| n.text(src).to_owned()),
                }),
                "name" => out.options.push(Opt {
                    flag: "-name".into(),
                    value: part.child("pattern").and_then(quoted),
                }),
                "ftype" => out.options.push(Opt {
                    flag: "-type".into(),
                    value: part.child("FTYPE").map(|n| n.text(src).to_owned()),
                }),
                "path" => out.operands.push(part.text(src).to_owned()),
                "pattern" => out
                    .operands
                    .push(quoted(part).ok_or_else(|| bad("pattern"))?),
                other => return Err(bad(other)),
            }
        }
        Ok(out)
    }

    fn emit(&self, c: &Command) -> String {
        let opt = |o: &Opt| match (&o.value, o.flag.as_str()) {
            (Some(v), "-name") => format!("-name '{v}'"),
            (Some(v), f) => format!("{f} {v}"),
            (None, f) => f.to_owned(),
        };
        let operand = |i: usize, s: &String| {
            if c.program == "grep" && i == 0 {
                format!("'{s}'")
            } else {
                s.clone()
            }
        };
        let mut parts = vec![c.program.clone()];
        let opts: Vec<String> = c.options.iter().map(opt).collect();
        let ops: Vec<String> = c
            .operands
            .iter()
            .enumerate()
            .map(|(i, s)| operand(i, s))
            .collect();
        if c.program == "find" {
            parts.extend(ops);
            parts.extend(opts);
        } else {
            parts.extend(opts);
            parts.extend(ops);
        }
        parts.join(" ")
    }

    fn run(&self, input: &Command, ctx: &RunContext) -> Result<Value, ToolError> {
        run::run(input, ctx)
    }
}

#[cfg(test)]
mod tests;
