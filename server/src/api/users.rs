//! Accounts, for admins.

use super::error::ErrorBody;
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
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 401, description = "Not logged in: no valid session or API token", body = ErrorBody),
        (status = 403, description = "Not allowed for this user", body = ErrorBody),
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn list(State(state): State<AppState>, _admin: Admin) -> Result<Json<Vec<User>>, ApiError> {
    Ok(Json(users::list(state.store.pool()).await?))
}
