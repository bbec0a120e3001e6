//! `POST /api/approvals/{id}/links`: signed approve / reject links for one person (server/src/links),
//! to put in a message to them. The notification channels make them the same way.

use super::error::ErrorBody;
use app::domain::ApprovalId;
use axum::{
    Json,
    extract::{Path, State},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{ApiError, access, extract::ApiJson};
use crate::{
    auth::CurrentUser,
    links::{self, IssuedLinks},
    orchestrator::DecisionError,
    state::AppState,
    store::users,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(issue))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct LinkRequest {
    /// Who decides with the links (default: you; someone else: admins only).
    #[serde(default)]
    decider: Option<String>,
    /// How long they work, in seconds (default and most: 7 days; never past the deadline).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 604800)]
    ttl_secs: Option<i64>,
}

#[utoipa::path(
    post,
    path = "/api/approvals/{id}/links",
    operation_id = "issueDecisionLinks",
    tag = "approvals",
    summary = "Signed approve / reject links for one person, which work without logging in (audited)",
    params(("id" = ApprovalId, Path)),
    request_body = Option<LinkRequest>,
    responses(
        (status = 200, description = "OK", body = IssuedLinks),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = ErrorBody),
        (status = 401, description = "Not logged in: no valid session or API token", body = ErrorBody),
        (status = 403, description = "Links for someone else (admins only)", body = ErrorBody),
        (status = 404, description = "No such resource, or not yours", body = ErrorBody),
        (status = 409, description = "Conflict: the resource is no longer in a state that allows this", body = ErrorBody),
        (status = 413, description = "The body is too large", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 422, description = "Invalid input; `details` lists each problem", body = ErrorBody),
    ),
)]
async fn issue(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<LinkRequest>>,
) -> Result<Json<IssuedLinks>, ApiError> {
    access::visible_approval(&state, &user, &id).await?;
    let request = body.map(|ApiJson(b)| b).unwrap_or_default();
    let ttl = request.ttl_secs.unwrap_or(links::MAX_TTL_SECS);
    if !(1..=links::MAX_TTL_SECS).contains(&ttl) {
        return Err(ApiError::invalid("ttl_secs", format!("links work from 1 second to {} seconds (7 days)", links::MAX_TTL_SECS)));
    }
    let mut decider = access::actor(&user);
    if let Some(name) = request.decider.as_deref().map(str::trim).filter(|n| !n.eq_ignore_ascii_case(&user.user.username)) {
        if !user.user.is_admin() {
            return Err(ApiError::Forbidden("only an admin may make links for someone else".into()));
        }
        let account = users::credentials(state.store.pool(), name)
            .await?
            .ok_or_else(|| ApiError::invalid("decider", format!("no user is named {name:?}")))?;
        decider = crate::orchestrator::Actor { name: account.user.username, role: Some(account.user.role), ..decider };
    }
    let base = state.config.public_url.clone().unwrap_or_default();
    match links::issue(&state, &id, &decider, ttl, &user.user.username, &base).await {
        // The person could not decide it now: the links would only show them a refusal.
        Err(DecisionError::Forbidden(why)) => Err(ApiError::invalid("decider", format!("{} may not decide it: {why}", decider.name))),
        other => Ok(Json(other?)),
    }
}
