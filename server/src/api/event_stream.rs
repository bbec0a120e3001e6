//! A chat's live event stream as an HTTP response of SSE frames written as bytes. axum's `Sse`
//! copies every event into each stream's own buffer; here a live event's frame is made once
//! (`bus::Published::sse_frame`) and every stream writes that same buffer (docs/performance-notes.md,
//! "fan-out").

use std::{convert::Infallible, task::Poll, time::Duration};

use axum::{
    body::Body,
    http::header,
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::time::{Instant, MissedTickBehavior, interval_at};

/// A comment line every so often keeps proxies and load balancers from closing a quiet stream
/// (axum's `KeepAlive::default()` interval).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `frames` as a `text/event-stream` response, with a keep-alive comment whenever it has been
/// waiting for a while. The stream ends when `frames` ends.
pub fn response(frames: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    let mut frames = Box::pin(frames);
    // Ticks on its own schedule, not reset by each frame: a reset per frame would be a timer
    // operation per stream per event.
    let mut ping = interval_at(Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let body = futures::stream::poll_fn(move |cx| match frames.poll_next_unpin(cx) {
        Poll::Ready(frame) => Poll::Ready(frame.map(Ok::<_, Infallible>)),
        Poll::Pending => ping.poll_tick(cx).map(|_| Some(Ok(Bytes::from_static(b":\n\n")))),
    });
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from_stream(body)).into_response()
}
