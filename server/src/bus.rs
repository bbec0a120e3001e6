//! In-process fan-out of committed events to live SSE streams. Streams send an event from here
//! when it is the next one they expect and read the store for any gap, so a lagging subscriber
//! loses nothing. Assistant deltas travel on their own channel: they are never stored, and a
//! lost one only makes the live draft lag until the stored reply arrives.

use app::domain::{Event, wire::AssistantDelta};
use tokio::sync::broadcast;

#[derive(Clone, Debug)]
pub struct Bus {
    sender: broadcast::Sender<Event>,
    deltas: broadcast::Sender<AssistantDelta>,
}

impl Default for Bus {
    fn default() -> Self {
        Self { sender: broadcast::channel(4096).0, deltas: broadcast::channel(1024).0 }
    }
}

impl Bus {
    pub fn publish(&self, event: Event) {
        // No subscribers is fine: nobody is watching.
        let _ = self.sender.send(event);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }

    pub fn publish_delta(&self, delta: AssistantDelta) {
        let _ = self.deltas.send(delta);
    }

    pub fn subscribe_deltas(&self) -> broadcast::Receiver<AssistantDelta> {
        self.deltas.subscribe()
    }
}
