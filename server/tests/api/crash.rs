//! The crash harness (docs/architecture.md, decisions 2–4, under faults): cycles of chat → approval → decision
//! against the real binary, which is killed with SIGKILL at random points (while the model step
//! runs, just before or after the decision commits, while a tool runs, while the task resumes),
//! restarted on the same database, and driven to the end. Each cycle is a $1 refund (a built-in
//! effect in the database) or an MCP `write_file` (an external effect).
//!
//! `CRASH_CYCLES=N` (default 8) and `CRASH_SEED` choose the run; `bash scripts/crash.sh N` runs a
//! long one. The report line is what docs/reliability.md quotes.

use domain::CallId;
use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use axum::{Json, extract::State, routing::post};
use domain::{EventBody, TaskStatus};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};

use crate::helpers::{BinaryServer, TestApp, eventually, model_answer, start_model};

/// A model that decides from the request alone, so a step re-run after a crash gets the same
/// kind of answer: a user message "refund" → a $1 refund, "write N" → write N.txt; a tool result →
/// a closing sentence.
async fn model(State(next_id): State<Arc<AtomicU64>>, Json(body): Json<Value>) -> axum::response::Response {
    let last = body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    let delta = if last["role"] == "user" {
        let text = last["content"].as_str().unwrap_or_default().to_owned();
        let id = format!("call_{}", next_id.fetch_add(1, Ordering::SeqCst));
        let (name, args) = match text.strip_prefix("write ") {
            Some(path) => ("write_file", json!({ "path": path, "content": "written once" })),
            None => ("process_refund", json!({ "order_id": 1001, "amount": 1 })),
        };
        json!({ "tool_calls": [{ "index": 0, "id": id, "type": "function", "function": { "name": name, "arguments": args.to_string() } }] })
    } else {
        json!({ "content": "Done." })
    };
    model_answer(delta)
}

#[derive(Debug, Default)]
struct Report {
    cycles: u32,
    kills: u32,
    approvals_lost: u32,
    duplicate_effects: u32,
    external_interrupted: u32,
    external_written: u32,
}

/// The task's pending approval, if it stopped on one; `None` once it finished.
async fn settle(app: &TestApp, task: &str) -> Option<domain::wire::Approval> {
    eventually(&format!("task {task} to stop on an approval or finish"), || async {
        match app.task_status(task).await {
            TaskStatus::InputRequired => app.pending_approvals_of(task).await.into_iter().next().map(Some),
            status if status.is_final() => Some(None),
            _ => None,
        }
    })
    .await
}

#[tokio::test]
async fn sigkill_at_random_points_loses_no_approval_and_repeats_no_effect() {
    let cycles: u32 = std::env::var("CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let seed: u64 = std::env::var("CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(rand::random);
    let mut rng = StdRng::seed_from_u64(seed);
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let mcp = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/node_modules/.bin/mcp-server-filesystem");
    assert!(mcp.exists(), "{} is missing: run `./x test` (it installs the end2end npm packages)", mcp.display());
    let toml = format!(
        "[[mcp_servers]]\nname = \"files\"\ncommand = \"{}\"\nargs = [\"{}\"]\n\
         [[agents]]\nname = \"ops\"\ntools = [\"process_refund\"]\nrequire_approval = [\"process_refund\"]\n\
         [[agents.mcp]]\nserver = \"files\"\ntools = [\"write_file\"]\nrequire_approval = [\"write_file\"]\n\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"crash\"\nmax_retries = 2\n",
        mcp.display(),
        root.display(),
        start_model(post(model).with_state(Arc::new(AtomicU64::new(1)))).await
    );
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let mut server = BinaryServer::start(data_dir, Some(&toml)).await;
    let mut report = Report::default();
    let refunded_before = server.app.order(1001).await.refunded;
    let mut conversations = Vec::new();

    for cycle in 0..cycles {
        report.cycles += 1;
        let app = server.app.clone();
        let c = app.create_conversation().await;
        conversations.push(c.clone());
        let external = rng.gen_bool(0.4);
        let text = if external { format!("write {}", root.join(format!("{cycle}.txt")).display()) } else { "refund".to_owned() };
        let task = app.say(&c, &text).await;
        // Where to kill: 0 = during the model step, 1 = around the decision and the tool run, 2 = not at all.
        let point = rng.gen_range(0..3);
        if point == 0 {
            tokio::time::sleep(Duration::from_micros(rng.gen_range(0..20_000))).await;
            server = restart(server, &toml, &mut report).await;
        }
        let app = server.app.clone();
        let Some(approval) = settle(&app, &task).await else { continue };
        let decide = app.client.post(app.url(&format!("/api/approvals/{}/approve", approval.id))).json(&json!({})).send();
        let acknowledged = if point == 1 && external && rng.gen_bool(0.5) {
            // While the external call runs: kill as soon as `tool-started` is streamed.
            let after = app.detail(&c).await.conversation.last_seq.to_string();
            let mut stream = app.sse(&format!("/api/conversations/{c}/events"), Some(&after)).await;
            let acknowledged = decide.await.is_ok_and(|r| r.status() == 200);
            let started = tokio::time::timeout(Duration::from_secs(5), async {
                use futures::StreamExt;
                while let Some(event) = stream.next().await {
                    if event.event == "tool-started" {
                        return;
                    }
                }
            });
            let _ = started.await;
            server = restart(server, &toml, &mut report).await;
            acknowledged
        } else if point == 1 {
            let wait = Duration::from_micros(rng.gen_range(0..15_000));
            let answer = tokio::time::timeout(wait, decide).await;
            let acknowledged = matches!(&answer, Ok(Ok(r)) if r.status() == 200);
            server = restart(server, &toml, &mut report).await;
            acknowledged
        } else {
            assert_eq!(decide.await.unwrap().status(), 200);
            true
        };
        let app = server.app.clone();
        if let Some(still_pending) = settle(&app, &task).await {
            if acknowledged {
                report.approvals_lost += 1; // a 200 that did not survive the crash
            }
            let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", still_pending.id), json!({})).await;
            assert_eq!(status, 200, "{body}");
        }
        app.wait_task(&task, TaskStatus::Completed).await;
    }

    // Count effects: each refund call that succeeded adds exactly $1; each call has one result.
    let app = server.app.clone();
    let mut refunds_succeeded = 0.0;
    for c in &conversations {
        let events = app.detail(c).await.events;
        let mut results = std::collections::HashMap::<CallId, u32>::new();
        let mut tools = std::collections::HashMap::<CallId, String>::new();
        for event in &events {
            match &event.body {
                EventBody::ToolCall { call_id, tool, .. } => {
                    tools.insert(call_id.clone(), tool.clone());
                }
                EventBody::ToolResult { call_id, ok, output, .. } => {
                    *results.entry(call_id.clone()).or_default() += 1;
                    let tool = tools.get(call_id).map(String::as_str);
                    match (tool, ok) {
                        (Some("process_refund"), true) => refunds_succeeded += 1.0,
                        (Some("write_file"), true) => report.external_written += 1,
                        (Some("write_file"), false) if output["status"] == "interrupted" => report.external_interrupted += 1,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        report.duplicate_effects += results.values().filter(|n| **n > 1).map(|n| n - 1).sum::<u32>();
    }
    let refunded = app.order(1001).await.refunded - refunded_before;
    report.duplicate_effects += (refunded - refunds_succeeded).abs().round() as u32;
    println!("crash harness (seed {seed}): {report:?}");
    assert_eq!(report.approvals_lost, 0, "{report:?}");
    assert_eq!(report.duplicate_effects, 0, "{report:?}");
    server.kill().await;
}

async fn restart(server: BinaryServer, toml: &str, report: &mut Report) -> BinaryServer {
    report.kills += 1;
    let data_dir = server.kill().await;
    BinaryServer::start(data_dir, Some(toml)).await
}
