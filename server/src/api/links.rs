//! `POST /api/approvals/{id}/links`: signed approve / reject links for one person (server/src/links).
//! A link decides as its person, so only that person ever receives it: links for yourself are
//! answered; an admin's request for someone else's is sent to them by email (the way the
//! notification channels send theirs) and never shown to the admin (docs/security.md).

use crate::error::{ApiError, WriteErrors};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use domain::ApprovalId;
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{access, extract::ApiJson};
use crate::{
    EngineError,
    auth::CurrentUser,
    links::{self, IssuedLinks},
    orchestrator::Actor,
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(issue)).routes(routes!(revoke))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct LinkRequest {
    /// Who decides with the links (default: you). Someone else (admins only): the links are
    /// emailed to them, never answered.
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
        (status = 200, description = "Your links", body = IssuedLinks),
        (status = 202, description = "Someone else's links, queued to be emailed to them", body = SentLinks),
        WriteErrors,
    ),
)]
async fn issue(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ApprovalId>,
    body: Option<ApiJson<LinkRequest>>,
) -> Result<Response, ApiError> {
    access::visible_approval(&state, &user, &id).await?;
    let request = body.map(|ApiJson(b)| b).unwrap_or_default();
    let ttl = request.ttl_secs.unwrap_or(links::MAX_TTL_SECS);
    if !(1..=links::MAX_TTL_SECS).contains(&ttl) {
        return Err(ApiError::invalid("ttl_secs", format!("links work from 1 second to {} seconds (7 days)", links::MAX_TTL_SECS)));
    }
    let mut decider = access::actor(&user);
    if let Some(name) = request.decider.as_deref().map(str::trim).filter(|n| !n.eq_ignore_ascii_case(&user.user.username)) {
        if !user.user.is_admin() {
            return Err(ApiError::Forbidden("only an admin may have links sent to someone else".into()));
        }
        let account =
            state.reads.credentials(name).await?.ok_or_else(|| ApiError::invalid("decider", format!("no user is named {name:?}")))?;
        decider = crate::orchestrator::Actor {
            name: account.user.username,
            user_id: Some(account.user.id),
            role: Some(account.user.role),
            ..decider
        };
        return send(&state, &id, &decider, &user).await.map(|sent| (StatusCode::ACCEPTED, Json(sent)).into_response());
    }
    let base = state.config.public_url.clone().unwrap_or_default();
    match links::issue(&state, &id, &decider, ttl, &user.user.username, &base).await {
        // The person could not decide it now: the links would only show them a refusal.
        Err(EngineError::NotAllowed(why)) => Err(ApiError::invalid("decider", format!("{} may not decide it: {why}", decider.name))),
        other => Ok(Json(other?).into_response()),
    }
}

/// Someone else's links, on their way to them.
#[derive(Serialize, utoipa::ToSchema)]
struct SentLinks {
    decider: String,
    /// How they reach them: `email`.
    sent_by: &'static str,
}

/// Queues an email with `decider`'s own links (made when it is sent, for them alone), if they
/// may decide the approval now and have an address the server can send to. The engine checks
/// again inside its write that they still may (engine/src/orchestrator/decision_links.rs).
async fn send(state: &AppState, id: &ApprovalId, decider: &Actor, by: &CurrentUser) -> Result<SentLinks, ApiError> {
    let refused = |why: String| ApiError::invalid("decider", why);
    let approval = match state.decisions.may_decide_now(id, decider).await {
        Ok((approval, as_decider)) => match crate::orchestrator::four_eyes(&as_decider, &approval) {
            Err(EngineError::NotAllowed(why)) => return Err(refused(format!("{} may not decide it: {why}", decider.name))),
            other => other.map(|()| approval)?,
        },
        Err(EngineError::NotAllowed(why)) => return Err(refused(format!("{} may not decide it: {why}", decider.name))),
        Err(other) => return Err(other.into()),
    };
    if !state.reads.sees_approval(&approval, decider).await? {
        return Err(refused(format!("{} may not decide it: not theirs, not named to decide it", decider.name)));
    }
    if state.config.smtp_url.is_none() {
        return Err(refused(format!(
            "links decide as {0}, so only {0} may receive them, and this server sends no email (COUNTERSIGN_SMTP_URL): ask {0} to make their own",
            decider.name
        )));
    }
    let address = state.reads.email_of(&decider.name).await?.ok_or_else(|| {
        refused(format!(
            "links decide as {0}, so only {0} may receive them, and {0} has no email address (countersign user email {0} ADDRESS)",
            decider.name
        ))
    })?;
    match state.decision_links.send_by_email(&approval.id, decider, &address, &access::actor(by)).await {
        // No longer theirs to decide since the checks above (a decided one is a 409 as above).
        Err(EngineError::NotAllowed(why)) => return Err(refused(format!("{} may not decide it: {why}", decider.name))),
        other => other?,
    }
    Ok(SentLinks { decider: decider.name.clone(), sent_by: "email" })
}

#[utoipa::path(
    post,
    path = "/api/links/{id}/revoke",
    operation_id = "revokeDecisionLinks",
    tag = "approvals",
    summary = "Revoke a pair of decision links before they expire (the person they decide as, or an admin; audited)",
    params(("id" = String, Path, description = "`link_id` from issuing them")),
    responses(
        (status = 204, description = "Revoked: following them shows a page saying so and decides nothing"),
        WriteErrors,
    ),
)]
async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    // Not theirs (nor an admin's to revoke): 404; revoked already: 409.
    state.decision_links.revoke(&id, &access::actor(&user)).await?;
    Ok(StatusCode::NO_CONTENT)
}
