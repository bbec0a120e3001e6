//! Accounts, for admins.

use axum::{Json, Router, extract::State, routing::get};

use super::ApiError;
use crate::{
    auth::Admin,
    state::AppState,
    store::users::{self, User},
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/users", get(list))
}

async fn list(State(state): State<AppState>, _admin: Admin) -> Result<Json<Vec<User>>, ApiError> {
    Ok(Json(users::list(state.store.pool()).await?))
}
