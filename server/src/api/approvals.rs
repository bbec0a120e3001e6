//! The approval queue and decisions on one approval.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Json,
    extract::{Path, State},
};
use domain::ApprovalId;
use domain::{
    ApprovalState, Risk,
    wire::{
        Approval, ApproveRequest, CallPreview, DecisionOutcome, DeferRequest, EscalateRequest, PreviewRequest, RejectRequest, Reversibility,
    },
};
use engine::clock::now_ms;
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    access,
    extract::{ApiJson, ApiQuery},
};
use crate::{auth::CurrentUser, orchestrator::Decision, state::AppState};
use engine::reads::{Filter, QueueOrder, StateFilter};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read))
        .routes(routes!(preview))
        .routes(routes!(approve))
        .routes(routes!(reject))
        .routes(routes!(escalate))
        .routes(routes!(defer))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// `pending` (default), `decided`, `approved`, `rejected`, `expired`, `canceled` or `all`.
    #[param(pattern = "^(pending|decided|approved|rejected|expired|canceled|all)$")]
    status: Option<String>,
    /// At most this many (default 100).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// Only this tool's calls.
    tool: Option<String>,
    /// Owner's user name.
    user: Option<String>,
    /// `low`, `medium` or `high`.
    #[param(pattern = "^(low|medium|high)$")]
    risk: Option<String>,
    /// `newest` (default), `oldest`, `risk` (high first), `deadline` (soonest first) or
    /// `reversibility` (what cannot be undone first).
    #[param(pattern = "^(newest|oldest|risk|deadline|reversibility)$")]
    order: Option<String>,
    /// Only calls whose risk assessment says `fully`, `partially` or `irreversible`.
    #[param(pattern = "^(fully|partially|irreversible)$")]
    reversibility: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/approvals/{id}/escalate",
    operation_id = "escalate",
    tag = "approvals",
    summary = "Hand a pending approval over (owner or admin): to `to` (a user or a [[groups]] name), else the gate's escalation_target, else the admins; only they (or an admin) decide it afterwards",
    params(("id" = ApprovalId, Path)),
    request_body = Option<EscalateRequest>,
    responses(
        (status = 200, description = "OK", body = Approval),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, body))]
async fn escalate(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<EscalateRequest>>,
) -> Result<Json<Approval>, ApiError> {
    access::count_if_hidden(&state, &user, access::visible_approval(&state, &user, &id).await).await?;
    let to = body.and_then(|ApiJson(b)| b.to).map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    state.decisions.escalate(&id, &access::actor(&user), to.as_deref()).await?;
    Ok(Json(access::visible_approval(&state, &user, &id).await?.to_wire(now_ms())))
}

#[utoipa::path(
    get,
    path = "/api/approvals",
    operation_id = "listApprovals",
    tag = "approvals",
    summary = "The approval queue, newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "OK", body = Vec<Approval>),
        ReadErrors,
    ),
)]
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
    let order = match query.order.as_deref() {
        None => QueueOrder::Newest,
        Some(name) => QueueOrder::parse(name).ok_or_else(|| {
            ApiError::invalid("order", format!("unknown order {name:?}; expected one of {}", QueueOrder::NAMES.join(", ")))
        })?,
    };
    let reversibility = match query.reversibility.as_deref() {
        None => None,
        Some(name) => Some(Reversibility::parse(name).ok_or_else(|| {
            ApiError::invalid("reversibility", format!("unknown reversibility {name:?}; expected fully, partially or irreversible"))
        })?),
    };
    let stand_in_for = match user.owner_filter() {
        Some(_) => state.reads.stands_in_for(&user.user.username).await?,
        None => Vec::new(),
    };
    let filter = Filter {
        state: states,
        owner_id: user.owner_filter(),
        decider: user.owner_filter().map(|_| user.user.username.as_str()),
        stand_in_for: &stand_in_for,
        tool: query.tool.as_deref(),
        username: query.user.as_deref(),
        risk,
        reversibility,
        order,
        limit,
    };
    let rows = state.reads.approvals(&filter).await?;
    let now = now_ms();
    Ok(Json(rows.iter().map(|r| r.to_wire(now)).collect()))
}

#[tracing::instrument(skip(state, user))]
/// One approval, with its tool's input schema (the browser builds the edit form from it).
#[utoipa::path(
    get,
    path = "/api/approvals/{id}",
    operation_id = "getApproval",
    tag = "approvals",
    summary = "One approval",
    params(("id" = ApprovalId, Path)),
    responses(
        (status = 200, description = "OK", body = Approval),
        ReadErrors,
    ),
)]
async fn read(State(state): State<AppState>, user: CurrentUser, Path(id): Path<ApprovalId>) -> Result<Json<Approval>, ApiError> {
    let row = access::visible_approval(&state, &user, &id).await?;
    let mut approval = row.to_wire(now_ms());
    approval.args_schema = state.task_driver.input_schema(&row.tool);
    Ok(Json(approval))
}

/// Read-only: the edit form asks it as the reviewer types, to show the new headline and what
/// would make the edited call fail before they approve it.
#[utoipa::path(
    post,
    path = "/api/approvals/{id}/preview",
    operation_id = "previewApproval",
    tag = "approvals",
    summary = "What the pending call would do with edited arguments (nothing is decided)",
    params(("id" = ApprovalId, Path)),
    request_body = PreviewRequest,
    responses(
        (status = 200, description = "OK", body = CallPreview),
        WriteErrors,
    ),
)]
async fn preview(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    ApiJson(request): ApiJson<PreviewRequest>,
) -> Result<Json<CallPreview>, ApiError> {
    access::visible_approval(&state, &user, &id).await?;
    let described = state.decisions.preview(&id, request.args).await?;
    Ok(Json(CallPreview { summary: described.summary, warnings: described.warnings }))
}

/// The body is optional: no body, `{}` or `{"args": {...}}` to approve with edited arguments.
#[utoipa::path(
    post,
    path = "/api/approvals/{id}/approve",
    operation_id = "approve",
    tag = "approvals",
    summary = "Approve, optionally with edited arguments (validated against the tool's schema)",
    params(("id" = ApprovalId, Path)),
    request_body = Option<ApproveRequest>,
    responses(
        (status = 200, description = "OK", body = DecisionOutcome),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, body))]
async fn approve(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<ApproveRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    let (args, grant) = body.map(|ApiJson(b)| (b.args, b.grant)).unwrap_or_default();
    decide(&state, &user, &id, Decision::Approve { args, grant }).await
}

#[utoipa::path(
    post,
    path = "/api/approvals/{id}/reject",
    operation_id = "reject",
    tag = "approvals",
    summary = "Reject with an optional reason (the model sees it)",
    params(("id" = ApprovalId, Path)),
    request_body = Option<RejectRequest>,
    responses(
        (status = 200, description = "OK", body = DecisionOutcome),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, body))]
async fn reject(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<RejectRequest>>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    decide(&state, &user, &id, Decision::Reject { reason: access::reason_of(body) }).await
}

/// Does not run the call; the guidance goes to the model as the call's result.
#[utoipa::path(
    post,
    path = "/api/approvals/{id}/defer",
    operation_id = "defer",
    tag = "approvals",
    summary = "Defer with guidance: the call does not run; the guidance goes to the model",
    params(("id" = ApprovalId, Path)),
    request_body = DeferRequest,
    responses(
        (status = 200, description = "OK", body = DecisionOutcome),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, body))]
async fn defer(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    ApiJson(body): ApiJson<DeferRequest>,
) -> Result<Json<DecisionOutcome>, ApiError> {
    let guidance = body.guidance.trim().to_owned();
    if guidance.is_empty() || guidance.chars().count() > 2000 {
        return Err(ApiError::invalid("guidance", "guidance must have 1 to 2000 characters"));
    }
    decide(&state, &user, &id, Decision::Defer { guidance }).await
}

/// Approve, reject and defer take one path, from the API and from the page's forms
/// (server/src/forms.rs): the engine's decision, one write in which the attempt is counted
/// against the decision limit, the approval is read once, and whether this user sees it (a 404
/// if not) and may decide it now (`rules::may_decide`) is checked.
pub(crate) async fn decide(
    state: &AppState,
    user: &CurrentUser,
    id: &ApprovalId,
    decision: Decision,
) -> Result<Json<DecisionOutcome>, ApiError> {
    Ok(Json(state.decisions.decide(id, decision, &access::actor(user)).await?))
}
