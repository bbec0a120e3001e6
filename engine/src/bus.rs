//! Fan-out of committed events to live SSE streams, in this process's memory. Streams send an
//! event from here when it is the next one they expect and read the store for any gap, so a
//! lagging subscriber loses nothing. A chat's stream listens to its conversation's topic alone,
//! so an event wakes only the streams of its own chat, not every open stream of the process (at
//! 32 chats each event woke 32 tasks, 31 of them for nothing; docs/performance-notes.md). With PostgreSQL, `store::replicas` relays the other replicas'
//! commits onto this bus: a user streaming from replica A sees a decision made on replica B.
//! The bus knows nothing of the store (the store publishes to it). Assistant deltas travel on their own channel: they are never
//! stored (nor sent to other replicas), and a lost one only makes the live draft lag until the
//! stored reply arrives.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock},
    time::Instant,
};

use app::domain::{ConversationId, Event, wire::AssistantDelta};
use bytes::Bytes;
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
    /// Credentials that just ended (logout, token revoked), by credential key (`server::auth::Credential`):
    /// the event streams they opened close, on every replica.
    revoked: broadcast::Sender<String>,
    /// The topics of the conversations someone streams now (and only those).
    topics: Arc<Mutex<HashMap<ConversationId, Topic>>>,
}

/// One conversation's events and reply drafts, for the streams of that chat.
#[derive(Clone, Debug)]
struct Topic {
    events: broadcast::Sender<Arc<Published>>,
    deltas: broadcast::Sender<AssistantDelta>,
}

/// How many events a chat's stream may fall behind before it reads the store instead.
const TOPIC_EVENTS: usize = 1024;
const TOPIC_DELTAS: usize = 256;

/// A stream's subscription to one conversation's topic; the topic goes when its last
/// subscription does.
#[derive(Debug)]
pub struct ConversationFeed {
    pub events: broadcast::Receiver<Arc<Published>>,
    pub deltas: broadcast::Receiver<AssistantDelta>,
    conversation_id: ConversationId,
    topics: Arc<Mutex<HashMap<ConversationId, Topic>>>,
}

impl Drop for ConversationFeed {
    fn drop(&mut self) {
        // Subscribing happens under the same lock, so a topic is never dropped under a new
        // subscriber. This one's own receivers still count until the fields drop after this.
        let mut topics = self.topics.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if topics.get(&self.conversation_id).is_some_and(|t| t.events.receiver_count() <= 1) {
            topics.remove(&self.conversation_id);
        }
    }
}

impl Default for Bus {
    fn default() -> Self {
        Self {
            instance: uuid::Uuid::now_v7().simple().to_string(),
            sender: broadcast::channel(4096).0,
            local: broadcast::channel(4096).0,
            revoked: broadcast::channel(256).0,
            topics: Default::default(),
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
        self.publish(published);
    }

    /// An event another replica committed.
    pub fn publish_remote(&self, event: Event) {
        self.publish(Published::new(event));
    }

    fn publish(&self, published: Arc<Published>) {
        if let Some(topic) = self.topic(&published.event.conversation_id) {
            let _ = topic.events.send(published.clone());
        }
        let _ = self.sender.send(published);
    }

    fn topic(&self, conversation_id: &ConversationId) -> Option<Topic> {
        self.topics.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(conversation_id).cloned()
    }

    /// Every committed event, from any replica (the approval queue, MCP's notifications).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.sender.subscribe()
    }

    /// One conversation's committed events (from any replica) and reply drafts: a chat's stream.
    pub fn subscribe_conversation(&self, conversation_id: &ConversationId) -> ConversationFeed {
        let mut topics = self.topics.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let topic = topics
            .entry(conversation_id.clone())
            .or_insert_with(|| Topic { events: broadcast::channel(TOPIC_EVENTS).0, deltas: broadcast::channel(TOPIC_DELTAS).0 });
        ConversationFeed {
            events: topic.events.subscribe(),
            deltas: topic.deltas.subscribe(),
            conversation_id: conversation_id.clone(),
            topics: self.topics.clone(),
        }
    }

    /// How many conversations have a topic now (streams open on them).
    pub fn topics(&self) -> usize {
        self.topics.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Events this process committed.
    pub fn subscribe_local(&self) -> broadcast::Receiver<Arc<Published>> {
        self.local.subscribe()
    }

    pub fn publish_delta(&self, delta: AssistantDelta) {
        if let Some(topic) = self.topic(&delta.conversation_id) {
            let _ = topic.deltas.send(delta);
        }
    }

    /// A credential that just ended (here or on another replica).
    pub fn publish_revoked(&self, key: String) {
        let _ = self.revoked.send(key);
    }

    pub fn subscribe_revoked(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use app::domain::{EventBody, TaskId};
    use tokio::sync::broadcast::error::TryRecvError;

    use super::*;

    fn event(conversation: &str, seq: i64) -> Event {
        let body = EventBody::UserMessage { task_id: TaskId::new("t"), text: "hi".into(), reply_to: None };
        Event { seq, conversation_id: ConversationId::new(conversation), at: String::new(), body }
    }

    fn delta(conversation: &str) -> AssistantDelta {
        AssistantDelta {
            conversation_id: ConversationId::new(conversation),
            task_id: TaskId::new("t"),
            after_seq: 0,
            offset: 0,
            text: "…".into(),
        }
    }

    #[test]
    fn a_chat_feed_gets_its_own_conversation_and_nothing_else() {
        let bus = Bus::default();
        let mut a = bus.subscribe_conversation(&ConversationId::new("a"));
        let mut b = bus.subscribe_conversation(&ConversationId::new("b"));
        let mut everything = bus.subscribe();
        bus.publish_local(event("a", 1));
        bus.publish_remote(event("b", 1));
        bus.publish_delta(delta("a"));
        assert_eq!(a.events.try_recv().unwrap().event.conversation_id.as_str(), "a");
        assert_eq!(a.events.try_recv().unwrap_err(), TryRecvError::Empty, "b's event never reaches a's feed");
        assert_eq!(a.deltas.try_recv().unwrap().conversation_id.as_str(), "a");
        assert_eq!(b.events.try_recv().unwrap().event.conversation_id.as_str(), "b");
        assert_eq!(b.events.try_recv().unwrap_err(), TryRecvError::Empty);
        assert_eq!(b.deltas.try_recv().unwrap_err(), TryRecvError::Empty, "a's draft never reaches b's feed");
        assert_eq!(everything.try_recv().unwrap().event.conversation_id.as_str(), "a", "the queue still sees every event");
        assert_eq!(everything.try_recv().unwrap().event.conversation_id.as_str(), "b");
    }

    #[test]
    fn a_topic_lasts_as_long_as_a_feed_on_it() {
        let bus = Bus::default();
        let first = bus.subscribe_conversation(&ConversationId::new("a"));
        let mut second = bus.subscribe_conversation(&ConversationId::new("a"));
        assert_eq!(bus.topics(), 1, "two streams of one chat share its topic");
        drop(first);
        assert_eq!(bus.topics(), 1, "the other stream still listens");
        bus.publish_local(event("a", 1));
        assert_eq!(second.events.try_recv().unwrap().event.seq, 1);
        drop(second);
        assert_eq!(bus.topics(), 0, "the last stream's end removes the topic");
        bus.publish_local(event("a", 2));
        bus.publish_delta(delta("a"));
        assert_eq!(bus.topics(), 0, "publishing to a chat nobody streams creates nothing");
        let mut again = bus.subscribe_conversation(&ConversationId::new("a"));
        bus.publish_local(event("a", 3));
        assert_eq!(again.events.try_recv().unwrap().event.seq, 3, "a new stream gets a new topic");
    }
}
