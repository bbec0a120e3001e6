//! `/decide/{token}`: the page a signed decision link opens (GET shows the call and a button;
//! only the button's POST decides), and every way a link can fail, each as a page that says why.

use axum::{
    Form, Router,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    routing::get,
};
use engine::clock::{now_ms, rfc3339};
use engine::reads::ApprovalRow;
use serde::Deserialize;

use super::token::{Claims, LinkAction, TokenError, args_hash};
use crate::{
    EngineError,
    auth::client_ip::ClientIp,
    orchestrator::{Actor, Decision},
    state::AppState,
};

pub fn router() -> Router<AppState> {
    Router::new().route("/decide/{token}", get(show).post(decide))
}

use crate::plain_page::{Page, escape_html};

/// A link's page: the plain page, with the way to the queue (a link's reader may not be logged in).
fn page(status: StatusCode, title: &str, body: String) -> Page {
    crate::plain_page::page(
        status,
        title,
        format!("{body}<p class=\"muted\"><a href=\"/approvals\">Open the approval queue</a> (log in first).</p>"),
    )
}

fn said(status: StatusCode, title: &str, line: &str) -> Page {
    page(status, title, format!("<p class=\"reason\" role=\"status\">{}</p>", escape_html(line)))
}

/// Who decided it and how, for "someone was first".
fn already(approval: &ApprovalRow) -> Page {
    let by = approval.decided_by.as_deref().unwrap_or("someone");
    let when = approval.decided_at.map(|at| format!(" ({})", utc_minute(at))).unwrap_or_default();
    said(StatusCode::CONFLICT, "Already decided", &format!("This call was already {} by {by}{when}. Nothing was changed.", approval.state))
}

/// A time as the page says it, to the minute: "2026-11-28 20:39 UTC" (as "Decide before …").
fn utc_minute(ms: i64) -> String {
    format!("{} UTC", rfc3339(ms).get(..16).unwrap_or_default().replace('T', " "))
}

/// Everything a link must pass before its page is shown or its decision made: the signature
/// and expiry, the person, the approval still pending with the same arguments, and the person
/// still allowed to decide it.
async fn check(state: &AppState, token: &str, ip: Option<String>, headers: &HeaderMap) -> Result<(Claims, ApprovalRow, Actor), Page> {
    let claims = state.links.verify(token, now_ms()).map_err(|e| match e {
        TokenError::Expired => said(StatusCode::GONE, "This link has expired", &format!("{e}. Open the approval queue to decide.")),
        TokenError::Malformed | TokenError::Forged => said(StatusCode::BAD_REQUEST, "This link does not work", &e.to_string()),
    })?;
    let internal = |e: anyhow::Error| {
        tracing::error!(error = ?e, "decision link");
        said(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong", "The server could not read its database. Try again in a moment.")
    };
    // A link revoked before it expired (links from before links were recorded have no row).
    if let Some(link) = state.reads.decision_link(&claims.link_id).await.map_err(internal)?
        && link.revoked_at.is_some()
    {
        let by = link.revoked_by.as_deref().unwrap_or("someone");
        return Err(said(
            StatusCode::GONE,
            "This link was revoked",
            &format!("{by} revoked it. Nothing was changed. Open the approval queue to decide."),
        ));
    }
    let Some(account) = state.reads.credentials(&claims.decider).await.map_err(internal)? else {
        return Err(said(StatusCode::FORBIDDEN, "This link no longer works", "The person it was made for has no account any more."));
    };
    let approval = state
        .reads
        .approval(&claims.approval_id.clone().into())
        .await
        .map_err(internal)?
        .ok_or_else(|| said(StatusCode::NOT_FOUND, "No such approval", "The approval this link was made for does not exist."))?;
    if approval.state != domain::ApprovalState::Pending {
        return Err(already(&approval));
    }
    if args_hash(&approval.args) != claims.args_hash {
        return Err(said(StatusCode::CONFLICT, "This link no longer works", "The call changed since this link was made."));
    }
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let actor = Actor {
        name: account.user.username,
        user_id: Some(account.user.id),
        role: Some(account.user.role),
        ip,
        user_agent,
        on_behalf_of: None,
        via: Some(format!("link {}", claims.link_id)),
        signed_in_at: None,
    };
    if !state.reads.sees_approval(&approval, &actor).await.map_err(internal)? {
        return Err(said(StatusCode::FORBIDDEN, "This link no longer works", "The person it was made for no longer sees this approval."));
    }
    match state.decisions.may_decide_now(&approval.id, &actor).await {
        Ok((_, actor)) => Ok((claims, approval, actor)),
        Err(EngineError::NotAllowed(why)) => Err(said(StatusCode::FORBIDDEN, "This link no longer works", &why)),
        Err(EngineError::WrongState(why)) => Err(said(StatusCode::CONFLICT, "This link no longer works", &why)),
        Err(EngineError::Unknown(why)) => Err(said(StatusCode::NOT_FOUND, "No such approval", &why)),
        Err(other) => Err(internal(anyhow::anyhow!(other.to_string()))),
    }
}

/// The call, as the card shows it: what, how risky, the arguments, the deadline.
pub(crate) fn call_details(approval: &ApprovalRow) -> String {
    let args = serde_json::to_string_pretty(&approval.args()).unwrap_or_default();
    let asked_by = approval.owner.as_deref().unwrap_or("someone");
    // The whole requirement: who must approve (every gate's share), four-eyes, a fresh sign-in.
    let needs = approval.needs().map(|n| format!("<p class=\"needs\">{}.</p>", escape_html(&n))).unwrap_or_default();
    format!(
        "<p class=\"summary\">{summary}</p><p><code>{tool}</code> · <span class=\"badge risk-{risk}\">{risk} risk</span> · asked in {asked_by}'s chat “{title}”</p>\
         <pre class=\"json\">{args}</pre>{needs}<p class=\"countdown\">Decide before {deadline}.</p>",
        summary = escape_html(&approval.summary),
        tool = escape_html(&approval.tool),
        risk = approval.risk.as_str(),
        asked_by = escape_html(asked_by),
        title = escape_html(&approval.conversation_title),
        args = escape_html(&args),
        deadline = utc_minute(approval.deadline),
    )
}

fn form(claims: &Claims, approval: &ApprovalRow, problem: Option<&str>) -> String {
    let problem = problem.map(|p| format!("<p class=\"error\" role=\"alert\">{}</p>", escape_html(p))).unwrap_or_default();
    match claims.action {
        LinkAction::Approve => {
            format!("{problem}<form method=\"post\"><button type=\"submit\" class=\"btn btn-approve\">Approve</button></form>")
        }
        LinkAction::Reject => {
            let required = if approval.rules().require_reason { " required" } else { "" };
            let label = if approval.rules().require_reason { "Reason (required)" } else { "Reason (optional)" };
            format!(
                "{problem}<form method=\"post\"><label>{label}<textarea name=\"reason\" rows=\"3\"{required}></textarea></label>\
                 <button type=\"submit\" class=\"btn btn-reject\">Reject</button></form>"
            )
        }
    }
}

async fn show(State(state): State<AppState>, ClientIp(ip): ClientIp, headers: HeaderMap, Path(token): Path<String>) -> Page {
    let (claims, approval, actor) = match check(&state, &token, ip, &headers).await {
        Ok(checked) => checked,
        Err(page) => return page,
    };
    let verb = match claims.action {
        LinkAction::Approve => "Approve",
        LinkAction::Reject => "Reject",
    };
    let as_whom = match &actor.on_behalf_of {
        Some(principal) => {
            format!("You decide as {} (in place of {}).", escape_html(&actor.name), escape_html(principal))
        }
        None => format!("You decide as {}.", escape_html(&actor.name)),
    };
    let body = format!("{}<p class=\"muted\">{as_whom}</p>{}", call_details(&approval), form(&claims, &approval, None));
    page(StatusCode::OK, &format!("{verb} this call?"), body)
}

#[derive(Deserialize, Default)]
struct DecisionForm {
    #[serde(default)]
    reason: Option<String>,
}

async fn decide(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Path(token): Path<String>,
    // A missing or unreadable body is no reason (the form always sends one).
    form_body: Result<Form<DecisionForm>, axum::extract::rejection::FormRejection>,
) -> Page {
    let (claims, approval, actor) = match check(&state, &token, ip, &headers).await {
        Ok(checked) => checked,
        Err(page) => return page,
    };
    let reason = form_body.ok().and_then(|Form(f)| f.reason).map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
    let decision = match claims.action {
        LinkAction::Approve => Decision::Approve { args: None, grant: None },
        LinkAction::Reject => Decision::Reject { reason },
    };
    match state.decisions.decide(&approval.id, decision, &actor).await {
        Ok(outcome) if outcome.outcome == domain::ApprovalState::Pending => said(
            StatusCode::OK,
            "Your approval is counted",
            &format!(
                "{} of {} approvals so far ({}); the call runs once enough people approved.",
                outcome.approved_by.len(),
                outcome.quorum,
                outcome.approved_by.join(", ")
            ),
        ),
        Ok(outcome) if outcome.outcome == domain::ApprovalState::Approved => {
            said(StatusCode::OK, "Approved", &format!("{}: the call runs now.", approval.summary))
        }
        Ok(outcome) => said(StatusCode::OK, "Rejected", &format!("{}: {}. The agent is told.", approval.summary, outcome.outcome)),
        // Decided by someone first, or refused while still pending (the same person again
        // toward a quorum, the deadline passed): say which.
        Err(EngineError::WrongState(why)) => match state.reads.approval(&approval.id).await {
            Ok(Some(now)) if now.state != domain::ApprovalState::Pending => already(&now),
            _ => said(StatusCode::CONFLICT, "Not decided", &format!("{why}. Nothing was changed.")),
        },
        Err(EngineError::Invalid { message, .. }) => page(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Not decided yet",
            format!("{}{}", call_details(&approval), form(&claims, &approval, Some(&message))),
        ),
        Err(EngineError::NotAllowed(why)) => said(StatusCode::FORBIDDEN, "This link no longer works", &why),
        Err(EngineError::Limited { .. }) => {
            said(StatusCode::TOO_MANY_REQUESTS, "Too many decisions", "Too many decisions in the last minute: wait a moment and reload.")
        }
        Err(other) => {
            tracing::error!(error = %other, "decision link");
            said(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong", "The decision was not recorded. Try again in a moment.")
        }
    }
}
