//! What the MCP gateway reads about its clients: a call an outside client proposed, the calls a
//! request of its made, the name it gave itself, and its token's name.

use domain::{TaskId, UserId};

use super::Reads;
use crate::store::{client_calls, users};

pub use crate::store::client_calls::ClientCall;

impl Reads {
    /// The outside client's call of this task, if an outside client proposed it.
    pub async fn client_call(&self, task_id: &TaskId) -> anyhow::Result<Option<ClientCall>> {
        client_calls::get(&self.store, task_id).await
    }

    /// The tasks of the calls the client's request `request_key` made that are still held, oldest
    /// first (`store::client_calls::by_request` says why a key is not unique).
    pub async fn client_calls_by_request(&self, request_key: &str) -> anyhow::Result<Vec<TaskId>> {
        client_calls::by_request(&self.store, request_key).await
    }

    /// The name the client with this credential last gave, if any.
    pub async fn client_name(&self, user: &UserId, client_key: &str) -> anyhow::Result<Option<String>> {
        client_calls::client_name(&self.store, user, client_key).await
    }

    /// The name of `user`'s API token `token_id`, if they have one with that id (revoked or not):
    /// the gateway names a client's conversation after it.
    pub async fn token_name(&self, user: &UserId, token_id: &str) -> anyhow::Result<Option<String>> {
        Ok(users::tokens_of(&self.store, user).await?.into_iter().find(|t| t.id == token_id).map(|t| t.name))
    }
}
