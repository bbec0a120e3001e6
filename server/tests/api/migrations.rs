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
    ("postgres/20261128000000_outbox_kind.sql", "7e4a0c4258ad2ba710d98ae3552b8ce9d8d28d48cd2648f6b602c85703ce119c"),
    ("postgres/20261129000000_events_by_task.sql", "52aa37051cc57f48037725f0cf73dad8590ceab1544fde1d453a438cc79de120"),
    ("postgres/20261130000000_sign_in.sql", "78c3217e66266ad6015c6b24bbaff74f831ea508a160b95fffa6c9d35b5321fb"),
    ("postgres/20261201000000_client_call_requests.sql", "ab429f6e8d88ba43112cdb8eb386bbe1f412f602859cb9b68aa8430acfa65141"),
    ("postgres/20261202000000_conversation_openers.sql", "cfadd23781c41fd6f4b1faac54567ed4dce7d335fda8cd88a1ebef0600f4cca2"),
    ("postgres/20261203000000_task_starters.sql", "44d6abb2fb44431e190593c736d0273fac93187557b378df18253e4bdd629937"),
    ("sqlite/20261127000000_baseline.sql", "f92a4cd2d0994d4328add2eb6b9dd27b2f646404e53275498805c3f453512463"),
    ("sqlite/20261128000000_outbox_kind.sql", "7e4a0c4258ad2ba710d98ae3552b8ce9d8d28d48cd2648f6b602c85703ce119c"),
    ("sqlite/20261129000000_events_by_task.sql", "52aa37051cc57f48037725f0cf73dad8590ceab1544fde1d453a438cc79de120"),
    ("sqlite/20261130000000_sign_in.sql", "ceab34c4cbb3d64c5af28c787ee3618752cb2428c7aa40ea2ac1c5f11fe92463"),
    ("sqlite/20261201000000_client_call_requests.sql", "ab429f6e8d88ba43112cdb8eb386bbe1f412f602859cb9b68aa8430acfa65141"),
    ("sqlite/20261202000000_conversation_openers.sql", "cfadd23781c41fd6f4b1faac54567ed4dce7d335fda8cd88a1ebef0600f4cca2"),
    ("sqlite/20261203000000_task_starters.sql", "44d6abb2fb44431e190593c736d0273fac93187557b378df18253e4bdd629937"),
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

/// What the baseline stored where the newest migration changed the schema: the outbox as
/// `webhook_outbox`, its delivery kind as a prefix of `url` (`mailto:`, `slack:`). Run on a
/// database the server made at head, it puts that part back as the baseline had it, so the
/// upgrade below migrates real data written by the server, not a hand-made sample.
const REWIND_TO_BASELINE: &[&str] = &[
    "ALTER TABLE tasks DROP COLUMN started_by",
    "ALTER TABLE conversations DROP COLUMN opened_by",
    "DROP INDEX client_calls_by_request",
    "ALTER TABLE client_calls DROP COLUMN request_key",
    "ALTER TABLE users DROP COLUMN disabled_at",
    "ALTER TABLE approvals DROP COLUMN reauthenticate_secs",
    "ALTER TABLE user_groups DROP COLUMN source",
    "DROP INDEX users_by_oidc_subject",
    "ALTER TABLE users DROP COLUMN oidc_subject",
    "DROP INDEX events_by_task",
    "DROP INDEX outbox_due",
    "UPDATE outbox SET target = 'mailto:' || target WHERE kind = 'email'",
    "UPDATE outbox SET target = 'slack:' || target WHERE kind = 'slack'",
    "ALTER TABLE outbox DROP COLUMN kind",
    "ALTER TABLE outbox RENAME COLUMN target TO url",
    "ALTER TABLE outbox RENAME TO webhook_outbox",
    "CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL",
    "DELETE FROM _sqlx_migrations WHERE version > 20261127000000",
];

/// An upgrade keeps everything: a database at the baseline holding pending approvals, a grant,
/// an audit trail and owed deliveries of every kind migrates to head when the new server starts;
/// the approvals are still pending and decidable, the grant still covers, the audit chain
/// verifies, and each owed delivery is still owed, of its kind, to its target.
#[tokio::test]
async fn an_upgrade_from_the_baseline_keeps_approvals_grants_audit_and_owed_deliveries() {
    use crate::helpers::{BinaryServer, cli};
    use engine::store::outbox::{self, Kind, SlackAction};
    use sqlx::Connection;
    use std::sync::Arc;

    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = crate::helpers::database_url(dir.path()).await;
    let server = BinaryServer::start(dir.clone(), None).await;
    let app = &server.app;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let granted = app.create_conversation().await;
    let (_, small) = app.pending_turn(&granted, "refund $5 on order 1003", 1).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", small[0].id), serde_json::json!({ "grant": {} })).await;
    assert_eq!(status, 200, "{body}");
    assert!(server.terminate().await);

    // The baseline's database: its outbox holds a delivery of each kind, as it encoded them.
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(&url).await.unwrap();
    for statement in REWIND_TO_BASELINE {
        sqlx::query(statement).execute(&mut db).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    let notice = serde_json::json!({ "approval_id": approvals[0].id, "person": "admin", "reminder": 0 }).to_string();
    let slack = serde_json::json!({ "approval_id": approvals[0].id }).to_string();
    for (target, body) in [("http://127.0.0.1:9/hook", "{}"), ("mailto:admin@example.com", notice.as_str()), ("slack:post", slack.as_str())]
    {
        sqlx::query("INSERT INTO webhook_outbox (url, body, next_attempt_at, created_at) VALUES ($1, $2, 0, 0)")
            .bind(target)
            .bind(body)
            .execute(&mut db)
            .await
            .unwrap();
    }
    db.close().await.unwrap();

    // The new server migrates it at start-up.
    let (ok, stdout, stderr) = cli(dir.path(), &["audit", "verify"], None).await;
    assert!(ok, "audit verify after the upgrade: {stdout}{stderr}");
    let second = BinaryServer::start(dir.clone(), None).await;
    let app = &second.app;
    assert_eq!(app.pending_approvals_of(&task).await.len(), 2, "both approvals are still pending");
    assert_eq!(app.detail(&granted).await.view.grants.len(), 1, "the grant is kept");
    app.approve_each(&task, &approvals).await;
    assert_eq!(app.order(1001).await.refunded, 249.0);
    assert!(second.terminate().await);

    let store = engine::store::Store::connect(&url, countersign::bus::Bus::default()).await.unwrap();
    let until = engine::clock::now_ms() + 60_000;
    let owed =
        outbox::claim_due(&store, store.backend(), "upgrade-test", until, 10, &[Kind::Webhook, Kind::Email, Kind::Slack]).await.unwrap();
    let kinds: Vec<(Kind, &str)> = owed.iter().map(|d| (d.kind, d.target.as_str())).collect();
    assert_eq!(
        kinds,
        [(Kind::Webhook, "http://127.0.0.1:9/hook"), (Kind::Email, "admin@example.com"), (Kind::Slack, "post")],
        "each owed delivery is still owed, of its kind"
    );
    assert_eq!(owed[1].email().unwrap().approval_id, approvals[0].id);
    assert_eq!(owed[2].slack().unwrap(), (SlackAction::Post, approvals[0].id.clone()));
}
