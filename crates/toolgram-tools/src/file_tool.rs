//! Grammar tools loaded from files, without Rust: a `.lark` grammar and a small TOML manifest
//! saying the tool's name, description, which named rules become typed input fields, and
//! optionally a command that runs it. Everything else (GBNF, OpenAI Lark, the JSON fallback,
//! the parser) comes from the grammar as for built-in tools. The manifest and grammar are
//! checked when loaded; this module must not read grammars any other way than core's reader.
//!
//! ```toml
//! name = "dice"
//! description = "Roll dice, e.g. 2d6+1"
//! grammar = "dice.lark"              # relative to the manifest
//! [fields]                           # typed input: field = rule (first match) or rule* (all)
//! count = "COUNT"
//! modifiers = "modifier*"
//! [run]                              # optional; without it `run` returns the typed input
//! command = ["python3", "roll.py"]   # no shell; cwd = the manifest's folder;
//!                                    # stdin {"input": text, "fields": {…}}; stdout JSON or text
//! ```

use crate::definition::{GrammarTool, RunContext, ToolError};
use crate::process::run_child;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toolgram_grammar::lark;
use toolgram_grammar::tree::ParseTree;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    description: String,
    grammar: PathBuf,
    #[serde(default)]
    fields: BTreeMap<String, String>,
    run: Option<RunSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    command: Vec<String>,
}

/// A grammar tool read from a manifest and its `.lark` file.
pub struct FileTool {
    name: String,
    description: String,
    lark: String,
    /// Field → (rule, all matches?).
    fields: Vec<(String, String, bool)>,
    command: Option<Vec<String>>,
    dir: PathBuf,
}

/// A file tool's typed input: its text and the fields the manifest names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInput {
    /// The text, in the grammar.
    pub text: String,
    /// Field → text of the first match (or null), or an array of every match for `rule*`.
    pub fields: Map<String, Value>,
}

fn bad(manifest: &Path, what: impl std::fmt::Display) -> ToolError {
    ToolError::Definition(format!("{}: {what}", manifest.display()))
}

impl FileTool {
    /// Read and check the manifest at `manifest` and the grammar it names.
    pub fn load(manifest: &Path) -> Result<Self, ToolError> {
        let text = std::fs::read_to_string(manifest).map_err(|e| bad(manifest, e))?;
        let m: Manifest = toml::from_str(&text).map_err(|e| bad(manifest, e))?;
        let valid_name = !m.name.is_empty()
            && m.name.len() <= 64
            && m.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(bad(
                manifest,
                format!("name `{}` must be 1-64 of [A-Za-z0-9_-]", m.name),
            ));
        }
        let dir = manifest
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let grammar_path = dir.join(&m.grammar);
        let lark_text = std::fs::read_to_string(&grammar_path)
            .map_err(|e| bad(manifest, format!("{}: {e}", grammar_path.display())))?;
        let grammar = lark::parse(&lark_text)
            .map_err(|e| bad(manifest, format!("{}: {e}", grammar_path.display())))?;
        if grammar.start() != Some("start") {
            return Err(bad(manifest, "the grammar's first rule must be `start`"));
        }
        if let Some(rule) = grammar.left_recursive() {
            return Err(bad(
                manifest,
                format!("rule `{rule}` is left-recursive; write it with repetition (`a (op a)*`)"),
            ));
        }
        let mut fields = Vec::new();
        for (field, spec) in m.fields {
            let (rule, many) = match spec.strip_suffix('*') {
                Some(r) => (r.to_owned(), true),
                None => (spec, false),
            };
            if grammar.get(&rule).is_none() {
                return Err(bad(
                    manifest,
                    format!("field `{field}`: the grammar has no rule `{rule}`"),
                ));
            }
            fields.push((field, rule, many));
        }
        let command = match m.run {
            Some(r) if r.command.is_empty() => {
                return Err(bad(manifest, "run.command is empty"));
            }
            Some(r) => Some(r.command),
            None => None,
        };
        Ok(Self {
            name: m.name,
            description: m.description,
            lark: lark_text,
            fields,
            command,
            dir,
        })
    }
}

fn collect<'t>(node: &'t ParseTree, rule: &str, out: &mut Vec<&'t ParseTree>) {
    for child in &node.children {
        if child.name == rule {
            out.push(child);
        }
        collect(child, rule, out);
    }
}

impl GrammarTool for FileTool {
    type Input = FileInput;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn lark(&self) -> String {
        self.lark.clone()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<FileInput, ToolError> {
        let mut fields = Map::new();
        for (field, rule, many) in &self.fields {
            let mut found = Vec::new();
            if tree.name == *rule {
                found.push(tree);
            }
            collect(tree, rule, &mut found);
            let texts = found.iter().map(|n| Value::from(n.text(src)));
            let value = if *many {
                Value::Array(texts.collect())
            } else {
                texts.into_iter().next().unwrap_or(Value::Null)
            };
            fields.insert(field.clone(), value);
        }
        Ok(FileInput {
            text: src.to_owned(),
            fields,
        })
    }

    fn emit(&self, input: &FileInput) -> String {
        input.text.clone()
    }

    fn run(&self, input: &FileInput, ctx: &RunContext) -> Result<Value, ToolError> {
        let Some(command) = &self.command else {
            return Ok(json!({ "input": input }));
        };
        let (program, args) = command
            .split_first()
            .ok_or_else(|| ToolError::Definition("run.command is empty".into()))?;
        let mut cmd = std::process::Command::new(program);
        cmd.args(args).current_dir(&self.dir);
        let stdin = serde_json::to_vec(&json!({"input": input.text, "fields": input.fields}))
            .map_err(|e| ToolError::Run(e.to_string()))?;
        let out = run_child(cmd, program, Some(&stdin), ctx)?;
        if !out.status.success() {
            return Err(ToolError::Run(format!(
                "{program} exited with {}: {}",
                out.status,
                out.stderr.trim()
            )));
        }
        Ok(serde_json::from_str(&out.stdout).unwrap_or(Value::String(out.stdout)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::DynTool;
    use crate::definition::Format;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("writes");
        p
    }

    fn dir(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("toolgram-file-tool-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    const DICE: &str = "start: COUNT \"d\" SIDES modifier*\nmodifier: SIGN NUMBER\nCOUNT: /[1-9][0-9]?/\nSIDES: /[1-9][0-9]{0,2}/\nSIGN: \"+\" | \"-\"\nNUMBER: /[0-9]{1,3}/\n";

    #[test]
    fn a_manifest_and_a_lark_file_make_a_tool_with_fields_and_a_command() {
        let d = dir("dice");
        write(&d, "dice.lark", DICE);
        let m = write(
            &d,
            "dice.toml",
            "name = \"dice\"\ndescription = \"Roll dice\"\ngrammar = \"dice.lark\"\n\
             [fields]\ncount = \"COUNT\"\nsides = \"SIDES\"\nmodifiers = \"modifier*\"\n\
             [run]\ncommand = [\"cat\"]\n",
        );
        let tool = FileTool::load(&m).expect("loads");
        let input = tool.parse("2d6+1-3").expect("parses");
        assert_eq!(
            Value::Object(input.fields.clone()),
            json!({"count": "2", "modifiers": ["+1", "-3"], "sides": "6"})
        );
        assert!(matches!(tool.parse("2d6+"), Err(ToolError::Syntax { .. })));
        // `cat` echoes its stdin: the command got the text and the fields.
        let out = tool.run_text("3d8", &RunContext::default()).expect("runs");
        assert_eq!(out["fields"]["sides"], "8");
        assert_eq!(out["input"], "3d8");
        for format in [
            Format::Lark,
            Format::LarkOpenai,
            Format::Gbnf,
            Format::JsonSchema,
        ] {
            assert!(DynTool::format(&tool, format).is_ok());
        }
    }

    #[test]
    fn bad_manifests_are_refused_when_loaded() {
        let d = dir("bad");
        write(&d, "dice.lark", DICE);
        write(&d, "left.lark", "start: start \"a\" | \"a\"\n");
        write(&d, "broken.lark", "start: \"a\"\n%ignore \" \"\n");
        for (manifest, says) in [
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"nope.lark\"\n",
                "nope.lark",
            ),
            (
                "name = \"di ce\"\ndescription = \"d\"\ngrammar = \"dice.lark\"\n",
                "name",
            ),
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"left.lark\"\n",
                "left-recursive",
            ),
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"broken.lark\"\n",
                "line 2, column 1",
            ),
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"dice.lark\"\n[fields]\nx = \"NOPE\"\n",
                "no rule `NOPE`",
            ),
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"dice.lark\"\ncolour = 1\n",
                "unknown field",
            ),
            (
                "name = \"dice\"\ndescription = \"d\"\ngrammar = \"dice.lark\"\n[run]\ncommand = []\n",
                "empty",
            ),
        ] {
            let m = write(&d, "m.toml", manifest);
            match FileTool::load(&m) {
                Err(ToolError::Definition(msg)) => assert!(msg.contains(says), "{says}: {msg}"),
                Err(other) => panic!("{says}: {other:?}"),
                Ok(_) => panic!("{says}: loaded"),
            }
        }
    }
}
