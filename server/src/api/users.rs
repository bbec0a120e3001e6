//! Accounts, for admins.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{auth::Admin, people::User, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(disable)).routes(routes!(enable))
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
    Ok(Json(state.reads.users().await?))
}

#[utoipa::path(
    post,
    path = "/api/users/{name}/disable",
    operation_id = "disableUser",
    tag = "users",
    summary = "Turn an account off (admin; audited): no logins, its sessions and tokens stop working, it leaves every group made here or by the identity provider, and the delegations it gave or received end",
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Turned off"),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn disable(State(state): State<AppState>, Admin(admin): Admin, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    // The engine also closes its event streams on every replica, by token or by session, as at a
    // token's revocation (engine/src/people/accounts.rs).
    state.people.disable_user(&name, &admin.user.username).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/api/users/{name}/enable",
    operation_id = "enableUser",
    tag = "users",
    summary = "Turn an account on again (admin; audited); its groups come back at its next sign-in or from an admin",
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Turned on"),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn enable(State(state): State<AppState>, Admin(admin): Admin, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    state.people.enable_user(&name, &admin.user.username).await?;
    Ok(StatusCode::NO_CONTENT)
}
