//! `GET /api/approvals/events`: a live signal for the approval queue. Sends `queue-changed`
//! (with the approval id) whenever an approval the caller may see is requested or decided; the
//! queue page then reloads its list.

use std::convert::Infallible;

use app::domain::EventBody;
use axum::{
    Router,
    extract::State,
    response::sse::{Event, KeepAlive, Sse},
    routing::get,
};
use futures::Stream;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::{auth::CurrentUser, state::AppState, store::conversations};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/approvals/events", get(stream))
}

async fn stream(State(state): State<AppState>, user: CurrentUser) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.store.bus().subscribe();
    let client = state.orchestrator.metrics().sse_client();
    let stream = futures::stream::unfold((rx, state, user, client), |(mut rx, state, user, client)| async move {
        loop {
            let approval_id = match rx.recv().await {
                Ok(event) => match &event.body {
                    EventBody::ApprovalRequired { approval_id, .. }
                    | EventBody::ApprovalDecided { approval_id, .. }
                    | EventBody::ApprovalEscalated { approval_id, .. } => {
                        let owner =
                            conversations::get(state.store.pool(), &event.conversation_id).await.ok().flatten().and_then(|c| c.owner_id);
                        if !user.can_see(owner.as_deref()) {
                            continue;
                        }
                        Some(approval_id.clone())
                    }
                    _ => continue,
                },
                // Missed some: tell the page to reload anyway.
                Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => return None,
            };
            let event = Event::default().event("queue-changed").data(json!({ "approval_id": approval_id }).to_string());
            return Some((Ok(event), (rx, state, user, client)));
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
