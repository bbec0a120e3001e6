//! Tasks: read one, decide all of its pending approvals at once, or abort it.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Extension, Json,
    extract::{Path, State},
};
use domain::TaskId;
use domain::wire::{DecisionOutcome, RejectRequest, Task};
use engine::reads::TaskRow;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    access::{self, actor, reason_of},
    extract::ApiJson,
};
use crate::{
    auth::{
        Credential, CurrentUser,
        scopes::{self, Scopes},
    },
    orchestrator::Decision,
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(read)).routes(routes!(approve_all)).routes(routes!(reject_all)).routes(routes!(abort))
}

/// The task with its summary, folded from its conversation's events by the chat's own fold.
async fn with_summary(state: &AppState, task: &TaskRow) -> Result<Task, ApiError> {
    Ok(state.reads.task_view(task).await?)
}

/// The task if it exists and `user` may see its conversation; 404 otherwise.
async fn visible_task(state: &AppState, user: &CurrentUser, id: &TaskId) -> Result<TaskRow, ApiError> {
    let not_found = || ApiError::NotFound(format!("task {id} does not exist"));
    let task = state.reads.task(id).await?.ok_or_else(not_found)?;
    access::visible_conversation(&state.reads, user, &task.conversation_id).await.map_err(|_| not_found())?;
    Ok(task)
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}",
    operation_id = "getTask",
    tag = "tasks",
    summary = "One task",
    params(("id" = TaskId, Path)),
    responses(
        (status = 200, description = "OK", body = Task),
        ReadErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn read(State(state): State<AppState>, user: CurrentUser, Path(id): Path<TaskId>) -> Result<Json<Task>, ApiError> {
    Ok(Json(with_summary(&state, &visible_task(&state, &user, &id).await?).await?))
}

#[utoipa::path(
    post,
    path = "/api/tasks/{id}/approve-all",
    operation_id = "approveAll",
    tag = "tasks",
    summary = "Approve every pending approval of the task",
    params(("id" = TaskId, Path)),
    responses(
        (status = 200, description = "OK", body = Vec<DecisionOutcome>),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn approve_all(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<TaskId>,
) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    Ok(Json(decide_all(&state, &user, &id, Decision::Approve { args: None, grant: None }).await?))
}

#[utoipa::path(
    post,
    path = "/api/tasks/{id}/reject-all",
    operation_id = "rejectAll",
    tag = "tasks",
    summary = "Reject every pending approval of the task",
    params(("id" = TaskId, Path)),
    request_body = Option<RejectRequest>,
    responses(
        (status = 200, description = "OK", body = Vec<DecisionOutcome>),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, body))]
async fn reject_all(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<TaskId>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<Vec<DecisionOutcome>>, ApiError> {
    Ok(Json(decide_all(&state, &user, &id, Decision::Reject { reason: reason_of(body) }).await?))
}

/// Approve All and Reject All take one path, from the API and from the page's forms
/// (server/src/forms.rs): the task's visibility to this user, then the decisions, counted as one
/// against the decision limit, where the authority rules are asked in the same transaction as
/// their write.
pub(crate) async fn decide_all(
    state: &AppState,
    user: &CurrentUser,
    id: &TaskId,
    decision: Decision,
) -> Result<Vec<domain::wire::DecisionOutcome>, ApiError> {
    access::count_if_hidden(state, user, visible_task(state, user, id).await).await?;
    Ok(state.decisions.decide_all(id, decision, &actor(user)).await?)
}

#[utoipa::path(
    post,
    path = "/api/tasks/{id}/abort",
    operation_id = "abortTask",
    tag = "tasks",
    summary = "Abort the task; pending approvals are canceled",
    params(("id" = TaskId, Path)),
    responses(
        (status = 200, description = "OK", body = Task),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, credential))]
async fn abort(
    State(state): State<AppState>,
    user: CurrentUser,
    scopes: Scopes,
    credential: Option<Extension<Credential>>,
    Path(id): Path<TaskId>,
) -> Result<Json<Task>, ApiError> {
    let task = visible_task(&state, &user, &id).await?;
    if !scopes::may_stop(credential.as_deref(), scopes, &task) {
        return Err(ApiError::Forbidden(scopes::MAY_NOT_STOP.into()));
    }
    // The abort counts against the decision limit (in the engine) only once this credential may
    // stop it: a token refused here uses up nothing of its person's.
    state.decisions.abort(&id, &actor(&user)).await?;
    Ok(Json(with_summary(&state, &visible_task(&state, &user, &id).await?).await?))
}
