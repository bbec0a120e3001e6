//! `/metrics` (Prometheus scrapes it; see `crate::metrics`) and `/readyz`.

use axum::{
    Json, Router,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
    routing::get,
};
use serde_json::json;

use super::ApiError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics)).route("/readyz", get(readyz))
}

async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let pending = crate::store::approvals::pending_by_gate(state.store.pool()).await?;
    let text = state.orchestrator.metrics().render(pending)?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text))
}

/// Ready to take traffic: the database answers.
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
