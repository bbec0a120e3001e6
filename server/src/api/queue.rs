//! `GET /api/approvals/events`: a live signal for the approval queue. Sends `queue-changed`
//! (with the approval id) whenever an approval the caller may see is requested, escalated,
//! reminded or decided; the queue page then reloads its list.

use crate::error::{ApiError, WriteErrors};
use domain::{ApprovalId, ConversationId, UserId};
use std::convert::Infallible;
use utoipa_axum::{router::OpenApiRouter, routes};

use domain::EventBody;
use std::collections::HashMap;

use axum::{
    Extension,
    extract::State,
    response::sse::{Event, KeepAlive, Sse},
};
use futures::Stream;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::{
    auth::{Credential, CurrentUser},
    state::AppState,
};
use engine::reads::Reads;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stream))
}

#[utoipa::path(
    get,
    path = "/api/approvals/events",
    operation_id = "queueEvents",
    tag = "approvals",
    summary = "SSE: `queue-changed` whenever an approval you may see is requested, escalated, reminded or decided",
    responses(
        (status = 200, description = "text/event-stream", body = String, content_type = "text/event-stream"),
        WriteErrors,
    ),
)]
async fn stream(
    State(state): State<AppState>,
    user: CurrentUser,
    credential: Option<Extension<Credential>>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let rx = state.reads.bus().subscribe();
    // Approvals already handed to this user (or to someone they stand in for, as the stream
    // starts): their decisions change the queue too.
    let mut deciders = vec![user.user.username.clone()];
    let mut handed_to_me = std::collections::HashSet::new();
    if !user.user.is_admin() {
        deciders.extend(state.reads.stands_in_for(&user.user.username).await?);
        for person in &deciders {
            handed_to_me.extend(state.reads.escalated_to(person).await?);
        }
    }
    let client = state.task_driver.metrics().sse_client();
    let watcher =
        Watcher { rx, reads: state.reads.clone(), user: user.clone(), deciders, owners: HashMap::new(), handed_to_me, _client: client };
    let stream = futures::stream::unfold(watcher, |mut watcher| async move {
        let approval_id = watcher.next_change().await?;
        let event = Event::default().event("queue-changed").data(json!({ "approval_id": approval_id }).to_string());
        Some((Ok(event), watcher))
    });
    let stream = state.streams.bound(state.reads.bus(), &user, credential.map(|c| c.0), stream)?;
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// One queue stream's view of the bus.
struct Watcher {
    rx: broadcast::Receiver<std::sync::Arc<crate::bus::Published>>,
    reads: Reads,
    user: CurrentUser,
    /// The user and whoever they stand in for (delegations in force when the stream opened).
    deciders: Vec<String>,
    /// Conversation owners already looked up (an owner never changes), so a busy queue costs one
    /// query per conversation per stream, not one per approval event.
    owners: HashMap<ConversationId, Option<UserId>>,
    /// Approvals escalated to this user (by name or group), or whose gate names them among its
    /// approvers, in other people's conversations.
    handed_to_me: std::collections::HashSet<ApprovalId>,
    _client: crate::metrics::SseClient,
}

/// Owners remembered per stream before the cache starts over.
const MAX_OWNERS: usize = 4096;

impl Watcher {
    /// The next approval change the user may see (`Some(None)`: some were missed, reload all).
    async fn next_change(&mut self) -> Option<Option<ApprovalId>> {
        loop {
            let published = match self.rx.recv().await {
                Ok(published) => published,
                Err(RecvError::Lagged(_)) => return Some(None),
                Err(RecvError::Closed) => return None,
            };
            let event = &published.event;
            let (EventBody::ApprovalRequired { approval_id, .. }
            | EventBody::ApprovalDecided { approval_id, .. }
            | EventBody::ApprovalEscalated { approval_id, .. }
            | EventBody::ApprovalReminder { approval_id, .. }
            | EventBody::ApprovalCounted { approval_id, .. }) = &event.body
            else {
                continue;
            };
            // Handed to this user, or asked of them (the gate's approvers): it joins their queue
            // now, and leaves it when decided.
            let me = |people: &[String]| people.iter().any(|p| self.deciders.contains(p));
            let mine = match &event.body {
                EventBody::ApprovalEscalated { deciders, .. } if me(deciders) => self.handed_to_me.insert(approval_id.clone()),
                EventBody::ApprovalRequired { approvers: Some(approvers), .. } if me(&approvers.people) => {
                    self.handed_to_me.insert(approval_id.clone());
                    true
                }
                EventBody::ApprovalDecided { .. } => self.handed_to_me.remove(approval_id),
                // Asked again (a retry) or reminded while with this user.
                _ => self.handed_to_me.contains(approval_id),
            };
            if mine || self.user.user.is_admin() || self.owns(&event.conversation_id).await {
                return Some(Some(approval_id.clone()));
            }
        }
    }

    async fn owns(&mut self, conversation_id: &ConversationId) -> bool {
        if !self.owners.contains_key(conversation_id) {
            if self.owners.len() >= MAX_OWNERS {
                self.owners.clear();
            }
            let owner = self.reads.conversation(conversation_id).await.ok().flatten().and_then(|c| c.owner_id);
            self.owners.insert(conversation_id.clone(), owner);
        }
        self.user.can_see(self.owners[conversation_id].as_ref())
    }
}
