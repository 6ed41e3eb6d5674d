//! The GBNF reader: llama.cpp's grammar parser, step for step, producing the IR.
//!
//! A grammar it cannot take is refused whole with a line and column; it must never return a
//! partly read grammar.

use crate::GrammarError;
use crate::ir::{CharClass, Expr, Grammar, Rule, TokenName, TokenRef};
use std::collections::HashMap;

/// llama.cpp's `MAX_REPETITION_THRESHOLD`.
const MAX_REPETITION: u64 = 2000;

/// Read a GBNF grammar (llama.cpp dialect). The start rule is `root`.
pub fn parse(src: &str) -> Result<Grammar, GrammarError> {
    let mut p = Reader {
        src,
        pos: 0,
        symbols: 0,
        first_use: HashMap::new(),
    };
    let mut rules: Vec<(Rule, usize)> = Vec::new();
    p.space(true);
    while p.pos < src.len() {
        let at = p.pos;
        let rule = p.rule()?;
        match rules.iter_mut().find(|(r, _)| r.name == rule.name) {
            Some(slot) => *slot = (rule, at),
            None => rules.push((rule, at)),
        }
    }
    let Some(root) = rules.iter().position(|(r, _)| r.name == "root") else {
        return Err(GrammarError::at(src, src.len(), "no `root` rule"));
    };
    let root_rule = rules.remove(root);
    rules.insert(0, root_rule);
    let positions: HashMap<String, usize> =
        rules.iter().map(|(r, at)| (r.name.clone(), *at)).collect();
    let grammar = Grammar {
        rules: rules.into_iter().map(|(r, _)| r).collect(),
    };
    if let Some(name) = grammar.undefined().first() {
        let at = p.first_use.get(name).copied().unwrap_or(0);
        return Err(GrammarError::at(
            src,
            at,
            format!("undefined rule `{name}`"),
        ));
    }
    if let Some(name) = grammar.left_recursive() {
        let at = positions.get(name).copied().unwrap_or(0);
        return Err(GrammarError::at(
            src,
            at,
            format!("rule `{name}` is left-recursive, which llama.cpp does not support"),
        ));
    }
    Ok(grammar)
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
    /// Rules llama.cpp would have synthesised so far (groups and repetitions), for its
    /// repetition limit.
    symbols: u64,
    first_use: HashMap<String, usize>,
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

impl Reader<'_> {
    fn err(&self, message: impl Into<String>) -> GrammarError {
        GrammarError::at(self.src, self.pos, message)
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + k).copied()
    }

    fn space(&mut self, newline_ok: bool) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' => self.pos += 1,
                b'\r' | b'\n' if newline_ok => self.pos += 1,
                b'#' => {
                    while self.peek().is_some_and(|c| c != b'\r' && c != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn name(&mut self) -> Result<String, GrammarError> {
        let start = self.pos;
        while self.peek().is_some_and(is_word) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.err("expecting a rule name"));
        }
        Ok(self.src[start..self.pos].to_owned())
    }

    fn int(&mut self) -> Result<u64, GrammarError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.src[start..self.pos]
            .parse()
            .map_err(|_| GrammarError::at(self.src, start, "expecting an integer"))
    }

    fn rule(&mut self) -> Result<Rule, GrammarError> {
        let name = self.name()?;
        self.space(false);
        if !self.src[self.pos..].starts_with("::=") {
            return Err(self.err("expecting `::=`"));
        }
        self.pos += 3;
        self.space(true);
        let expr = self.alternates(false)?;
        match self.peek() {
            Some(b'\r') => {
                self.pos += 1;
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
            }
            Some(b'\n') => self.pos += 1,
            None => {}
            Some(_) => return Err(self.err("expecting a newline or the end")),
        }
        self.space(true);
        Ok(Rule { name, expr })
    }

    fn alternates(&mut self, nested: bool) -> Result<Expr, GrammarError> {
        let mut alts = vec![self.sequence(nested)?];
        while self.peek() == Some(b'|') {
            self.pos += 1;
            self.space(true);
            alts.push(self.sequence(nested)?);
        }
        Ok(Expr::alt(alts))
    }

    fn char(&mut self) -> Result<char, GrammarError> {
        let rest = &self.src[self.pos..];
        let mut chars = rest.chars();
        match chars.next() {
            None => Err(self.err("unexpected end of input")),
            Some('\\') => {
                let (value, len) = match chars.next() {
                    Some('x') => (self.hex(2)?, 2 + 2),
                    Some('u') => (self.hex(4)?, 2 + 4),
                    Some('U') => (self.hex(8)?, 2 + 8),
                    Some('t') => ('\t' as u32, 2),
                    Some('r') => ('\r' as u32, 2),
                    Some('n') => ('\n' as u32, 2),
                    Some(c @ ('\\' | '"' | '[' | ']' | '-')) => (c as u32, 2),
                    _ => return Err(self.err("unknown escape")),
                };
                let c = char::from_u32(value)
                    .ok_or_else(|| self.err(format!("U+{value:X} is not a character")))?;
                self.pos += len;
                Ok(c)
            }
            Some(c) => {
                self.pos += c.len_utf8();
                Ok(c)
            }
        }
    }

    fn hex(&self, n: usize) -> Result<u32, GrammarError> {
        let digits = self
            .src
            .get(self.pos + 2..self.pos + 2 + n)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.err(format!("expecting {n} hex digits")))?;
        u32::from_str_radix(digits, 16).map_err(|_| self.err("bad hex escape"))
    }

    fn sequence(&mut self, nested: bool) -> Result<Expr, GrammarError> {
        let mut items: Vec<Expr> = Vec::new();
        // How many rules llama.cpp would repeat for the last item.
        let mut n_prev: u64 = 1;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.pos += 1;
                    let mut s = String::new();
                    while self.peek() != Some(b'"') {
                        s.push(self.char()?);
                    }
                    self.pos += 1;
                    items.push(Expr::Literal(s));
                    n_prev = 1;
                }
                b'[' => {
                    self.pos += 1;
                    let negated = self.peek() == Some(b'^');
                    if negated {
                        self.pos += 1;
                    }
                    let mut ranges = Vec::new();
                    while self.peek() != Some(b']') {
                        let lo = self.char()?;
                        let mut hi = lo;
                        if self.peek() == Some(b'-') && self.peek_at(1) != Some(b']') {
                            self.pos += 1;
                            hi = self.char()?;
                        }
                        ranges.push((lo, hi));
                    }
                    if ranges.is_empty() {
                        return Err(self.err("empty character class"));
                    }
                    self.pos += 1;
                    items.push(Expr::Class(CharClass { negated, ranges }));
                    n_prev = 1;
                }
                b'<' | b'!' => {
                    let negated = c == b'!';
                    if negated {
                        self.pos += 1;
                    }
                    items.push(Expr::Token(TokenRef {
                        negated,
                        token: self.token()?,
                    }));
                    n_prev = 1;
                }
                c if is_word(c) => {
                    let at = self.pos;
                    let name = self.name()?;
                    self.first_use.entry(name.clone()).or_insert(at);
                    items.push(Expr::Ref(name));
                    n_prev = 1;
                }
                b'(' => {
                    self.pos += 1;
                    self.space(true);
                    let before = self.symbols;
                    self.symbols += 1;
                    let inner = self.alternates(true)?;
                    n_prev = (self.symbols - before).max(1);
                    if self.peek() != Some(b')') {
                        return Err(self.err("expecting `)`"));
                    }
                    self.pos += 1;
                    items.push(inner);
                }
                b'.' => {
                    self.pos += 1;
                    items.push(Expr::Any);
                    n_prev = 1;
                }
                b'*' | b'+' | b'?' | b'{' => {
                    let (min, max) = self.quantifier(nested)?;
                    let Some(last) = items.pop() else {
                        return Err(self.err("expecting an item before */+/?/{"));
                    };
                    let total = match max {
                        Some(m) if m > 0 => m,
                        _ if min > 0 => min,
                        _ => 1,
                    };
                    if n_prev.saturating_mul(total) > MAX_REPETITION {
                        return Err(self.err(
                            "repetition too large for llama.cpp (rules repeated × count > 2000)",
                        ));
                    }
                    self.symbols += max.map_or(1, |m| m - min);
                    n_prev = n_prev.saturating_mul(total);
                    let to_u32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
                    items.push(Expr::repeat(last, to_u32(min), max.map(to_u32)));
                }
                _ => break,
            }
            self.space(nested);
        }
        Ok(Expr::seq(items))
    }

    /// `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}`.
    fn quantifier(&mut self, nested: bool) -> Result<(u64, Option<u64>), GrammarError> {
        let c = self.peek();
        self.pos += 1;
        let q = match c {
            Some(b'*') => (0, None),
            Some(b'+') => (1, None),
            Some(b'?') => (0, Some(1)),
            _ => {
                self.space(nested);
                if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(self.err("expecting an integer"));
                }
                let min = self.int()?;
                self.space(nested);
                let mut max = Some(min);
                match self.peek() {
                    Some(b'}') => self.pos += 1,
                    Some(b',') => {
                        self.pos += 1;
                        self.space(nested);
                        max = None;
                        if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                            max = Some(self.int()?);
                            self.space(nested);
                        }
                        if self.peek() != Some(b'}') {
                            return Err(self.err("expecting `}`"));
                        }
                        self.pos += 1;
                    }
                    _ => return Err(self.err("expecting `,` or `}`")),
                }
                if min > MAX_REPETITION {
                    return Err(self.err("repetition count above llama.cpp's limit of 2000"));
                }
                if let Some(m) = max {
                    if m < min {
                        return Err(self.err("repetition maximum below its minimum"));
                    }
                    if m > MAX_REPETITION {
                        // llama.cpp drops a maximum above its limit: the repetition is unbounded.
                        max = None;
                    }
                }
                (min, max)
            }
        };
        Ok(q)
    }

    fn token(&mut self) -> Result<TokenName, GrammarError> {
        if self.peek() != Some(b'<') {
            return Err(self.err("expecting `<`"));
        }
        if self.peek_at(1) == Some(b'[') {
            self.pos += 2;
            let start = self.pos;
            let id = self.int()?;
            let id = u32::try_from(id)
                .map_err(|_| GrammarError::at(self.src, start, "token id too big"))?;
            if !self.src[self.pos..].starts_with("]>") {
                return Err(self.err("expecting `]>`"));
            }
            self.pos += 2;
            return Ok(TokenName::Id(id));
        }
        let start = self.pos;
        let Some(end) = self.src[start..].find('>') else {
            return Err(self.err("expecting `>`"));
        };
        self.pos = start + end + 1;
        Ok(TokenName::Text(self.src[start..self.pos].to_owned()))
    }
}
