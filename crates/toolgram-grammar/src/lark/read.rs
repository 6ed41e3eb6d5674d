//! The Lark reader: rules and terminals, strings (and `"a".."z"` ranges), `/regex/` with
//! `i`/`s`/`x` flags (through `regex-syntax`), `[optional]`, `( )`, `? * +`, `{m,n}`,
//! `~ m..n`, special tokens `<[id]>`/`<name>`, `%import common.X`, `%llguidance {…}`, and
//! aliases (`expansion -> name`), which name a tree node and leave the language as it is.
//!
//! Anything else (`%ignore`, `%declare`, templates, priorities, `%json`) is refused with a
//! line and column: the reader must never drop a construct that changes the language. So is
//! a grammar past the bounds of `limits` (nesting, rules, reference depth): the reader
//! recurses only as deep as groups nest, and that is bounded before it recurses.

use super::limits::{self, MAX_NESTING, MAX_RULES, Use};
use crate::GrammarError;
use crate::ir::{CharClass, Expr, Grammar, Rule, TokenName, TokenRef};
use crate::regex;
use std::collections::{HashMap, HashSet};

/// Read a Lark grammar; the start rule is `start`.
pub fn parse(src: &str) -> Result<Grammar, GrammarError> {
    let mut r = Reader {
        src,
        pos: 0,
        uses: Vec::new(),
    };
    let mut rules: Vec<Rule> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    let mut bodies: HashMap<String, Vec<Use>> = HashMap::new();
    let mut first_use: HashMap<String, usize> = HashMap::new();
    loop {
        r.skip(true);
        if r.pos >= src.len() {
            break;
        }
        if rules.len() >= MAX_RULES {
            return Err(r.err(format!(
                "more than {MAX_RULES} rules (the limit on rules in a grammar)"
            )));
        }
        if r.eat("%import") {
            r.skip(false);
            let at = r.pos;
            let path = r.word();
            let Some(name) = path.strip_prefix("common.") else {
                return Err(GrammarError::at(
                    src,
                    at,
                    "only `%import common.X` is supported",
                ));
            };
            let expr = common(name)
                .ok_or_else(|| GrammarError::at(src, at, format!("unknown common.{name}")))?;
            r.skip(false);
            let alias = if r.eat("->") {
                r.skip(false);
                r.word()
            } else {
                name.to_owned()
            };
            names.insert(alias.clone());
            rules.push(Rule { name: alias, expr });
            continue;
        }
        if r.eat("%llguidance") {
            r.line_end();
            continue;
        }
        if r.peek() == Some('%') {
            return Err(r.err("this `%` directive is not supported"));
        }
        if matches!(r.peek(), Some('?' | '!')) {
            r.pos += 1;
        }
        let name = r.word();
        if name.is_empty() {
            return Err(r.err("expecting a rule or terminal name"));
        }
        r.skip(false);
        if r.peek() != Some(':') {
            return Err(r.err("expecting `:` (priorities and templates are not supported)"));
        }
        r.pos += 1;
        let expr = r.alternatives(0, &mut first_use)?;
        if !names.insert(name.clone()) {
            return Err(r.err(format!("`{name}` is defined twice")));
        }
        bodies.insert(name.clone(), std::mem::take(&mut r.uses));
        rules.push(Rule { name, expr });
    }
    let Some(i) = rules.iter().position(|x| x.name == "start") else {
        return Err(GrammarError::at(src, src.len(), "no `start` rule"));
    };
    let start = rules.remove(i);
    rules.insert(0, start);
    let g = Grammar { rules };
    if let Some(name) = g.undefined().first() {
        let at = first_use.get(name).copied().unwrap_or(0);
        return Err(GrammarError::at(
            src,
            at,
            format!("undefined rule `{name}`"),
        ));
    }
    limits::check_ref_depth(src, "start", &bodies)?;
    Ok(g)
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
    /// The references of the rule being read.
    uses: Vec<Use>,
}

impl Reader<'_> {
    fn err(&self, m: impl Into<String>) -> GrammarError {
        GrammarError::at(self.src, self.pos, m)
    }

    fn rest(&self) -> &str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// Skips blanks and comments, and newlines when `newlines`.
    fn skip(&mut self, newlines: bool) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\n') if newlines => self.pos += 1,
                Some('#') => self.line_end(),
                Some('/') if self.rest().starts_with("//") => self.line_end(),
                _ => return,
            }
        }
    }

    fn line_end(&mut self) {
        while let Some(c) = self.peek().filter(|&c| c != '\n') {
            self.pos += c.len_utf8();
        }
    }

    /// Skips to the next item; a newline continues the rule only before a `|` line.
    fn gap(&mut self, depth: usize) {
        self.skip(depth > 0);
        if depth == 0 && self.peek() == Some('\n') {
            let save = self.pos;
            self.skip(true);
            if self.peek() != Some('|') {
                self.pos = save;
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            self.pos += 1;
        }
        self.src[start..self.pos].to_owned()
    }

    fn int(&mut self) -> Result<u32, GrammarError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.src[start..self.pos]
            .parse()
            .map_err(|_| GrammarError::at(self.src, start, "expecting a number"))
    }

    fn alternatives(
        &mut self,
        depth: usize,
        uses: &mut HashMap<String, usize>,
    ) -> Result<Expr, GrammarError> {
        let mut alts = vec![self.sequence(depth, uses)?];
        while self.peek() == Some('|') {
            self.pos += 1;
            alts.push(self.sequence(depth, uses)?);
        }
        Ok(Expr::alt(alts))
    }

    fn sequence(
        &mut self,
        depth: usize,
        uses: &mut HashMap<String, usize>,
    ) -> Result<Expr, GrammarError> {
        let mut items = Vec::new();
        loop {
            self.gap(depth);
            let Some(c) = self.peek() else { break };
            let item = match c {
                '(' | '[' => {
                    if depth >= MAX_NESTING {
                        return Err(self.err(format!(
                            "groups nest more than {MAX_NESTING} deep (the limit on nesting depth)"
                        )));
                    }
                    self.pos += 1;
                    let inner = self.alternatives(depth + 1, uses)?;
                    self.skip(true);
                    let close = if c == '(' { ')' } else { ']' };
                    if self.peek() != Some(close) {
                        return Err(self.err(format!("expecting `{close}`")));
                    }
                    self.pos += 1;
                    if c == '[' { Expr::opt(inner) } else { inner }
                }
                '"' => self.string_or_range()?,
                '/' => self.regex()?,
                '<' => self.token()?,
                c if c.is_ascii_alphabetic() || c == '_' => {
                    let at = self.pos;
                    let name = self.word();
                    uses.entry(name.clone()).or_insert(at);
                    self.uses.push(Use {
                        name: name.clone(),
                        at,
                        nesting: depth,
                    });
                    Expr::Ref(name)
                }
                // `expansion -> name` names the tree node an alternative builds: the language
                // is the same without it (a parser of the input is not built from it).
                '-' if self.rest().starts_with("->") => {
                    self.pos += 2;
                    self.skip(false);
                    if self.word().is_empty() {
                        return Err(self.err("expecting an alias name after `->`"));
                    }
                    self.gap(depth);
                    break;
                }
                _ => break,
            };
            items.push(self.quantifier(item)?);
        }
        Ok(Expr::seq(items))
    }

    fn quantifier(&mut self, item: Expr) -> Result<Expr, GrammarError> {
        self.skip(false);
        Ok(match self.peek() {
            Some('?') => {
                self.pos += 1;
                Expr::opt(item)
            }
            Some('*') => {
                self.pos += 1;
                Expr::repeat(item, 0, None)
            }
            Some('+') => {
                self.pos += 1;
                Expr::repeat(item, 1, None)
            }
            Some('{') => {
                self.pos += 1;
                self.skip(false);
                let min = if self.peek() == Some(',') {
                    0
                } else {
                    self.int()?
                };
                self.skip(false);
                let max = if self.eat(",") {
                    self.skip(false);
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.int()?)
                    }
                } else {
                    Some(min)
                };
                self.skip(false);
                if !self.eat("}") {
                    return Err(self.err("expecting `}`"));
                }
                self.range(item, min, max)?
            }
            Some('~') => {
                self.pos += 1;
                self.skip(false);
                let min = self.int()?;
                let max = if self.eat("..") { self.int()? } else { min };
                self.range(item, min, Some(max))?
            }
            _ => item,
        })
    }

    fn range(&self, item: Expr, min: u32, max: Option<u32>) -> Result<Expr, GrammarError> {
        if max.is_some_and(|m| m < min) {
            return Err(self.err("range end must be >= start"));
        }
        Ok(Expr::repeat(item, min, max))
    }

    fn string(&mut self) -> Result<String, GrammarError> {
        let start = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(GrammarError::at(self.src, start, "unterminated string"));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let e = self.peek().ok_or_else(|| self.err("unterminated string"))?;
                    self.pos += e.len_utf8();
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        '"' | '\\' | '/' => e,
                        'u' | 'x' => {
                            let n = if e == 'u' { 4 } else { 2 };
                            let hex = self.rest().get(..n).ok_or_else(|| self.err("bad escape"))?;
                            let v =
                                u32::from_str_radix(hex, 16).map_err(|_| self.err("bad escape"))?;
                            self.pos += n;
                            char::from_u32(v).ok_or_else(|| self.err("bad escape"))?
                        }
                        _ => return Err(self.err("unknown escape")),
                    });
                }
                c => s.push(c),
            }
        }
        if self.peek() == Some('i') {
            return Err(self.err("case-insensitive strings are not supported"));
        }
        Ok(s)
    }

    fn string_or_range(&mut self) -> Result<Expr, GrammarError> {
        let lo = self.string()?;
        let save = self.pos;
        self.skip(false);
        if !self.eat("..") {
            self.pos = save;
            return Ok(Expr::Literal(lo));
        }
        self.skip(false);
        let hi = self.string()?;
        let one = |s: &str| {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(self.err("a range needs one-character strings")),
            }
        };
        let (lo, hi) = (one(&lo)?, one(&hi)?);
        Ok(Expr::Class(CharClass {
            negated: false,
            ranges: vec![(lo, hi)],
        }))
    }

    fn regex(&mut self) -> Result<Expr, GrammarError> {
        let start = self.pos;
        self.pos += 1;
        let mut body = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(GrammarError::at(self.src, start, "unterminated regex"));
            };
            self.pos += c.len_utf8();
            match c {
                '/' => break,
                '\\' if self.peek() == Some('/') => {
                    self.pos += 1;
                    body.push('/');
                }
                '\\' => {
                    body.push('\\');
                    if let Some(n) = self.peek() {
                        self.pos += n.len_utf8();
                        body.push(n);
                    }
                }
                c => body.push(c),
            }
        }
        let mut flags = String::new();
        while let Some(f) = self.peek().filter(|c| "imslux".contains(*c)) {
            self.pos += 1;
            if "isx".contains(f) {
                flags.push(f);
            }
        }
        let pattern = if flags.is_empty() {
            body
        } else {
            format!("(?{flags}:{body})")
        };
        regex::to_expr(&pattern)
            .map_err(|e| GrammarError::at(self.src, start, format!("regex: {}", e.0)))
    }

    fn token(&mut self) -> Result<Expr, GrammarError> {
        let start = self.pos;
        let Some(end) = self.rest().find('>') else {
            return Err(self.err("expecting `>`"));
        };
        let text = &self.src[start..start + end + 1];
        self.pos = start + end + 1;
        if let Some(inner) = text.strip_prefix("<[").and_then(|t| t.strip_suffix("]>")) {
            let (negated, digits) = match inner.strip_prefix('^') {
                Some(d) => (true, d),
                None => (false, inner),
            };
            let id = digits
                .parse()
                .map_err(|_| GrammarError::at(self.src, start, "expecting `<[id]>`"))?;
            return Ok(Expr::Token(TokenRef {
                negated,
                token: TokenName::Id(id),
            }));
        }
        Ok(Expr::Token(TokenRef {
            negated: false,
            token: TokenName::Text(text.to_owned()),
        }))
    }
}

/// Lark's `common` terminals, as regexes.
fn common(name: &str) -> Option<Expr> {
    let re = match name {
        "DIGIT" => "[0-9]",
        "HEXDIGIT" => "[a-fA-F0-9]",
        "INT" => "[0-9]+",
        "SIGNED_INT" => "[+-]?[0-9]+",
        "DECIMAL" => r"[0-9]+\.[0-9]*|\.[0-9]+",
        "FLOAT" => r"[0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?",
        "SIGNED_FLOAT" => {
            r"[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)"
        }
        "NUMBER" => r"[0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+",
        "SIGNED_NUMBER" => {
            r"[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+)"
        }
        "LCASE_LETTER" => "[a-z]",
        "UCASE_LETTER" => "[A-Z]",
        "LETTER" => "[a-zA-Z]",
        "WORD" => "[a-zA-Z]+",
        "CNAME" => "[_a-zA-Z][_a-zA-Z0-9]*",
        "WS_INLINE" => "[ \t]+",
        "WS" => "[ \t\x0C\r\n]+",
        "CR" => "\r",
        "LF" => "\n",
        "NEWLINE" => "(\r?\n)+",
        "ESCAPED_STRING" => r#""([^"\\]|\\.)*""#,
        _ => return None,
    };
    regex::to_expr(re).ok()
}
