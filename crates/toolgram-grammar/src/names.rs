//! Rule names legal for a target: GBNF takes `[a-zA-Z0-9-]` (llama.cpp's `is_word_char`;
//! no underscores), Lark rules take `[a-z0-9_]` starting with a letter or `_`.
//!
//! Names stay unique and deterministic; the start rule gets the target's start name. This
//! module must not reorder or drop rules.

use std::collections::{BTreeSet, HashMap};

/// The naming rules of a target.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Gbnf,
    Lark,
}

/// Maps IR rule names to legal, unique target names.
pub(crate) struct Namer {
    map: HashMap<String, String>,
    used: BTreeSet<String>,
    target: Target,
}

impl Namer {
    /// A namer where `start` (the IR start rule) is spelled `start_name`.
    pub(crate) fn new(target: Target, start: &str, start_name: &str) -> Self {
        let mut n = Self {
            map: HashMap::new(),
            used: BTreeSet::new(),
            target,
        };
        n.map.insert(start.to_owned(), start_name.to_owned());
        n.used.insert(start_name.to_owned());
        n
    }

    /// The target name for `name`.
    pub(crate) fn name(&mut self, name: &str) -> String {
        if let Some(n) = self.map.get(name) {
            return n.clone();
        }
        let base = self.legal(name);
        let mut cand = base.clone();
        let mut i = 2;
        while self.used.contains(&cand) {
            cand = match self.target {
                Target::Gbnf => format!("{base}-{i}"),
                Target::Lark => format!("{base}_{i}"),
            };
            i += 1;
        }
        self.used.insert(cand.clone());
        self.map.insert(name.to_owned(), cand.clone());
        cand
    }

    fn legal(&self, name: &str) -> String {
        let mut out = String::new();
        for c in name.chars() {
            match self.target {
                Target::Gbnf if c.is_ascii_alphanumeric() || c == '-' => out.push(c),
                Target::Gbnf => out.push('-'),
                Target::Lark if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
                Target::Lark => out.push('_'),
            }
        }
        if out.is_empty() {
            out.push('r');
        }
        if matches!(self.target, Target::Lark)
            && out.chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            out.insert(0, 'r');
        }
        out
    }
}
