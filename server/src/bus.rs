//! In-process fan-out of committed events to live SSE streams. Only a wake-up: streams always
//! read what they send from the store, so a lagging subscriber loses nothing.

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
