//! In-process fan-out of committed events to live SSE streams. Streams send an event from here
//! when it is the next one they expect and read the store for any gap, so a lagging subscriber
//! loses nothing.

use app::domain::Event;
use tokio::sync::broadcast;

#[derive(Clone, Debug)]
pub struct Bus {
    sender: broadcast::Sender<Event>,
}

impl Default for Bus {
    fn default() -> Self {
        Self { sender: broadcast::channel(4096).0 }
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
}
