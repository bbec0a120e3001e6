//! A migration that has landed is never edited: sqlx keeps each applied migration's checksum and
//! refuses to start a database whose files changed since ("migration … was previously applied
//! but has been modified"). This test holds every migration file's SHA-256, so an edit fails here
//! first; a change to the schema is a new file beside the others (with its twin in the other
//! backend's folder), and its checksum joins the list when it lands.

use std::path::Path;

use sha2::{Digest, Sha256};

/// Every migration that has landed, with the SHA-256 of its text.
const LANDED: &[(&str, &str)] = &[
    ("postgres/20261127000000_baseline.sql", "79fa90ad7f5965b8e1981cf7e825e597e4e6baeff4820317b82daef2e1144311"),
    ("sqlite/20261127000000_baseline.sql", "f92a4cd2d0994d4328add2eb6b9dd27b2f646404e53275498805c3f453512463"),
];

fn checksums() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let mut found = Vec::new();
    for backend in ["postgres", "sqlite"] {
        for entry in std::fs::read_dir(root.join(backend)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{backend}/{}", path.file_name().unwrap().to_string_lossy());
            found.push((name, hex::encode(Sha256::digest(std::fs::read(&path).unwrap()))));
        }
    }
    found.sort();
    found
}

#[test]
fn no_migration_that_has_landed_is_edited_and_each_new_one_is_listed() {
    let found = checksums();
    let mut problems = Vec::new();
    for (name, sum) in &found {
        match LANDED.iter().find(|(landed, _)| landed == name) {
            Some((_, held)) if held == sum => {}
            Some(_) => problems.push(format!(
                "{name} changed after it landed: a database that applied it would no longer start. Put it back and add a new migration instead."
            )),
            None => problems.push(format!("{name} is new: once it lands, add (\"{name}\", \"{sum}\") to LANDED")),
        }
    }
    for (landed, _) in LANDED {
        if !found.iter().any(|(name, _)| name == landed) {
            problems.push(format!("{landed} has landed but is gone: a database that applied it would no longer start"));
        }
    }
    assert!(problems.is_empty(), "migrations:\n{}", problems.join("\n"));
}

/// A database that applied migrations this build does not have (one made by a development build
/// before the baseline, or by a newer release) is refused with what to do, and is left as it was.
#[tokio::test]
async fn a_database_from_before_the_baseline_is_refused_with_what_to_do() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let blob = if url.starts_with("sqlite:") { "BLOB" } else { "BYTEA" };
    let create = format!(
        "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
         installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, checksum {blob} NOT NULL, \
         execution_time BIGINT NOT NULL)"
    );
    let insert = "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
                  VALUES (20261121000001, 'event log', TRUE, x'00', 1)";
    sqlx::any::install_default_drivers();
    let mut db =
        sqlx::AnyConnection::connect(&format!("{url}{}", if url.starts_with("sqlite:") { "?mode=rwc" } else { "" })).await.unwrap();
    sqlx::query(&create).execute(&mut db).await.unwrap();
    let insert = if blob == "BYTEA" { insert.replace("x'00'", "'\\x00'::bytea") } else { insert.to_owned() };
    sqlx::query(&insert).execute(&mut db).await.unwrap();
    db.close().await.unwrap();

    let (ok, _, stderr) = crate::helpers::cli(dir.path(), &["user", "list"], None).await;
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("migration 20261121000001") && stderr.contains("new data directory"), "{stderr}");
    let mut db = sqlx::AnyConnection::connect(&url).await.unwrap();
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM _sqlx_migrations", // nothing was applied on top of it
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(tables, 1);
}
