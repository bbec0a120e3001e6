//! The audit chain against someone who can write the database: TRUNCATE is refused, and a cut
//! tail, a recomputed chain or a forged checkpoint are found through checkpoints signed with a
//! key the database does not hold; retention prunes behind a signed anchor and the rest still
//! verifies. Runs on both backends.

use serde_json::{Value, json};
use sqlx::{AnyPool, Row};

use crate::helpers::{Options, TestApp, cli_with_env, database_url, postgres, spawn_app_with};

const KEY: &str = "test-audit-key-0123456789abcdef0123456789";

/// An app with a signing key and a few audited decisions, its raw database, and a signed checkpoint.
async fn audited_app() -> (TestApp, AnyPool, String) {
    let app = spawn_app_with(Options { audit_key: Some(KEY.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    for a in &approvals {
        assert_eq!(app.post_json(&format!("/api/approvals/{}/reject", a.id), json!({ "reason": "no" })).await.0, 200);
    }
    app.wait_task(&task, domain::TaskStatus::Completed).await;
    sqlx::any::install_default_drivers();
    let db = AnyPool::connect(&database_url(app.data_dir.path()).await).await.unwrap();
    crate::helpers::eventually("the audit entries to be chained", || async {
        let staged: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_staging").fetch_one(&db).await.unwrap();
        (staged == 0).then_some(())
    })
    .await;
    let (ok, anchor, stderr) = audit_cli(&app, &["audit", "checkpoint"]).await;
    assert!(ok && anchor.trim().contains(':'), "{anchor}{stderr}");
    (app, db, anchor.trim().to_owned())
}

async fn audit_cli(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    cli_with_env(app.data_dir.path(), args, None, &[("COUNTERSIGN_AUDIT_KEY", KEY)]).await
}

async fn verify(app: &TestApp, query: &str) -> Value {
    let (status, body) = app.as_user("root").get_json(&format!("/api/audit/verify{query}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The attacker's first step: the append-only triggers go.
async fn drop_guards(db: &AnyPool) {
    let on = if postgres().is_some() { " ON audit_log" } else { "" };
    for trigger in ["audit_log_no_update", "audit_log_no_delete"] {
        sqlx::query(&format!("DROP TRIGGER {trigger}{on}")).execute(db).await.unwrap();
    }
}

async fn last_ids(db: &AnyPool, n: i64) -> Vec<i64> {
    sqlx::query_scalar("SELECT id FROM audit_log ORDER BY id DESC LIMIT $1").bind(n).fetch_all(db).await.unwrap()
}

#[tokio::test]
async fn truncate_and_delete_are_refused_and_a_cut_tail_is_found() {
    let (app, db, anchor) = audited_app().await;
    let before = verify(&app, "").await;
    assert_eq!((before["ok"].as_bool(), before["after_checkpoint"].as_i64()), (Some(true), Some(0)), "{before}");
    assert_eq!(before["signatures_checked"], true);
    let statement = if postgres().is_some() { "TRUNCATE audit_log" } else { "DELETE FROM audit_log" };
    let refused = sqlx::query(statement).execute(&db).await.unwrap_err().to_string();
    assert!(refused.contains("append-only"), "{refused}");
    assert!(sqlx::query("DELETE FROM audit_anchors").execute(&db).await.is_err(), "anchors are append-only too");
    let entries: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&db).await.unwrap();
    assert_eq!(entries, before["entries"].as_i64().unwrap(), "nothing went");

    // Attack: cut the last two entries (their links still hold).
    drop_guards(&db).await;
    let cut = last_ids(&db, 2).await;
    sqlx::query("DELETE FROM audit_log WHERE id >= $1").bind(cut[1]).execute(&db).await.unwrap();
    let after = verify(&app, "").await;
    assert_eq!(after["ok"], false, "{after}");
    assert!(after["problem"].as_str().unwrap().contains("removed from its end"), "{after}");
    let (ok, _, stderr) = audit_cli(&app, &["audit", "verify"]).await;
    assert!(!ok && stderr.contains("removed from its end"), "{stderr}");

    // Attack: ...and the checkpoints with them. The database alone cannot tell now; the
    // checkpoint the server logged (kept elsewhere) can.
    let on = if postgres().is_some() { " ON audit_anchors" } else { "" };
    let trigger = if postgres().is_some() { "audit_anchors_no_change" } else { "audit_anchors_no_delete" };
    sqlx::query(&format!("DROP TRIGGER {trigger}{on}")).execute(&db).await.unwrap();
    sqlx::query("DELETE FROM audit_anchors").execute(&db).await.unwrap();
    assert_eq!(verify(&app, "").await["ok"], true, "undetectable without an outside copy (documented)");
    let with_copy = verify(&app, &format!("?anchor={anchor}")).await;
    assert_eq!(with_copy["ok"], false, "{with_copy}");
    let (ok, _, stderr) = audit_cli(&app, &["audit", "verify", "--anchor", &anchor]).await;
    assert!(!ok && stderr.contains("removed from its end"), "{stderr}");
    let (status, body) = app.as_user("root").get_json("/api/audit/verify?anchor=nonsense").await;
    assert_eq!(status, 422, "{body}");
}

#[tokio::test]
async fn a_recomputed_chain_or_a_forged_checkpoint_is_found() {
    let (app, db, _) = audited_app().await;
    // Attack: rewrite the second entry's actor and recompute every hash after it, so every
    // link holds again.
    drop_guards(&db).await;
    let rows = sqlx::query("SELECT id, entry, prev_hash FROM audit_log ORDER BY id").fetch_all(&db).await.unwrap();
    let mut prev: String = rows[1].get("prev_hash");
    for (i, row) in rows.iter().enumerate().skip(1) {
        let id: i64 = row.get("id");
        let mut entry: String = row.get("entry");
        if i == 1 {
            entry = entry.replacen("\"actor\":\"", "\"actor\":\"mallory-", 1);
            assert!(entry.contains("mallory"), "{entry}");
        }
        let hash = engine::store::audit::chain_hash(&prev, &entry);
        sqlx::query("UPDATE audit_log SET entry = $1, prev_hash = $2, hash = $3 WHERE id = $4")
            .bind(&entry)
            .bind(&prev)
            .bind(&hash)
            .bind(id)
            .execute(&db)
            .await
            .unwrap();
        prev = hash;
    }
    let report = verify(&app, "").await;
    assert_eq!(report["ok"], false, "{report}");
    assert!(report["problem"].as_str().unwrap().contains("signed checkpoint"), "{report}");

    // Attack: sign the new head yourself (without the key).
    sqlx::query("INSERT INTO audit_anchors (kind, at, entry_id, entries, hash, signature) VALUES ('checkpoint', 1, $1, 99, $2, $3)")
        .bind(last_ids(&db, 1).await[0])
        .bind(&prev)
        .bind("00".repeat(32))
        .execute(&db)
        .await
        .unwrap();
    let report = verify(&app, "").await;
    assert!(report["problem"].as_str().unwrap().contains("not signed with the configured key"), "{report}");
}

#[tokio::test]
async fn retention_prunes_behind_a_signed_anchor_and_the_rest_still_verifies() {
    let (app, db, _) = audited_app().await;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&db).await.unwrap();
    let newest = last_ids(&db, 1).await[0];
    // Not yet pruned: an old entry cannot simply be deleted.
    assert!(sqlx::query("DELETE FROM audit_log WHERE id = $1").bind(newest).execute(&db).await.is_err());
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (ok, out, stderr) = audit_cli(&app, &["audit", "prune", "--older-than-days", "0"]).await;
    assert!(ok && out.trim() == format!("pruned {total} entries"), "{out}{stderr}");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&db).await.unwrap();
    assert_eq!(left, 0);

    // New entries chain on after the pruned prefix.
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    assert_eq!(app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({})).await.0, 200);
    let report = crate::helpers::eventually("new entries to be chained", || async {
        let report = verify(&app, "").await;
        (report["entries"].as_i64() > Some(0)).then_some(report)
    })
    .await;
    assert_eq!((report["ok"].as_bool(), report["pruned_through"].as_i64()), (Some(true), Some(newest)), "{report}");
    let (ok, out, _) = audit_cli(&app, &["audit", "verify"]).await;
    assert!(ok && out.contains(&format!("starts after entry {newest}")), "{out}");
}
