//! A conversation's events as the protocol gateways replay them.

use domain::{ConversationId, Event, TaskId};

use super::Reads;
use crate::store::events;

impl Reads {
    /// The conversation's events after sequence number `after`, in order.
    pub async fn events_after(&self, conversation_id: &ConversationId, after: i64) -> anyhow::Result<Vec<Event>> {
        events::after(&self.store, conversation_id, after).await
    }

    /// [`Reads::events_after`] when about `rows` events are known to follow (a few are read on a
    /// quick reader: `store::events::about_after`).
    pub async fn events_about_after(&self, conversation_id: &ConversationId, after: i64, rows: i64) -> anyhow::Result<Vec<Event>> {
        events::about_after(&self.store, conversation_id, after, rows).await
    }

    /// One task's events in its conversation, in order.
    pub async fn events_of_task(&self, conversation_id: &ConversationId, task_id: &TaskId) -> anyhow::Result<Vec<Event>> {
        events::of_task(&self.store, conversation_id, task_id).await
    }
}
