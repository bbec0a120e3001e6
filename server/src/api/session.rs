//! Logging in and out. `POST /api/session` (JSON) for the hydrated page and scripts;
//! `POST /login` (form) so the login form also works before the page has hydrated.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use app::paths::{local_path, query_value};
use axum::{
    Form, Json,
    extract::{State, rejection::FormRejection},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use domain::wire::{Login, Me, SignInOptions};
use serde::Deserialize;
use tower_sessions::Session;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::{ApiJson, ApiQuery};
use crate::{
    auth::{Credential, CurrentUser, client_ip::ClientIp, oidc, password, signed_in},
    people::User,
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(login, me, logout)).routes(routes!(login_form)).routes(routes!(options))
}

/// Checks the password (same work whether or not the user exists) and starts a fresh session.
/// Failed attempts are limited per user name and per address before any hashing (`auth::limits`).
async fn authenticate(state: &AppState, session: &Session, ip: Option<&str>, login: Login) -> Result<User, ApiError> {
    // No stored name contains NUL (and PostgreSQL text cannot): such a login is simply wrong.
    if login.username.contains('\0') {
        return Err(ApiError::Unauthorized("wrong user name or password".into()));
    }
    let attempt = state.limits.login(&login.username, ip).await?;
    let credentials = state.reads.credentials(login.username.trim()).await?;
    let (user, hash) = match credentials {
        Some(c) => (Some(c.user), c.password_hash),
        None => (None, None),
    };
    let ok = password::verify(login.password, hash).await.map_err(|err| match err.downcast::<password::Busy>() {
        Ok(busy) => ApiError::Busy { message: busy.to_string(), retry_after_secs: 1 },
        Err(other) => ApiError::Internal(other),
    })?;
    let user = user.filter(|_| ok).ok_or_else(|| ApiError::Unauthorized("wrong user name or password".into()))?;
    // With `password_login = false` a password is a break-glass admin's only (made with the CLI).
    // The same answer as a wrong password: it must not confirm that this one was right.
    if let Some(oidc) = state.oidc.as_deref()
        && !oidc.config.password_login
        && !user.is_admin()
    {
        return Err(ApiError::Unauthorized("wrong user name or password".into()));
    }
    attempt.succeeded().await?;
    signed_in::start_session(session, &user.id, signed_in::SignedIn::Password).await?;
    Ok(user)
}

#[utoipa::path(
    post,
    path = "/api/session",
    operation_id = "login",
    tag = "session",
    summary = "Log in (JSON); sets the session cookie",
    request_body = Login,
    responses(
        (status = 200, description = "OK", body = Me),
        WriteErrors,
    ),
    security(()),
)]
#[tracing::instrument(skip_all)]
async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    session: Session,
    ApiJson(body): ApiJson<Login>,
) -> Result<Json<Me>, ApiError> {
    Ok(Json(Me::from(&authenticate(&state, &session, ip.as_deref(), body).await?)))
}

#[utoipa::path(
    get,
    path = "/api/session/options",
    operation_id = "signInOptions",
    tag = "session",
    summary = "How people may log in here: the identity provider (if any) and whether passwords are for everyone",
    responses(
        (status = 200, description = "OK", body = SignInOptions),
        ReadErrors,
    ),
    security(()),
)]
async fn options(State(state): State<AppState>) -> Json<SignInOptions> {
    Json(oidc::options(state.oidc.as_deref()))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct Next {
    /// Where to go after logging in (a path on this site; anything else goes to `/`).
    next: Option<String>,
}

#[utoipa::path(
    post,
    path = "/login",
    operation_id = "loginForm",
    tag = "session",
    summary = "Log in with an HTML form (works before the page hydrates); redirects to `next`",
    params(Next),
    request_body(content = Login, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Redirect"),
        WriteErrors,
    ),
    security(()),
)]
#[tracing::instrument(skip_all)]
async fn login_form(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    session: Session,
    ApiQuery(next): ApiQuery<Next>,
    body: Result<Form<Login>, FormRejection>,
) -> Response {
    // A broken form gets the JSON error shape like every other refusal.
    let body = match body {
        Ok(Form(body)) => body,
        Err(FormRejection::InvalidFormContentType(_)) => {
            return ApiError::UnsupportedMediaType("send Content-Type: application/x-www-form-urlencoded".into()).into_response();
        }
        Err(rejection) => {
            return ApiError::invalid("body", format!("the login form needs username and password: {}", rejection.body_text()))
                .into_response();
        }
    };
    let target = local_path(next.next.as_deref());
    match authenticate(&state, &session, ip.as_deref(), body).await {
        Ok(_) => Redirect::to(&target).into_response(),
        Err(ApiError::Unauthorized(_)) => Redirect::to(&format!("/login?failed=1&next={}", query_value(&target))).into_response(),
        // The page says how long to wait; the status stays 303 so the browser shows it.
        Err(ApiError::TooManyRequests { retry_after_secs, .. } | ApiError::Busy { retry_after_secs, .. }) => {
            Redirect::to(&format!("/login?retry_after={retry_after_secs}&next={}", query_value(&target))).into_response()
        }
        Err(other) => other.into_response(),
    }
}

#[utoipa::path(
    get,
    path = "/api/session",
    operation_id = "me",
    tag = "session",
    summary = "Who is logged in",
    responses(
        (status = 200, description = "OK", body = Me),
        ReadErrors,
    ),
)]
async fn me(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Me>, ApiError> {
    let stands_in_for = state.reads.stands_in_for(&user.user.username).await?;
    Ok(Json(Me { stands_in_for, ..Me::from(&user.user) }))
}

/// Ends the session and closes the event streams it opened (on every replica).
#[utoipa::path(
    delete,
    path = "/api/session",
    operation_id = "logout",
    tag = "session",
    summary = "Log out",
    responses(
        (status = 204, description = "Logged out"),
        ReadErrors,
    ),
)]
async fn logout(State(state): State<AppState>, session: Session) -> Result<StatusCode, ApiError> {
    let credential = Credential::of_session(&session);
    session.flush().await.map_err(|e| anyhow::anyhow!("session: {e}"))?;
    if let Some(Credential(key)) = credential {
        state.accounts.signed_out(&key).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}
