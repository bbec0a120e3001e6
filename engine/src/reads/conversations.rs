//! Conversations as the read-only routes and the protocol gateways look them up.

use domain::{ConversationId, UserId, wire::Conversation};

use super::Reads;
use crate::store::conversations;

impl Reads {
    /// The conversation with this id, if there is one (whoever owns it: the caller checks who may see it).
    pub async fn conversation(&self, id: &ConversationId) -> anyhow::Result<Option<Conversation>> {
        conversations::get(&self.store, id).await
    }

    /// `owner`'s conversation `id` (with `agent`, when one is named); `None` when there is none, or
    /// it is someone else's or another agent's (a door answers both the same way).
    pub async fn owned_conversation(
        &self,
        id: &ConversationId,
        owner: &UserId,
        agent: Option<&str>,
    ) -> anyhow::Result<Option<Conversation>> {
        conversations::owned(&self.store, id, owner, agent).await
    }

    /// The newest `limit` conversations of `owner` (`None`: everyone's, for an admin), newest first.
    pub async fn conversations(&self, owner: Option<&UserId>, limit: i64) -> anyhow::Result<Vec<Conversation>> {
        conversations::list(&self.store, owner, limit).await
    }
}
