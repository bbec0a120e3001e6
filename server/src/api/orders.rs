//! The demo domain, read-only over the API (the built-in tools change it).

use app::domain::wire::Order;
use axum::{
    Json, Router,
    extract::{Path, State},
    routing::get,
};

use super::ApiError;
use crate::{auth::CurrentUser, state::AppState, store::orders};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/orders", get(list)).route("/api/orders/{id}", get(read))
}

async fn list(State(state): State<AppState>, _user: CurrentUser) -> Result<Json<Vec<Order>>, ApiError> {
    Ok(Json(orders::list(state.store.pool(), None).await?.iter().map(|o| o.to_wire()).collect()))
}

async fn read(State(state): State<AppState>, _user: CurrentUser, Path(id): Path<String>) -> Result<Json<Order>, ApiError> {
    let not_found = || ApiError::NotFound(format!("order {id} does not exist"));
    let number: i64 = id.parse().map_err(|_| not_found())?;
    let order = orders::get(state.store.pool(), number).await?.ok_or_else(not_found)?;
    Ok(Json(order.to_wire()))
}
