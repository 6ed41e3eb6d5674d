use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;
use rusqlite::Connection;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A real SQLite file: a small shop, a table with awkward names, three wide tables.
fn shop() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "toolgram-sql-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("shop.sqlite");
    let _ = std::fs::remove_file(&path);
    let conn = Connection::open(&path).expect("creates");
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL, note TEXT);
         CREATE TABLE \"odd names\" (\"order\" INTEGER, \"two words\" TEXT);
         CREATE TABLE n1 (v INTEGER); CREATE TABLE n2 (w INTEGER); CREATE TABLE n3 (x INTEGER);
         INSERT INTO customers VALUES (1, 'Ada', 'London'), (2, 'Linus', 'Helsinki'),
            (3, 'Grace', NULL), (4, 'O''Brien', 'Dublin');
         INSERT INTO orders VALUES (1, 1, 10.5, 'first'), (2, 1, 20, NULL), (3, 2, 5, 'x'),
            (4, 4, 7.25, 'it''s');
         INSERT INTO \"odd names\" VALUES (1, 'a b');
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
            INSERT INTO n1 SELECT i FROM k;
         INSERT INTO n2 SELECT v FROM n1; INSERT INTO n3 SELECT v FROM n1;",
    )
    .expect("fills");
    path
}

fn tool() -> SqlQuery {
    SqlQuery::open(&shop()).expect("reads the schema")
}

fn run(t: &SqlQuery, sql: &str) -> Result<Json, ToolError> {
    t.run(&t.parse(sql)?, &RunContext::default())
}

#[test]
fn the_schema_is_read_from_the_file() {
    let t = tool();
    let names: Vec<&str> = t.schema().tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["customers", "n1", "n2", "n3", "odd names", "orders"]
    );
    assert_eq!(
        t.schema().table("orders").map(|t| t.columns.clone()),
        Some(vec![
            "id".into(),
            "customer_id".into(),
            "total".into(),
            "note".into()
        ])
    );
}

#[test]
fn queries_of_the_subset_run_read_only() {
    let t = tool();
    let v = run(
        &t,
        "SELECT customers.name, SUM(orders.total) AS spent FROM customers \
         JOIN orders ON orders.customer_id = customers.id GROUP BY customers.name \
         ORDER BY SUM(orders.total) DESC LIMIT 2",
    )
    .expect("runs");
    assert_eq!(v["columns"], serde_json::json!(["name", "spent"]));
    assert_eq!(
        v["rows"],
        serde_json::json!([["Ada", 30.5], ["O'Brien", 7.25]])
    );
    let v = run(
        &t,
        "select distinct city from customers where not (city is null or city like 'H%') \
         and id in (1, 2, 4) and id between 1 and 4 order by city asc",
    )
    .expect("keywords in lower case");
    assert_eq!(v["rows"], serde_json::json!([["Dublin"], ["London"]]));
    let v = run(
        &t,
        "SELECT name, COUNT(orders.id) AS n FROM customers LEFT JOIN orders ON customer_id = customers.id\n  GROUP BY name HAVING COUNT(orders.id) = 0",
    )
    .expect("left join, having");
    assert_eq!(v["rows"], serde_json::json!([["Grace", 0]]));
    let v = run(&t, "SELECT \"order\", \"two words\" FROM \"odd names\"").expect("quoted");
    assert_eq!(v["rows"], serde_json::json!([[1, "a b"]]));
    let v = run(&t, "SELECT name FROM customers WHERE name = 'O''Brien'").expect("escape");
    assert_eq!(v["row_count"], 1);
}

#[test]
fn unknown_names_and_other_statements_cannot_be_written() {
    let t = tool();
    for sql in [
        "SELECT * FROM users",
        "SELECT email FROM customers",
        "SELECT orders.name FROM orders",
        "SELECT customers.total FROM customers",
        "DELETE FROM customers",
        "INSERT INTO customers VALUES (9, 'x', 'y')",
        "UPDATE customers SET name = 'x'",
        "DROP TABLE customers",
        "PRAGMA query_only = 0",
        "ATTACH DATABASE 'x.db' AS x",
        "SELECT * FROM customers; DELETE FROM customers",
        "WITH c AS (SELECT * FROM customers) SELECT * FROM c",
        "SELECT * FROM customers WHERE COUNT(*) > 1",
        "SELECT name FROM customers WHERE id = (SELECT 1)",
        "SELECT load_extension('x') FROM customers",
        "SELECT * FROM customers UNION SELECT * FROM orders",
        "SELECT users.* FROM customers",
        "SELECT name FROM customers ORDER BY email",
        "SELECT name FROM customers ORDER BY 0",
        "SELECT c.name FROM customers c",
    ] {
        assert!(
            matches!(t.parse(sql), Err(ToolError::Syntax { .. })),
            "{sql} must not be in the grammar"
        );
    }
}

#[test]
fn names_are_checked_against_the_query_tables_before_running() {
    let t = tool();
    for (sql, says) in [
        (
            "SELECT total FROM customers JOIN n1 ON v = 1",
            "none of the query's tables",
        ),
        (
            "SELECT orders.id FROM customers JOIN n1 ON v = 1",
            "not in FROM or an earlier JOIN",
        ),
        (
            "SELECT id FROM customers JOIN orders ON customer_id = customers.id",
            "ambiguous",
        ),
        ("SELECT v FROM n1 JOIN n1 ON v = v", "used twice"),
        (
            "SELECT orders.* FROM customers JOIN n1 ON v = 1",
            "not in FROM or a JOIN",
        ),
        (
            "SELECT id, name FROM customers ORDER BY 3",
            "has 2 column(s)",
        ),
        (
            "SELECT id FROM customers WHERE total > 1",
            "none of the query's tables",
        ),
    ] {
        match run(&t, sql) {
            Err(ToolError::Input(m)) => assert!(m.contains(says), "{sql}: {m}"),
            other => panic!("{sql}: {other:?}"),
        }
    }
}

/// A query of one table selects only that table's columns: the select list, written before
/// FROM, is tied to the table named after it (one select list per table in the grammar).
#[test]
fn a_single_table_query_selects_only_its_own_columns() {
    let t = tool();
    for sql in [
        "SELECT total FROM customers",
        "SELECT name, SUM(total) FROM customers GROUP BY name",
        "SELECT orders.id FROM customers",
        "SELECT orders.* FROM customers",
        "SELECT COUNT(DISTINCT note) FROM customers",
    ] {
        assert!(
            matches!(t.parse(sql), Err(ToolError::Syntax { .. })),
            "{sql} must not be in the grammar"
        );
    }
    for sql in [
        "SELECT name, customers.city FROM customers",
        "SELECT COUNT(DISTINCT note), SUM(orders.total) FROM orders",
        "SELECT customers.name, SUM(orders.total) FROM customers JOIN orders \
         ON orders.customer_id = customers.id GROUP BY customers.name",
    ] {
        t.parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn the_run_time_check_refuses_anything_but_one_select() {
    assert!(run::check_one_select("SELECT 1").is_ok());
    for sql in [
        "DELETE FROM t",
        "SELECT 1; SELECT 2",
        "PRAGMA writable_schema = 1",
    ] {
        assert!(
            matches!(run::check_one_select(sql), Err(ToolError::Input(_))),
            "{sql}"
        );
    }
    let conn = schema::open_read_only(&shop()).expect("opens");
    assert!(
        conn.execute("DELETE FROM customers", []).is_err(),
        "the connection is read-only"
    );
}

#[test]
fn rows_and_time_are_limited() {
    let t = tool();
    let v = run(&t, "SELECT v FROM n1").expect("runs");
    assert_eq!(v["row_count"], run::MAX_ROWS);
    assert_eq!(v["truncated"], true);
    let ctx = RunContext {
        timeout: Duration::from_millis(50),
        ..RunContext::default()
    };
    let slow = t
        .parse("SELECT COUNT(*) FROM n1 JOIN n2 ON v != w JOIN n3 ON w != x")
        .expect("in the grammar");
    match t.run(&slow, &ctx) {
        Err(ToolError::Run(m)) => assert!(m.contains("longer than"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_database_file_is_never_written() {
    let path = shop();
    let t = SqlQuery::open(&path).expect("opens");
    let before = std::fs::read(&path).expect("reads");
    run(&t, "SELECT * FROM orders WHERE note IS NOT NULL").expect("runs");
    assert_eq!(std::fs::read(&path).expect("reads"), before);
    assert!(matches!(
        SqlQuery::open(&path.with_file_name("missing.sqlite")),
        Err(ToolError::Run(m)) if m.contains("cannot open")
    ));
}

#[test]
fn one_table_star_and_order_by_position_run() {
    let t = tool();
    let out = run(
        &t,
        "SELECT customers.*, SUM(orders.total) AS spent FROM customers JOIN orders \
         ON orders.customer_id = customers.id GROUP BY customers.id ORDER BY 4 DESC LIMIT 1",
    )
    .expect("runs");
    assert_eq!(
        out["columns"],
        serde_json::json!(["id", "name", "city", "spent"])
    );
    assert_eq!(out["rows"], serde_json::json!([[1, "Ada", "London", 30.5]]));
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    let t = tool();
    let texts = [
        "SELECT id FROM customers",
        "SELECT name FROM customers",
        "SELECT DISTINCT id FROM customers",
        "SELECT customers.id FROM customers",
        "SELECT id AS k FROM customers",
        "SELECT id FROM orders",
        "SELECT COUNT(*) FROM customers",
        "SELECT COUNT(id) FROM customers",
        "SELECT COUNT(DISTINCT id) FROM customers",
        "SELECT MAX(id) FROM customers",
        "SELECT id FROM customers WHERE id = 1",
        "SELECT id FROM customers WHERE id = 2",
        "SELECT id FROM customers WHERE id < 1",
        "SELECT id FROM customers WHERE NOT id = 1",
        "SELECT id FROM customers WHERE id = 1 OR id = 2",
        "SELECT id FROM customers WHERE id = 1 AND id = 2",
        "SELECT id FROM customers WHERE name LIKE 'a'",
        "SELECT id FROM customers WHERE name NOT LIKE 'a'",
        "SELECT id FROM customers WHERE name IN ('a')",
        "SELECT id FROM customers WHERE id BETWEEN 1 AND 2",
        "SELECT id FROM customers WHERE id IS NULL",
        "SELECT id FROM customers WHERE id IS NOT NULL",
        "SELECT id FROM customers ORDER BY id",
        "SELECT id FROM customers ORDER BY id DESC",
        "SELECT id FROM customers ORDER BY 1",
        "SELECT customers.* FROM customers",
        "SELECT id FROM customers GROUP BY id",
        "SELECT id FROM customers GROUP BY id HAVING COUNT(*) > 1",
        "SELECT id FROM customers LIMIT 1",
        "SELECT id FROM customers JOIN orders ON id = 1",
        "SELECT id FROM customers LEFT JOIN orders ON id = 1",
    ];
    let parsed: Vec<Query> = texts
        .iter()
        .map(|s| t.parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    for i in 0..parsed.len() {
        for j in i + 1..parsed.len() {
            assert_ne!(parsed[i], parsed[j], "{} vs {}", texts[i], texts[j]);
        }
    }
}

#[test]
fn precedence_survives_the_round_trip() {
    let t = tool();
    let q = t
        .parse("SELECT id FROM customers WHERE (id = 1 OR id = 2) AND NOT (id = 3 AND id = 4)")
        .expect("parses");
    let again = t.parse(&t.emit(&q)).expect("emitted text parses");
    assert_eq!(again, q);
    assert!(matches!(q.filter, Some(Cond::And(ref parts)) if parts.len() == 2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn generated_texts_round_trip(text in texts(&tool())) {
        check_round_trip(&tool(), &text);
    }

    /// Whatever the grammar lets through is one SELECT for sqlparser, and SQLite itself
    /// accepts it once its names belong to the query's tables.
    #[test]
    fn generated_texts_are_valid_sqlite(text in texts(&tool())) {
        let t = tool();
        let q = t.parse(&text).expect("in the grammar");
        let sql = t.emit(&q);
        prop_assert!(run::check_one_select(&sql).is_ok(), "{sql}");
        if run::check_names(&q, t.schema()).is_ok() {
            let conn = schema::open_read_only(&t.db).expect("opens");
            prop_assert!(conn.prepare(&sql).is_ok(), "SQLite refuses {sql}: {:?}", conn.prepare(&sql).err());
        }
    }
}
