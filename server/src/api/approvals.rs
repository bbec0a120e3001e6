//! The approval queue and decisions on one approval.

use app::domain::wire::{Approval, ApproveRequest, DecisionOutcome, RejectRequest};
use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::json;

use super::{
    ApiError,
    extract::{Actor, ApiJson, ApiQuery},
};
use crate::{
    orchestrator::Decision,
    state::AppState,
    store::{approvals, time::now_ms},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/approvals", get(list))
        .route("/api/approvals/{id}", get(read))
        .route("/api/approvals/{id}/approve", post(approve))
        .route("/api/approvals/{id}/reject", post(reject))
}

const STATES: [&str; 7] = ["pending", "decided", "approved", "rejected", "expired", "canceled", "all"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    status: Option<String>,
    limit: Option<i64>,
}

#[tracing::instrument(skip(state))]
async fn list(State(state): State<AppState>, ApiQuery(query): ApiQuery<ListQuery>) -> Result<Json<Vec<Approval>>, ApiError> {
    let status = query.status.as_deref().unwrap_or("pending");
    if !STATES.contains(&status) {
        return Err(ApiError::Unprocessable {
            message: format!("unknown status {status:?}"),
            details: json!([{ "path": "/status", "message": format!("expected one of {}", STATES.join(", ")) }]),
        });
    }
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::Unprocessable {
            message: "limit must be between 1 and 500".into(),
            details: json!([{ "path": "/limit", "message": "between 1 and 500" }]),
        });
    }
    let filter = (status != "all").then_some(status);
    let rows = approvals::list(state.store.pool(), filter, limit).await?;
    let now = now_ms();
    Ok(Json(rows.iter().map(|r| r.to_wire(now)).collect()))
}

#[tracing::instrument(skip(state))]
async fn read(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Approval>, ApiError> {
    let row = approvals::get(state.store.pool(), &id).await?.ok_or_else(|| ApiError::NotFound(format!("approval {id} does not exist")))?;
    Ok(Json(row.to_wire(now_ms())))
}

/// The body is optional: no body, `{}` or `{"args": {...}}` to approve with edited arguments.
#[tracing::instrument(skip(state, body))]
async fn approve(
    State(state): State<AppState>,
    Actor(actor): Actor,
    Path(id): Path<String>,
    body: Option<ApiJson<ApproveRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    let args = body.and_then(|ApiJson(b)| b.args);
    Ok(Json(state.orchestrator.decide(&id, Decision::Approve { args }, &actor).await?))
}

#[tracing::instrument(skip(state, body))]
async fn reject(
    State(state): State<AppState>,
    Actor(actor): Actor,
    Path(id): Path<String>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    let reason = body.and_then(|ApiJson(b)| b.reason).map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
    Ok(Json(state.orchestrator.decide(&id, Decision::Reject { reason }, &actor).await?))
}
