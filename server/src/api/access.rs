//! Who may see what, and who is acting: the visibility rules every handler applies before it
//! reads or decides (an owner sees their own, an admin everything; a hidden resource is a 404, so
//! its existence is not revealed), and the actor the audit trail records.

use domain::{
    ApprovalId, ConversationId,
    wire::{Conversation, RejectRequest},
};
use engine::reads::{ApprovalRow, Reads};

use super::extract::ApiJson;
use crate::{auth::CurrentUser, error::ApiError, orchestrator::Actor, state::AppState};

/// The conversation if it exists and `user` may see it; 404 otherwise (existence is not revealed).
pub async fn visible_conversation(reads: &Reads, user: &CurrentUser, id: &ConversationId) -> Result<Conversation, ApiError> {
    reads
        .conversation(id)
        .await?
        .filter(|c| user.can_see(c.owner_id.as_ref()))
        .ok_or_else(|| ApiError::NotFound(format!("conversation {id} does not exist")))
}

/// The conversation if it is `user`'s own; 404 otherwise, as for one that does not exist. Writing
/// in a chat (a message, which starts a turn whose calls are its owner's) is its owner's alone,
/// an admin's too: a conversation belongs to one person on every door.
pub async fn own_conversation(reads: &Reads, user: &CurrentUser, id: &ConversationId) -> Result<Conversation, ApiError> {
    reads.owned_conversation(id, &user.user.id, None).await?.ok_or_else(|| ApiError::NotFound(format!("conversation {id} does not exist")))
}

/// The approval if it exists and `user` may see it; 404 otherwise.
pub async fn visible_approval(state: &AppState, user: &CurrentUser, id: &ApprovalId) -> Result<ApprovalRow, ApiError> {
    let missing = || ApiError::NotFound(format!("approval {id} does not exist"));
    let approval = state.reads.approval(id).await?.ok_or_else(missing)?;
    // The people an escalation or the gate's approvers named see it too (they decide it), and
    // so do those who stand in for them (a delegation).
    if user.can_see(approval.owner_id.as_ref()) || approval.decided_by_user(&user.user.username) {
        return Ok(approval);
    }
    let principals = state.reads.stands_in_for(&user.user.username).await?;
    principals.iter().any(|p| approval.decided_by_user(p)).then_some(approval).ok_or_else(missing)
}

/// `found`, the approval or task a decision is for; its 404 counts against the person's
/// decision limit, as the engine counts the decisions it is asked for (`Decisions::count_attempt`):
/// probing hidden ids costs the same, and over the limit the answer is a 429.
pub async fn count_if_hidden<T>(state: &AppState, user: &CurrentUser, found: Result<T, ApiError>) -> Result<T, ApiError> {
    if found.is_err() {
        state.decisions.count_attempt(&actor(user)).await?;
    }
    found
}

/// The decision's actor as the audit trail records it.
pub fn actor(user: &CurrentUser) -> Actor {
    Actor {
        name: user.user.username.clone(),
        user_id: Some(user.user.id.clone()),
        role: Some(user.user.role),
        ip: user.ip.clone(),
        user_agent: user.user_agent.clone(),
        on_behalf_of: None,
        via: None,
        signed_in_at: user.signed_in_at,
    }
}

/// The rejection reason of an optional body; blank means none.
pub fn reason_of(body: Option<ApiJson<RejectRequest>>) -> Option<String> {
    body.and_then(|ApiJson(b)| b.reason).map(|r| r.trim().to_owned()).filter(|r| !r.is_empty())
}
