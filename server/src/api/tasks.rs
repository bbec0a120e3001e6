//! Tasks: read one, decide all of its pending approvals at once, or abort it.

use app::domain::wire::{DecisionOutcome, RejectRequest, Task};
use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};

use super::{
    ApiError,
    extract::{Actor, ApiJson},
};
use crate::{orchestrator::Decision, state::AppState, store::tasks};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/tasks/{id}", get(read))
        .route("/api/tasks/{id}/approve-all", post(approve_all))
        .route("/api/tasks/{id}/reject-all", post(reject_all))
        .route("/api/tasks/{id}/abort", post(abort))
}

#[tracing::instrument(skip(state))]
async fn read(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Task>, ApiError> {
    let task = tasks::get(state.store.pool(), &id).await?.ok_or_else(|| ApiError::NotFound(format!("task {id} does not exist")))?;
    Ok(Json(task.to_wire()))
}

#[tracing::instrument(skip(state))]
async fn approve_all(State(state): State<AppState>, Actor(actor): Actor, Path(id): Path<String>) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    Ok(Json(state.orchestrator.decide_all(&id, Decision::Approve { args: None }, &actor).await?))
}

#[tracing::instrument(skip(state, body))]
async fn reject_all(
    State(state): State<AppState>,
    Actor(actor): Actor,
    Path(id): Path<String>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    let reason = body.and_then(|ApiJson(b)| b.reason).map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
    Ok(Json(state.orchestrator.decide_all(&id, Decision::Reject { reason }, &actor).await?))
}

#[tracing::instrument(skip(state))]
async fn abort(State(state): State<AppState>, Actor(actor): Actor, Path(id): Path<String>) -> Result<Json<Task>, ApiError> {
    state.orchestrator.abort(&id, &actor).await?;
    let task = tasks::get(state.store.pool(), &id).await?.ok_or_else(|| ApiError::NotFound(format!("task {id} does not exist")))?;
    Ok(Json(task.to_wire()))
}
