//! Running a typed query: the names are resolved against the tables the query uses, the
//! canonical SQL is checked again to be exactly one SELECT (sqlparser, SQLite dialect, and
//! SQLite's own read-only verdict), then run on a read-only connection with a time and row
//! limit. It must never open a database for writing.

use super::ast::{Column, Cond, Item, OrderKey, Query, Value, emit};
use super::schema::{DbSchema, open_read_only};
use crate::definition::{RunContext, ToolError};
use rusqlite::types::ValueRef;
use serde_json::{Value as Json, json};
use sqlparser::ast::Statement;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use std::path::Path;
use std::time::Instant;

/// Most rows returned; more are cut and `truncated` is set.
pub(super) const MAX_ROWS: usize = 500;

fn columns_of_cond<'q>(c: &'q Cond, out: &mut Vec<&'q Column>) {
    let value = |v: &'q Value, out: &mut Vec<&'q Column>| match v {
        Value::Column(col) => out.push(col),
        Value::Aggregate {
            column: Some(col), ..
        } => out.push(col),
        _ => {}
    };
    match c {
        Cond::Or(cs) | Cond::And(cs) => cs.iter().for_each(|c| columns_of_cond(c, out)),
        Cond::Not(c) => columns_of_cond(c, out),
        Cond::Compare { left, right, .. } => {
            value(left, out);
            value(right, out);
        }
        Cond::Between {
            value: v,
            low,
            high,
            ..
        } => {
            value(v, out);
            value(low, out);
            value(high, out);
        }
        Cond::Like { value: v, .. } | Cond::In { value: v, .. } | Cond::IsNull { value: v, .. } => {
            value(v, out)
        }
    }
}

/// Columns outside the ON clauses (those are checked against the tables joined so far).
fn columns(q: &Query) -> Vec<&Column> {
    let values = q
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Value { value, .. } => Some(value),
            Item::AllColumnsOf { .. } => None,
        })
        .chain(q.order_by.iter().filter_map(|o| match &o.key {
            OrderKey::Value(v) => Some(v),
            OrderKey::Position(_) => None,
        }));
    let mut cols: Vec<&Column> = Vec::new();
    for v in values {
        match v {
            Value::Column(c) => cols.push(c),
            Value::Aggregate {
                column: Some(c), ..
            } => cols.push(c),
            _ => {}
        }
    }
    for c in q.filter.iter().chain(q.having.as_ref()) {
        columns_of_cond(c, &mut cols);
    }
    cols.extend(&q.group_by);
    cols
}

fn resolve(col: &Column, scope: &[&str], schema: &DbSchema) -> Result<(), ToolError> {
    if let Some(t) = &col.table {
        if scope.contains(&t.as_str()) {
            return Ok(());
        }
        return Err(ToolError::Input(format!(
            "column `{t}.{}`: table `{t}` is not in FROM or an earlier JOIN",
            col.name
        )));
    }
    let owners: Vec<&str> = scope
        .iter()
        .copied()
        .filter(|t| {
            schema
                .table(t)
                .is_some_and(|t| t.columns.contains(&col.name))
        })
        .collect();
    match owners.as_slice() {
        [_] => Ok(()),
        [] => Err(ToolError::Input(format!(
            "column `{}` is in none of the query's tables ({})",
            col.name,
            scope.join(", ")
        ))),
        several => Err(ToolError::Input(format!(
            "column `{}` is ambiguous: it is in {}; qualify it",
            col.name,
            several.join(" and ")
        ))),
    }
}

/// Names the grammar cannot tie to the query's own tables: a qualified column (or `t.*`)
/// whose table is not in FROM/JOIN (for an ON clause: not joined yet), a bare column in none
/// (or several) of them, a table used twice; and an ORDER BY position past the select list.
pub(super) fn check_names(q: &Query, schema: &DbSchema) -> Result<(), ToolError> {
    let mut scope: Vec<&str> = vec![q.from.as_str()];
    for j in &q.joins {
        if scope.contains(&j.table.as_str()) {
            return Err(ToolError::Input(format!(
                "table `{}` is used twice; table aliases are not in the subset",
                j.table
            )));
        }
        scope.push(&j.table);
        let mut on = Vec::new();
        columns_of_cond(&j.on, &mut on);
        for col in on {
            resolve(col, &scope, schema)?;
        }
    }
    for col in columns(q) {
        resolve(col, &scope, schema)?;
    }
    for item in &q.items {
        if let Item::AllColumnsOf { table } = item
            && !scope.contains(&table.as_str())
        {
            return Err(ToolError::Input(format!(
                "`{table}.*`: table `{table}` is not in FROM or a JOIN"
            )));
        }
    }
    // A position past the result's columns (`*` and `t.*` count their tables' columns).
    let width = |t: &str| schema.table(t).map_or(0, |t| t.columns.len());
    let columns = if q.items.is_empty() {
        scope.iter().map(|t| width(t)).sum()
    } else {
        q.items
            .iter()
            .map(|i| match i {
                Item::Value { .. } => 1,
                Item::AllColumnsOf { table } => width(table),
            })
            .sum()
    };
    for o in &q.order_by {
        if let OrderKey::Position(n) = o.key
            && usize::from(n) > columns
        {
            return Err(ToolError::Input(format!(
                "ORDER BY {n}: the result has {columns} column(s)"
            )));
        }
    }
    Ok(())
}

/// Refuse anything but exactly one SELECT (the grammar already cannot write anything else).
pub(super) fn check_one_select(sql: &str) -> Result<(), ToolError> {
    let statements = Parser::parse_sql(&SQLiteDialect {}, sql)
        .map_err(|e| ToolError::Input(format!("not SQL: {e}")))?;
    match statements.as_slice() {
        [Statement::Query(_)] => Ok(()),
        [_] => Err(ToolError::Input("only a SELECT query may run".into())),
        _ => Err(ToolError::Input(format!(
            "exactly one statement may run, not {}",
            statements.len()
        ))),
    }
}

fn json_of(v: ValueRef<'_>) -> Json {
    match v {
        ValueRef::Null => Json::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number),
        ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            json!({ "blob_hex": hex })
        }
    }
}

/// Run `q` on the database at `db`.
pub(super) fn run(
    q: &Query,
    db: &Path,
    schema: &DbSchema,
    ctx: &RunContext,
) -> Result<Json, ToolError> {
    check_names(q, schema)?;
    let sql = emit(q);
    check_one_select(&sql)?;
    let conn = open_read_only(db)?;
    let started = Instant::now();
    let timeout = ctx.timeout;
    conn.progress_handler(10_000, Some(move || started.elapsed() > timeout));
    let run_err = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => ToolError::Run(format!(
            "the query ran longer than {:.1}s and was stopped",
            timeout.as_secs_f64()
        )),
        _ => ToolError::Run(format!("SQLite: {e}")),
    };
    let mut stmt = conn.prepare(&sql).map_err(run_err)?;
    if !stmt.readonly() {
        return Err(ToolError::Input("only a read-only query may run".into()));
    }
    let names: Vec<String> = stmt
        .column_names()
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let width = names.len();
    let mut rows = stmt.query([]).map_err(run_err)?;
    let mut out = Vec::new();
    let mut truncated = false;
    while let Some(row) = rows.next().map_err(run_err)? {
        if out.len() == MAX_ROWS {
            truncated = true;
            break;
        }
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(json_of(row.get_ref(i).map_err(run_err)?));
        }
        out.push(Json::Array(values));
    }
    Ok(
        json!({"sql": sql, "columns": names, "row_count": out.len(), "rows": out,
        "truncated": truncated}),
    )
}
