//! The database side of `sql_query`: reading a SQLite file's tables and columns, and writing
//! the Lark grammar that only names them. It must not run user queries.

use crate::definition::ToolError;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use toolgram_grammar::lark::Rhs;
use toolgram_grammar::tree::ParseTree;

/// One table (or view) and its columns, in the database's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableSchema {
    /// Its name.
    pub name: String,
    /// Its columns.
    pub columns: Vec<String>,
}

/// The tables of a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct DbSchema {
    /// Tables and views, by name.
    pub tables: Vec<TableSchema>,
}

/// Words that must be quoted when used as names (SQLite's keywords that matter here).
pub(super) const KEYWORDS: &[&str] = &[
    "all",
    "and",
    "as",
    "asc",
    "avg",
    "between",
    "by",
    "case",
    "count",
    "cross",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "from",
    "full",
    "group",
    "having",
    "in",
    "index",
    "inner",
    "insert",
    "intersect",
    "into",
    "is",
    "isnull",
    "join",
    "left",
    "like",
    "limit",
    "max",
    "min",
    "natural",
    "not",
    "notnull",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "outer",
    "right",
    "select",
    "set",
    "sum",
    "table",
    "then",
    "union",
    "update",
    "using",
    "values",
    "when",
    "where",
    "with",
];

/// Open a database read-only (the file must exist; nothing is ever created or written).
pub(super) fn open_read_only(path: &Path) -> Result<Connection, ToolError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| ToolError::Run(format!("cannot open {}: {e}", path.display())))?;
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| ToolError::Run(format!("cannot make the connection read-only: {e}")))?;
    Ok(conn)
}

impl DbSchema {
    /// Read the tables and views of the database at `path`.
    pub fn read(path: &Path) -> Result<Self, ToolError> {
        let conn = open_read_only(path)?;
        let err = |e: rusqlite::Error| ToolError::Run(format!("reading the schema: {e}"));
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') \
                 AND name NOT LIKE 'sqlite_%' ORDER BY name",
            )
            .map_err(err)?;
        let names = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        let mut tables = Vec::new();
        for name in names {
            let mut cols = conn
                .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                .map_err(err)?;
            let columns = cols
                .query_map([&name], |row| row.get::<_, String>(0))
                .map_err(err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            tables.push(TableSchema { name, columns });
        }
        if tables.is_empty() {
            return Err(ToolError::Input(format!(
                "{} has no tables to query",
                path.display()
            )));
        }
        Ok(Self { tables })
    }

    /// Every column name, once, in first-seen order.
    pub fn all_columns(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.tables.iter().flat_map(|t| &t.columns) {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
        out
    }

    /// The table called `name`.
    pub fn table(&self, name: &str) -> Option<&TableSchema> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// A name as SQL spells it: bare when it is a plain identifier and not a keyword, else
/// double-quoted with `"` doubled.
pub(super) fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name.to_ascii_lowercase().as_str());
    if plain {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The name an identifier as written stands for (the inverse of [`quote_ident`]).
pub(super) fn unquote_ident(text: &str) -> String {
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => text.to_owned(),
    }
}

fn names_rule(names: &[&str]) -> String {
    Rhs::Alt(names.iter().map(|n| Rhs::lit(quote_ident(n))).collect()).to_string()
}

/// The query shape, shared by every database; `_source` (select list, FROM and joins),
/// `column`, `table` and the name rules are appended per database. `cond`/`value` are the WHERE/ON forms; `hcond`/`hvalue` (HAVING)
/// also take aggregates; ORDER BY takes aggregates only after GROUP BY (`horder`), as SQLite
/// refuses them in a query that is not an aggregate one, and a select-list position (`2`)
/// anywhere. `table.*` selects one table's columns.
const SHAPE: &str = r#"start: SELECT _S (DISTINCT _S)? _source where? (group horder? | order?) limit?
items: STAR | item (_c item)*
item: hvalue (_S AS _S ALIAS)? | table "." STAR
join: _S (JOIN_KIND _S)? JOIN _S table _S ON _S cond
where: _S WHERE _S cond
group: _S GROUP _S BY _S column (_c column)* having?
having: _S HAVING _S hcond
order: _S ORDER _S BY _S ord (_c ord)*
ord: (column | POS) (_S DIR)?
horder: _S ORDER _S BY _S hord (_c hord)*
hord: (aggregate | column | POS) (_S DIR)?
limit: _S LIMIT _S INT
cond: conj (_S OR _S conj)*
conj: neg (_S AND _S neg)*
neg: NOT _S neg | pred
pred: "(" cond ")" | value _S? CMP _S? value | value _S (NOT _S)? LIKE _S STRING | value _S (NOT _S)? IN _S? "(" literal (_c literal)* ")" | value _S (NOT _S)? BETWEEN _S value _S AND _S value | value _S IS _S (NOT _S)? NULL
value: column | literal
hcond: hconj (_S OR _S hconj)*
hconj: hneg (_S AND _S hneg)*
hneg: NOT _S hneg | hpred
hpred: "(" hcond ")" | hvalue _S? CMP _S? hvalue | hvalue _S (NOT _S)? LIKE _S STRING | hvalue _S (NOT _S)? IN _S? "(" literal (_c literal)* ")" | hvalue _S (NOT _S)? BETWEEN _S hvalue _S AND _S hvalue | hvalue _S IS _S (NOT _S)? NULL
hvalue: aggregate | column | literal
aggregate: COUNT "(" (STAR | (DISTINCT _S)? column) ")" | AGG "(" (DISTINCT _S)? column ")"
literal: NUMBER | STRING
_c: "," _S?
STAR: "*"
CMP: "=" | "!=" | "<>" | "<=" | ">=" | "<" | ">"
ALIAS: /[A-Za-z_][A-Za-z0-9_]{0,30}|"[A-Za-z_][A-Za-z0-9_]{0,30}"/
INT: /[0-9]{1,6}/
POS: /[1-9][0-9]{0,2}/
NUMBER: /-?[0-9]{1,15}(\.[0-9]{1,10})?/
STRING: /'([^'\x00-\x1f]|''){0,200}'/
_S: / {1,4}|\n[ \t]{0,8}/
"#;

/// Keyword terminals and their words, matched in either case (ASCII only: a regex `i` flag
/// would also let Unicode case variants such as `ſ` and `K` through, which SQLite refuses).
const KEYWORD_TERMINALS: &[(&str, &[&str])] = &[
    ("SELECT", &["select"]),
    ("DISTINCT", &["distinct"]),
    ("FROM", &["from"]),
    ("AS", &["as"]),
    ("JOIN_KIND", &["inner", "left"]),
    ("JOIN", &["join"]),
    ("ON", &["on"]),
    ("WHERE", &["where"]),
    ("GROUP", &["group"]),
    ("BY", &["by"]),
    ("HAVING", &["having"]),
    ("ORDER", &["order"]),
    ("DIR", &["asc", "desc"]),
    ("LIMIT", &["limit"]),
    ("OR", &["or"]),
    ("AND", &["and"]),
    ("NOT", &["not"]),
    ("LIKE", &["like"]),
    ("IN", &["in"]),
    ("BETWEEN", &["between"]),
    ("IS", &["is"]),
    ("NULL", &["null"]),
    ("COUNT", &["count"]),
    ("AGG", &["sum", "avg", "min", "max"]),
];

/// `select` → `[sS][eE][lL][eE][cC][tT]`.
fn any_case(word: &str) -> String {
    word.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The Lark grammar of queries over `schema`: the shared shape, then `table`, `column`
/// and one name rule per table (`t0`, `c0`, …) so a qualified column must belong to its table.
///
/// The select list comes before FROM, so a context-free grammar cannot tie its columns to
/// the table named after it — unless each table has its own select list: a query of one
/// table is `_scoped__i` (its select list names only table `i`'s columns, bare or
/// qualified), a query with joins takes any column (checked against the joined tables
/// before it runs). Rules of a scoped copy end in `__i`; [`unscoped`] strips that from a
/// parse tree, so the typed query does not see it.
pub(super) fn grammar(schema: &DbSchema) -> String {
    let mut out = String::from(SHAPE);
    for (name, words) in KEYWORD_TERMINALS {
        let alts: Vec<String> = words.iter().map(|w| any_case(w)).collect();
        let _ = writeln!(out, "{name}: /{}/", alts.join("|"));
    }
    let tables: Vec<String> = (0..schema.tables.len()).map(|i| format!("t{i}")).collect();
    let _ = writeln!(out, "table: {}", tables.join(" | "));
    let mut column = vec!["any_col".to_owned()];
    let mut source = vec!["items _S FROM _S table join+".to_owned()];
    for (i, t) in schema.tables.iter().enumerate() {
        if !t.columns.is_empty() {
            column.push(format!("t{i} \".\" c{i}"));
            source.push(format!("_scoped__{i}"));
        }
    }
    let _ = writeln!(out, "_source: {}", source.join(" | "));
    let _ = writeln!(out, "column: {}", column.join(" | "));
    let _ = writeln!(out, "any_col: {}", names_rule(&schema.all_columns()));
    for (i, t) in schema.tables.iter().enumerate() {
        let _ = writeln!(out, "t{i}: {}", names_rule(&[t.name.as_str()]));
        if !t.columns.is_empty() {
            let cols: Vec<&str> = t.columns.iter().map(String::as_str).collect();
            let _ = writeln!(out, "c{i}: {}", names_rule(&cols));
            let _ = write!(
                out,
                "_scoped__{i}: items__{i} _S FROM _S table__{i}\n\
                 items__{i}: STAR | item__{i} (_c item__{i})*\n\
                 item__{i}: hvalue__{i} (_S AS _S ALIAS)? | table__{i} \".\" STAR\n\
                 hvalue__{i}: aggregate__{i} | column__{i} | literal\n\
                 aggregate__{i}: COUNT \"(\" (STAR | (DISTINCT _S)? column__{i}) \")\" \
                 | AGG \"(\" (DISTINCT _S)? column__{i} \")\"\n\
                 column__{i}: c{i} | t{i} \".\" c{i}\n\
                 table__{i}: t{i}\n"
            );
        }
    }
    out
}

/// `tree` with the `__i` ending of scoped rules removed (`items__3` → `items`).
pub(super) fn unscoped(tree: &ParseTree) -> ParseTree {
    let name = match tree.name.rsplit_once("__") {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => tree.name.as_str(),
    };
    ParseTree {
        name: name.to_owned(),
        start: tree.start,
        end: tree.end,
        children: tree.children.iter().map(unscoped).collect(),
    }
}
