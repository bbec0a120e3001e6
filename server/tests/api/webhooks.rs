//! Webhooks reach a receiver, signed, and are retried when it fails.

use std::sync::{Arc, Mutex};

use axum::{Router, body::Bytes, extract::State, http::HeaderMap, http::StatusCode, routing::post};
use countersign::webhooks::{SIGNATURE_HEADER, sign};
use serde_json::{Value, json};

use crate::helpers::{Options, eventually, serve_locally, spawn_app_with};

#[derive(Clone, Default)]
struct Receiver {
    calls: Arc<Mutex<u32>>,
    received: Arc<Mutex<Vec<(String, Value)>>>,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let call = {
        let mut calls = r.calls.lock().unwrap();
        *calls += 1;
        *calls
    };
    if call == 1 {
        return StatusCode::SERVICE_UNAVAILABLE; // the first delivery fails and must be retried
    }
    let signature = headers.get(SIGNATURE_HEADER).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    r.received.lock().unwrap().push((signature, serde_json::from_slice(&body).unwrap()));
    r.received.lock().unwrap().last_mut().unwrap().1["raw_body"] = json!(String::from_utf8_lossy(&body));
    StatusCode::NO_CONTENT
}

#[tokio::test]
async fn approval_events_are_posted_signed_and_retried() {
    let receiver = Receiver::default();
    let url = serve_locally(Router::new().route("/hook", post(receive)).with_state(receiver.clone()), "/hook").await;
    // SAFETY of the test: the variable name is unique to this test.
    unsafe { std::env::set_var("CS_TEST_WEBHOOK_SECRET", "s3cret") };
    let toml = format!(
        "{}\n[[webhooks]]\nurl = \"{url}\"\nsecret_env = \"CS_TEST_WEBHOOK_SECRET\"\nevents = [\"approval-required\"]\n",
        crate::helpers::agents_with_timeout(300.0)
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;

    let (signature, payload) = eventually("a signed webhook", || async { receiver.received.lock().unwrap().first().cloned() }).await;
    assert!(*receiver.calls.lock().unwrap() >= 2, "the failed first delivery was retried");
    assert_eq!(payload["event"], "approval-required");
    assert_eq!(payload["data"]["approval_id"], approvals[0].id.as_str());
    assert_eq!(payload["data"]["tool"], "process_refund");
    let raw = payload["raw_body"].as_str().unwrap();
    assert_eq!(signature, sign("s3cret", raw.as_bytes()), "HMAC-SHA256 over the exact body");
    assert_ne!(signature, sign("other", raw.as_bytes()));
}

/// A receiver that refuses (503) until opened, and records what it accepted.
#[derive(Clone, Default)]
struct Gate {
    open: Arc<std::sync::atomic::AtomicBool>,
    attempts: Arc<std::sync::atomic::AtomicU32>,
    accepted: Arc<Mutex<Vec<Value>>>,
}

async fn gated(State(g): State<Gate>, body: Bytes) -> StatusCode {
    g.attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if !g.open.load(std::sync::atomic::Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    g.accepted.lock().unwrap().push(serde_json::from_slice(&body).unwrap());
    StatusCode::NO_CONTENT
}

#[tokio::test]
async fn a_delivery_still_owed_when_the_server_is_killed_is_made_after_the_restart_once() {
    let gate = Gate::default();
    let url = serve_locally(Router::new().route("/hook", post(gated)).with_state(gate.clone()), "/hook").await;
    let toml = format!(
        "{}\n[[webhooks]]\nurl = \"{url}\"\nsecret_env = \"CS_HOOK_SECRET\"\nevents = [\"approval-required\"]\n",
        crate::helpers::agents_with_timeout(300.0)
    );
    let env = [("CS_HOOK_SECRET", "k")];
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &env).await;
    let c = server.app.create_conversation().await;
    let (_, approvals) = server.app.pending_turn(&c, "refund order 1001", 1).await;
    eventually("a refused first attempt", || async { (gate.attempts.load(std::sync::atomic::Ordering::SeqCst) >= 1).then_some(()) }).await;
    let dir = server.kill().await;

    gate.open.store(true, std::sync::atomic::Ordering::SeqCst);
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &env).await;
    let payload = eventually("the owed delivery after the restart", || async { gate.accepted.lock().unwrap().first().cloned() }).await;
    assert_eq!(payload["event"], "approval-required");
    assert_eq!(payload["data"]["approval_id"], approvals[0].id.as_str());
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(gate.accepted.lock().unwrap().len(), 1, "delivered once");
    drop(server);
}

/// Two replicas (two stores on one database, each its own process name) drain 100 owed
/// deliveries of every kind at once — webhooks, emails, Slack posts, which share the outbox and
/// its leases: each is claimed, and so sent, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_racing_over_owed_deliveries_send_each_exactly_once() {
    use countersign::bus::Bus;
    use domain::ApprovalId;
    use engine::store::{Store, WriteScope, outbox};
    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let (a, b) = (Store::connect(&url, Bus::default()).await.unwrap(), Store::connect(&url, Bus::default()).await.unwrap());
    let mut w = a.write(WriteScope::People).await.unwrap();
    for n in 0..100 {
        let (address, approval_id) = (format!("p{n}@example.com"), ApprovalId::new(format!("a{n}")));
        let notice = outbox::EmailNotice { approval_id: approval_id.clone(), person: format!("p{n}"), reminder: 0 };
        let message = match n % 3 {
            0 => outbox::Message::Webhook { url: "http://127.0.0.1:9/hook", body: format!("{{\"n\":{n}}}") },
            1 => outbox::Message::Email { address: &address, notice: &notice },
            _ => outbox::Message::Slack { action: outbox::SlackAction::Post, approval_id: &approval_id },
        };
        outbox::queue(&mut w.tx, message).await.unwrap();
    }
    w.commit().await.unwrap();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let drain = |store: Store, sent: Arc<Mutex<Vec<(i64, String)>>>| async move {
        let me = store.bus().instance().to_owned();
        let mut idle = 0;
        while idle < 3 {
            let mut claimed = 0;
            for kinds in [&[outbox::Kind::Webhook][..], &[outbox::Kind::Email, outbox::Kind::Slack]] {
                let until = engine::clock::now_ms() + 60_000;
                for delivery in outbox::claim_due(&store, store.backend(), &me, until, 7, kinds).await.unwrap() {
                    sent.lock().unwrap().push((delivery.id, me.clone()));
                    outbox::delivered(&store, delivery.id).await.unwrap();
                    claimed += 1;
                }
            }
            idle = if claimed == 0 { idle + 1 } else { 0 };
        }
    };
    let (left, right) = tokio::join!(tokio::spawn(drain(a.clone(), sent.clone())), tokio::spawn(drain(b.clone(), sent.clone())));
    left.unwrap();
    right.unwrap();
    let sent = sent.lock().unwrap().clone();
    let mut ids: Vec<i64> = sent.iter().map(|(id, _)| *id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!((sent.len(), ids.len()), (100, 100), "each delivery sent once: {sent:?}");
}
