//! Revoking a standing permission ("always allow") of a conversation. Grants are created by
//! approving with `{"grant": {...}}` and listed in the conversation's view.

use crate::error::{ApiError, WriteErrors};
use axum::{
    extract::{Path, State},
    http::StatusCode,
};
use domain::GrantId;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::access;
use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(revoke))
}

#[utoipa::path(
    post,
    path = "/api/grants/{id}/revoke",
    operation_id = "revokeGrant",
    tag = "grants",
    summary = "Revoke a standing permission of a conversation",
    params(("id" = GrantId, Path)),
    responses(
        (status = 204, description = "Revoked"),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<GrantId>) -> Result<StatusCode, ApiError> {
    let not_found = || ApiError::NotFound(format!("grant {id} does not exist"));
    let grant = state.reads.grant(&id).await?.ok_or_else(not_found)?;
    access::visible_conversation(&state.reads, &user, &grant.conversation_id).await.map_err(|_| not_found())?;
    state.decisions.revoke_grant(&id, &access::actor(&user)).await?;
    Ok(StatusCode::NO_CONTENT)
}
