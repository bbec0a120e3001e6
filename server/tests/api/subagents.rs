//! Sub-agents: a supervisor delegates to a worker through `ask_<worker>`; the worker's gated
//! calls wait in the same conversation marked with its name, and the supervisor resumes after.

use domain::{EventBody, Item, TaskStatus};
use serde_json::json;

use crate::helpers::{Options, TestApp, named, spawn_app_with};

const AGENTS: &str = "[[agents]]\nname = \"supervisor\"\ndelegates = [\"support\"]\n\
[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"process_refund\"]\nrequire_approval = [\"process_refund\"]\n";

async fn supervisor_chat() -> (TestApp, String) {
    let app = spawn_app_with(Options { agents_toml: Some(AGENTS.into()), ..Default::default() }).await;
    let (status, body) = app.post_json("/api/conversations", json!({ "title": "delegation", "agent": "supervisor" })).await;
    assert_eq!(status, 201, "{body}");
    (app, body["id"].as_str().unwrap().to_owned())
}

/// Waits until a worker's approval is pending and returns it.
async fn worker_approval(app: &TestApp) -> domain::wire::Approval {
    crate::helpers::eventually("the worker's approval", || async {
        let (_, body) = app.get_json("/api/approvals?status=pending").await;
        let all: Vec<domain::wire::Approval> = serde_json::from_value(body).unwrap();
        all.into_iter().next()
    })
    .await
}

#[tokio::test]
async fn the_workers_gated_call_waits_in_the_same_chat_and_the_supervisor_resumes_with_its_answer() {
    let (app, c) = supervisor_chat().await;
    let task = app.say(&c, "refund order 1001").await;
    let approval = worker_approval(&app).await;
    assert_eq!((approval.agent.as_str(), approval.tool.as_str()), ("support", "process_refund"));
    assert_ne!(approval.task_id, task, "the worker has its own task");
    assert_eq!(app.task_status(&task).await, TaskStatus::Working, "the supervisor waits for its worker");
    assert_eq!(app.order(1001).await.status, "open");

    let detail = app.detail(&c).await;
    let cards: Vec<_> = detail.view.cards().map(|c| (c.tool.as_str(), c.agent.as_str(), c.status.as_str())).collect();
    assert_eq!(cards, [("ask_support", "supervisor", "executing"), ("process_refund", "support", "pending_approval")]);
    assert_eq!(detail.view.current_task().map(|t| t.task_id.as_str()), Some(task.as_str()), "the turn is the supervisor's");

    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approval.id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");

    let detail = app.detail(&c).await;
    assert_eq!(named(&detail.events, "tool-result").len(), 2, "the refund and the delegation, once each");
    let ask = detail.view.cards().find(|c| c.tool == "ask_support").unwrap();
    assert_eq!(ask.status.as_str(), "succeeded");
    assert_eq!(ask.result.as_ref().unwrap()["agent"], "support");
    let worker_reply = detail.view.items.iter().rev().find_map(|i| match i {
        Item::Assistant { agent: Some(agent), text, .. } => Some((agent.clone(), text.clone())),
        _ => None,
    });
    let (agent, text) = worker_reply.expect("the worker's answer is shown, marked with its name");
    assert_eq!(agent, "support");
    assert!(text.contains("Refunded"), "{text}");
    let last = detail.events.iter().rev().find_map(|e| match &e.body {
        EventBody::AssistantMessage { text, agent: None, .. } => Some(text.clone()),
        _ => None,
    });
    assert!(last.unwrap().contains("support: Refunded"), "the supervisor answers with the worker's result");
}

#[tokio::test]
async fn rejecting_the_workers_call_reaches_the_supervisor_and_nothing_runs() {
    let (app, c) = supervisor_chat().await;
    let task = app.say(&c, "refund order 1002").await;
    let approval = worker_approval(&app).await;
    app.post_json(&format!("/api/approvals/{}/reject", approval.id), json!({ "reason": "not eligible" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1002).await.status, "open");
    let texts = crate::helpers::assistant_texts(&app.detail(&c).await.events);
    assert!(texts.last().unwrap().contains("not eligible"), "{texts:?}");
}

#[tokio::test]
async fn aborting_the_turn_cancels_the_worker_and_its_pending_approval() {
    let (app, c) = supervisor_chat().await;
    let task = app.say(&c, "refund order 1003").await;
    let approval = worker_approval(&app).await;
    let (status, body) = app.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Canceled).await;
    app.wait_task(&approval.task_id, TaskStatus::Canceled).await;
    let (_, a) = app.get_json(&format!("/api/approvals/{}", approval.id)).await;
    assert_eq!(a["state"], "canceled");
    assert_eq!(app.order(1003).await.status, "open");
    // The conversation is free for the next turn.
    app.say(&c, "hello").await;
}

#[tokio::test]
async fn a_pending_workers_approval_survives_a_restart_and_the_supervisor_still_resumes() {
    let data_dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start(data_dir.clone(), Some(AGENTS)).await;
    let app = server.app.clone();
    let (_, body) = app.post_json("/api/conversations", json!({ "title": "d", "agent": "supervisor" })).await;
    let c = body["id"].as_str().unwrap().to_owned();
    let task = app.say(&c, "refund order 1004").await;
    let approval = worker_approval(&app).await;
    let data_dir = server.kill().await;
    let server = crate::helpers::BinaryServer::start(data_dir, Some(AGENTS)).await;
    let app = server.app.clone();
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approval.id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1004).await.status, "refunded");
}

#[tokio::test]
async fn delegating_to_an_unknown_agent_or_to_itself_stops_start_up() {
    let unknown = crate::helpers::refused_start_up(&AGENTS.replace("delegates = [\"support\"]", "delegates = [\"nobody\"]")).await;
    assert!(unknown.contains("agent \"supervisor\": delegates names \"nobody\""), "{unknown}");
    let itself = crate::helpers::refused_start_up(&AGENTS.replace("delegates = [\"support\"]", "delegates = [\"supervisor\"]")).await;
    assert!(itself.contains("cannot delegate to itself"), "{itself}");
}
