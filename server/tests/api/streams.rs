//! Event streams check their caller only when they open, so they also end: when the session
//! logs out or the token is revoked (on any replica), and after their lifetime; and one user may
//! hold only so many open at once.

use std::{sync::Arc, time::Duration};

use futures::{Stream, StreamExt};
use serde_json::json;

use crate::helpers::{BinaryServer, Options, PASSWORD, TestApp, client_with_token, postgres, spawn_app, spawn_app_with, test_client};

/// A client logged in as `user` with a session cookie.
async fn logged_in(app: &TestApp, user: &str) -> TestApp {
    let client = test_client().cookie_store(true).build().unwrap();
    let response = client.post(app.url("/api/session")).json(&json!({ "username": user, "password": PASSWORD })).send().await.unwrap();
    assert_eq!(response.status(), 200);
    TestApp { client, ..app.clone() }
}

/// Reads `stream` to its end; fails if it is still open after `secs`.
async fn ends_within(stream: impl Stream<Item = eventsource_stream::Event> + Unpin, secs: u64, what: &str) {
    tokio::time::timeout(Duration::from_secs(secs), stream.collect::<Vec<_>>()).await.unwrap_or_else(|_| panic!("{what} still open"));
}

/// The next event, or None when nothing arrives in `secs` (the stream is open and quiet).
async fn next_within(stream: &mut (impl Stream<Item = eventsource_stream::Event> + Unpin), secs: u64) -> Option<String> {
    tokio::time::timeout(Duration::from_secs(secs), stream.next()).await.ok().flatten().map(|e| e.event)
}

#[tokio::test]
async fn logging_out_closes_the_streams_that_session_opened_and_no_other() {
    let app = spawn_app().await;
    let (laptop, phone) = (logged_in(&app, "alice").await, logged_in(&app, "alice").await);
    let c = app.create_conversation().await;
    let chat = laptop.sse(&format!("/api/conversations/{c}/events"), None).await;
    let queue = laptop.sse("/api/approvals/events", None).await;
    let mut other = phone.sse("/api/approvals/events", None).await;

    assert_eq!(laptop.client.delete(app.url("/api/session")).send().await.unwrap().status(), 204);
    ends_within(chat, 5, "the chat stream after logout").await;
    ends_within(queue, 5, "the queue stream after logout").await;
    assert_eq!(laptop.get_json("/api/approvals/events").await.0, 401, "and it cannot reopen");

    // The phone's session is another credential: its stream still carries the queue.
    app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(next_within(&mut other, 10).await.as_deref(), Some("queue-changed"));
}

#[tokio::test]
async fn turning_an_account_off_closes_its_session_streams_at_once_and_no_one_elses() {
    let app = spawn_app().await;
    let bob = logged_in(&app, "bob").await;
    let alice = logged_in(&app, "alice").await;
    let bobs = bob.sse("/api/approvals/events", None).await;
    let mut alices = alice.sse("/api/approvals/events", None).await;
    let (status, body) = app.as_user("root").post_json("/api/users/bob/disable", json!({})).await;
    assert_eq!(status, 204, "{body}");
    ends_within(bobs, 5, "the turned-off account's session stream").await;
    assert_eq!(bob.get_json("/api/approvals/events").await.0, 401, "and it cannot reopen");
    let c = app.create_conversation().await;
    app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(next_within(&mut alices, 10).await.as_deref(), Some("queue-changed"), "alice's stream still carries the queue");
}

#[tokio::test]
async fn revoking_a_token_closes_its_streams_and_a_token_cannot_make_tokens() {
    let app = spawn_app().await;
    let person = logged_in(&app, "alice").await;
    let (status, created) = person.post_json("/api/tokens", json!({ "name": "dashboard" })).await;
    assert_eq!(status, 201, "{created}");
    let script = TestApp { client: client_with_token(created["token"].as_str().unwrap()), ..app.clone() };
    let stream = script.sse("/api/approvals/events", None).await;

    // Attack: a stolen token mints a second one to survive its revocation.
    let (status, body) = script.post_json("/api/tokens", json!({ "name": "backdoor" })).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("log in"), "{body}");
    let names: Vec<String> =
        person.get_json("/api/tokens").await.1.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    assert!(!names.contains(&"backdoor".to_owned()), "nothing was made: {names:?}");

    let revoke = format!("/api/tokens/{}/revoke", created["id"].as_str().unwrap());
    assert_eq!(person.post_json(&revoke, json!({})).await.0, 204);
    ends_within(stream, 5, "the token's stream after revocation").await;
    assert_eq!(script.get_json("/api/approvals/events").await.0, 401);
}

#[tokio::test]
async fn streams_end_after_their_lifetime_and_each_user_may_hold_only_so_many() {
    let app = spawn_app_with(Options { streams: Some((2, 700)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let first = app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let second = app.sse("/api/approvals/events", None).await;
    let response = app.client.get(app.url("/api/approvals/events")).send().await.unwrap();
    assert_eq!(response.status(), 429, "a third stream for alice");
    assert!(response.headers().contains_key("retry-after"));
    // Another user has a count of their own.
    let bobs = app.as_user("bob").sse("/api/approvals/events", None).await;

    ends_within(first, 5, "a stream past its lifetime").await;
    ends_within(second, 5, "a stream past its lifetime").await;
    ends_within(bobs, 5, "bob's stream past its lifetime").await;
    // The client reconnects and is checked again; the ended streams gave their places back.
    let third = app.sse("/api/approvals/events", None).await;
    ends_within(third, 5, "the reconnected stream past its lifetime").await;
}

#[tokio::test]
async fn logging_out_on_one_replica_closes_the_stream_on_another() {
    if postgres().is_none() {
        eprintln!("two replicas need PostgreSQL; this test runs in the PostgreSQL pass");
        return;
    }
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let a = BinaryServer::start(dir.clone(), None).await;
    let b = BinaryServer::start(dir, None).await;
    let on_a = logged_in(&a.app, "alice").await;
    let stream = on_a.sse("/api/approvals/events", None).await;
    // The same browser (the same cookie) logs out through replica B.
    let on_b = TestApp { base_url: b.app.base_url.clone(), ..on_a.clone() };
    assert_eq!(on_b.client.delete(on_b.url("/api/session")).send().await.unwrap().status(), 204);
    ends_within(stream, 10, "A's stream after logout on B").await;
}

#[tokio::test]
async fn a_client_that_stops_reading_holds_up_no_one() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    // A reader that takes the response's head and then nothing, with a small receive buffer, so
    // the server soon has frames for it that it cannot send. (That it is dropped after
    // COUNTERSIGN_WRITE_STALL_MS is tested in server/src/stalled_writes.rs, where the server's
    // send buffer can be made small; here it would take megabytes of events to fill.)
    let host = app.base_url.trim_start_matches("http://").to_owned();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(host.parse().unwrap()).await.unwrap();
    let request = format!(
        "GET /api/conversations/{c}/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n\r\n",
        app.tokens["alice"]
    );
    stalled.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stalled.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");

    let mut watching = app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let text = "x".repeat(7_900);
    let mut received = 0;
    for turn in 0..10 {
        let task = app.say(&c, &text).await;
        app.wait_task(&task, domain::TaskStatus::Completed).await;
        // The reading client has every event of the turn, in order, whatever the stalled one does.
        let stored = app.detail(&c).await.events;
        let got = crate::helpers::take_events(&mut watching, stored.len() - received).await;
        received = stored.len();
        assert_eq!(got.last().unwrap().id, stored.last().unwrap().seq.to_string(), "turn {turn}");
    }
    // The stalled reader's frames were more than its buffers hold: it really was behind.
    assert!(received > 10 * 2 && text.len() * 10 > 8 * 4096);
}
