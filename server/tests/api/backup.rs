//! `countersign backup FILE`: a consistent copy of a running server's SQLite database, taken
//! while turns are being written, restores into a fresh data directory with its pending
//! approvals still pending and decidable and its audit chain intact.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use domain::TaskStatus;
use serde_json::json;

use crate::helpers::{BinaryServer, cli, postgres, sqlite_only};

#[tokio::test]
async fn a_backup_under_load_restores_with_pending_approvals_decidable_and_the_audit_verified() {
    if !sqlite_only("a_backup_under_load_restores…") {
        return;
    }
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let server = BinaryServer::start(dir.clone(), None).await;
    let c = server.app.create_conversation().await;
    let (task, approvals) = server.app.pending_turn(&c, "refund order 1001 and 1002", 2).await;

    // Load: turns keep being written (and decided) in another chat while the copy is taken.
    let busy = Arc::new(AtomicBool::new(true));
    let load = {
        let (app, busy) = (server.app.clone(), busy.clone());
        tokio::spawn(async move {
            let mut turns = 0;
            while busy.load(Ordering::Relaxed) {
                // A chat per turn: a call refused once is not asked again in the same chat.
                let other = app.create_conversation().await;
                let (task, pending) = app.pending_turn(&other, "refund order 1003", 1).await;
                app.post_json(&format!("/api/approvals/{}/reject", pending[0].id), json!({ "reason": "load" })).await;
                app.wait_task(&task, TaskStatus::Completed).await;
                turns += 1;
            }
            turns
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let copy = tempfile::tempdir().unwrap();
    let file = copy.path().join("countersign-backup.db");
    let (ok, stdout, stderr) = cli(dir.path(), &["backup", file.to_str().unwrap()], None).await;
    assert!(ok, "backup: {stderr}");
    assert!(stdout.contains("backed up to"), "{stdout}");
    busy.store(false, Ordering::Relaxed);
    let turns = tokio::time::timeout(Duration::from_secs(60), load).await.expect("the load stops").unwrap();
    assert!(turns > 0, "turns were written around the copy");

    // A second backup to the same file is refused; the file is kept as it was.
    let before = std::fs::read(&file).unwrap();
    let (ok, _, stderr) = cli(dir.path(), &["backup", file.to_str().unwrap()], None).await;
    assert!(!ok && stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert!(server.terminate().await);

    // Restore: the copy is the database of a fresh data directory.
    let restored = Arc::new(tempfile::tempdir().unwrap());
    std::fs::copy(&file, restored.path().join("countersign.db")).unwrap();
    let (ok, stdout, stderr) = cli(restored.path(), &["audit", "verify"], None).await;
    assert!(ok, "audit verify on the restored copy: {stdout}{stderr}");
    let second = BinaryServer::start(restored, None).await;
    let app = &second.app;
    assert_eq!(app.pending_approvals_of(&task).await.len(), 2, "both approvals are still pending");
    app.approve_each(&task, &approvals).await;
    assert_eq!(app.order(1001).await.refunded, 249.0);
    assert_eq!(app.order(1002).await.refunded, 89.5);
}

#[tokio::test]
async fn a_backup_says_what_it_cannot_do_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("no-such-dir").join("copy.db");
    let (ok, _, stderr) = cli(dir.path(), &["backup", target.to_str().unwrap()], None).await;
    assert!(!ok, "{stderr}");
    if postgres().is_some() {
        assert!(stderr.contains("pg_dump"), "PostgreSQL is backed up with its own tools: {stderr}");
    } else {
        assert!(stderr.contains("is not a directory"), "{stderr}");
    }
    assert!(!target.exists());
}
