//! The typed query of `sql_query` and how it is read from a parse of the generated grammar
//! and written back as canonical SQL. It must not touch a database.

use super::schema::{quote_ident, unquote_ident};
use crate::definition::ToolError;
use serde::{Deserialize, Serialize};
use toolgram_grammar::tree::ParseTree;

/// A column, qualified by its table or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// The table it was qualified with.
    pub table: Option<String>,
    /// The column's name.
    pub name: String,
}

/// A literal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Literal {
    /// A number, as written.
    Number(String),
    /// A string, quotes removed and `''` undoubled.
    String(String),
}

/// `COUNT`, `SUM`, `AVG`, `MIN`, `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Aggregate {
    /// COUNT
    Count,
    /// SUM
    Sum,
    /// AVG
    Avg,
    /// MIN
    Min,
    /// MAX
    Max,
}

/// A value: a column, a literal or an aggregate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// A column.
    Column(Column),
    /// A literal.
    Literal(Literal),
    /// An aggregate of a column (`None`: `COUNT(*)`).
    Aggregate {
        /// Which.
        func: Aggregate,
        /// `DISTINCT` inside the parentheses.
        distinct: bool,
        /// Its column; `None` is `*`.
        column: Option<Column>,
    },
}

/// A condition (WHERE, ON, HAVING).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cond {
    /// Two or more conditions, any of which holds.
    Or(Vec<Cond>),
    /// Two or more conditions, all of which hold.
    And(Vec<Cond>),
    /// Negation.
    Not(Box<Cond>),
    /// `left op right` (`op` one of `= != <> < <= > >=`).
    Compare {
        /// Left side.
        left: Value,
        /// Operator.
        op: String,
        /// Right side.
        right: Value,
    },
    /// `value [NOT] LIKE 'pattern'`.
    Like {
        /// Tested value.
        value: Value,
        /// `NOT LIKE`.
        negated: bool,
        /// The pattern.
        pattern: String,
    },
    /// `value [NOT] IN (literals)`.
    In {
        /// Tested value.
        value: Value,
        /// `NOT IN`.
        negated: bool,
        /// The list.
        list: Vec<Literal>,
    },
    /// `value [NOT] BETWEEN low AND high`.
    Between {
        /// Tested value.
        value: Value,
        /// `NOT BETWEEN`.
        negated: bool,
        /// Lower bound.
        low: Value,
        /// Upper bound.
        high: Value,
    },
    /// `value IS [NOT] NULL`.
    IsNull {
        /// Tested value.
        value: Value,
        /// `IS NOT NULL`.
        negated: bool,
    },
}

/// One item of the select list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    /// A value, maybe named.
    Value {
        /// What is selected.
        value: Value,
        /// `AS alias`.
        alias: Option<String>,
    },
    /// `table.*`: every column of one of the query's tables.
    AllColumnsOf {
        /// The table.
        table: String,
    },
}

/// What an `ORDER BY` item sorts by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderKey {
    /// A column or an aggregate.
    Value(Value),
    /// A select-list position, from 1.
    Position(u16),
}

/// `[INNER|LEFT] JOIN table ON cond`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Join {
    /// `INNER`, `LEFT` or nothing (`JOIN`).
    pub kind: Option<String>,
    /// The joined table.
    pub table: String,
    /// The join condition.
    pub on: Cond,
}

/// An `ORDER BY` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// What it sorts by.
    pub key: OrderKey,
    /// `ASC`, `DESC` or nothing.
    pub direction: Option<String>,
}

/// The typed input: one SELECT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// `SELECT DISTINCT`.
    pub distinct: bool,
    /// The select list; empty is `*`.
    pub items: Vec<Item>,
    /// The `FROM` table.
    pub from: String,
    /// Joins, in order.
    pub joins: Vec<Join>,
    /// `WHERE`.
    pub filter: Option<Cond>,
    /// `GROUP BY` columns.
    pub group_by: Vec<Column>,
    /// `HAVING`.
    pub having: Option<Cond>,
    /// `ORDER BY` items.
    pub order_by: Vec<Order>,
    /// `LIMIT`.
    pub limit: Option<u64>,
}

fn missing(what: &str) -> ToolError {
    ToolError::Grammar(format!("parse has no {what}"))
}

fn kids(node: &ParseTree) -> impl Iterator<Item = &ParseTree> {
    node.children.iter()
}

fn table_name(node: &ParseTree, src: &str) -> Result<String, ToolError> {
    let t = kids(node).next().ok_or_else(|| missing("table name"))?;
    Ok(unquote_ident(t.text(src)))
}

fn column(node: &ParseTree, src: &str) -> Result<Column, ToolError> {
    let mut it = kids(node);
    let first = it.next().ok_or_else(|| missing("column"))?;
    Ok(match it.next() {
        None => Column {
            table: None,
            name: unquote_ident(first.text(src)),
        },
        Some(col) => Column {
            table: Some(unquote_ident(first.text(src))),
            name: unquote_ident(col.text(src)),
        },
    })
}

fn literal(node: &ParseTree, src: &str) -> Result<Literal, ToolError> {
    let inner = kids(node).next().ok_or_else(|| missing("literal"))?;
    let text = inner.text(src);
    Ok(match inner.name.as_str() {
        "STRING" => Literal::String(unquote_string(text)),
        _ => Literal::Number(text.to_owned()),
    })
}

fn unquote_string(text: &str) -> String {
    text.get(1..text.len().saturating_sub(1))
        .unwrap_or("")
        .replace("''", "'")
}

fn aggregate(node: &ParseTree, src: &str) -> Result<Value, ToolError> {
    let func_node = kids(node).next().ok_or_else(|| missing("aggregate"))?;
    let func = match func_node.text(src).to_ascii_uppercase().as_str() {
        "COUNT" => Aggregate::Count,
        "SUM" => Aggregate::Sum,
        "AVG" => Aggregate::Avg,
        "MIN" => Aggregate::Min,
        _ => Aggregate::Max,
    };
    Ok(Value::Aggregate {
        func,
        distinct: node.child("DISTINCT").is_some(),
        column: node.child("column").map(|c| column(c, src)).transpose()?,
    })
}

fn value(node: &ParseTree, src: &str) -> Result<Value, ToolError> {
    let inner = kids(node).next().ok_or_else(|| missing("value"))?;
    match inner.name.as_str() {
        "column" => Ok(Value::Column(column(inner, src)?)),
        "literal" => Ok(Value::Literal(literal(inner, src)?)),
        "aggregate" => aggregate(inner, src),
        other => Err(missing(other)),
    }
}

fn is_value(n: &ParseTree) -> bool {
    matches!(n.name.as_str(), "value" | "hvalue")
}

/// `cond`/`hcond` (and their conj, neg, pred levels) → [`Cond`].
fn cond(node: &ParseTree, src: &str) -> Result<Cond, ToolError> {
    let parts: Vec<&ParseTree> = kids(node)
        .filter(|k| k.name != "OR" && k.name != "AND")
        .collect();
    match node.name.as_str() {
        "cond" | "hcond" | "conj" | "hconj" => {
            let mut conds = parts
                .iter()
                .map(|p| cond(p, src))
                .collect::<Result<Vec<_>, _>>()?;
            if conds.len() == 1 {
                return conds.pop().ok_or_else(|| missing("condition"));
            }
            Ok(if node.name.ends_with("cond") {
                Cond::Or(conds)
            } else {
                Cond::And(conds)
            })
        }
        "neg" | "hneg" => {
            let last = parts.last().ok_or_else(|| missing("condition"))?;
            if node.child("NOT").is_some() {
                Ok(Cond::Not(Box::new(cond(last, src)?)))
            } else {
                cond(last, src)
            }
        }
        _ => predicate(node, src),
    }
}

fn predicate(node: &ParseTree, src: &str) -> Result<Cond, ToolError> {
    if let Some(inner) = kids(node).find(|k| k.name.ends_with("cond")) {
        return cond(inner, src);
    }
    let values = kids(node)
        .filter(|k| is_value(k))
        .map(|v| value(v, src))
        .collect::<Result<Vec<_>, _>>()?;
    let mut values = values.into_iter();
    let first = values.next().ok_or_else(|| missing("value"))?;
    let negated = node.child("NOT").is_some();
    if let Some(op) = node.child("CMP") {
        return Ok(Cond::Compare {
            left: first,
            op: op.text(src).to_owned(),
            right: values.next().ok_or_else(|| missing("right side"))?,
        });
    }
    if node.child("LIKE").is_some() {
        let pattern = node.child("STRING").ok_or_else(|| missing("pattern"))?;
        return Ok(Cond::Like {
            value: first,
            negated,
            pattern: unquote_string(pattern.text(src)),
        });
    }
    if node.child("IN").is_some() {
        let list = node
            .children_named("literal")
            .map(|l| literal(l, src))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Cond::In {
            value: first,
            negated,
            list,
        });
    }
    if node.child("BETWEEN").is_some() {
        return Ok(Cond::Between {
            value: first,
            negated,
            low: values.next().ok_or_else(|| missing("low bound"))?,
            high: values.next().ok_or_else(|| missing("high bound"))?,
        });
    }
    Ok(Cond::IsNull {
        value: first,
        negated,
    })
}

/// A parse of the generated grammar → the typed query.
pub(super) fn query(tree: &ParseTree, src: &str) -> Result<Query, ToolError> {
    let items_node = tree.child("items").ok_or_else(|| missing("select list"))?;
    let items = items_node
        .children_named("item")
        .map(|item| {
            Ok(match item.child("table") {
                Some(t) => Item::AllColumnsOf {
                    table: table_name(t, src)?,
                },
                None => Item::Value {
                    value: value(item.child("hvalue").ok_or_else(|| missing("item"))?, src)?,
                    alias: item.child("ALIAS").map(|a| unquote_ident(a.text(src))),
                },
            })
        })
        .collect::<Result<Vec<_>, ToolError>>()?;
    let joins = tree
        .children_named("join")
        .map(|j| {
            Ok(Join {
                kind: j
                    .child("JOIN_KIND")
                    .map(|k| k.text(src).to_ascii_uppercase()),
                table: table_name(j.child("table").ok_or_else(|| missing("table"))?, src)?,
                on: cond(j.child("cond").ok_or_else(|| missing("ON"))?, src)?,
            })
        })
        .collect::<Result<Vec<_>, ToolError>>()?;
    let sub = |node: Option<&ParseTree>, inner: &str| -> Result<Option<Cond>, ToolError> {
        node.map(|n| cond(n.child(inner).ok_or_else(|| missing(inner))?, src))
            .transpose()
    };
    let group_by = match tree.child("group") {
        Some(g) => g
            .children_named("column")
            .map(|c| column(c, src))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let order = tree
        .child("order")
        .or_else(|| tree.child("horder"))
        .map(|o| (o, if o.name == "order" { "ord" } else { "hord" }));
    let order_by = match order {
        Some((o, item)) => o
            .children_named(item)
            .map(|ord| {
                let v = kids(ord).next().ok_or_else(|| missing("order item"))?;
                Ok(Order {
                    key: match v.name.as_str() {
                        "aggregate" => OrderKey::Value(aggregate(v, src)?),
                        "POS" => OrderKey::Position(v.text(src).parse().map_err(|_| {
                            ToolError::Input("ORDER BY position is not a number".into())
                        })?),
                        _ => OrderKey::Value(Value::Column(column(v, src)?)),
                    },
                    direction: ord.child("DIR").map(|d| d.text(src).to_ascii_uppercase()),
                })
            })
            .collect::<Result<Vec<_>, ToolError>>()?,
        None => Vec::new(),
    };
    let limit = match tree.child("limit").and_then(|l| l.child("INT")) {
        Some(n) => Some(
            n.text(src)
                .parse()
                .map_err(|_| ToolError::Input("LIMIT is not a number".into()))?,
        ),
        None => None,
    };
    Ok(Query {
        distinct: tree.child("DISTINCT").is_some(),
        items,
        from: table_name(tree.child("table").ok_or_else(|| missing("FROM"))?, src)?,
        joins,
        filter: sub(tree.child("where"), "cond")?,
        group_by,
        having: sub(tree.child("group").and_then(|g| g.child("having")), "hcond")?,
        order_by,
        limit,
    })
}

fn emit_column(c: &Column) -> String {
    match &c.table {
        Some(t) => format!("{}.{}", quote_ident(t), quote_ident(&c.name)),
        None => quote_ident(&c.name),
    }
}

fn emit_literal(l: &Literal) -> String {
    match l {
        Literal::Number(n) => n.clone(),
        Literal::String(s) => format!("'{}'", s.replace('\'', "''")),
    }
}

fn emit_value(v: &Value) -> String {
    match v {
        Value::Column(c) => emit_column(c),
        Value::Literal(l) => emit_literal(l),
        Value::Aggregate {
            func,
            distinct,
            column,
        } => {
            let name = serde_json::to_value(func)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let arg = column.as_ref().map_or("*".to_owned(), emit_column);
            let distinct = if *distinct { "DISTINCT " } else { "" };
            format!("{name}({distinct}{arg})")
        }
    }
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

/// `c` inside an operator that binds at `level` (0 OR, 1 AND, 2 NOT): parenthesised when
/// it binds more loosely, so the written text parses back to the same tree.
fn emit_inner(c: &Cond, level: u8) -> String {
    let own = match c {
        Cond::Or(_) => 0,
        Cond::And(_) => 1,
        _ => 3,
    };
    if own <= level {
        format!("({})", emit_cond(c))
    } else {
        emit_cond(c)
    }
}

/// A condition as SQL.
pub(super) fn emit_cond(c: &Cond) -> String {
    match c {
        Cond::Or(cs) => cs
            .iter()
            .map(|c| emit_inner(c, 0))
            .collect::<Vec<_>>()
            .join(" OR "),
        Cond::And(cs) => cs
            .iter()
            .map(|c| emit_inner(c, 1))
            .collect::<Vec<_>>()
            .join(" AND "),
        Cond::Not(c) => format!("NOT {}", emit_inner(c, 1)),
        Cond::Compare { left, op, right } => {
            format!("{} {op} {}", emit_value(left), emit_value(right))
        }
        Cond::Like {
            value,
            negated,
            pattern,
        } => format!(
            "{} {}LIKE {}",
            emit_value(value),
            not(*negated),
            emit_literal(&Literal::String(pattern.clone()))
        ),
        Cond::In {
            value,
            negated,
            list,
        } => format!(
            "{} {}IN ({})",
            emit_value(value),
            not(*negated),
            list.iter().map(emit_literal).collect::<Vec<_>>().join(", ")
        ),
        Cond::Between {
            value,
            negated,
            low,
            high,
        } => format!(
            "{} {}BETWEEN {} AND {}",
            emit_value(value),
            not(*negated),
            emit_value(low),
            emit_value(high)
        ),
        Cond::IsNull { value, negated } => {
            format!("{} IS {}NULL", emit_value(value), not(*negated))
        }
    }
}

/// The typed query as canonical SQL (upper-case keywords, single spaces).
pub(super) fn emit(q: &Query) -> String {
    let mut out = String::from("SELECT ");
    if q.distinct {
        out.push_str("DISTINCT ");
    }
    if q.items.is_empty() {
        out.push('*');
    } else {
        let items: Vec<String> = q
            .items
            .iter()
            .map(|i| match i {
                Item::Value {
                    value,
                    alias: Some(a),
                } => format!("{} AS {}", emit_value(value), quote_ident(a)),
                Item::Value { value, alias: None } => emit_value(value),
                Item::AllColumnsOf { table } => format!("{}.*", quote_ident(table)),
            })
            .collect();
        out.push_str(&items.join(", "));
    }
    out.push_str(&format!(" FROM {}", quote_ident(&q.from)));
    for j in &q.joins {
        if let Some(kind) = &j.kind {
            out.push_str(&format!(" {kind}"));
        }
        out.push_str(&format!(
            " JOIN {} ON {}",
            quote_ident(&j.table),
            emit_cond(&j.on)
        ));
    }
    if let Some(c) = &q.filter {
        out.push_str(&format!(" WHERE {}", emit_cond(c)));
    }
    if !q.group_by.is_empty() {
        let cols: Vec<String> = q.group_by.iter().map(emit_column).collect();
        out.push_str(&format!(" GROUP BY {}", cols.join(", ")));
    }
    if let Some(c) = &q.having {
        out.push_str(&format!(" HAVING {}", emit_cond(c)));
    }
    if !q.order_by.is_empty() {
        let items: Vec<String> = q
            .order_by
            .iter()
            .map(|o| {
                let key = match &o.key {
                    OrderKey::Value(v) => emit_value(v),
                    OrderKey::Position(n) => n.to_string(),
                };
                match &o.direction {
                    Some(d) => format!("{key} {d}"),
                    None => key,
                }
            })
            .collect();
        out.push_str(&format!(" ORDER BY {}", items.join(", ")));
    }
    if let Some(n) = q.limit {
        out.push_str(&format!(" LIMIT {n}"));
    }
    out
}
