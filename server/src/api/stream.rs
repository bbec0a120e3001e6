//! `GET /api/stream/demo`: a short SSE stream of named events with `id:` fields that resumes after
//! `Last-Event-ID` (header) or `?after=N`. The walking skeleton's proof that SSE works end to end;
//! conversation streams follow the same resume rules.

use std::{convert::Infallible, time::Duration};

use axum::{
    Router,
    extract::Query,
    http::HeaderMap,
    response::sse::{Event, KeepAlive, Sse},
    routing::get,
};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/stream/demo", get(demo))
}

#[derive(Debug, Deserialize)]
pub struct ResumeQuery {
    pub after: Option<i64>,
}

/// The sequence number a client has already seen: `Last-Event-ID` wins over `?after=`.
pub fn resume_point(headers: &HeaderMap, query: &ResumeQuery) -> i64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0)
        .max(0)
}

const DEMO_EVENTS: [&str; 4] = ["hello", "tick", "tick", "goodbye"];

async fn demo(headers: HeaderMap, Query(query): Query<ResumeQuery>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let after = resume_point(&headers, &query);
    let events = DEMO_EVENTS
        .iter()
        .enumerate()
        .map(|(i, name)| (i as i64 + 1, *name))
        .filter(move |(seq, _)| *seq > after)
        .map(|(seq, name)| Ok(Event::default().event(name).id(seq.to_string()).data(json!({ "seq": seq }).to_string())))
        .collect::<Vec<_>>();
    // A little spacing makes the stream observably live rather than one burst.
    let stream = futures::stream::iter(events).then(|event| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        event
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
