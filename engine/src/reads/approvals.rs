//! Approvals as the routes and the protocol gateways look them up: one, the queue, those that
//! wait in a task, a conversation or its chat, and those handed to someone.

use domain::{ApprovalId, ConversationId, TaskId};

use super::Reads;
use crate::store::approvals;

pub use crate::store::approvals::{ApprovalRow, Filter, QueueOrder, StateFilter};

impl Reads {
    /// The approval with this id, if there is one (whoever may see it: the caller checks).
    pub async fn approval(&self, id: &ApprovalId) -> anyhow::Result<Option<ApprovalRow>> {
        approvals::get(&self.store, id).await
    }

    /// The queue: the approvals `filter` lets through, in its order (the filter carries the
    /// viewer's visibility: their conversations, and what is handed to them).
    pub async fn approvals(&self, filter: &Filter<'_>) -> anyhow::Result<Vec<ApprovalRow>> {
        approvals::list(&self.store, filter).await
    }

    /// The task's pending approvals, oldest first.
    pub async fn pending_for_task(&self, task_id: &TaskId) -> anyhow::Result<Vec<ApprovalRow>> {
        approvals::pending_for_task(&self.store, task_id).await
    }

    /// The conversation's pending approvals, oldest first.
    pub async fn pending_in(&self, conversation_id: &ConversationId) -> anyhow::Result<Vec<ApprovalRow>> {
        approvals::pending_in(&self.store, conversation_id).await
    }

    /// The conversation's oldest pending approval that waits for a yes or no in the chat, if any:
    /// a message posted there answers it. A look before the write, which asks again in its
    /// transaction (orchestrator/decisions/confirm.rs).
    pub async fn pending_in_chat(&self, conversation_id: &ConversationId) -> anyhow::Result<Option<ApprovalRow>> {
        approvals::pending_in_chat(&self.store, conversation_id).await
    }

    /// The pending approvals `username` decides though they are not theirs: escalated to them (by
    /// name or through a group) or naming them among the gate's approvers.
    pub async fn escalated_to(&self, username: &str) -> anyhow::Result<Vec<ApprovalId>> {
        approvals::escalated_to(&self.store, username).await
    }
}
