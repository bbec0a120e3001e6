//! Revoking a standing permission ("always allow") of a conversation. Grants are created by
//! approving with `{"grant": {...}}` and listed in the conversation's view.

use app::domain::GrantId;
use axum::{
    Router,
    extract::{Path, State},
    http::StatusCode,
    routing::post,
};

use super::{ApiError, access};
use crate::{auth::CurrentUser, state::AppState, store::grants};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/grants/{id}/revoke", post(revoke))
}

#[tracing::instrument(skip(state, user))]
async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<GrantId>) -> Result<StatusCode, ApiError> {
    let not_found = || ApiError::NotFound(format!("grant {id} does not exist"));
    let grant = grants::get(state.store.pool(), &id).await?.ok_or_else(not_found)?;
    access::visible_conversation(&state.store, &user, &grant.conversation_id).await.map_err(|_| not_found())?;
    state.orchestrator.revoke_grant(&id, &access::actor(&user)).await?;
    Ok(StatusCode::NO_CONTENT)
}
