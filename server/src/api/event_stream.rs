//! A chat's live event stream as an HTTP response of SSE frames written as bytes. axum's `Sse`
//! copies every event into each stream's own buffer; here a live event's frame is made once
//! (`bus::Published::sse_frame`) and every stream writes that same buffer (docs/performance-notes.md,
//! "One frame per event").

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
    with_keep_alive(frames, KEEP_ALIVE)
}

fn with_keep_alive(frames: impl Stream<Item = Bytes> + Send + 'static, every: Duration) -> Response {
    let mut frames = Box::pin(frames);
    // Ticks on its own schedule, not reset by each frame: a reset per frame would be a timer
    // operation per stream per event.
    let mut ping = interval_at(Instant::now() + every, every);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let body = futures::stream::poll_fn(move |cx| match frames.poll_next_unpin(cx) {
        Poll::Ready(frame) => Poll::Ready(frame.map(Ok::<_, Infallible>)),
        Poll::Pending => ping.poll_tick(cx).map(|_| Some(Ok(Bytes::from_static(b":\n\n")))),
    });
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from_stream(body)).into_response()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::http::header;
    use bytes::Bytes;
    use futures::StreamExt;
    use tokio::time::timeout;

    const PING: &[u8] = b":\n\n";

    #[tokio::test]
    async fn a_quiet_stream_carries_keep_alive_comments_and_frames_pass_in_order_until_it_ends() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let frames = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|frame| (frame, rx)) });
        let response = super::with_keep_alive(frames, Duration::from_millis(50));
        assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
        assert_eq!(response.headers()[header::CACHE_CONTROL], "no-cache");
        let mut body = response.into_body().into_data_stream();
        let mut next = async || timeout(Duration::from_secs(5), body.next()).await.expect("the body moves within 5 s").map(|f| f.unwrap());

        // Nothing to send: a comment keeps the connection from looking idle.
        assert_eq!(next().await.unwrap(), PING);
        for frame in ["event: a\nid: 1\ndata: {}\n\n", "event: b\nid: 2\ndata: {}\n\n"] {
            tx.send(Bytes::from_static(frame.as_bytes())).unwrap();
        }
        let mut sent = Vec::new();
        while sent.len() < 2 {
            let frame = next().await.unwrap();
            if frame != PING {
                sent.push(frame);
            }
        }
        assert_eq!(sent, [&b"event: a\nid: 1\ndata: {}\n\n"[..], &b"event: b\nid: 2\ndata: {}\n\n"[..]]);
        // The events end, so does the body (after at most a few more comments).
        drop(tx);
        while let Some(frame) = next().await {
            assert_eq!(frame, PING);
        }
    }
}
