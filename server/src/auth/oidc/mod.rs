//! Log in through the organisation's identity provider: OpenID Connect's authorization code flow
//! with PKCE, `state` and `nonce` (docs/sign-in.md).
//!
//! `GET /auth/oidc/login` keeps what the answer must match in the session (any replica reads it)
//! and sends the browser to the provider; `GET /auth/oidc/callback` checks `state`, trades the
//! code (with the PKCE verifier) for tokens, verifies the ID token (signature by the provider's
//! keys, issuer, audience, expiry, nonce) and hands the claims to `people::sign_in`, which makes
//! or refreshes the account in one write. Anything that goes wrong ends on the login page with
//! what happened (`?sign_in_error=…`) and no session user.
//!
//! The provider itself, its client and the checks of what it sends: `provider.rs`.

pub mod provider;

use std::time::Duration;

use axum::{
    Router,
    extract::{Query, State},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
};
use engine::clock::now_ms;
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, CsrfToken, HttpRequest, Nonce, OAuth2TokenResponse, PkceCodeChallenge,
    PkceCodeVerifier, PostLogoutRedirectUrl, Scope,
    core::{CoreAuthPrompt, CoreAuthenticationFlow},
};
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use self::provider::{Failure, IdTokenRefusal, Oidc, capped, check_claims, merge_userinfo, not_traded, refused};
use super::{
    Credential,
    signed_in::{self, SignedIn, start_session},
};
use crate::{people::identity::Identity, plain_page::escape_html, state::AppState};

/// Session key: the sign-in under way (what the provider's answer must match).
const PENDING: &str = "oidc_pending";

/// A sign-in under way, kept in the session between the two requests.
#[derive(Serialize, Deserialize)]
struct Pending {
    state: String,
    nonce: String,
    verifier: String,
    next: String,
    /// Asked for a fresh sign-in: the ID token's `auth_time` must be after `started_at`.
    fresh: bool,
    started_at: i64,
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/oidc/login", get(login))
        .route("/auth/oidc/callback", get(callback))
        .route("/auth/again", get(again))
        .route("/logout", post(logout))
}

#[derive(Deserialize)]
struct LoginQuery {
    next: Option<String>,
    /// `1`: the person must sign in again even if the provider remembers them.
    fresh: Option<String>,
}

#[derive(Deserialize)]
struct AgainQuery {
    next: Option<String>,
}

/// `GET /auth/again?next=…` (a card of a gate with `reauthenticate`): sign in once more — at the
/// provider, which is told to check the person again, or on the login page without one.
async fn again(State(state): State<AppState>, session: Session, Query(query): Query<AgainQuery>) -> Response {
    let next = app::paths::local_path(query.next.as_deref());
    if state.oidc.is_none() {
        return Redirect::to(&format!("/login?next={}", app::paths::query_value(&next))).into_response();
    }
    login(State(state), session, Query(LoginQuery { next: Some(next), fresh: Some("1".into()) })).await
}

/// Sends the browser to the provider.
async fn login(State(state): State<AppState>, session: Session, Query(query): Query<LoginQuery>) -> Response {
    let Some(oidc) = state.oidc.as_deref() else {
        return Redirect::to("/login").into_response();
    };
    let metadata = match oidc.metadata(false).await {
        Ok(m) => m,
        Err(failure) => return failure.page(),
    };
    let client = oidc.client(metadata);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let fresh = query.fresh.as_deref() == Some("1");
    let mut request = client
        .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
        .set_pkce_challenge(challenge);
    // `openid` is always asked for.
    for scope in oidc.config.scopes.iter().filter(|s| s.as_str() != "openid") {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    if fresh {
        request = request.add_prompt(CoreAuthPrompt::Login).set_max_age(Duration::ZERO);
    }
    let (url, state_token, nonce) = request.url();
    let pending = Pending {
        state: state_token.secret().clone(),
        nonce: nonce.secret().clone(),
        verifier: verifier.secret().clone(),
        next: app::paths::local_path(query.next.as_deref()),
        fresh,
        started_at: now_ms(),
    };
    if let Err(err) = session.insert(PENDING, &pending).await {
        tracing::error!(error = %err, "cannot keep the sign-in under way");
        return Failure::Server.page();
    }
    Redirect::to(url.as_str()).into_response()
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// The provider sent the browser back: check everything, then sign the person in.
async fn callback(State(state): State<AppState>, session: Session, Query(query): Query<CallbackQuery>) -> Response {
    match finish(&state, &session, query).await {
        Ok(next) => Redirect::to(&next).into_response(),
        Err(failure) => {
            tracing::warn!(failure = failure.code(), "a sign-in through the identity provider failed");
            failure.page()
        }
    }
}

async fn finish(state: &AppState, session: &Session, query: CallbackQuery) -> Result<String, Failure> {
    let oidc = state.oidc.as_deref().ok_or(Failure::State)?;
    // Taken out first: whatever happens next, this state and code cannot be used again.
    let pending: Pending = session.remove(PENDING).await.ok().flatten().ok_or(Failure::State)?;
    if let Some(error) = query.error {
        tracing::warn!(%error, description = query.error_description.as_deref().unwrap_or(""), "the identity provider refused the sign-in");
        return Err(Failure::Refused);
    }
    let (Some(code), Some(returned_state)) = (query.code, query.state) else { return Err(Failure::State) };
    if !constant_time_eq(returned_state.as_bytes(), pending.state.as_bytes()) {
        return Err(Failure::State);
    }
    let metadata = oidc.metadata(false).await?;
    let auth = oidc.token_auth(&metadata);
    let client = oidc.client(metadata.clone());
    // The answer is read with a cap: its ID token ends up in the session row.
    let provider = oidc.http.clone();
    let http = move |request: HttpRequest| capped(provider.clone(), request);
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .map_err(|_| Failure::Unreachable)?
        .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier))
        .request_async(&http)
        .await
        .map_err(|err| not_traded(oidc, auth, err))?;
    let id_token = tokens.id_token_as_sent().ok_or(Failure::Token)?;
    let nonce = Nonce::new(pending.nonce);
    let verified = match oidc.verify(&metadata, id_token, &nonce) {
        // The provider may have rotated its keys: fetch them once more and try again.
        Err(IdTokenRefusal::Check(ClaimsVerificationError::SignatureVerification(_))) => {
            oidc.verify(&oidc.metadata(true).await?, id_token, &nonce)
        }
        verified => verified,
    };
    let (claims, mut all) = verified.map_err(refused)?;
    check_claims(&claims, &all, &oidc.config.client_id, now_ms())?;
    if pending.fresh {
        // Asked with max_age=0: the provider must say it checked the person just now.
        let checked = claims.auth_time().map(|t| t.timestamp_millis());
        if checked.is_none() {
            tracing::warn!(
                "the identity provider sent no auth_time, though asked for a fresh sign-in (max_age=0): through it no gate with reauthenticate can be decided (docs/sign-in.md)"
            );
        }
        if checked.is_none_or(|t| t < pending.started_at - 60_000) {
            return Err(Failure::Stale);
        }
    }
    if oidc.config.userinfo {
        merge_userinfo(oidc, &client, tokens.access_token().secret(), claims.subject().as_str(), &mut all).await?;
    }
    let identity = Identity::from_claims(&oidc.config, &oidc.config.issuer, claims.subject().as_str(), &all).map_err(|problem| {
        tracing::warn!(%problem, "the identity provider's claims name no one we can sign in");
        Failure::Account
    })?;
    let user = state.people.sign_in(&identity).await.map_err(|err| match err {
        crate::EngineError::Internal(err) => {
            tracing::error!(error = ?err, user = %identity.username, "signing in failed");
            Failure::Server
        }
        refused => {
            tracing::warn!(error = %refused, user = %identity.username, "signing in was refused");
            Failure::Account
        }
    })?;
    let auth_time_ms = claims.auth_time().map(|t| t.timestamp_millis());
    let how = SignedIn::Provider { id_token: id_token.to_owned(), auth_time_ms, max_secs: oidc.config.session_max_secs };
    start_session(session, &user.id, how).await.map_err(|err| {
        tracing::error!(error = ?err, "cannot start the session");
        Failure::Server
    })?;
    tracing::info!(user = %user.username, role = user.role.as_str(), groups = ?identity.groups, "signed in through the identity provider");
    Ok(pending.next)
}

/// How people may log in here, as the login page shows it.
pub fn options(oidc: Option<&Oidc>) -> domain::wire::SignInOptions {
    domain::wire::SignInOptions { provider: oidc.map(|o| o.config.name.clone()), password: oidc.is_none_or(|o| o.config.password_login) }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A page that sends the browser on to the provider's logout. Not a redirect: the site's
/// Content-Security-Policy (`form-action 'self'`) stops a form post that redirects elsewhere.
fn on_to_provider(provider: &str, url: &str) -> Response {
    let (provider, url) = (escape_html(provider), escape_html(url));
    let page = axum::response::Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url={url}\">\
         <title>Signing out — Countersign</title></head><body><main><p>You are signed out of Countersign. Signing you out at {provider}… \
         <a id=\"continue\" href=\"{url}\">Continue</a></p></main></body></html>"
    ));
    // It holds the ID token (the provider's hint): kept by no cache.
    ([(axum::http::header::CACHE_CONTROL, "no-store")], page).into_response()
}

/// `POST /logout` (the top bar's button): ends the session on every replica, and at the
/// provider when the session came from it and the provider offers RP-initiated logout.
async fn logout(State(state): State<AppState>, session: Session) -> Response {
    let id_token: Option<String> = session.get(signed_in::ID_TOKEN).await.ok().flatten();
    let credential = Credential::of_session(&session);
    if let Err(err) = session.flush().await {
        tracing::error!(error = %err, "cannot end a session");
    }
    if let Some(Credential(key)) = credential
        && let Err(err) = state.accounts.signed_out(&key).await
    {
        tracing::error!(error = %err, "cannot close the session's event streams");
    }
    if let (Some(oidc), Some(id_token)) = (state.oidc.as_deref(), id_token)
        && let Ok(metadata) = oidc.metadata(false).await
        && let Some(end) = metadata.additional_metadata().end_session_endpoint.clone()
        && let Ok(after) = PostLogoutRedirectUrl::new(oidc.after_logout.clone())
    {
        let mut url = openidconnect::LogoutRequest::from(end)
            .set_client_id(ClientId::new(oidc.config.client_id.clone()))
            .set_post_logout_redirect_uri(after)
            .http_get_url();
        // The token exactly as the provider sent it: the library's hint takes a parsed token,
        // and it does not parse every claim shape a provider sends.
        url.query_pairs_mut().append_pair("id_token_hint", &id_token);
        return on_to_provider(&oidc.config.name, url.as_str());
    }
    Redirect::to("/login?signed_out=1").into_response()
}
