//! The audit trail for admins: pages, a JSON Lines export, and chain verification.

use crate::error::{ApiError, ReadErrors};
use axum::{Json, extract::State, http::header, response::IntoResponse};
use engine::reads::{ExternalAnchor, Verification};
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::ApiQuery;
use crate::{auth::Admin, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(export)).routes(routes!(verify))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    /// Entries after this id (pagination cursor).
    after: Option<i64>,
    /// Only entries of this kind (e.g. `approval.decided`).
    kind: Option<String>,
    /// Only entries by this actor (a user name, or `system`).
    actor: Option<String>,
    /// At most this many (default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// `oldest` (default: oldest first, paged with `after`) or `newest` (the newest `limit`, newest first; not with `after`).
    #[param(pattern = "^(oldest|newest)$")]
    order: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/audit",
    operation_id = "audit",
    tag = "audit",
    summary = "Audit entries (admin), oldest first paginated by `after`, or the newest with `order=newest`",
    params(AuditQuery),
    responses(
        (status = 200, description = "OK", body = AuditPage),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn list(State(state): State<AppState>, _admin: Admin, ApiQuery(q): ApiQuery<AuditQuery>) -> Result<Json<AuditPage>, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::invalid("limit", "limit must be between 1 and 1000"));
    }
    let (kind, actor) = (q.kind.as_deref(), q.actor.as_deref());
    let (rows, next) = match q.order.as_deref() {
        None | Some("oldest") => {
            let rows = state.reads.audit_page(q.after.unwrap_or(0), kind, actor, limit).await?;
            let next = (rows.len() as i64 == limit).then(|| rows.last().map(|r| r.id)).flatten();
            (rows, next)
        }
        Some("newest") if q.after.is_none() => (state.reads.audit_newest(kind, actor, limit).await?, None),
        Some("newest") => return Err(ApiError::invalid("after", "after pages oldest first; it cannot be combined with order=newest")),
        Some(_) => return Err(ApiError::invalid("order", "order must be oldest or newest")),
    };
    Ok(Json(AuditPage { entries: rows.iter().map(|r| r.to_json()).collect(), next_after: next }))
}

/// A page of the audit trail.
#[derive(Serialize, utoipa::ToSchema)]
struct AuditPage {
    /// Each entry: id, time, kind, actor, data, and its place in the hash chain.
    entries: Vec<Value>,
    /// Pass as `after` for the next page (oldest-first order only); none at the end.
    next_after: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/audit/export",
    operation_id = "auditExport",
    tag = "audit",
    summary = "The whole audit trail as JSON Lines (admin)",
    responses(
        (status = 200, description = "JSON Lines", body = String, content_type = "application/x-ndjson"),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn export(State(state): State<AppState>, _admin: Admin) -> Result<impl IntoResponse, ApiError> {
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], state.reads.audit_export().await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct VerifyQuery {
    /// A checkpoint kept outside the database, `ENTRY_ID:HASH`.
    anchor: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/audit/verify",
    operation_id = "auditVerify",
    tag = "audit",
    summary = "Check the hash chain and its signed checkpoints (admin)",
    params(VerifyQuery),
    responses(
        (status = 200, description = "OK", body = Verification),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn verify(State(state): State<AppState>, _admin: Admin, ApiQuery(q): ApiQuery<VerifyQuery>) -> Result<Json<Verification>, ApiError> {
    let anchor = q.anchor.map(|a| a.parse::<ExternalAnchor>()).transpose().map_err(|e| ApiError::invalid("anchor", e))?;
    Ok(Json(state.reads.audit_verify(state.config.audit_key.as_ref(), anchor.as_ref()).await?))
}
