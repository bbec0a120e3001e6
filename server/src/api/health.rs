//! `GET /healthz`: is the process up and can it reach its database?

use crate::error::ErrorBody;
use axum::{Json, extract::State, http::StatusCode};
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use engine::reads::Reads;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz))
}

#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "service",
    summary = "Liveness and database reachability",
    responses(
        (status = 200, description = "OK", body = Object),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 503, description = "Database unreachable", body = ErrorBody),
    ),
    security(()),
)]
#[tracing::instrument(skip_all)]
async fn healthz(State(reads): State<Reads>) -> (StatusCode, Json<Value>) {
    match reads.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({ "status": "ok", "database": "ok", "version": env!("CARGO_PKG_VERSION") }))),
        Err(err) => {
            tracing::warn!(error = ?err, "health check failed");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "unavailable", "database": "unreachable" })))
        }
    }
}
