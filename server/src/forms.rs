//! The page's decisions as plain HTML forms, so a person decides before the WASM arrives and
//! with JavaScript off (docs/architecture.md, decision 8). The cards, the batch
//! bar and the question card render real `<form method="post">`s aimed here; once hydrated, the
//! page takes them over and calls the JSON API instead. Both go through the same functions
//! (`api::approvals::decide`, `api::tasks::decide_all`): the same decision limit, visibility,
//! authority rules in the decision's transaction, and audit entry. The site's CSRF rule applies
//! as to every write (server/src/auth/csrf.rs), and a token needs `decide` (auth/scopes.rs).
//!
//! A decision comes back to the page it was made on (`back`, a path on this site) with 303; a
//! rejection or a deferral sent without its text first shows a small page to write it; a refusal
//! is a page that says why, with the way back.

use axum::{
    Form, Router,
    extract::{Path, Query, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
};
use domain::{ApprovalId, TaskId, wire::GrantRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::{
    auth::CurrentUser,
    error::ApiError,
    orchestrator::Decision,
    plain_page::{escape_html, page},
    state::AppState,
};
use engine::reads::ApprovalRow;

pub fn router() -> Router<AppState> {
    Router::new().route("/forms/approvals/{id}", get(write_text).post(decide_one)).route("/forms/tasks/{id}", post(decide_all))
}

/// What a card's form sends. `decision`: `approve` (with `always` ticked, also allow the tool in
/// this chat), `reject` (with `reason`), `defer` (with `guidance`), `decline` (a question); an
/// `answer` answers a question.
#[derive(Deserialize, Default)]
struct OneForm {
    decision: Option<String>,
    reason: Option<String>,
    guidance: Option<String>,
    answer: Option<String>,
    always: Option<String>,
    back: Option<String>,
}

#[derive(Deserialize)]
struct AllForm {
    decision: String,
    reason: Option<String>,
    back: Option<String>,
}

#[derive(Deserialize)]
struct TextQuery {
    decision: Option<String>,
    back: Option<String>,
}

/// Where to go afterwards: one of the pages that hold decisions (the chats, a chat, the queue),
/// else the chats. Nothing else another site could put in the link is repeated on a page.
fn back_to(back: Option<&str>) -> String {
    let path = app::paths::local_path(back);
    let chat = path.strip_prefix("/c/").is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if chat || path == "/approvals" { path } else { "/".to_owned() }
}

/// Not logged in (the session ended): log in, then back to the page.
fn log_in_first(back: &str) -> Response {
    Redirect::to(&format!("/login?next={}", app::paths::query_value(back))).into_response()
}

/// A refusal as a page: what the API would have said, and the way back.
fn refused(err: ApiError, back: &str) -> Response {
    let title = match err.status() {
        StatusCode::CONFLICT => "Not decided: something changed",
        StatusCode::FORBIDDEN => "Not yours to decide",
        StatusCode::NOT_FOUND => "No such call",
        StatusCode::TOO_MANY_REQUESTS => "Too many decisions",
        _ => "Not decided",
    };
    refused_as(title, err, back)
}

/// A refusal as a page titled `title` (a form another site sent: server/src/auth/csrf.rs).
pub(crate) fn refused_as(title: &str, err: ApiError, back: &str) -> Response {
    let status = err.status();
    let body =
        format!("<p class=\"error\" role=\"alert\">{}</p><p><a href=\"{}\">Back</a></p>", escape_html(&err.to_string()), escape_html(back));
    page(status, title, body).into_response()
}

async fn decide_one(
    State(state): State<AppState>,
    user: Result<CurrentUser, ApiError>,
    Path(id): Path<ApprovalId>,
    form: Result<Form<OneForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let form = form.map(|Form(f)| f).unwrap_or_default();
    let back = back_to(form.back.as_deref());
    let Ok(user) = user else { return log_in_first(&back) };
    let text = |t: &Option<String>| t.as_deref().map(str::trim).map(str::to_owned);
    let decision = match (form.decision.as_deref(), text(&form.answer)) {
        // A question's answer (typed, or one of its options).
        (None | Some("answer"), Some(answer)) => match answered(&state, &user, &id, answer).await {
            Ok(args) => Decision::Approve { args: Some(args), grant: None },
            Err(err) => return refused(err, &back),
        },
        (Some("approve"), _) => Decision::Approve { args: None, grant: form.always.is_some().then(GrantRequest::default) },
        (Some("decline"), _) => Decision::Reject { reason: Some("declined to answer".into()) },
        // From the card's button, without its text yet: the page to write it.
        (Some(kind @ ("reject" | "defer")), _) if form.reason.is_none() && form.guidance.is_none() => {
            let to = format!("/forms/approvals/{id}?decision={kind}&back={}", app::paths::query_value(&back));
            return Redirect::to(&to).into_response();
        }
        (Some("reject"), _) => Decision::Reject { reason: text(&form.reason).filter(|r| !r.is_empty()) },
        (Some("defer"), _) => match text(&form.guidance).filter(|g| !g.is_empty() && g.chars().count() <= 2000) {
            Some(guidance) => Decision::Defer { guidance },
            None => return refused(ApiError::invalid("guidance", "guidance must have 1 to 2000 characters"), &back),
        },
        _ => return refused(ApiError::invalid("decision", "the form says neither approve, reject, defer nor an answer"), &back),
    };
    match crate::api::approvals::decide(&state, &user, &id, decision).await {
        Ok(_) => Redirect::to(&back).into_response(),
        Err(err) => refused(err, &back),
    }
}

/// The question's arguments with `answer` added, as the card's answer box sends them.
async fn answered(state: &AppState, user: &CurrentUser, id: &ApprovalId, answer: String) -> Result<Value, ApiError> {
    if answer.is_empty() || answer.chars().count() > 4000 {
        return Err(ApiError::invalid("answer", "an answer has 1 to 4000 characters"));
    }
    // Hidden is missing (and counts as an attempt), as the decision itself would say.
    let access = crate::api::access::visible_approval(state, user, id).await;
    let approval = crate::api::access::count_if_hidden(state, user, access).await?;
    // Only the agent's question takes an answer; any other call is approved as proposed or edited
    // on the card.
    let mut args = approval.args();
    match args.as_object_mut() {
        Some(fields) if approval.tool == domain::naming::ASK_USER => {
            fields.insert("answer".into(), Value::String(answer));
            Ok(args)
        }
        _ => Err(ApiError::invalid("answer", "only the agent's question takes an answer")),
    }
}

/// The page to write a rejection's reason or a deferral's guidance, for a form sent without it.
async fn write_text(
    State(state): State<AppState>,
    user: Result<CurrentUser, ApiError>,
    Path(id): Path<ApprovalId>,
    Query(query): Query<TextQuery>,
) -> Response {
    let back = back_to(query.back.as_deref());
    let Ok(user) = user else { return log_in_first(&back) };
    let approval = match crate::api::access::visible_approval(&state, &user, &id).await {
        Ok(approval) => approval,
        Err(err) => return refused(err, &back),
    };
    let defer = query.decision.as_deref() == Some("defer");
    let title = if defer { "Defer this call" } else { "Reject this call" };
    page(StatusCode::OK, title, text_form(&approval, defer, &back)).into_response()
}

fn text_form(approval: &ApprovalRow, defer: bool, back: &str) -> String {
    let (name, label, button, class, required) = if defer {
        ("guidance", "Guidance for the agent (the call does not run)", "Send guidance", "btn", " required")
    } else if approval.rules().require_reason {
        ("reason", "Reason (required for this call; the agent sees it)", "Confirm reject", "btn btn-reject", " required")
    } else {
        ("reason", "Reason (optional, the agent sees it)", "Confirm reject", "btn btn-reject", "")
    };
    let decision = if defer { "defer" } else { "reject" };
    format!(
        "{details}<form method=\"post\" action=\"/forms/approvals/{id}\">\
         <input type=\"hidden\" name=\"back\" value=\"{back}\"><input type=\"hidden\" name=\"decision\" value=\"{decision}\">\
         <label>{label}<textarea name=\"{name}\" rows=\"3\" maxlength=\"2000\"{required}></textarea></label>\
         <div class=\"actions\"><button type=\"submit\" class=\"{class}\">{button}</button> <a href=\"{back}\">Cancel</a></div></form>",
        details = crate::links::page::call_details(approval),
        id = escape_html(approval.id.as_ref()),
        back = escape_html(back),
    )
}

async fn decide_all(
    State(state): State<AppState>,
    user: Result<CurrentUser, ApiError>,
    Path(id): Path<TaskId>,
    form: Result<Form<AllForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return refused(ApiError::invalid("decision", "the form says neither approve nor reject"), "/");
    };
    let back = back_to(form.back.as_deref());
    let Ok(user) = user else { return log_in_first(&back) };
    let decision = match form.decision.as_str() {
        "approve" => Decision::Approve { args: None, grant: None },
        "reject" => Decision::Reject { reason: form.reason.map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()) },
        _ => return refused(ApiError::invalid("decision", "the form says neither approve nor reject"), &back),
    };
    match crate::api::tasks::decide_all(&state, &user, &id, decision).await {
        Ok(_) => Redirect::to(&back).into_response(),
        Err(err) => refused(err, &back),
    }
}
