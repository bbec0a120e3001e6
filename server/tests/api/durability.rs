//! Durable pause (docs/architecture.md, decision 2) and effects that happen once (decision 4).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use domain::{ApprovalOutcome, CardStatus, EventBody, TaskStatus};
use serde_json::json;

use crate::helpers::{BinaryServer, Options, TestApp, agents_with_timeout, assistant_texts, named, spawn_app, spawn_app_with};

#[tokio::test]
async fn a_pending_approval_survives_kill_9_and_runs_once_after_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let first = BinaryServer::start(dir.clone(), None).await;
    let c = first.app.create_conversation().await;
    let (task, approvals) = first.app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let dir = first.kill().await;

    let second = BinaryServer::start(dir, None).await;
    let app = &second.app;
    assert_eq!(app.pending_approvals_of(&task).await.len(), 2, "both approvals are still pending");
    app.approve_each(&task, &approvals).await;
    assert_eq!(app.order(1001).await.refunded, 249.0);
    assert_eq!(app.order(1002).await.refunded, 89.5);
    let detail = app.detail(&c).await;
    assert_eq!(named(&detail.events, "tool-result").len(), 2, "each tool ran once");
    assert!(detail.view.cards().all(|card| card.status == CardStatus::Succeeded));
}

#[tokio::test]
async fn a_deadline_that_passes_while_the_server_is_down_expires_after_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let toml = agents_with_timeout(1.0);
    let first = BinaryServer::start(dir.clone(), Some(&toml)).await;
    let c = first.app.create_conversation().await;
    let (task, _) = first.app.pending_turn(&c, "cancel order 1003", 1).await;
    let dir = first.kill().await;
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let second = BinaryServer::start(dir, Some(&toml)).await;
    second.app.wait_task(&task, TaskStatus::Completed).await;
    let detail = second.app.detail(&c).await;
    let decided = named(&detail.events, "approval-decided");
    assert_eq!(decided.len(), 1);
    let EventBody::ApprovalDecided { outcome, reason, decided_by, .. } = &decided[0].body else { unreachable!() };
    assert_eq!((*outcome, reason.as_deref(), decided_by.as_str()), (ApprovalOutcome::Expired, Some("timed out"), "system"));
    assert_eq!(second.app.order(1003).await.status, "open");
}

#[tokio::test]
async fn an_approval_times_out_after_the_gate_timeout_with_reason_timed_out() {
    let app = spawn_app_with(Options { agents_toml: Some(agents_with_timeout(0.3)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, approval) = app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!((approval["state"].as_str(), approval["reason"].as_str()), (Some("expired"), Some("timed out")));
    let detail = app.detail(&c).await;
    assert_eq!(detail.view.cards().next().unwrap().status, CardStatus::Expired);
    assert!(assistant_texts(&detail.events).last().unwrap().contains("timed out"));
    assert_eq!(app.order(1001).await.refunded, 0.0);
    // A human who comes too late gets 409.
    assert_eq!(app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await.0, 409);
}

#[tokio::test]
async fn a_failure_between_the_effect_and_the_commit_leaves_no_effect_and_the_retry_applies_it_once() {
    let failed_once = Arc::new(AtomicBool::new(false));
    let hook_flag = failed_once.clone();
    let hook: countersign::orchestrator::BeforeCommitHook = Arc::new(move |point: &str| {
        if point.starts_with("step:") || hook_flag.swap(true, Ordering::SeqCst) {
            Ok(())
        } else {
            anyhow::bail!("injected crash before commit")
        }
    });
    let app = spawn_app_with(Options { before_commit: Some(hook), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $30 on order 1004", 1).await;
    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    crate::helpers::eventually("the injected failure", || async { failed_once.load(Ordering::SeqCst).then_some(()) }).await;

    // The sweeper's resume pass retries the call; it commits exactly once.
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1004).await.refunded, 30.0, "refunded once, not twice");
    let detail = app.detail(&c).await;
    assert_eq!(named(&detail.events, "tool-started").len(), 1, "the rolled-back attempt left no event");
    assert_eq!(named(&detail.events, "tool-result").len(), 1);
}

#[tokio::test]
async fn re_delivering_an_approval_after_success_applies_no_second_effect() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $5 on order 1003", 1).await;
    let path = format!("/api/approvals/{}/approve", approvals[0].id);
    assert_eq!(app.post_json(&path, json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    for _ in 0..3 {
        assert_eq!(app.post_json(&path, json!({})).await.0, 409);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(app.order(1003).await.refunded, 5.0);
}

#[tokio::test]
async fn storage_grows_linearly_with_the_conversation() {
    if !crate::helpers::sqlite_only("storage_grows_linearly_with_the_conversation") {
        return;
    }
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", app.data_dir.path().join("countersign.db").display())).await.unwrap();
    let mut sizes = Vec::new();
    for _ in 0..6 {
        let (task, approvals) = app.pending_turn(&c, "refund $1 on order 1004", 1).await;
        app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
        app.wait_task(&task, TaskStatus::Completed).await;
        let bytes: i64 = sqlx::query_scalar("SELECT SUM(LENGTH(body)) FROM events").fetch_one(&db).await.unwrap();
        sizes.push(bytes);
    }
    let per_turn: Vec<i64> = sizes.windows(2).map(|w| w[1] - w[0]).collect();
    let (min, max) = (per_turn.iter().min().unwrap(), per_turn.iter().max().unwrap());
    // Each turn adds about the same bytes; re-storing history would make later turns grow.
    assert!(*max as f64 <= *min as f64 * 1.2, "bytes per turn {per_turn:?}");
}

#[tokio::test]
async fn the_write_ahead_log_is_copied_into_the_database_file_in_the_background() {
    if !crate::helpers::sqlite_only("the_write_ahead_log_is_copied_into_the_database_file_in_the_background") {
        return;
    }
    let app = spawn_app().await;
    let file = app.data_dir.path().join("countersign.db");
    let size = || std::fs::metadata(&file).unwrap().len();
    let before = size();
    let c = app.create_conversation().await;
    for _ in 0..5 {
        let (task, approvals) = app.pending_turn(&c, "refund $1 on order 1004", 1).await;
        app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
        app.wait_task(&task, TaskStatus::Completed).await;
    }
    // No commit checkpoints (wal_autocheckpoint = 0): only the background task moves the new
    // pages from the log into the file.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while size() <= before {
        assert!(std::time::Instant::now() < deadline, "the database file stayed at {before} bytes: nothing checkpointed the log");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_config_naming_an_unknown_tool_stops_start_up_with_a_message_naming_it() {
    let stderr =
        crate::helpers::refused_start_up("[[agents]]\nname = \"ops\"\ntools = [\"get_order\"]\nrequire_approval = [\"wipe_disk\"]\n").await;
    assert!(stderr.contains("wipe_disk") && stderr.contains("agents.toml") && stderr.contains("\"ops\""), "{stderr}");
}

#[tokio::test]
async fn config_check_reports_a_valid_file_and_names_the_problem_in_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, agents_with_timeout(60.0)).unwrap();
    let (ok, out, _) = crate::helpers::cli(dir.path(), &["config", "check", good.to_str().unwrap()], None).await;
    assert!(ok && out.contains("agent support") && out.contains("is valid"), "{out}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\nkind = \"moods\"\n").unwrap();
    let (ok, _, err) = crate::helpers::cli(dir.path(), &["config", "check", bad.to_str().unwrap()], None).await;
    assert!(!ok && err.contains("bad.toml") && err.contains("moods"), "{err}");
}

fn agents_with_action(action: &str, secs: f64) -> String {
    format!(
        "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"money\"\nkind = \"tools\"\ntools = [\"cancel_order\", \"process_refund\"]\n\
         timeout_secs = {secs}\ntimeout_action = \"{action}\"\n"
    )
}

#[tokio::test]
async fn each_timeout_action_does_what_it_says() {
    // approve: the call runs as proposed.
    let app = spawn_app_with(Options { agents_toml: Some(agents_with_action("approve", 0.2)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "cancel order 1003", 1).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "canceled");
    audited_as_timeouts(&app, 1).await;

    // skip: not run, the model is told it was skipped.
    let app = spawn_app_with(Options { agents_toml: Some(agents_with_action("skip", 0.2)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "cancel order 1003", 1).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "open");
    assert!(assistant_texts(&app.detail(&c).await.events).last().unwrap().contains("skipped"));
    // (This one used to be audited as a human decision: the kind was guessed from the reason.)
    audited_as_timeouts(&app, 1).await;

    // abort: the whole task is canceled.
    let app = spawn_app_with(Options { agents_toml: Some(agents_with_action("abort", 0.2)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003 and 1005", 2).await;
    app.wait_task(&task, TaskStatus::Canceled).await;
    for a in &approvals {
        assert_eq!(app.get_json(&format!("/api/approvals/{}", a.id)).await.1["state"], "canceled");
    }
    audited_as_timeouts(&app, 2).await;

    // escalate: handed to the admins with a new deadline, then rejected if they do not decide.
    let app = spawn_app_with(Options { agents_toml: Some(agents_with_action("escalate", 0.3)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let id = &approvals[0].id;
    crate::helpers::eventually("escalation", || async {
        app.get_json(&format!("/api/approvals/{id}")).await.1["escalated_by"].as_str().map(str::to_owned)
    })
    .await;
    let detail = app.detail(&c).await;
    assert_eq!(named(&detail.events, "approval-escalated").len(), 1);
    assert_eq!(detail.view.cards().next().unwrap().approval.as_ref().unwrap().escalated_by.as_deref(), Some("system"));
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.get_json(&format!("/api/approvals/{id}")).await.1["state"], "expired");
    audited_as_timeouts(&app, 1).await;
}

/// `timed_out` approvals the server decided when their deadline passed, and no human decision.
async fn audited_as_timeouts(app: &TestApp, timed_out: usize) {
    app.audit_entries("approval.timed_out", timed_out).await;
    app.audit_entries("approval.decided", 0).await;
}

#[tokio::test]
async fn a_user_hands_an_approval_to_the_admins_and_then_only_an_admin_decides_it() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let id = &approvals[0].id;
    let (code, body) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({})).await;
    assert_eq!((code, body["escalated_by"].as_str()), (200, Some("alice")), "{body}");
    assert_eq!(app.post_json(&format!("/api/approvals/{id}/escalate"), json!({})).await.0, 409, "once");
    let (code, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(code, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("admins"));
    assert_eq!(app.post_json(&format!("/api/tasks/{task}/approve-all"), json!({})).await.0, 403);
    assert_eq!(app.as_user("bob").post_json(&format!("/api/approvals/{id}/escalate"), json!({})).await.0, 404);
    let root = app.as_user("root");
    let (_, queue) = root.get_json("/api/approvals").await;
    assert!(queue.as_array().unwrap().iter().any(|a| a["id"] == id.as_str() && a["escalated_by"] == "alice"));
    assert_eq!(root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await.0, 200);
    assert_eq!(app.post_json(&format!("/api/approvals/{}/approve", approvals[1].id), json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, audit) = root.get_json("/api/audit?kind=approval.escalated").await;
    assert_eq!(audit["entries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_call_left_executing_by_a_crash_is_reported_interrupted_and_never_re_run() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let first = BinaryServer::start(dir.clone(), None).await;
    let c = first.app.create_conversation().await;
    let (task, approvals) = first.app.pending_turn(&c, "cancel order 1003", 1).await;
    let dir = first.kill().await;
    // What a crash in the middle of an external call leaves behind: decided, marked executing.
    sqlx::any::install_default_drivers();
    let db = sqlx::AnyPool::connect(&crate::helpers::database_url(dir.path()).await).await.unwrap();
    sqlx::query("UPDATE approvals SET state = 'approved' WHERE id = $1").bind(&approvals[0].id).execute(&db).await.unwrap();
    sqlx::query("UPDATE tool_calls SET state = 'executing' WHERE id = $1").bind(&approvals[0].call_id).execute(&db).await.unwrap();
    sqlx::query("UPDATE tasks SET status = 'working' WHERE id = $1").bind(&task).execute(&db).await.unwrap();
    db.close().await;

    let second = BinaryServer::start(dir, None).await;
    second.app.wait_task(&task, TaskStatus::Completed).await;
    let detail = second.app.detail(&c).await;
    let card = detail.view.card(&approvals[0].call_id).unwrap();
    assert_eq!(card.status, CardStatus::Failed);
    assert_eq!(card.result.as_ref().unwrap()["error"], "interrupted — not retried");
    assert_eq!(second.app.order(1003).await.status, "open", "not re-run");
    assert!(assistant_texts(&detail.events).last().unwrap().contains("interrupted"));
}

#[tokio::test]
async fn sigterm_stops_the_server_even_while_a_page_holds_an_event_stream_open() {
    let server = BinaryServer::start(Arc::new(tempfile::tempdir().unwrap()), None).await;
    let c = server.app.create_conversation().await;
    let _stream = server.app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let started = std::time::Instant::now();
    assert!(server.terminate().await, "a clean exit");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// A step whose recording keeps failing after the model answered is not retried forever: after a
/// few attempts the turn fails with a message the chat shows.
#[tokio::test]
async fn a_step_that_keeps_failing_after_the_model_answered_fails_the_turn_after_a_few_attempts() {
    let failures = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = failures.clone();
    let hook: countersign::orchestrator::BeforeCommitHook = Arc::new(move |point: &str| {
        if point.starts_with("step:") && counter.fetch_add(1, Ordering::SeqCst) < 100 {
            anyhow::bail!("injected failure while recording the step")
        }
        Ok(())
    });
    let app = spawn_app_with(Options { before_commit: Some(hook), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "refund order 1001").await;
    app.wait_task(&task, TaskStatus::Failed).await;
    let attempts = failures.load(Ordering::SeqCst);
    assert_eq!(attempts as i64, countersign::orchestrator::MAX_FAILED_ATTEMPTS, "stopped after the bound, not retried forever");
    let view = app.detail(&c).await.view;
    let message = view.current_task().unwrap().message.clone().unwrap();
    assert!(message.contains("could not record the agent's next step"), "{message}");
    assert!(view.cards().next().is_none(), "nothing of the failed step was stored");
    assert_eq!(app.order(1001).await.refunded, 0.0);
    // Some time later, still exactly that many attempts: nothing retries a failed turn.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(failures.load(Ordering::SeqCst), attempts);
}

/// After `kill -9` of the only server, a task that was mid-step resumes as soon as the server is
/// back, not once the dead process's lease has run out (a minute here: waiting for it would miss
/// the 10 s the test waits).
#[tokio::test]
async fn a_task_cut_off_mid_step_resumes_at_once_after_a_restart_not_after_the_lease() {
    let (url, calls) = crate::replicas::slow_model().await;
    let toml = format!(
        "[[agents]]\nname = \"a\"\n[agents.model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"slow\"\nmax_retries = 0\n"
    );
    let long_lease = [("COUNTERSIGN_TASK_LEASE_MS", "60000")];
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let server = BinaryServer::start_with_env(data_dir, Some(&toml), &long_lease).await;
    let c = server.app.create_conversation().await;
    let task = server.app.say(&c, "hello").await;
    crate::helpers::eventually("the model to be asked", || async { (calls.load(Ordering::SeqCst) == 1).then_some(()) }).await;
    let data_dir = server.kill().await; // mid-step: its lease has a minute left

    let server = BinaryServer::start_with_env(data_dir, Some(&toml), &long_lease).await;
    server.app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(assistant_texts(&server.app.detail(&c).await.events), ["Done."], "one answer");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the restarted server asked the model again");
}

/// Under steady load some reader always reads from the write-ahead log, so SQLite never starts it
/// over by itself and a passive checkpoint never shrinks it: past its limit the checkpoint copies
/// it whole and the next writes start it over, reusing the file instead of growing it.
#[tokio::test]
async fn a_write_ahead_log_past_its_limit_is_started_over() {
    use engine::store::{Store, sqlite::checkpoint};
    if !crate::helpers::sqlite_only("a_write_ahead_log_past_its_limit_is_started_over") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("t.db").display()), Default::default()).await.unwrap();
    let log = || std::fs::metadata(dir.path().join("t.db-wal")).map(|m| m.len()).unwrap_or(0);
    sqlx::query("CREATE TABLE filler (x BLOB)").execute(store.testing().writer().exec()).await.unwrap();
    for _ in 0..64 {
        sqlx::query("INSERT INTO filler VALUES (randomblob(4000))").execute(store.testing().writer().exec()).await.unwrap();
    }
    let grown = log();
    assert!(grown > 64 * 4000, "the log holds the writes ({grown} bytes)");
    let Ok(checkpoint::Checkpointed::Copied { frames }) = checkpoint::checkpoint(&store, i64::MAX).await else { panic!("a passive round") };
    assert!(frames >= 64, "{frames} frames");
    assert_eq!(log(), grown, "a passive checkpoint copies the log but does not shrink it");
    // Grown once more, so that only a log started over keeps the file at its size below.
    for _ in 0..64 {
        sqlx::query("INSERT INTO filler VALUES (randomblob(4000))").execute(store.testing().writer().exec()).await.unwrap();
    }
    let grown = log();
    assert_eq!(checkpoint::checkpoint(&store, 16).await.unwrap(), checkpoint::Checkpointed::Restarted);
    assert_eq!(log(), grown, "the file is kept, to be written over (a truncated one is allocated again)");
    for _ in 0..64 {
        sqlx::query("INSERT INTO filler VALUES (randomblob(4000))").execute(store.testing().writer().exec()).await.unwrap();
    }
    assert!(log() <= grown, "past the limit the log starts over: {} bytes after as many writes, {grown} before", log());
    let first = frames;
    let Ok(checkpoint::Checkpointed::Copied { frames }) = checkpoint::checkpoint(&store, i64::MAX).await else { panic!("a passive round") };
    assert!(frames <= first, "the log holds only the writes since it started over ({frames} frames, {first} for the first 64)");
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM filler").fetch_one(store.testing().pool()).await.unwrap();
    assert_eq!(rows, 192, "nothing written was lost");
}

/// SQLite's writer connection runs its statements on the calling task: it has no worker thread,
/// so a statement costs no hand-off between threads (vendor/README.md). The other connections keep
/// theirs. Its transactions still commit, and still roll back when dropped uncommitted.
#[tokio::test]
async fn the_sqlite_writer_and_quick_readers_run_on_the_calling_task_and_transactions_hold() {
    use engine::store::{NativePool, Store, WriteScope};
    if !crate::helpers::sqlite_only("the_sqlite_writer_and_quick_readers_run_on_the_calling_task_and_transactions_hold") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("t.db").display()), Default::default()).await.unwrap();
    sqlx::query("CREATE TABLE notes (x TEXT)").execute(store.testing().writer().exec()).await.unwrap();

    let mut dropped = store.write(WriteScope::People).await.unwrap();
    sqlx::query("INSERT INTO notes VALUES ('dropped')").execute(&mut *dropped.tx).await.unwrap();
    drop(dropped);
    let mut kept = store.write(WriteScope::People).await.unwrap();
    sqlx::query("INSERT INTO notes VALUES ('kept')").execute(&mut *kept.tx).await.unwrap();
    kept.commit().await.unwrap();
    let notes: Vec<String> = sqlx::query_scalar("SELECT x FROM notes").fetch_all(store.testing().pool()).await.unwrap();
    assert_eq!(notes, ["kept"], "the dropped transaction rolled back, the committed one is stored");
    // The quick readers (also without threads) see each commit at once.
    let quick: Vec<String> = sqlx::query_scalar("SELECT x FROM notes").fetch_all(store.testing().quick().exec()).await.unwrap();
    assert_eq!(quick, ["kept"]);
    let mut more = store.write(WriteScope::People).await.unwrap();
    sqlx::query("INSERT INTO notes VALUES ('more')").execute(&mut *more.tx).await.unwrap();
    more.commit().await.unwrap();
    let quick: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(store.testing().quick().exec()).await.unwrap();
    assert_eq!(quick, 2, "a quick read after a commit sees it");

    // Each test runs in a process of its own (nextest), so these are the store's threads only.
    // Linux shortens thread names to 15 bytes: sqlx names them "sqlx-sqlite-worker-N".
    let workers = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|t| std::fs::read_to_string(t.as_ref().unwrap().path().join("comm")).unwrap_or_default().starts_with("sqlx-sqlite-wor"))
        .count();
    let NativePool::Sqlite(native) = store.native() else { unreachable!("a SQLite store") };
    assert_eq!(store.testing().writer().size(), 1, "the writer connection is open");
    assert!(store.testing().quick().size() >= 1, "a quick reader is open");
    assert_eq!(
        workers,
        native.size() as usize + store.testing().pool().size() as usize,
        "one worker thread per connection but the writer's and the quick readers'"
    );
}

/// A write's events reach the live streams once it committed, even when its caller goes away at
/// the yield that follows the COMMIT while another write waits (a client that hung up just then).
#[tokio::test(flavor = "current_thread")]
async fn a_commit_dropped_at_its_yield_after_the_commit_still_publishes_its_events() {
    use engine::store::{Store, WriteScope, conversations, tasks, users};
    if !crate::helpers::sqlite_only("a_commit_dropped_at_its_yield_after_the_commit_still_publishes_its_events") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("t.db").display()), Default::default()).await.unwrap();
    let user = users::insert(&store, "alice", "not-a-hash", domain::Role::Admin).await.unwrap().unwrap();
    let c = conversations::create(&store, "t", "support", &user, None).await.unwrap();
    let mut live = store.bus().subscribe_local();

    let mut w = store.write(WriteScope::Conversation(&c.id)).await.unwrap();
    let task_id = tasks::insert(&mut w.tx, &c.id, 0, None).await.unwrap().id;
    w.append(&c.id, EventBody::AssistantMessage { task_id, text: "hello".into(), agent: None }).await.unwrap();
    let waiting = tokio::spawn({
        let store = store.clone();
        async move { store.write(WriteScope::People).await.unwrap().commit().await.unwrap() }
    });
    for _ in 0..5 {
        tokio::task::yield_now().await;
    }
    // Polled once, the commit stops at its yield (a write waits); then it is dropped there.
    let once = futures::FutureExt::now_or_never(w.commit());
    assert!(once.is_none(), "the commit yielded to the waiting write");
    let published = live.try_recv().expect("the committed event was published anyway");
    assert_eq!(published.event.conversation_id, c.id);
    assert_eq!(published.event.body.name(), "assistant-message");
    tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("the waiting write went on").unwrap();
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE conversation_id = $1")
        .bind(c.id.as_str())
        .fetch_one(store.testing().pool())
        .await
        .unwrap();
    assert_eq!(stored, 1, "and it is stored");
}

/// The connections the store holds itself (SQLite's writer and quick readers, `store/sqlite/held.rs`)
/// go back in their guard's drop, not in a task spawned for it (each such spawn woke another
/// runtime worker). On a runtime with one thread a spawned task runs only when the test yields,
/// so the idle count right after a query tells which happened. sqlx's pools (the readers, and
/// every PostgreSQL connection) give a connection back in a spawned task, as published: that
/// still happens.
#[tokio::test(flavor = "current_thread")]
async fn a_connection_goes_back_to_its_pool_in_its_drop_when_nothing_has_to_wait() {
    use engine::store::{Connections, Store};
    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let store = Store::connect(&url, Default::default()).await.unwrap();
    let readers = Connections::Pool(store.testing().pool().clone());
    for (name, conns) in [("quick", store.testing().quick()), ("writer", store.testing().writer()), ("readers", &readers)] {
        let one: i64 = sqlx::query_scalar("SELECT 1").fetch_one(conns.exec()).await.unwrap();
        assert_eq!(one, 1);
        if let Connections::Held(_) = conns {
            assert!(url.starts_with("sqlite:"), "only SQLite's connections are held by the store");
            assert_eq!(conns.size() - conns.num_idle(), 0, "{name}: the connection is back before anything else ran");
        } else {
            tokio::time::timeout(Duration::from_secs(5), async {
                while conns.size() > conns.num_idle() {
                    tokio::task::yield_now().await;
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{name}: the connection went back to the pool"));
        }
    }
    let mut write = store.write(engine::store::WriteScope::People).await.unwrap();
    sqlx::query("SELECT 1").execute(&mut *write.tx).await.unwrap();
    write.commit().await.unwrap();
    if url.starts_with("sqlite:") {
        assert_eq!(store.testing().writer().num_idle(), 1, "a committed write gives the writer back at once");
    }
    // The readers' channel-only ping is an option, refused when misspelled like any other.
    use std::str::FromStr;
    let options = |query: &str| sqlx::sqlite::SqliteConnectOptions::from_str(&format!("sqlite://x.db?{query}"));
    assert!(options("ping=channel").is_ok() && options("ping=thread").is_ok());
    let refused = options("ping=sometimes").unwrap_err().to_string();
    assert!(refused.contains("ping"), "{refused}");
}

/// A write the database refused for a moment (a lock still held when the wait ran out) is a 503
/// with `Retry-After`: the client may try again. Any other database error stays a 500. Real
/// errors from the backend under test: SQLite's busy lock, PostgreSQL's `lock_timeout`.
#[tokio::test]
async fn a_lock_wait_that_runs_out_answers_503_with_retry_after_and_other_database_errors_500() {
    use axum::response::IntoResponse;
    use countersign::error::ApiError;
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let sqlite = url.starts_with("sqlite:");
    let url = if sqlite { format!("{url}?mode=rwc") } else { url };
    let mut holder = sqlx::AnyConnection::connect(&url).await.unwrap();
    let mut waiter = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE held (id INTEGER PRIMARY KEY)").execute(&mut holder).await.unwrap();
    sqlx::query("INSERT INTO held (id) VALUES (1)").execute(&mut holder).await.unwrap();

    let refused = if sqlite {
        sqlx::query("PRAGMA busy_timeout = 0").execute(&mut waiter).await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut holder).await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut waiter).await.unwrap_err()
    } else {
        sqlx::query("SET lock_timeout = '50ms'").execute(&mut waiter).await.unwrap();
        sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
        sqlx::query("SELECT id FROM held WHERE id = 1 FOR UPDATE").fetch_one(&mut holder).await.unwrap();
        sqlx::query("UPDATE held SET id = 2 WHERE id = 1").execute(&mut waiter).await.unwrap_err()
    };
    let response = ApiError::Internal(anyhow::Error::from(refused).context("failed to append event")).into_response();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "busy", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().ends_with("try again"), "{body}");

    // Nothing the refused write meant to do happened.
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    let ids: Vec<i64> = sqlx::query_scalar("SELECT CAST(id AS BIGINT) FROM held").fetch_all(&mut holder).await.unwrap();
    assert_eq!(ids, [1]);

    // A mistake is not a moment's refusal.
    let mistake = sqlx::query("SELECT nothing FROM nowhere").execute(&mut waiter).await.unwrap_err();
    let response = ApiError::Internal(anyhow::Error::from(mistake)).into_response();
    assert_eq!(response.status(), 500);
    assert!(response.headers().get("retry-after").is_none());
}

/// Another process holding SQLite's write lock (the CLI's audit prune, a second server started
/// by mistake) makes writes wait without holding a runtime worker: on a runtime with one thread,
/// a read answers while a write waits, and the write goes through once the lock is free.
#[tokio::test(flavor = "current_thread")]
async fn a_write_lock_held_elsewhere_makes_writes_wait_without_stopping_reads() {
    use sqlx::Connection;
    if !crate::helpers::sqlite_only("a_write_lock_held_elsewhere_makes_writes_wait_without_stopping_reads") {
        return;
    }
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    sqlx::any::install_default_drivers();
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let mut elsewhere = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut elsewhere).await.unwrap();

    let write = {
        let app = app.clone();
        tokio::spawn(async move { app.post_json("/api/conversations", json!({ "title": "while locked" })).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!write.is_finished(), "the write waits for the lock");
    let (status, body) = app.get_json(&format!("/api/conversations/{c}")).await;
    assert_eq!(status, 200, "a read answers meanwhile: {body}");
    assert!(!write.is_finished(), "the write still waits");

    sqlx::query("COMMIT").execute(&mut elsewhere).await.unwrap();
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), write).await.expect("the write ends").unwrap();
    assert_eq!(status, 201, "the write went through once the lock was free: {body}");
}

/// The connections the store holds (the writer and the quick readers) run on the calling task
/// without a busy handler: any statement run on them that finds the lock taken is tried again
/// after an async sleep (`store/sqlite/held.rs`), so the runtime's one thread goes on meanwhile,
/// and the statement runs once the lock is gone.
#[tokio::test(flavor = "current_thread")]
async fn a_statement_on_the_stores_own_connections_waits_for_a_lock_without_holding_the_runtime() {
    use engine::store::Store;
    use sqlx::Connection;
    if !crate::helpers::sqlite_only("a_statement_on_the_stores_own_connections_waits_for_a_lock_without_holding_the_runtime") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = Store::connect(&url, Default::default()).await.unwrap();
    sqlx::query("CREATE TABLE notes (x TEXT)").execute(store.testing().writer().exec()).await.unwrap();
    let mut elsewhere = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut elsewhere).await.unwrap();

    let insert = {
        let store = store.clone();
        tokio::spawn(async move { sqlx::query("INSERT INTO notes VALUES ('waited')").execute(store.testing().writer().exec()).await })
    };
    let started = std::time::Instant::now();
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(started.elapsed() < Duration::from_secs(2), "the runtime went on: {:?}", started.elapsed());
    assert!(!insert.is_finished(), "the statement waits for the lock");
    let read: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(store.testing().quick().exec()).await.unwrap();
    assert_eq!(read, 0, "a quick read answers meanwhile");

    sqlx::query("COMMIT").execute(&mut elsewhere).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), insert)
        .await
        .expect("the statement ends")
        .unwrap()
        .expect("it ran once the lock was free");
    let notes: Vec<String> = sqlx::query_scalar("SELECT x FROM notes").fetch_all(store.testing().quick().exec()).await.unwrap();
    assert_eq!(notes, ["waited"], "run once");
}
