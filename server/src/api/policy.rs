//! The policy, for admins (the Policy page, app/src/pages/policy.rs): the agent configuration in
//! force, and a draft replayed against the calls recorded — what `countersign policy replay`
//! reports, through the same engine function (docs/config.md, "The policy's life"). Nothing here
//! changes anything.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Json,
    extract::State,
    http::{HeaderMap, header},
    response::{Html, IntoResponse, Response},
};
use domain::{
    replay::Report,
    wire::{LivePolicy, ReplayRequest},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::ApiJson;
use crate::{auth::Admin, state::AppState};

/// How far back a replay looks when the request does not say, and at most, in days.
const DEFAULT_DAYS: u32 = 30;
const MAX_DAYS: u32 = crate::replay::MAX_WINDOW_DAYS;
const DAY_MS: i64 = 86_400_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(in_force)).routes(routes!(replay))
}

#[utoipa::path(
    get,
    path = "/api/policy",
    operation_id = "policy",
    tag = "policy",
    summary = "The agent configuration in force (admin): its file, version, text and `policy check` warnings, and the draft in shadow with its hits, if any",
    responses(
        (status = 200, description = "OK", body = LivePolicy),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn in_force(State(state): State<AppState>, _admin: Admin) -> Result<Json<LivePolicy>, ApiError> {
    Ok(Json(state.reads.count_draft_hits(live_policy(&state), state.started_ms).await?))
}

/// The configuration in force and the draft in shadow (`COUNTERSIGN_AGENTS_DRAFT`), if the server
/// runs with one, as `GET /api/policy` and the Policy page give them: the draft's hits are not
/// counted yet ([`engine::reads::Reads::count_draft_hits`] counts them, as each asks).
pub fn live_policy(state: &AppState) -> LivePolicy {
    let mut live = crate::replay::in_force(state.task_driver.agents(), state.config.agents_path.as_deref());
    live.draft_in_shadow = state
        .task_driver
        .draft()
        .zip(state.config.agents_draft_path.as_deref())
        .map(|(draft, path)| crate::replay::draft_in_shadow(draft, path, state.started_ms));
    live
}

#[utoipa::path(
    post,
    path = "/api/policy/replay",
    operation_id = "replayPolicy",
    tag = "policy",
    summary = "Replay a draft configuration against the calls recorded (admin; reads only): the report `countersign policy replay --json` gives",
    request_body = ReplayRequest,
    responses(
        (status = 200, description = "What the draft would have changed: the report as JSON, or as the HTML the Policy page shows when `Accept` names `text/html` first", content(
            (Report = "application/json"),
            (String = "text/html"),
        )),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn replay(
    State(state): State<AppState>,
    _admin: Admin,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ReplayRequest>,
) -> Result<Response, ApiError> {
    let days = body.since_days.unwrap_or(DEFAULT_DAYS);
    if !(1..=MAX_DAYS).contains(&days) {
        return Err(ApiError::invalid("since_days", format!("since_days must be between 1 and {MAX_DAYS}")));
    }
    let agent = body.agent.as_deref().map(str::trim).filter(|a| !a.is_empty());
    let live = state.task_driver.agents();
    let report = state.reads.replay(&body.draft, "the draft", live, i64::from(days) * DAY_MS, agent).await?;
    Ok(if wants_html(&headers) { Html(app::replay_report_html(report)).into_response() } else { Json(report).into_response() })
}

/// Whether the caller asked for the report as HTML (the Policy page does, to put it in place):
/// `text/html` named in `Accept` before any JSON type. Anything else gets the JSON.
fn wants_html(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else { return false };
    accept
        .split(',')
        .map(|part| part.split(';').next().unwrap_or("").trim())
        .find(|kind| *kind == "text/html" || kind.ends_with("/json") || *kind == "*/*")
        .is_some_and(|kind| kind == "text/html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_given_only_to_an_accept_that_names_it_before_json() {
        let asks = |accept: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, accept.parse().unwrap());
            wants_html(&headers)
        };
        assert!(asks("text/html"));
        assert!(asks("text/html, application/json;q=0.9"));
        assert!(!asks("application/json"));
        assert!(!asks("application/json, text/html"));
        assert!(!asks("*/*"));
        assert!(!asks("image/png"));
        assert!(!wants_html(&HeaderMap::new()));
    }
}
