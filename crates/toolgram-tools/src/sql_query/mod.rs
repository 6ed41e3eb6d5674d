//! `sql_query`: one read-only SELECT over a real SQLite database. The grammar is generated
//! from the database's own schema, so only its tables and columns can be written (bare, or
//! qualified by a table that has them), and nothing but a SELECT of the subset below can be
//! written at all (a query of one table selects only that table's columns; see
//! [`schema::grammar`]): `SELECT [DISTINCT]` columns, `*`, `table.*`, literals and aggregates (COUNT,
//! SUM, AVG, MIN, MAX) with `AS` aliases; `FROM` a table with `[INNER|LEFT] JOIN … ON`; `WHERE`
//! with comparisons, AND/OR/NOT, parentheses, LIKE, IN, BETWEEN, IS [NOT] NULL; `GROUP BY`;
//! `HAVING` (aggregates allowed there, not in WHERE); `ORDER BY` a column, an aggregate (after
//! GROUP BY) or a select-list position `[ASC|DESC]`; `LIMIT n`. Tables have no aliases (a
//! free alias would let the grammar take any qualifier): columns are qualified by table name.
//! Keywords in either case. At run time the names are checked against the query's own
//! tables, the SQL is checked again to be one SELECT, and it runs on a read-only connection
//! with a time and row limit.
//!
//! Example (database with `customers(id, name, city)` and `orders(id, customer_id, total)`):
//! ```text
//! SELECT customers.name, SUM(orders.total) AS spent FROM customers
//! JOIN orders ON orders.customer_id = customers.id GROUP BY customers.name
//! ORDER BY SUM(orders.total) DESC LIMIT 3
//! ```

mod ast;
mod run;
mod schema;

pub use ast::{Aggregate, Column, Cond, Item, Join, Literal, Order, OrderKey, Query, Value};
pub use schema::{DbSchema, TableSchema};

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use toolgram_grammar::tree::ParseTree;

/// The database the samples are written for (`registry::sample_options` builds it).
pub const SAMPLE_SCHEMA: &str = "CREATE TABLE customers (id INTEGER, name TEXT, city TEXT);
CREATE TABLE orders (id INTEGER, customer_id INTEGER, total REAL);";

/// Sample texts the grammar must accept and refuse (over [`SAMPLE_SCHEMA`]): every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "SELECT name FROM customers WHERE city = 'Lima' LIMIT 5",
        "select customers.name, count(*) as n from customers left join orders on orders.customer_id = customers.id group by customers.name having count(*) > 1 order by count(*) desc",
        "SELECT DISTINCT city FROM customers WHERE NOT (city IS NULL OR city LIKE 'L%') AND id IN (1, 2) AND id BETWEEN 1 AND 9",
        "SELECT customers.*, orders.total FROM customers JOIN orders ON orders.customer_id = customers.id ORDER BY 4 DESC, 1",
    ],
    refused: &[
        "SELECT * FROM users",
        "SELECT email FROM customers",
        "SELECT orders.name FROM orders",
        "DELETE FROM customers",
        "SELECT * FROM customers; DROP TABLE customers",
        "SELECT * FROM customers WHERE COUNT(*) > 1",
        "SELECT users.* FROM customers",
        "SELECT name FROM customers ORDER BY 0",
        "SELECT c.name FROM customers c",
        "SELECT name, SUM(total) FROM customers GROUP BY name",
    ],
};

/// The tool, bound to one database.
pub struct SqlQuery {
    db: PathBuf,
    schema: DbSchema,
    grammar: String,
}

impl SqlQuery {
    /// Read the schema of the SQLite database at `db` (opened read-only) and build the tool.
    pub fn open(db: &Path) -> Result<Self, ToolError> {
        Ok(Self::with_schema(db, DbSchema::read(db)?))
    }

    fn with_schema(db: &Path, schema: DbSchema) -> Self {
        let grammar = schema::grammar(&schema);
        Self {
            db: db.to_owned(),
            schema,
            grammar,
        }
    }

    /// The tables and columns the grammar names.
    pub fn schema(&self) -> &DbSchema {
        &self.schema
    }
}

impl GrammarTool for SqlQuery {
    type Input = Query;

    fn name(&self) -> &str {
        "sql_query"
    }

    fn description(&self) -> String {
        let tables: Vec<String> = self
            .schema
            .tables
            .iter()
            .map(|t| format!("{}({})", t.name, t.columns.join(", ")))
            .collect();
        format!(
            "Run one read-only SQLite SELECT. Tables: {}. Subset: SELECT [DISTINCT] columns or \
             COUNT/SUM/AVG/MIN/MAX [AS alias], FROM, [INNER|LEFT] JOIN … ON, WHERE (=, !=, <, >, \
             LIKE, IN, BETWEEN, IS NULL, AND/OR/NOT), GROUP BY, HAVING, ORDER BY a column, an \
             aggregate or a select-list position (1, 2, …) [ASC|DESC], LIMIT. No table aliases: \
             qualify a column with its table's name (orders.total). \
             Example: SELECT name FROM {} LIMIT 5",
            tables.join("; "),
            self.schema.tables.first().map_or("t", |t| t.name.as_str())
        )
    }

    fn lark(&self) -> String {
        self.grammar.clone()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Query, ToolError> {
        ast::query(&schema::unscoped(tree), src)
    }

    fn emit(&self, input: &Query) -> String {
        ast::emit(input)
    }

    fn run(&self, input: &Query, ctx: &RunContext) -> Result<Json, ToolError> {
        run::run(input, &self.db, &self.schema, ctx)
    }

    /// Names tied to the query's own tables, positions within its result.
    fn check(&self, input: &Query) -> Result<(), ToolError> {
        run::check_names(input, &self.schema)
    }
}

#[cfg(test)]
mod tests;
