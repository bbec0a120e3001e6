//! `/metrics` (Prometheus scrapes it; see `crate::metrics`) and `/readyz`.

use crate::error::{ApiError, ErrorBody, error_body};
use axum::{
    Json,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
};
use domain::wire::FieldProblem;
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};

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
    let pending = state.reads.pending_by_gate().await?;
    let text = state.task_driver.metrics().render(pending)?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text))
}

/// Ready, with how each background component is doing.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct Readiness {
    /// `ready`
    status: &'static str,
    components: Vec<engine::background::Health>,
}

/// Ready to take traffic: the database answers and no background component stopped.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "service",
    summary = "Ready when the database answers and every background component (sweeper, deliveries, claim renewal…) still runs; lists each with its state (running, failing with the last error, finished, panicked). No login needed.",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 503, description = "Busy or not ready; see Retry-After", body = ErrorBody),
    ),
    security(()),
)]
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if let Err(err) = state.reads.ping().await {
        tracing::warn!(error = ?err, "readiness check failed");
        return (StatusCode::SERVICE_UNAVAILABLE, Json(error_body("unavailable", "the database does not answer", None)));
    }
    readiness(state.background.report())
}

/// Ready unless a component stopped by panicking (one that fails a pass is said, still ready:
/// it retries by itself, and another replica would meet the same far end).
fn readiness(components: Vec<engine::background::Health>) -> (StatusCode, Json<serde_json::Value>) {
    let stopped: Vec<_> = components
        .iter()
        .filter(|c| c.state == engine::background::State::Panicked)
        .map(|c| FieldProblem::new(format!("/components/{}", c.name), "stopped by panicking; see the log"))
        .collect();
    if !stopped.is_empty() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(error_body("unavailable", "background work stopped", Some(stopped.as_slice()))));
    }
    (StatusCode::OK, Json(json!(Readiness { status: "ready", components })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::background::{Health, State};

    fn component(name: &'static str, state: State) -> Health {
        Health { name, state, error: None, since: None }
    }

    #[test]
    fn a_panicked_component_makes_the_process_not_ready_and_a_failing_one_does_not() {
        let (status, Json(body)) = readiness(vec![component("sweeper", State::Running), component("deliveries", State::Failing)]);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["components"][1]["state"], "failing");
        let (status, Json(body)) = readiness(vec![component("sweeper", State::Panicked), component("deliveries", State::Running)]);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["error"]["details"], json!([{ "path": "/components/sweeper", "message": "stopped by panicking; see the log" }]));
    }
}
