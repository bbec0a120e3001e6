//! `spawn_app()` and the small clients the integration tests share.

use std::time::Duration;

use countersign::{config::Config, startup::Application};
use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};

pub struct TestApp {
    pub base_url: String,
    pub client: reqwest::Client,
    /// Kept alive for the whole test: dropping it deletes the database.
    pub data_dir: tempfile::TempDir,
}

/// Starts the real application on 127.0.0.1:0 with a fresh database in a temporary directory.
pub async fn spawn_app() -> TestApp {
    let data_dir = tempfile::tempdir().expect("temp dir");
    let config = Config::from_lookup(|key| match key {
        "COUNTERSIGN_ADDR" => Some("127.0.0.1:0".to_owned()),
        "COUNTERSIGN_DATA_DIR" => Some(data_dir.path().display().to_string()),
        "RUST_LOG" => Some(std::env::var("TEST_LOG").unwrap_or_else(|_| "warn".to_owned())),
        _ => None,
    })
    .expect("test config");
    countersign::telemetry::init(&config.log_filter, false);
    let app = Application::build(config).await.expect("application builds");
    let base_url = format!("http://{}", app.local_addr());
    tokio::spawn(app.run_until_stopped());
    TestApp { base_url, client: reqwest::Client::new(), data_dir }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Opens an SSE stream, optionally resuming after `last_event_id`.
    pub async fn sse(&self, path: &str, last_event_id: Option<&str>) -> impl Stream<Item = Event> + Unpin {
        let mut request = self.client.get(self.url(path)).header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("SSE request");
        assert_eq!(response.status(), 200, "SSE status for {path}");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("text/event-stream"), "content type {content_type}");
        Box::pin(response.bytes_stream().eventsource().map(|e| e.expect("well-formed SSE")))
    }
}

/// Collects events until the stream ends or `n` arrived; fails after a generous timeout.
pub async fn take_events(stream: impl Stream<Item = Event> + Unpin, n: usize) -> Vec<Event> {
    tokio::time::timeout(Duration::from_secs(10), stream.take(n).collect::<Vec<_>>())
        .await
        .expect("SSE events within 10 s")
}
