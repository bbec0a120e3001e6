//! A conversation's folded view as the chat shows it: whole, or the page a reload shows. Both
//! start from a stored snapshot and fold only the events after it (store/snapshots.rs); when
//! many follow, the read stores a newer snapshot off its path, a cache the fold can rebuild.

use domain::{ConversationId, ConversationView};

use super::Reads;
use crate::store::snapshots;

impl Reads {
    /// The conversation's whole view now (whoever may see it: the caller checks).
    pub async fn view(&self, conversation_id: &ConversationId) -> anyhow::Result<ConversationView> {
        snapshots::view(&self.store, conversation_id).await
    }

    /// The page of the conversation's view with its last `items` items (and every waiting card).
    pub async fn view_page(&self, conversation_id: &ConversationId, items: usize) -> anyhow::Result<ConversationView> {
        snapshots::page(&self.store, conversation_id, items).await
    }
}
