//! Tasks: read one, decide all of its pending approvals at once, or abort it.

use app::domain::TaskId;
use app::domain::wire::{DecisionOutcome, RejectRequest, Task};
use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};

use super::{
    ApiError,
    access::{self, actor, reason_of},
    extract::ApiJson,
};
use crate::{
    auth::CurrentUser,
    orchestrator::Decision,
    state::AppState,
    store::tasks::{self, TaskRow},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/tasks/{id}", get(read))
        .route("/api/tasks/{id}/approve-all", post(approve_all))
        .route("/api/tasks/{id}/reject-all", post(reject_all))
        .route("/api/tasks/{id}/abort", post(abort))
}

/// The task if it exists and `user` may see its conversation; 404 otherwise.
async fn visible_task(state: &AppState, user: &CurrentUser, id: &TaskId) -> Result<TaskRow, ApiError> {
    let not_found = || ApiError::NotFound(format!("task {id} does not exist"));
    let task = tasks::get(state.store.pool(), id).await?.ok_or_else(not_found)?;
    access::visible_conversation(&state.store, user, &task.conversation_id).await.map_err(|_| not_found())?;
    Ok(task)
}

#[tracing::instrument(skip(state, user))]
async fn read(State(state): State<AppState>, user: CurrentUser, Path(id): Path<TaskId>) -> Result<Json<Task>, ApiError> {
    Ok(Json(visible_task(&state, &user, &id).await?.to_wire()))
}

#[tracing::instrument(skip(state, user))]
async fn approve_all(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<TaskId>,
) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    visible_task(&state, &user, &id).await?;
    Ok(Json(state.orchestrator.decide_all(&id, Decision::Approve { args: None, grant: None }, &actor(&user)).await?))
}

#[tracing::instrument(skip(state, user, body))]
async fn reject_all(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<TaskId>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    visible_task(&state, &user, &id).await?;
    Ok(Json(state.orchestrator.decide_all(&id, Decision::Reject { reason: reason_of(body) }, &actor(&user)).await?))
}

#[tracing::instrument(skip(state, user))]
async fn abort(State(state): State<AppState>, user: CurrentUser, Path(id): Path<TaskId>) -> Result<Json<Task>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    visible_task(&state, &user, &id).await?;
    state.orchestrator.abort(&id, &actor(&user)).await?;
    Ok(Json(visible_task(&state, &user, &id).await?.to_wire()))
}
