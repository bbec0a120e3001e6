//! `/metrics` (Prometheus scrapes it; see `crate::metrics`) and `/readyz`.

use super::error::ErrorBody;
use axum::{
    Json,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::ApiError;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics)).routes(routes!(readyz))
}

#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "service",
    summary = "Prometheus / OpenMetrics text: pending approvals by gate, decisions by outcome, time-to-decision and tool duration histograms, SSE clients, timeouts fired. No login needed.",
    responses(
        (status = 200, description = "OpenMetrics text", body = String, content_type = "application/openmetrics-text"),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 500, description = "The server failed", body = ErrorBody),
    ),
    security(()),
)]
async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let pending = crate::store::approvals::pending_by_gate(state.store.pool()).await?;
    let text = state.orchestrator.metrics().render(pending)?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text))
}

/// Ready to take traffic: the database answers.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "service",
    summary = "Ready when the database answers (no login needed)",
    responses(
        (status = 200, description = "Ready", body = Object),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 503, description = "Busy or not ready; see Retry-After", body = ErrorBody),
    ),
    security(()),
)]
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({ "status": "ready" }))),
        Err(err) => {
            tracing::warn!(error = ?err, "readiness check failed");
            let body = json!({ "error": { "code": "unavailable", "message": "the database does not answer" } });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body))
        }
    }
}
