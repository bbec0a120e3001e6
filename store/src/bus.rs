//! Fan-out of committed events to live SSE streams, in this process's memory. Streams send an
//! event from here when it is the next one they expect and read the store for any gap, so a
//! lagging subscriber loses nothing. With PostgreSQL, `store::replicas` relays the other replicas'
//! commits onto this bus: a user streaming from replica A sees a decision made on replica B.
//! The bus knows nothing of the store (the store publishes to it). Assistant deltas travel on their own channel: they are never
//! stored (nor sent to other replicas), and a lost one only makes the live draft lag until the
//! stored reply arrives.

use std::{
    sync::{Arc, OnceLock},
    time::Instant,
};

use bytes::Bytes;
use domain::{Event, wire::AssistantDelta};
use tokio::sync::broadcast;

/// A committed event as the bus carries it: shared by every subscriber (no copy per stream),
/// with its SSE frame made once, by the first stream that sends it, for all of them (a clone of
/// `Bytes` is a reference count: 5,000 streams write one buffer).
#[derive(Debug)]
pub struct Published {
    pub event: Event,
    /// When this process put it on the bus: a stream that sends it measures its fan-out from here
    /// (`countersign_sse_send_seconds`).
    pub at: Instant,
    frame: OnceLock<Bytes>,
}

impl Published {
    pub fn new(event: Event) -> Arc<Self> {
        Arc::new(Self { event, at: Instant::now(), frame: OnceLock::new() })
    }

    /// The event as one SSE frame: its name, its sequence number as `id:`, its JSON as `data:`.
    pub fn sse_frame(&self) -> Bytes {
        self.frame.get_or_init(|| event_frame(&self.event)).clone()
    }
}

/// A stored event as an SSE frame (`id:` is its sequence number, the stream's resume point).
pub fn event_frame(event: &Event) -> Bytes {
    sse_frame(event.body.name(), Some(event.seq), &serde_json::to_string(event).expect("BUG: events serialize"))
}

/// One SSE frame. `data` must be one line, which JSON from `serde_json` always is (a newline in a
/// string is written `\n`).
pub fn sse_frame(name: &str, id: Option<i64>, data: &str) -> Bytes {
    debug_assert!(!data.contains(['\n', '\r']), "an SSE data line holds no line break");
    let mut frame = String::with_capacity(name.len() + data.len() + 40);
    frame.push_str("event: ");
    frame.push_str(name);
    if let Some(id) = id {
        frame.push_str("\nid: ");
        frame.push_str(&id.to_string());
    }
    frame.push_str("\ndata: ");
    frame.push_str(data);
    frame.push_str("\n\n");
    Bytes::from(frame)
}

#[derive(Clone, Debug)]
pub struct Bus {
    /// This process, so its listener skips what it committed itself.
    instance: String,
    sender: broadcast::Sender<Arc<Published>>,
    /// Only events committed by this process: side effects (webhooks) run once, where the commit happened.
    local: broadcast::Sender<Arc<Published>>,
    deltas: broadcast::Sender<AssistantDelta>,
    /// Credentials that just ended (logout, token revoked), by credential key (`server::auth::Credential`):
    /// the event streams they opened close, on every replica.
    revoked: broadcast::Sender<String>,
}

impl Default for Bus {
    fn default() -> Self {
        Self {
            instance: uuid::Uuid::now_v7().simple().to_string(),
            sender: broadcast::channel(4096).0,
            local: broadcast::channel(4096).0,
            deltas: broadcast::channel(1024).0,
            revoked: broadcast::channel(256).0,
        }
    }
}

impl Bus {
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// An event this process committed.
    pub fn publish_local(&self, event: Event) {
        let published = Published::new(event);
        // No subscribers is fine: nobody is watching.
        let _ = self.local.send(published.clone());
        let _ = self.sender.send(published);
    }

    /// An event another replica committed.
    pub fn publish_remote(&self, event: Event) {
        let _ = self.sender.send(Published::new(event));
    }

    /// Every committed event, from any replica.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.sender.subscribe()
    }

    /// Events this process committed.
    pub fn subscribe_local(&self) -> broadcast::Receiver<Arc<Published>> {
        self.local.subscribe()
    }

    pub fn publish_delta(&self, delta: AssistantDelta) {
        let _ = self.deltas.send(delta);
    }

    pub fn subscribe_deltas(&self) -> broadcast::Receiver<AssistantDelta> {
        self.deltas.subscribe()
    }

    /// A credential that just ended (here or on another replica).
    pub fn publish_revoked(&self, key: String) {
        let _ = self.revoked.send(key);
    }

    pub fn subscribe_revoked(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }
}
