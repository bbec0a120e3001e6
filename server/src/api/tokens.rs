//! Personal API tokens: create (the secret is shown once), list, revoke.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Extension, Json,
    extract::{Path, State},
    http::StatusCode,
};
use engine::clock::rfc3339;
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::ApiJson;
use crate::{
    auth::{ByToken, CurrentUser, scopes::Scopes, tokens},
    people::TokenInfo,
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(revoke))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewToken {
    #[schema(min_length = 1, max_length = 100)]
    name: String,
    /// What it may do: `read`, `decide`, `call` (default: all three). Give an agent's gateway
    /// client `["call"]`, so it cannot decide the calls it asks for (docs/security.md, "Tokens").
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct CreatedToken {
    id: String,
    name: String,
    scopes: Vec<&'static str>,
    /// Shown once; only its hash is stored.
    token: String,
}

#[derive(Serialize, utoipa::ToSchema)]
struct TokenView {
    #[serde(flatten)]
    info: TokenInfo,
    created_at: String,
}

/// Only a logged-in person makes tokens: a token that could make tokens would let a thief keep
/// access after the stolen token is revoked.
#[utoipa::path(
    post,
    path = "/api/tokens",
    operation_id = "createToken",
    tag = "tokens",
    summary = "Create an API token; the secret is in this answer only",
    request_body = NewToken,
    responses(
        (status = 201, description = "Created", body = CreatedToken),
        WriteErrors,
    ),
)]
async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    by_token: Option<Extension<ByToken>>,
    ApiJson(body): ApiJson<NewToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    if by_token.is_some() {
        return Err(ApiError::Forbidden(
            "a token cannot make tokens, whatever its scopes: tokens are made from a signed-in session only (log in to make one)".into(),
        ));
    }
    let name = body.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid("name", "a token needs a name of 1 to 100 characters"));
    }
    let scopes = match &body.scopes {
        None => Scopes::ALL,
        Some(names) => Scopes::parse(&names.join(" ")).map_err(|why| ApiError::invalid("scopes", why))?,
    };
    let token = tokens::generate();
    let id = state.accounts.create_token(&user.user.id, &name, &tokens::digest(&token), &scopes.to_string()).await?;
    Ok((StatusCode::CREATED, Json(CreatedToken { id, name, scopes: scopes.names(), token })))
}

#[utoipa::path(
    get,
    path = "/api/tokens",
    operation_id = "listTokens",
    tag = "tokens",
    summary = "Your API tokens (never the secret)",
    responses(
        (status = 200, description = "OK", body = Vec<TokenView>),
        ReadErrors,
    ),
)]
async fn list(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<TokenView>>, ApiError> {
    let tokens = state.reads.tokens_of(&user.user.id).await?;
    Ok(Json(tokens.into_iter().map(|info| TokenView { created_at: rfc3339(info.created_at_ms), info }).collect()))
}

#[utoipa::path(
    post,
    path = "/api/tokens/{id}/revoke",
    operation_id = "revokeToken",
    tag = "tokens",
    summary = "Revoke one of your tokens",
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Revoked"),
        ReadErrors,
    ),
)]
async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    // Requests check the token each time; open event streams learn it from the engine's revocation,
    // on every replica.
    if state.accounts.revoke_token(&user.user.id, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no live token {id}")))
    }
}
