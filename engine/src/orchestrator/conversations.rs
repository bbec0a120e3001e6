//! Conversations the doors open for their callers: a new one for a turn (A2A), or the one an id
//! names, made on first use (the MCP gateway's derived ids, AG-UI's threads). Who may use which is
//! the store's rule (`store::conversations::open_or_create`): one person's conversation is never
//! another's.

use domain::{ConversationId, wire::Conversation};

use crate::store::{Store, conversations, users::User};

pub use crate::store::conversations::{IdFrom, gateway_id};

/// Opens conversations for the protocol gateways (server/src/protocols).
#[derive(Clone)]
pub struct Conversations {
    store: Store,
}

impl Conversations {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// A new conversation of `owner`'s with `agent`; `opened_by`: the credential that made it.
    pub async fn create(&self, title: &str, agent: &str, owner: &User, opened_by: Option<&str>) -> anyhow::Result<Conversation> {
        conversations::create(&self.store, title, agent, owner, opened_by).await
    }

    /// `owner`'s conversation `id` with `agent`, made now when no conversation has that id; `None`
    /// when it is someone else's (or another agent's), or a client chose one of the gateway's ids:
    /// nothing is written then.
    pub async fn open_or_create(
        &self,
        id: &ConversationId,
        from: IdFrom,
        title: &str,
        agent: &str,
        owner: &User,
        opened_by: Option<&str>,
    ) -> anyhow::Result<Option<Conversation>> {
        conversations::open_or_create(&self.store, id, from, title, agent, owner, opened_by).await
    }
}
