//! The SQLite and PostgreSQL migrations are kept by hand as twins (`migrations/sqlite`,
//! `migrations/postgres`). This test migrates a fresh database of each and compares what they
//! became — tables, columns (type, nullability, default), primary keys, unique constraints,
//! indexes, foreign keys and CHECK constraints — and fails on any difference that is not one of
//! the intended mappings below. Triggers are not compared: the append-only rules are written
//! differently on each (and tested by `audit_anchors`).
//!
//! Intended mappings: SQLite `INTEGER` ↔ PostgreSQL `BIGINT` (both read back as i64); SQLite's
//! `INTEGER PRIMARY KEY` (a rowid) ↔ `BIGINT … PRIMARY KEY` with or without `GENERATED … AS
//! IDENTITY`; PostgreSQL's `'x'::text` casts in defaults and its `= ANY (ARRAY[…])` spelling of `IN
//! (…)`; the generated names of unique constraints.

use std::collections::BTreeSet;

use sqlx::Row;

use crate::helpers::{database_url, postgres};

#[tokio::test]
async fn the_sqlite_and_postgresql_schemas_are_twins() {
    if postgres().is_none() {
        eprintln!("the_sqlite_and_postgresql_schemas_are_twins: needs PostgreSQL; runs in the PostgreSQL pass");
        return;
    }
    let sqlite_dir = tempfile::tempdir().unwrap();
    let sqlite = sqlite_facts(&format!("sqlite://{}?mode=rwc", sqlite_dir.path().join("twin.db").display())).await;
    let postgres_dir = tempfile::tempdir().unwrap();
    let postgres = postgres_facts(&database_url(postgres_dir.path()).await).await;
    assert!(sqlite.iter().any(|f| f.starts_with("check approvals")), "the comparison sees CHECK constraints: {sqlite:#?}");
    assert!(sqlite.contains("unique users (lower(username))"), "and case-blind unique names: {sqlite:#?}");
    let only_sqlite: Vec<_> = sqlite.difference(&postgres).collect();
    let only_postgres: Vec<_> = postgres.difference(&sqlite).collect();
    assert!(
        only_sqlite.is_empty() && only_postgres.is_empty(),
        "the schemas differ\n  only in SQLite:     {only_sqlite:#?}\n  only in PostgreSQL: {only_postgres:#?}"
    );
}

/// The words and literals of a CHECK expression, sorted: `status IN ('a', 'b')` and PostgreSQL's
/// `((status = ANY (ARRAY['a'::text, 'b'::text])))` give the same list.
fn check_tokens(expression: &str) -> String {
    const SPELLING: [&str; 8] = ["check", "any", "array", "text", "bigint", "integer", "in", "="];
    let mut tokens = Vec::new();
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            let mut literal = String::from("'");
            for c in chars.by_ref() {
                literal.push(c);
                if c == '\'' {
                    break;
                }
            }
            tokens.push(literal);
        } else if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_') {
                word.push(c);
                chars.next();
            }
            tokens.push(word.to_lowercase());
        } else if "<>!=".contains(c) {
            let mut op = c.to_string();
            while let Some(&c) = chars.peek().filter(|c| "<>=".contains(**c)) {
                op.push(c);
                chars.next();
            }
            tokens.push(op);
        }
    }
    tokens.retain(|t| !SPELLING.contains(&t.as_str()));
    tokens.sort();
    tokens.join(" ")
}

/// The `CHECK (…)` expressions in a `CREATE TABLE` statement, parentheses balanced.
fn checks_in(sql: &str) -> Vec<String> {
    let upper = sql.to_uppercase();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = upper[from..].find("CHECK").map(|i| i + from) {
        let open = at + upper[at..].find('(').expect("CHECK (");
        let mut depth = 0;
        let close = (open..sql.len())
            .find(|&i| {
                match sql.as_bytes()[i] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .expect("balanced parentheses");
        found.push(sql[open..=close].to_owned());
        from = close;
    }
    found
}

/// SQLite's default as written, or PostgreSQL's without its type casts.
fn default_of(value: Option<String>) -> String {
    let Some(value) = value else { return "-".into() };
    let value = value.split("::").next().unwrap_or_default().trim_matches(|c| c == '(' || c == ')');
    value.to_owned()
}

/// A column's type by what it reads back as: SQLite's `INTEGER` and PostgreSQL's `bigint` are
/// i64, PostgreSQL's `integer` is i32.
fn sqlite_type(declared: &str) -> String {
    match declared.to_lowercase().as_str() {
        "integer" | "bigint" => "i64".into(),
        other => other.into(),
    }
}

fn postgres_type(declared: &str) -> String {
    match declared {
        "bigint" => "i64".into(),
        "integer" => "i32".into(),
        other => other.into(),
    }
}

/// A unique index over whole columns is a uniqueness rule whatever its (generated) name; any other
/// index is named.
fn index_fact(name: &str, table: &str, columns: &[String], unique: bool, partial: bool) -> String {
    if unique && !partial {
        format!("unique {table} ({})", columns.join(", "))
    } else {
        format!("index {name} on {table} ({}) unique={unique} partial={partial}", columns.join(", "))
    }
}

async fn sqlite_facts(url: &str) -> BTreeSet<String> {
    let pool = sqlx::SqlitePool::connect(url).await.expect("open SQLite");
    sqlx::migrate!("../migrations/sqlite").run(&pool).await.expect("migrate SQLite");
    let tables: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut facts = BTreeSet::new();
    for (table, sql) in tables {
        facts.insert(format!("table {table}"));
        let columns = sqlx::query("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info($1) ORDER BY cid")
            .bind(&table)
            .fetch_all(&pool)
            .await
            .unwrap();
        let mut key: Vec<(i64, String)> = Vec::new();
        for c in columns {
            let (name, declared, not_null, default, pk): (String, String, bool, Option<String>, i64) =
                (c.get(0), c.get(1), c.get(2), c.get(3), c.get(4));
            if pk > 0 {
                key.push((pk, name.clone()));
            }
            let not_null = not_null || pk > 0;
            facts.insert(format!("column {table}.{name} {} not_null={not_null} default={}", sqlite_type(&declared), default_of(default)));
        }
        key.sort();
        let key: Vec<String> = key.into_iter().map(|(_, name)| name).collect();
        if !key.is_empty() {
            facts.insert(format!("primary key {table} ({})", key.join(", ")));
        }
        for check in checks_in(&sql) {
            facts.insert(format!("check {table} [{}]", check_tokens(&check)));
        }
        let foreign = sqlx::query("SELECT id, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list($1) ORDER BY id, seq")
            .bind(&table)
            .fetch_all(&pool)
            .await
            .unwrap();
        for f in foreign {
            let (target, from, to, on_delete): (String, String, String, String) = (f.get(1), f.get(2), f.get(3), f.get(4));
            let action = if on_delete == "NO ACTION" { String::new() } else { format!(" ON DELETE {on_delete}") };
            facts.insert(format!("foreign key {table} ({from}) references {target}({to}){action}"));
        }
        let indexes =
            sqlx::query("SELECT name, \"unique\", origin, partial FROM pragma_index_list($1)").bind(&table).fetch_all(&pool).await.unwrap();
        for i in indexes {
            let (name, unique, origin, partial): (String, bool, String, bool) = (i.get(0), i.get(1), i.get(2), i.get(3));
            if origin == "pk" {
                continue;
            }
            let columns: Vec<(Option<String>, String)> =
                sqlx::query_as("SELECT name, coll FROM pragma_index_xinfo($1) WHERE key = 1 ORDER BY seqno")
                    .bind(&name)
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            // A NOCASE column is what PostgreSQL spells as an index on lower(column).
            let columns: Vec<String> = columns
                .into_iter()
                .map(|(column, collation)| match (column, collation.as_str()) {
                    (Some(c), "NOCASE") => format!("lower({c})"),
                    (Some(c), _) => c,
                    (None, _) => "(expression)".into(),
                })
                .collect();
            facts.insert(index_fact(&name, &table, &columns, unique, partial));
        }
    }
    facts
}

async fn postgres_facts(url: &str) -> BTreeSet<String> {
    let pool = sqlx::PgPool::connect(url).await.expect("open PostgreSQL");
    sqlx::migrate!("../migrations/postgres").run(&pool).await.expect("migrate PostgreSQL");
    let mut facts = BTreeSet::new();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for table in &tables {
        facts.insert(format!("table {table}"));
    }
    let columns = sqlx::query(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable = 'NO', column_default::text
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for c in columns {
        let (table, name, declared, not_null, default): (String, String, String, bool, Option<String>) =
            (c.get(0), c.get(1), c.get(2), c.get(3), c.get(4));
        facts.insert(format!("column {table}.{name} {} not_null={not_null} default={}", postgres_type(&declared), default_of(default)));
    }
    let constraints = sqlx::query(
        "SELECT t.relname::text, con.contype::text, pg_get_constraintdef(con.oid)
         FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = 'public' AND t.relname <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for c in constraints {
        let (table, kind, definition): (String, String, String) = (c.get(0), c.get(1), c.get(2));
        let fact = match kind.as_str() {
            "p" => format!("primary key {table} {}", definition.trim_start_matches("PRIMARY KEY ")),
            "u" => format!("unique {table} {}", definition.trim_start_matches("UNIQUE ")),
            "f" => format!("foreign key {table} {}", definition.trim_start_matches("FOREIGN KEY ").replace("REFERENCES", "references")),
            "c" => format!("check {table} [{}]", check_tokens(&definition)),
            other => format!("constraint {table} {other} {definition}"),
        };
        facts.insert(fact);
    }
    let indexes = sqlx::query(
        "SELECT i.relname::text, t.relname::text, ix.indisunique, ix.indpred IS NOT NULL, pg_get_indexdef(ix.indexrelid)
         FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = 'public' AND t.relname <> '_sqlx_migrations'
           AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid)",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for i in indexes {
        let (name, table, unique, partial, definition): (String, String, bool, bool, String) =
            (i.get(0), i.get(1), i.get(2), i.get(3), i.get(4));
        let inside = definition.split_once(" USING btree (").map_or("", |(_, rest)| rest);
        let mut depth = 1;
        let end = inside
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(inside.len(), |(i, _)| i);
        // (PostgreSQL quotes a column named like a keyword, such as "position".)
        let columns: Vec<String> = inside[..end].split(", ").map(|c| c.replace('"', "")).collect();
        facts.insert(index_fact(&name, &table, &columns, unique, partial));
    }
    pool.close().await;
    facts
}

#[test]
fn a_check_reads_the_same_in_both_spellings() {
    assert_eq!(
        check_tokens("CHECK (status IN ('working', 'input_required'))"),
        check_tokens("CHECK ((status = ANY (ARRAY['working'::text, 'input_required'::text])))")
    );
    assert_ne!(check_tokens("CHECK (state IN ('a', 'b'))"), check_tokens("CHECK ((state = ANY (ARRAY['a'::text])))"));
    assert_ne!(check_tokens("CHECK (amount >= 0)"), check_tokens("CHECK (amount > 0)"));
    assert_eq!(
        checks_in("CREATE TABLE t (a TEXT CHECK (a IN ('x', 'y')), b INTEGER CHECK (b >= 0 AND (b < 10)))"),
        ["(a IN ('x', 'y'))", "(b >= 0 AND (b < 10))"]
    );
}
