use crate::helpers::{spawn_app, take_events};

#[tokio::test]
async fn the_demo_stream_sends_named_events_with_increasing_ids() {
    let app = spawn_app().await;
    let events = take_events(app.sse("/api/stream/demo", None).await, 10).await;
    let seen: Vec<(String, String)> = events.iter().map(|e| (e.event.clone(), e.id.clone())).collect();
    assert_eq!(
        seen,
        vec![("hello".into(), "1".into()), ("tick".into(), "2".into()), ("tick".into(), "3".into()), ("goodbye".into(), "4".into()),]
    );
    let data: serde_json::Value = serde_json::from_str(&events[3].data).unwrap();
    assert_eq!(data["seq"], 4);
}

#[tokio::test]
async fn the_demo_stream_resumes_after_last_event_id() {
    let app = spawn_app().await;
    let events = take_events(app.sse("/api/stream/demo", Some("2")).await, 10).await;
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["3", "4"]);
}

#[tokio::test]
async fn the_demo_stream_resumes_after_the_query_parameter() {
    let app = spawn_app().await;
    let events = take_events(app.sse("/api/stream/demo?after=3", None).await, 10).await;
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["4"]);
}
