//! The approval queue and decisions on one approval.

use app::domain::ApprovalId;
use app::domain::{
    ApprovalState, Risk,
    wire::{Approval, ApproveRequest, DecisionOutcome, DeferRequest, RejectRequest},
};
use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use serde::Deserialize;

use super::{
    ApiError, access,
    extract::{ApiJson, ApiQuery},
};
use crate::{
    auth::CurrentUser,
    orchestrator::Decision,
    state::AppState,
    store::{
        approvals::{self, Filter, StateFilter},
        time::now_ms,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/approvals", get(list))
        .route("/api/approvals/{id}", get(read))
        .route("/api/approvals/{id}/approve", post(approve))
        .route("/api/approvals/{id}/reject", post(reject))
        .route("/api/approvals/{id}/escalate", post(escalate))
        .route("/api/approvals/{id}/defer", post(defer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    status: Option<String>,
    limit: Option<i64>,
    tool: Option<String>,
    /// Owner's user name.
    user: Option<String>,
    risk: Option<String>,
    /// `newest` (default) or `oldest`.
    order: Option<String>,
}

#[tracing::instrument(skip(state, user))]
async fn escalate(State(state): State<AppState>, user: CurrentUser, Path(id): Path<ApprovalId>) -> Result<Json<Approval>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    access::visible_approval(&state, &user, &id).await?;
    state.orchestrator.escalate(&id, &access::actor(&user)).await?;
    Ok(Json(access::visible_approval(&state, &user, &id).await?.to_wire(now_ms())))
}

#[tracing::instrument(skip(state, user))]
async fn list(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<Vec<Approval>>, ApiError> {
    let status = query.status.as_deref().unwrap_or("pending");
    let states = StateFilter::parse(status).map_err(|_| {
        let names: Vec<&str> = ApprovalState::ALL.iter().map(|s| s.as_str()).chain(["decided", "all"]).collect();
        ApiError::invalid("status", format!("unknown status {status:?}; expected one of {}", names.join(", ")))
    })?;
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::invalid("limit", "limit must be between 1 and 500"));
    }
    let risk = query
        .risk
        .as_deref()
        .map(Risk::parse)
        .transpose()
        .map_err(|unknown| ApiError::invalid("risk", format!("unknown risk {:?}; expected low, medium or high", unknown.name)))?;
    let oldest_first = match query.order.as_deref() {
        None | Some("newest") => false,
        Some("oldest") => true,
        Some(other) => return Err(ApiError::invalid("order", format!("unknown order {other:?}; expected newest or oldest"))),
    };
    let filter = Filter {
        state: states,
        owner_id: user.owner_filter(),
        tool: query.tool.as_deref(),
        username: query.user.as_deref(),
        risk,
        oldest_first,
        limit,
    };
    let rows = approvals::list(state.store.pool(), &filter).await?;
    let now = now_ms();
    Ok(Json(rows.iter().map(|r| r.to_wire(now)).collect()))
}

#[tracing::instrument(skip(state, user))]
/// One approval, with its tool's input schema (the browser builds the edit form from it).
async fn read(State(state): State<AppState>, user: CurrentUser, Path(id): Path<ApprovalId>) -> Result<Json<Approval>, ApiError> {
    let row = access::visible_approval(&state, &user, &id).await?;
    let mut approval = row.to_wire(now_ms());
    approval.args_schema = state.orchestrator.input_schema(&row.tool);
    Ok(Json(approval))
}

/// The body is optional: no body, `{}` or `{"args": {...}}` to approve with edited arguments.
#[tracing::instrument(skip(state, user, body))]
async fn approve(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<ApproveRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    // Whether this user may decide it now is checked inside the decision (`rules::may_decide`).
    access::visible_approval(&state, &user, &id).await?;
    let (args, grant) = body.map(|ApiJson(b)| (b.args, b.grant)).unwrap_or_default();
    Ok(Json(state.orchestrator.decide(&id, Decision::Approve { args, grant }, &access::actor(&user)).await?))
}

#[tracing::instrument(skip(state, user, body))]
async fn reject(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    // Whether this user may decide it now is checked inside the decision (`rules::may_decide`).
    access::visible_approval(&state, &user, &id).await?;
    Ok(Json(state.orchestrator.decide(&id, Decision::Reject { reason: access::reason_of(body) }, &access::actor(&user)).await?))
}

/// Does not run the call; the guidance goes to the model as the call's result.
#[tracing::instrument(skip(state, user, body))]
async fn defer(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    ApiJson(body): ApiJson<DeferRequest>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    state.limits.decision(state.store.writer(), &user.user.id).await?;
    // Whether this user may decide it now is checked inside the decision (`rules::may_decide`).
    access::visible_approval(&state, &user, &id).await?;
    let guidance = body.guidance.trim().to_owned();
    if guidance.is_empty() || guidance.chars().count() > 2000 {
        return Err(ApiError::invalid("guidance", "guidance must have 1 to 2000 characters"));
    }
    Ok(Json(state.orchestrator.decide(&id, Decision::Defer { guidance }, &access::actor(&user)).await?))
}
