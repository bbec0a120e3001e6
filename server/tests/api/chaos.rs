//! The chaos harness (docs/reliability.md): many conversations run refund turns at once against
//! real server processes while a chaos loop SIGKILLs (and restarts) and SIGSTOPs/SIGCONTs them at
//! random. PostgreSQL: two replicas on one database, the second with its wall clock skewed
//! (libfaketime); SQLite: the one process a file has. The model is slower than the lease on some
//! steps; grants let later refunds of a conversation run without asking. Every conversation's
//! SSE stream is followed (reconnecting to a live replica with `Last-Event-ID`) and checked for
//! gaps and disorder. At the end it counts approvals lost, duplicate effects, duplicate model
//! steps and stream errors: all must be 0.
//!
//! `CHAOS_CONVERSATIONS` (default 6), `CHAOS_TURNS` (default 3) and `CHAOS_SEED` choose the run;
//! `bash scripts/chaos.sh` runs a long one on both backends.

use domain::{CallId, TaskId};
use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use axum::{Json, extract::State, routing::post};
use domain::{EventBody, TaskStatus};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};
use tokio::sync::RwLock;

use crate::helpers::{BinaryServer, TestApp, model_answer, postgres, start_model};

/// The fake model: a user message asks for a 1-cent refund (after 1.5 s when it says "slow",
/// longer than the 1 s lease the harness runs with), a tool result gets "Done.". It counts the
/// requests it sees per history, so a step asked twice shows up.
#[derive(Default)]
struct Model {
    requests: Mutex<HashMap<String, u32>>,
}

async fn model(State(model): State<Arc<Model>>, Json(body): Json<Value>) -> axum::response::Response {
    *model.requests.lock().unwrap().entry(body["messages"].to_string()).or_default() += 1;
    let last = body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    let delta = if last["role"] == "user" {
        if last["content"].as_str().unwrap_or_default().contains("slow") {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        let args = json!({ "order_id": 1001, "amount": 0.01 }).to_string();
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "process_refund", "arguments": args } }] })
    } else {
        json!({ "content": "Done." })
    };
    model_answer(delta)
}

#[derive(Debug, Default)]
struct Report {
    replicas: usize,
    conversations: usize,
    turns: u32,
    kills: u32,
    freezes: u32,
    approvals_acknowledged: u32,
    grants_used: u32,
    model_steps_reasked: u32,
    approvals_lost: u32,
    duplicate_effects: u32,
    duplicate_model_steps: u32,
    stream_errors: u32,
}

/// The replicas clients may use right now (a killed one leaves the list until it is back).
type Live = Arc<RwLock<Vec<Option<TestApp>>>>;

async fn any_live(live: &Live, rng: &mut StdRng) -> TestApp {
    loop {
        let apps: Vec<TestApp> = live.read().await.iter().flatten().cloned().collect();
        if !apps.is_empty() {
            return apps[rng.gen_range(0..apps.len())].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One request to whichever replica; fails (to be retried elsewhere) on a dead or frozen one.
async fn request(app: &TestApp, method: reqwest::Method, path: &str, body: Option<Value>) -> anyhow::Result<(u16, Value)> {
    let mut request = app.client.request(method, app.url(path));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let send = async {
        let response = request.send().await?;
        let status = response.status().as_u16();
        anyhow::Ok((status, response.json().await.unwrap_or(Value::Null)))
    };
    tokio::time::timeout(Duration::from_secs(4), send).await?
}

/// Retries `path` on live replicas until a response that `accept` takes (at most a minute).
async fn until<T>(
    live: &Live,
    rng: &mut StdRng,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    accept: impl Fn(u16, &Value) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let app = any_live(live, rng).await;
        if let Ok((status, value)) = request(&app, method.clone(), path, body.clone()).await
            && let Some(found) = accept(status, &value)
        {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "{method} {path}: no acceptable answer within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The task of the conversation's `turn`-th user message (0-based), once it is recorded.
fn task_of_turn(detail: &Value, turn: usize) -> Option<String> {
    let events = detail["events"].as_array()?;
    let user_messages: Vec<&Value> = events.iter().filter(|e| e["type"] == "user-message").collect();
    user_messages.get(turn).and_then(|e| e["task_id"].as_str()).map(str::to_owned)
}

/// What one client leaves to check: its conversation, the approvals it was told (200) were
/// approved, and the follower of the conversation's stream.
type ClientResult = (String, Vec<String>, tokio::task::JoinHandle<(u32, i64)>);

/// One conversation's client: `turns` refund turns, each approved (the first with a grant in
/// half the conversations, so later refunds there run without asking), its stream followed from
/// the start.
async fn client(live: Live, seed: u64, turns: usize, report: Arc<Mutex<Report>>, streams_done: Arc<AtomicBool>) -> ClientResult {
    let mut rng = StdRng::seed_from_u64(seed);
    let with_grant = rng.gen_bool(0.5);
    let c = until(&live, &mut rng, reqwest::Method::POST, "/api/conversations", Some(json!({ "title": "chaos" })), |s, v| {
        (s == 201).then(|| v["id"].as_str().unwrap().to_owned())
    })
    .await;
    let follower = tokio::spawn(follow(live.clone(), c.clone(), seed.wrapping_mul(31), streams_done));
    let mut acknowledged = Vec::new();
    for turn in 0..turns {
        // Unique per turn, so the model can tell a step asked again from another conversation's.
        let text = format!("refund, turn {turn} of {c}{}", if rng.gen_bool(0.3) { ", slow" } else { "" });
        // A message whose answer was lost may have been recorded: look before sending again (in
        // the whole log: the detail's default is the view's page, without events).
        let send_deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        let mut last_answer = None;
        let task = loop {
            assert!(
                tokio::time::Instant::now() < send_deadline,
                "turn {turn} of conversation {c}: its message was not taken within 120 s; the last answer: {last_answer:?}"
            );
            let detail = until(&live, &mut rng, reqwest::Method::GET, &format!("/api/conversations/{c}?events=all"), None, |s, v| {
                (s == 200).then(|| v.clone())
            })
            .await;
            if let Some(task) = task_of_turn(&detail, turn) {
                break task;
            }
            let app = any_live(&live, &mut rng).await;
            let path = format!("/api/conversations/{c}/messages");
            match request(&app, reqwest::Method::POST, &path, Some(json!({ "text": &text }))).await {
                Ok((202, body)) => break body["task_id"].as_str().unwrap().to_owned(),
                answer => last_answer = Some(format!("{answer:?}")),
            }
        };
        // A turn that stops moving fails by name, with what it was waiting in, instead of the
        // whole run running into the clients' time limit.
        let turn_deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let status: TaskStatus = until(&live, &mut rng, reqwest::Method::GET, &format!("/api/tasks/{task}"), None, |s, v| {
                (s == 200).then(|| serde_json::from_value(v["status"].clone()).unwrap())
            })
            .await;
            if tokio::time::Instant::now() > turn_deadline {
                let detail = until(&live, &mut rng, reqwest::Method::GET, &format!("/api/conversations/{c}?events=all"), None, |s, v| {
                    (s == 200).then(|| v.clone())
                })
                .await;
                let tail: Vec<&Value> = detail["events"].as_array().map(|e| e.iter().rev().take(6).collect()).unwrap_or_default();
                panic!("turn {turn} (task {task}) of conversation {c} still {status:?} after 120 s; its last events: {tail:#?}");
            }
            if status.is_final() {
                assert_eq!(status, TaskStatus::Completed, "task {task} of conversation {c}");
                break;
            }
            if status == TaskStatus::InputRequired {
                let pending = until(&live, &mut rng, reqwest::Method::GET, "/api/approvals?status=pending", None, |s, v| {
                    (s == 200).then(|| v.as_array().unwrap().iter().filter(|a| a["task_id"] == task.as_str()).cloned().collect::<Vec<_>>())
                })
                .await;
                for approval in pending {
                    let id = approval["id"].as_str().unwrap().to_owned();
                    let body = if with_grant { json!({ "grant": { "max_uses": 100 } }) } else { json!({}) };
                    let app = any_live(&live, &mut rng).await;
                    if let Ok((200, _)) = request(&app, reqwest::Method::POST, &format!("/api/approvals/{id}/approve"), Some(body)).await {
                        acknowledged.push(id);
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        report.lock().unwrap().turns += 1;
    }
    (c, acknowledged, follower)
}

/// Follows a conversation's stream across replicas; returns how many events arrived out of
/// order (a gap or a repeat) and the last sequence number seen.
async fn follow(live: Live, c: String, seed: u64, done: Arc<AtomicBool>) -> (u32, i64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut last, mut errors) = (0i64, 0u32);
    while !done.load(Ordering::SeqCst) {
        let app = any_live(&live, &mut rng).await;
        let request = app
            .client
            .get(app.url(&format!("/api/conversations/{c}/events")))
            .header("accept", "text/event-stream")
            .header("last-event-id", last.to_string());
        let Ok(Ok(response)) = tokio::time::timeout(Duration::from_secs(2), request.send()).await else { continue };
        let mut events = response.bytes_stream().eventsource();
        // A frozen replica sends nothing: after a quiet second, reconnect (maybe elsewhere).
        while let Ok(Some(Ok(event))) = tokio::time::timeout(Duration::from_secs(1), events.next()).await {
            // Drafts carry no id of their own (SSE then repeats the last one): they are not stored.
            if event.event == "assistant-delta" {
                continue;
            }
            let Ok(seq) = event.id.parse::<i64>() else { continue };
            if seq != last + 1 {
                errors += 1;
                eprintln!("chaos: conversation {c} streamed #{seq} after #{last}");
            }
            last = last.max(seq);
        }
    }
    (errors, last)
}

#[tokio::test]
async fn kills_freezes_and_a_skewed_clock_lose_no_approval_and_repeat_nothing() {
    let conversations: usize = std::env::var("CHAOS_CONVERSATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    let turns: usize = std::env::var("CHAOS_TURNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let seed: u64 = std::env::var("CHAOS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(rand::random);
    let replicas = if postgres().is_some() { 2 } else { 1 };
    let model = Arc::new(Model::default());
    let toml = format!(
        "[[agents]]\nname = \"ops\"\ntools = [\"process_refund\"]\nrequire_approval = [\"process_refund\"]\n\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"chaos\"\nmax_retries = 2\n",
        start_model(post(self::model).with_state(model.clone())).await
    );
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let faketime = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    // Replica 1 (PostgreSQL only) runs 20 s ahead; monotonic time (timers) stays true.
    let env_of = move |replica: usize| -> Vec<(&'static str, String)> {
        match (replica, faketime) {
            (1, Some(lib)) => {
                vec![("LD_PRELOAD", lib.to_owned()), ("FAKETIME", "+20s".to_owned()), ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned())]
            }
            _ => Vec::new(),
        }
    };
    assert!(replicas == 1 || faketime.is_some(), "libfaketime is missing: run `./x test` (it installs it)");
    let start = move |replica: usize, dir: Arc<tempfile::TempDir>| {
        let (toml, env) = (toml.clone(), env_of(replica));
        async move {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            BinaryServer::start_with_env(dir, Some(&toml), &env).await
        }
    };
    let mut servers = Vec::new();
    for replica in 0..replicas {
        servers.push(Some(start(replica, dir.clone()).await));
    }
    let live: Live = Arc::new(RwLock::new(servers.iter().map(|s| s.as_ref().map(|s| s.app.clone())).collect()));
    let refunded_before = servers[0].as_ref().unwrap().app.order(1001).await.refunded;
    let report = Arc::new(Mutex::new(Report { replicas, conversations, ..Report::default() }));

    let streams_done = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..conversations)
        .map(|i| tokio::spawn(client(live.clone(), seed ^ (i as u64 + 1), turns, report.clone(), streams_done.clone())))
        .collect();
    let clients_done = Arc::new(AtomicBool::new(false));
    // The chaos loop: every 0.3-1.2 s, kill (and restart) or freeze (0.3-2.5 s) a random replica.
    let chaos = {
        let (live, done, report, start) = (live.clone(), clients_done.clone(), report.clone(), start.clone());
        tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed);
            while !done.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(rng.gen_range(300..1200))).await;
                let replica = rng.gen_range(0..servers.len());
                let server = servers[replica].take().unwrap();
                if rng.gen_bool(0.5) {
                    live.write().await[replica] = None;
                    let dir = server.kill().await;
                    report.lock().unwrap().kills += 1;
                    let restarted = start(replica, dir).await;
                    live.write().await[replica] = Some(restarted.app.clone());
                    servers[replica] = Some(restarted);
                } else {
                    server.signal("STOP");
                    report.lock().unwrap().freezes += 1;
                    tokio::time::sleep(Duration::from_millis(rng.gen_range(300..2500))).await;
                    server.signal("CONT");
                    servers[replica] = Some(server);
                }
            }
            servers
        })
    };
    let mut results = Vec::new();
    for client in clients {
        results.push(tokio::time::timeout(Duration::from_secs(240), client).await.expect("clients finish").expect("client"));
    }
    clients_done.store(true, Ordering::SeqCst);
    let servers = chaos.await.unwrap();
    let app = servers[0].as_ref().unwrap().app.clone();
    // Let every stream catch up with what was stored, then stop following.
    tokio::time::sleep(Duration::from_secs(3)).await;
    streams_done.store(true, Ordering::SeqCst);

    let mut report = Arc::try_unwrap(report).unwrap().into_inner().unwrap();
    let mut refunds_succeeded = 0i64;
    for (c, acknowledged, follower) in results {
        let c = &c;
        let detail = app.detail(c).await;
        let (stream_errors, last_streamed) = follower.await.unwrap();
        report.stream_errors += stream_errors;
        if last_streamed != detail.conversation.last_seq {
            report.stream_errors += 1;
            eprintln!("chaos: conversation {c} streamed up to #{last_streamed} of #{}", detail.conversation.last_seq);
        }
        let mut results_per_call = HashMap::<CallId, u32>::new();
        let (mut calls_per_task, mut answers_per_task) = (HashMap::<TaskId, u32>::new(), HashMap::<TaskId, u32>::new());
        for event in &detail.events {
            match &event.body {
                EventBody::ToolCall { task_id, .. } => *calls_per_task.entry(task_id.clone()).or_default() += 1,
                EventBody::AssistantMessage { task_id, .. } => *answers_per_task.entry(task_id.clone()).or_default() += 1,
                EventBody::ToolResult { call_id, ok, .. } => {
                    *results_per_call.entry(call_id.clone()).or_default() += 1;
                    refunds_succeeded += i64::from(*ok);
                }
                _ => {}
            }
        }
        report.grants_used += detail.events.iter().filter(|e| e.body.name() == "tool-call").count() as u32
            - detail.events.iter().filter(|e| e.body.name() == "approval-required").count() as u32;
        report.duplicate_effects += results_per_call.values().map(|n| n - 1).sum::<u32>();
        // Each turn is one model step that proposes the refund and one that answers.
        report.duplicate_model_steps += calls_per_task.values().chain(answers_per_task.values()).map(|n| n.saturating_sub(1)).sum::<u32>();
        report.approvals_acknowledged += acknowledged.len() as u32;
        for id in &acknowledged {
            let (_, approval) = app.get_json(&format!("/api/approvals/{id}")).await;
            let executed = results_per_call.get(approval["call_id"].as_str().unwrap_or_default()).copied().unwrap_or(0);
            if approval["state"] != "approved" || executed != 1 {
                report.approvals_lost += 1;
                eprintln!("chaos: approval {id} was acknowledged but is {} with {executed} results", approval["state"]);
            }
        }
    }
    let refunded_cents = ((app.order(1001).await.refunded - refunded_before) * 100.0).round() as i64;
    report.duplicate_effects += (refunded_cents - refunds_succeeded).unsigned_abs() as u32;
    report.model_steps_reasked = model.requests.lock().unwrap().values().map(|n| n - 1).sum();
    println!("chaos harness ({} replicas, {} conversations, seed {seed}): {report:?}", report.replicas, report.conversations);
    assert_eq!(report.turns as usize, report.conversations * turns, "{report:?}");
    assert_eq!(
        (report.approvals_lost, report.duplicate_effects, report.duplicate_model_steps, report.stream_errors),
        (0, 0, 0, 0),
        "{report:?}"
    );
    for server in servers.into_iter().flatten() {
        server.kill().await;
    }
}
