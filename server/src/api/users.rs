//! Accounts, for admins.

use axum::{Json, Router, extract::State, routing::get};

use super::ApiError;
use crate::{
    auth::CurrentUser,
    state::AppState,
    store::users::{self, User},
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/users", get(list))
}

async fn list(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<User>>, ApiError> {
    user.require_admin()?;
    Ok(Json(users::list(state.store.pool()).await?))
}
