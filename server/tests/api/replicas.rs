//! Two server processes on one PostgreSQL database (docs/architecture.md, decision 6): a user streaming from
//! replica A sees a decision made on replica B, the work after it runs once, and a timeout fires
//! exactly once with both replicas sweeping. Runs in the PostgreSQL pass of the test command.

use std::{sync::Arc, time::Instant};

use domain::{Event, TaskStatus};
use futures::StreamExt;
use serde_json::json;

use crate::helpers::{BinaryServer, agents_with_timeout, eventually, model_answer, postgres, start_model};

async fn replicas(toml: &str) -> Option<(BinaryServer, BinaryServer)> {
    if postgres().is_none() {
        eprintln!("two replicas need PostgreSQL; this test runs in the PostgreSQL pass");
        return None;
    }
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let a = BinaryServer::start(dir.clone(), Some(toml)).await;
    let b = BinaryServer::start(dir, Some(toml)).await;
    Some((a, b))
}

#[tokio::test]
async fn chat_on_a_approve_on_b_and_the_result_streams_on_a() {
    let Some((a, b)) = replicas(&agents_with_timeout(300.0)).await else { return };
    let c = a.app.create_conversation().await;
    let mut stream = a.app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let (task, approvals) = a.app.pending_turn(&c, "refund order 1001", 1).await;

    let decided_at = Instant::now();
    let (status, body) = b.app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let mut seen = Vec::new();
    let mut latency = None;
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Some(message) = stream.next().await {
            let event: Event = serde_json::from_str(&message.data).unwrap();
            if message.event == "approval-decided" && latency.is_none() {
                latency = Some(decided_at.elapsed());
            }
            seen.push(message.event.clone());
            if matches!(event.body, domain::EventBody::TaskStatus { status: TaskStatus::Completed, .. }) {
                break;
            }
        }
    })
    .await
    .expect("the result streams on A within 10 s");
    assert_eq!(seen.iter().filter(|n| *n == "approval-decided").count(), 1, "{seen:?}");
    for name in ["tool-started", "tool-result", "assistant-message"] {
        assert!(seen.iter().any(|n| n == name), "A streamed {name}: {seen:?}");
    }
    println!("replicas: B's decision reached A's stream after {:?}", latency.unwrap());
    a.app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(a.app.order(1001).await.status, "refunded");
    let results = crate::helpers::named(&a.app.detail(&c).await.events, "tool-result").len();
    assert_eq!(results, 1, "the refund ran once");
}

#[tokio::test]
async fn a_timeout_fires_exactly_once_with_both_replicas_sweeping() {
    let Some((a, b)) = replicas(&agents_with_timeout(1.0)).await else { return };
    let c = a.app.create_conversation().await;
    let (task, approvals) = a.app.pending_turn(&c, "cancel order 1003", 1).await;
    a.app.wait_task(&task, TaskStatus::Completed).await;
    let (_, approval) = b.app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!((approval["state"].as_str(), approval["reason"].as_str()), (Some("expired"), Some("timed out")));
    let events = a.app.detail(&c).await.events;
    assert_eq!(crate::helpers::named(&events, "approval-decided").len(), 1, "one decision event");
    let fired = eventually("both replicas' metrics", || async {
        let mut total = 0.0;
        for app in [&a.app, &b.app] {
            let text = app.anonymous().client.get(app.url("/metrics")).send().await.ok()?.text().await.ok()?;
            total += text
                .lines()
                .find(|l| l.starts_with("countersign_timeouts_fired_total{action=\"reject\"}"))
                .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .unwrap_or(0.0);
        }
        Some(total)
    })
    .await;
    assert_eq!(fired, 1.0, "exactly one replica applied the timeout");
    assert_eq!(a.app.order(1003).await.status, "open");
}

/// A model that takes 1.5 s to answer "Done." and counts its requests.
pub async fn slow_model() -> (String, Arc<std::sync::atomic::AtomicU32>) {
    let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = calls.clone();
    let url = start_model(axum::routing::post(move || {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            model_answer(json!({ "content": "Done." }))
        }
    }))
    .await;
    (url, calls)
}

#[tokio::test]
async fn when_the_replica_driving_a_task_dies_the_other_takes_it_over_after_the_lease() {
    let (url, calls) = slow_model().await;
    let toml = format!(
        "[[agents]]\nname = \"a\"\n[agents.model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"slow\"\nmax_retries = 0\n"
    );
    let Some((a, b)) = replicas(&toml).await else { return };
    let c = a.app.create_conversation().await;
    let task = a.app.say(&c, "hello").await;
    eventually("A to be asking the model", || async { (calls.load(std::sync::atomic::Ordering::SeqCst) == 1).then_some(()) }).await;
    a.kill().await; // mid-step: A holds the task's lease and never answers
    b.app.wait_task(&task, TaskStatus::Completed).await;
    let events = b.app.detail(&c).await.events;
    assert_eq!(crate::helpers::assistant_texts(&events), ["Done."], "one answer, from B");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2, "B asked the model again once A's lease ran out");
}

#[tokio::test]
async fn an_event_too_large_for_a_notification_still_reaches_the_other_replica() {
    let Some((a, b)) = replicas(&agents_with_timeout(300.0)).await else { return };
    let c = a.app.create_conversation().await;
    let mut stream = b.app.sse(&format!("/api/conversations/{c}/events"), None).await;
    // 7,900 characters: more than fits in one PostgreSQL notification with its envelope.
    let text = "refund order 1001 ".repeat(439);
    a.app.say(&c, &text).await;
    let seen = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Some(message) = stream.next().await {
            if message.event == "user-message" {
                return serde_json::from_str::<Event>(&message.data).unwrap();
            }
        }
        panic!("stream ended");
    })
    .await
    .expect("B streams A's message within 10 s");
    assert!(matches!(seen.body, domain::EventBody::UserMessage { text: t, .. } if t == text.trim()));
}

/// A replica frozen while it chains the audit trail holds the chain's lock inside an open
/// transaction. Decisions elsewhere must not wait for it: their entries are staged and join the
/// chain once the lock is free.
#[tokio::test]
async fn a_replica_frozen_while_chaining_the_audit_trail_holds_up_no_decision() {
    use sqlx::Connection;
    if postgres().is_none() {
        eprintln!("PostgreSQL only: SQLite has one writer, which chains in the writing transaction");
        return;
    }
    let app = crate::helpers::spawn_app().await;
    let url = std::fs::read_to_string(app.data_dir.path().join("database-url")).unwrap();
    let mut frozen = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut frozen).await.unwrap();
    // The chain's lock (`CHAIN_LOCK` in store/src/audit.rs).
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(0x0043_6f75_6e74_6572_i64).execute(&mut frozen).await.unwrap();

    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $1 on order 1004", 1).await;
    let path = format!("/api/approvals/{}/approve", approvals[0].id);
    let approve = app.post_json(&path, json!({}));
    let (status, body) = tokio::time::timeout(std::time::Duration::from_secs(5), approve).await.expect("the decision does not wait");
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let root = app.as_user("root");
    let (_, audit) = root.get_json("/api/audit?kind=approval.decided").await;
    assert_eq!(audit["entries"].as_array().unwrap().len(), 0, "staged, not chained, while the lock is held");

    sqlx::query("ROLLBACK").execute(&mut frozen).await.unwrap();
    eventually("the staged entries to join the chain", || async {
        let (_, audit) = root.get_json("/api/audit?kind=approval.decided").await;
        (audit["entries"].as_array().unwrap().len() == 1).then_some(())
    })
    .await;
    let (_, verified) = root.get_json("/api/audit/verify").await;
    assert_eq!(verified["ok"], true, "{verified}");
}

#[tokio::test]
async fn a_replica_whose_clock_runs_20_s_ahead_fires_no_timeout_early() {
    let Some(_) = postgres() else {
        eprintln!("two replicas need PostgreSQL; this test runs in the PostgreSQL pass");
        return;
    };
    let faketime = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("libfaketime is missing: run `./x test` (it installs it)");
    let toml = agents_with_timeout(15.0);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let a = BinaryServer::start(dir.clone(), Some(&toml)).await;
    // B's wall clock runs 20 s ahead (its timers stay true); it sweeps every 20 ms.
    let skewed = [("LD_PRELOAD", faketime), ("FAKETIME", "+20s"), ("FAKETIME_DONT_FAKE_MONOTONIC", "1")];
    let b = BinaryServer::start_with_env(dir, Some(&toml), &skewed).await;
    let c = a.app.create_conversation().await;
    let (task, approvals) = a.app.pending_turn(&c, "refund order 1001", 1).await;
    let id = &approvals[0].id;
    // On B's own clock the deadline passed 5 s ago; on the database's it is 15 s away.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let (_, approval) = b.app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(approval["state"], "pending", "{approval}");
    let (status, body) = b.app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200, "B decides it within its deadline: {body}");
    a.app.wait_task(&task, TaskStatus::Completed).await;
}
