//! The demo domain, read-only over the API (the built-in tools change it).

use crate::error::{ApiError, ReadErrors};
use axum::{
    Json,
    extract::{Path, State},
};
use domain::wire::Order;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(read))
}

#[utoipa::path(
    get,
    path = "/api/orders",
    operation_id = "listOrders",
    tag = "orders",
    summary = "Demo orders",
    responses(
        (status = 200, description = "OK", body = Vec<Order>),
        ReadErrors,
    ),
)]
async fn list(State(state): State<AppState>, _user: CurrentUser) -> Result<Json<Vec<Order>>, ApiError> {
    Ok(Json(state.reads.orders().await?))
}

#[utoipa::path(
    get,
    path = "/api/orders/{id}",
    operation_id = "getOrder",
    tag = "orders",
    summary = "One demo order",
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "OK", body = Order),
        ReadErrors,
    ),
)]
async fn read(State(state): State<AppState>, _user: CurrentUser, Path(id): Path<String>) -> Result<Json<Order>, ApiError> {
    let not_found = || ApiError::NotFound(format!("order {id} does not exist"));
    let number: i64 = id.parse().map_err(|_| not_found())?;
    Ok(Json(state.reads.order(number).await?.ok_or_else(not_found)?))
}
