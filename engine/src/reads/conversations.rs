//! Conversations as the read-only routes look them up.

use domain::{ConversationId, wire::Conversation};

use super::Reads;
use crate::store::conversations;

impl Reads {
    /// The conversation with this id, if there is one (whoever owns it: the caller checks who may see it).
    pub async fn conversation(&self, id: &ConversationId) -> anyhow::Result<Option<Conversation>> {
        conversations::get(&self.store, id).await
    }
}
