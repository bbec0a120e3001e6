//! Approvals as the protocol gateways look them up: one, and those that wait in a task or a
//! conversation.

use domain::{ApprovalId, ConversationId, TaskId};

use super::Reads;
use crate::store::approvals;

pub use crate::store::approvals::ApprovalRow;

impl Reads {
    /// The approval with this id, if there is one (whoever may see it: the caller checks).
    pub async fn approval(&self, id: &ApprovalId) -> anyhow::Result<Option<ApprovalRow>> {
        approvals::get(&self.store, id).await
    }

    /// The task's pending approvals, oldest first.
    pub async fn pending_for_task(&self, task_id: &TaskId) -> anyhow::Result<Vec<ApprovalRow>> {
        approvals::pending_for_task(&self.store, task_id).await
    }

    /// The conversation's pending approvals, oldest first.
    pub async fn pending_in(&self, conversation_id: &ConversationId) -> anyhow::Result<Vec<ApprovalRow>> {
        approvals::pending_in(&self.store, conversation_id).await
    }
}
