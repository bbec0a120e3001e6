//! The REST API as the browser calls it: one typed function per endpoint (paths and body types
//! live here and nowhere else in the UI), and [`in_background`], the one way a button runs a call
//! with its busy flag and error message. The routes are documented in docs/api.md.

use crate::domain::{ApprovalId, ConversationId, GrantId, TaskId};
use std::future::Future;

use leptos::{prelude::*, task::spawn_local};
use serde_json::{Value, json};

use crate::{
    client::{self, ApiFailure},
    domain::page::EarlierItems,
    domain::wire::{
        AgentInfo, Approval, ApproveRequest, CallPreview, Conversation, ConversationDetail, DecisionOutcome, DeferRequest, Delegation,
        Group, GroupMembers, LivePolicy, Login, Me, NewConversation, NewDelegation, NewGroup, NewMessage, PreviewRequest, RejectRequest,
        ReplayRequest, SignInOptions, Task,
    },
    queue_query::QueueQuery,
};

pub type Answer<T> = Result<T, ApiFailure>;

/// Runs `call` without blocking the page: `busy` is set while it runs (buttons bound to it are
/// disabled, so a double click sends one request) and `error` shows its failure. What the call
/// changed arrives over the conversation's event stream, not from its answer.
pub fn in_background<T: 'static>(
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    call: impl Future<Output = Answer<T>> + 'static,
) {
    busy.set(true);
    error.set(None);
    spawn_local(async move {
        let result = call.await;
        // The decision's live event may have re-rendered (disposed) the component meanwhile.
        let _ = busy.try_set(false);
        if let Err(failure) = result {
            let _ = error.try_set(Some(failure));
        }
    });
}

pub async fn me() -> Answer<Me> {
    client::get("/api/session").await
}

pub async fn sign_in_options() -> Answer<SignInOptions> {
    client::get("/api/session/options").await
}

pub async fn log_in(login: &Login) -> Answer<Me> {
    client::post("/api/session", login).await
}

pub async fn log_out() -> Answer<()> {
    client::delete("/api/session").await
}

pub async fn agents() -> Answer<Vec<AgentInfo>> {
    client::get("/api/agents").await
}

pub async fn conversations() -> Answer<Vec<Conversation>> {
    client::get("/api/conversations").await
}

pub async fn create_conversation(new: &NewConversation) -> Answer<Conversation> {
    client::post("/api/conversations", new).await
}

pub async fn conversation(id: &ConversationId) -> Answer<ConversationDetail> {
    client::get(&format!("/api/conversations/{id}")).await
}

/// The conversation with its whole event log (`events=all`): what a page that missed live
/// events folds in (a decision refused because someone decided first, card_draft.rs).
pub async fn conversation_log(id: &ConversationId) -> Answer<ConversationDetail> {
    client::get(&format!("/api/conversations/{id}?events=all")).await
}

/// The chat's items before `before` ("Show earlier"), a page's worth.
pub async fn earlier_items(id: &ConversationId, before: i64) -> Answer<EarlierItems> {
    client::get(&format!("/api/conversations/{id}/items?before={before}")).await
}

pub async fn send_message(conversation_id: &ConversationId, text: String) -> Answer<Value> {
    client::post(&format!("/api/conversations/{conversation_id}/messages"), &NewMessage { text }).await
}

/// One approval, with its tool's input schema.
pub async fn approval(approval_id: &ApprovalId) -> Answer<Approval> {
    client::get(&format!("/api/approvals/{approval_id}")).await
}

pub async fn preview(approval_id: &ApprovalId, request: &PreviewRequest) -> Answer<CallPreview> {
    client::post(&format!("/api/approvals/{approval_id}/preview"), request).await
}

pub async fn approve(approval_id: &ApprovalId, request: &ApproveRequest) -> Answer<DecisionOutcome> {
    client::post(&format!("/api/approvals/{approval_id}/approve"), request).await
}

pub async fn reject(approval_id: &ApprovalId, request: &RejectRequest) -> Answer<DecisionOutcome> {
    client::post(&format!("/api/approvals/{approval_id}/reject"), request).await
}

pub async fn defer(approval_id: &ApprovalId, request: &DeferRequest) -> Answer<DecisionOutcome> {
    client::post(&format!("/api/approvals/{approval_id}/defer"), request).await
}

/// Hands the approval to the admins.
pub async fn escalate(approval_id: &ApprovalId) -> Answer<Value> {
    client::post(&format!("/api/approvals/{approval_id}/escalate"), &json!({})).await
}

pub async fn approve_all(task_id: &TaskId) -> Answer<Vec<DecisionOutcome>> {
    client::post(&format!("/api/tasks/{task_id}/approve-all"), &RejectRequest::default()).await
}

pub async fn reject_all(task_id: &TaskId, request: &RejectRequest) -> Answer<Vec<DecisionOutcome>> {
    client::post(&format!("/api/tasks/{task_id}/reject-all"), request).await
}

/// Stops the turn.
pub async fn abort(task_id: &TaskId) -> Answer<Task> {
    client::post(&format!("/api/tasks/{task_id}/abort"), &json!({})).await
}

pub async fn revoke_grant(grant_id: &GrantId) -> Answer<Value> {
    client::post(&format!("/api/grants/{grant_id}/revoke"), &json!({})).await
}

/// The queue as the filter asks for it.
pub async fn approvals(query: &QueueQuery) -> Answer<Vec<Approval>> {
    client::get(&format!("/api/approvals?{}", query.to_query_string())).await
}

/// Calls shadow gates would have stopped, newest first.
pub async fn shadow_hits() -> Answer<Vec<crate::domain::wire::ShadowHit>> {
    client::get("/api/shadow-hits").await
}

/// Delegations you gave or received (an admin: all).
pub async fn delegations() -> Answer<Vec<Delegation>> {
    client::get("/api/delegations").await
}

pub async fn delegate(new: &NewDelegation) -> Answer<Delegation> {
    client::post("/api/delegations", new).await
}

pub async fn end_delegation(id: &str) -> Answer<Delegation> {
    client::post(&format!("/api/delegations/{}/revoke", crate::paths::query_value(id)), &json!({})).await
}

/// Groups of approvers (admins).
pub async fn groups() -> Answer<Vec<Group>> {
    client::get("/api/groups").await
}

pub async fn create_group(group: &NewGroup) -> Answer<Group> {
    client::post("/api/groups", group).await
}

pub async fn set_group_members(name: &str, members: &GroupMembers) -> Answer<Group> {
    client::put(&format!("/api/groups/{}", crate::paths::query_value(name)), members).await
}

pub async fn delete_group(name: &str) -> Answer<()> {
    client::delete(&format!("/api/groups/{}", crate::paths::query_value(name))).await
}

/// The agent configuration in force (admins).
pub async fn live_policy() -> Answer<LivePolicy> {
    client::get("/api/policy").await
}

/// What a draft configuration would have changed on the calls recorded (admins; reads only), as
/// the report's HTML the server renders (app/src/components/replay_report.rs).
pub async fn replay_policy(request: &ReplayRequest) -> Answer<String> {
    client::post_for_html("/api/policy/replay", request).await
}

pub async fn audit_verification() -> Answer<Value> {
    client::get("/api/audit/verify").await
}

/// The newest `limit` audit entries, newest first, of one kind and/or by one actor when given.
pub async fn audit_entries(limit: u32, kind: Option<String>, actor: Option<String>) -> Answer<Value> {
    let mut url = format!("/api/audit?order=newest&limit={limit}");
    for (key, value) in [("kind", kind), ("actor", actor)] {
        if let Some(value) = value {
            url.push_str(&format!("&{key}={}", crate::paths::query_value(&value)));
        }
    }
    client::get(&url).await
}

/// The conversation's event stream, resuming after sequence number `after`.
pub fn conversation_events_url(conversation_id: &ConversationId, after: i64) -> String {
    format!("/api/conversations/{conversation_id}/events?after={after}")
}

/// The approval queue's change signal.
pub const QUEUE_EVENTS_URL: &str = "/api/approvals/events";
