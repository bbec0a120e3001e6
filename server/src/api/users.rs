//! Accounts, for admins.

use super::error::ReadErrors;
use axum::{Json, extract::State};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::ApiError;
use crate::{
    auth::Admin,
    state::AppState,
    store::users::{self, User},
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

#[utoipa::path(
    get,
    path = "/api/users",
    operation_id = "listUsers",
    tag = "users",
    summary = "Accounts (admin)",
    responses(
        (status = 200, description = "OK", body = Vec<User>),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn list(State(state): State<AppState>, _admin: Admin) -> Result<Json<Vec<User>>, ApiError> {
    Ok(Json(users::list(&state.store).await?))
}
