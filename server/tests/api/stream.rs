//! The conversation event stream: every stored event with its sequence number, then live ones.

use std::collections::BTreeSet;

use domain::{Event, TaskStatus};
use serde_json::json;

use crate::helpers::{spawn_app, take_events};

#[tokio::test]
async fn the_stream_replays_stored_events_with_their_sequence_numbers_then_goes_live() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let stored = app.detail(&c).await.events;
    let stream = app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let mut stream = stream;
    let replay = take_events(&mut stream, stored.len()).await;
    for (sse, event) in replay.iter().zip(&stored) {
        assert_eq!(sse.id, event.seq.to_string());
        assert_eq!(sse.event, event.body.name());
        assert_eq!(&serde_json::from_str::<Event>(&sse.data).unwrap(), event);
    }
    assert!(replay.iter().any(|e| e.event == "approval-required"));

    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    let live = take_events(&mut stream, 5).await;
    let names: Vec<&str> = live.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(names[..4], ["approval-decided", "task-status", "tool-started", "tool-result"], "{names:?}");
    let ids: Vec<i64> = replay.iter().chain(&live).map(|e| e.id.parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "consecutive ids: {ids:?}");
}

#[tokio::test]
async fn the_stream_resumes_after_last_event_id_without_gaps_or_duplicates() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "look up order 1002").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let stored = app.detail(&c).await.events;
    assert!(stored.len() >= 5);
    let events = take_events(app.sse(&format!("/api/conversations/{c}/events"), Some("3")).await, stored.len() - 3).await;
    let ids: BTreeSet<i64> = events.iter().map(|e| e.id.parse().unwrap()).collect();
    assert_eq!(ids, (4..=stored.len() as i64).collect());
    let by_query = take_events(app.sse(&format!("/api/conversations/{c}/events?after=4"), None).await, stored.len() - 4).await;
    assert_eq!(by_query[0].id, "5");
}

/// The `countersign_sse_store_reads_total` counter of a scrape.
async fn stream_store_reads(app: &crate::helpers::TestApp) -> u64 {
    let text = app.anonymous().client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let line = text.lines().find(|l| l.starts_with("countersign_sse_store_reads_total ")).expect("the counter is scraped");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_stream_that_caught_up_sends_live_events_without_reading_the_store() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let before = stream_store_reads(&app).await;
    let mut stream = app.sse(&format!("/api/conversations/{c}/events"), None).await;
    let task = app.say(&c, "look up order 1002").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let stored = app.detail(&c).await.events;
    assert!(stored.len() >= 4, "a turn of several events: {}", stored.len());
    let live = take_events(&mut stream, stored.len()).await;
    assert_eq!(live.last().unwrap().id, stored.last().unwrap().seq.to_string());
    // One read when the stream opened, and at most one more if two commits were published out of
    // order; before, every live event made its stream read the store again.
    let reads = stream_store_reads(&app).await - before;
    assert!(reads <= 2, "{reads} store reads for {} live events", live.len());
}
