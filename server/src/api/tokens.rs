//! Personal API tokens: create (the secret is shown once), list, revoke.

use axum::{
    Extension, Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{get, post},
};
use serde::{Deserialize, Serialize};

use super::{ApiError, extract::ApiJson};
use crate::{
    auth::{ByToken, Credential, CurrentUser, tokens},
    state::AppState,
    store::{
        time::rfc3339,
        users::{self, TokenInfo},
    },
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/tokens", get(list).post(create)).route("/api/tokens/{id}/revoke", post(revoke))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewToken {
    name: String,
}

#[derive(Serialize)]
struct CreatedToken {
    id: String,
    name: String,
    /// Shown once; only its hash is stored.
    token: String,
}

#[derive(Serialize)]
struct TokenView {
    #[serde(flatten)]
    info: TokenInfo,
    created_at: String,
}

/// Only a logged-in person makes tokens: a token that could make tokens would let a thief keep
/// access after the stolen token is revoked.
async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    by_token: Option<Extension<ByToken>>,
    ApiJson(body): ApiJson<NewToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    if by_token.is_some() {
        return Err(ApiError::Forbidden("a token cannot make tokens: log in to make one".into()));
    }
    let name = body.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid("name", "a token needs a name of 1 to 100 characters"));
    }
    let token = tokens::generate();
    let id = users::insert_token(state.store.writer(), &user.user.id, &name, &tokens::digest(&token)).await?;
    Ok((StatusCode::CREATED, Json(CreatedToken { id, name, token })))
}

async fn list(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<TokenView>>, ApiError> {
    let tokens = users::tokens_of(state.store.pool(), &user.user.id).await?;
    Ok(Json(tokens.into_iter().map(|info| TokenView { created_at: rfc3339(info.created_at_ms), info }).collect()))
}

async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    if users::revoke_token(state.store.writer(), &user.user.id, &id).await? {
        // Requests check the token each time; open event streams learn it here.
        crate::store::replicas::publish_revoked(&state.store, &Credential::of_token(&id).0).await?;
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no live token {id}")))
    }
}
