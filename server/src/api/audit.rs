//! The audit trail for admins: pages, a JSON Lines export, and chain verification.

use axum::{Json, Router, extract::State, http::header, response::IntoResponse, routing::get};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, extract::ApiQuery};
use crate::{
    auth::Admin,
    state::AppState,
    store::audit::{self, Verification},
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/audit", get(list)).route("/api/audit/export", get(export)).route("/api/audit/verify", get(verify))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    /// Entries after this id (pagination cursor).
    after: Option<i64>,
    kind: Option<String>,
    actor: Option<String>,
    limit: Option<i64>,
    /// `oldest` (default: oldest first, paged with `after`) or `newest` (the newest `limit`, newest first).
    order: Option<String>,
}

async fn list(State(state): State<AppState>, _admin: Admin, ApiQuery(q): ApiQuery<AuditQuery>) -> Result<Json<Value>, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::invalid("limit", "limit must be between 1 and 1000"));
    }
    let (kind, actor) = (q.kind.as_deref(), q.actor.as_deref());
    let (rows, next) = match q.order.as_deref() {
        None | Some("oldest") => {
            let rows = audit::page(state.store.pool(), q.after.unwrap_or(0), kind, actor, limit).await?;
            let next = (rows.len() as i64 == limit).then(|| rows.last().map(|r| r.id)).flatten();
            (rows, next)
        }
        Some("newest") if q.after.is_none() => (audit::newest(state.store.pool(), kind, actor, limit).await?, None),
        Some("newest") => return Err(ApiError::invalid("after", "after pages oldest first; it cannot be combined with order=newest")),
        Some(_) => return Err(ApiError::invalid("order", "order must be oldest or newest")),
    };
    Ok(Json(json!({ "entries": rows.iter().map(|r| r.to_json()).collect::<Vec<_>>(), "next_after": next })))
}

async fn export(State(state): State<AppState>, _admin: Admin) -> Result<impl IntoResponse, ApiError> {
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], audit::export_lines(&state.store).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyQuery {
    /// A checkpoint kept outside the database, `ENTRY_ID:HASH`.
    anchor: Option<String>,
}

async fn verify(State(state): State<AppState>, _admin: Admin, ApiQuery(q): ApiQuery<VerifyQuery>) -> Result<Json<Verification>, ApiError> {
    let anchor = q.anchor.map(|a| a.parse::<audit::ExternalAnchor>()).transpose().map_err(|e| ApiError::invalid("anchor", e))?;
    Ok(Json(audit::verify(state.store.pool(), state.config.audit_key.as_ref(), anchor.as_ref()).await?))
}
