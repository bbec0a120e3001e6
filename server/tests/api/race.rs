//! Races over two server processes on one database: 100 pending approvals, each hit by 20
//! concurrent approve / reject requests spread over both replicas. Exactly one decision each
//! wins, every other request is a 409, and each approved call has exactly one effect.
//!
//! Two processes share the SQLite file (the decision state machine is conditional SQL under
//! `BEGIN IMMEDIATE`, so it holds across processes), or one PostgreSQL database in the suite's
//! PostgreSQL pass (row locks per conversation; docs/architecture.md, decision 7).

use std::sync::Arc;

use domain::TaskStatus;
use futures::StreamExt;
use serde_json::json;

use crate::helpers::{BinaryServer, eventually};

const APPROVALS: usize = 100;
const REQUESTS: usize = 20;

#[tokio::test]
async fn a_hundred_approvals_times_twenty_concurrent_decisions_over_two_replicas_have_one_winner_and_one_effect_each() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let env = [("COUNTERSIGN_DECISIONS_PER_MINUTE", "100000")];
    let a = BinaryServer::start_with_env(data_dir.clone(), None, &env).await;
    let b = BinaryServer::start_with_env(data_dir, None, &env).await;
    let (a_app, b_app) = (a.app.clone(), b.app.clone());
    let refunded_before = a_app.order(1001).await.refunded;

    let mut turns = Vec::new();
    for _ in 0..APPROVALS {
        let c = a_app.create_conversation().await;
        turns.push((c.clone(), a_app.say(&c, "refund $1 on order 1001").await));
    }
    let mut approvals = Vec::new();
    for (_, task) in &turns {
        a_app.wait_task(task, TaskStatus::InputRequired).await;
        approvals.extend(a_app.pending_approvals_of(task).await);
    }
    assert_eq!(approvals.len(), APPROVALS);

    // For each approval, 20 requests at once: even ones approve, odd ones reject; half to each replica.
    let results = futures::stream::iter(approvals.iter().cloned())
        .map(|approval| {
            let (a_app, b_app) = (a_app.clone(), b_app.clone());
            async move {
                let requests: Vec<_> = (0..REQUESTS)
                    .map(|i| {
                        let app = if i % 2 == 0 { a_app.clone() } else { b_app.clone() };
                        let action = if i % 4 < 2 { "approve" } else { "reject" };
                        let id = approval.id.clone();
                        async move {
                            let response =
                                app.client.post(app.url(&format!("/api/approvals/{id}/{action}"))).json(&json!({})).send().await.unwrap();
                            (action, response.status().as_u16())
                        }
                    })
                    .collect();
                (approval, futures::future::join_all(requests).await)
            }
        })
        .buffer_unordered(10)
        .collect::<Vec<_>>()
        .await;

    let mut approved = 0;
    for (approval, answers) in &results {
        let winners: Vec<_> = answers.iter().filter(|(_, status)| *status == 200).collect();
        assert_eq!(winners.len(), 1, "one winner for {}: {answers:?}", approval.id);
        assert!(answers.iter().all(|(_, s)| *s == 200 || *s == 409), "the rest are 409: {answers:?}");
        let (_, state) = a_app.get_json(&format!("/api/approvals/{}", approval.id)).await;
        let expected = if winners[0].0 == "approve" { "approved" } else { "rejected" };
        assert_eq!(state["state"], expected);
        if expected == "approved" {
            approved += 1;
        }
    }
    for (_, task) in &turns {
        // Each task is driven by the replica that decided it; both see the same database.
        eventually(&format!("task {task} to finish"), || async { a_app.task_status(task).await.is_final().then_some(()) }).await;
    }
    let refunded = a_app.order(1001).await.refunded - refunded_before;
    assert_eq!(refunded, approved as f64, "one $1 effect per approved call, none for rejected ones");
    for (c, _) in &turns {
        let events = a_app.detail(c).await.events;
        assert!(crate::helpers::named(&events, "tool-result").len() <= 1);
    }
    println!(
        "races: {APPROVALS} approvals × {REQUESTS} requests over 2 replicas: {approved} approved, {} rejected, 0 double decisions, 0 double effects",
        APPROVALS - approved
    );
}
