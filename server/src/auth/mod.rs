//! Who is asking (session cookie or bearer token), and what they may see.
//!
//! `resolve` runs once per request and leaves a `MaybeUser` in the request extensions; the
//! `CurrentUser` extractor turns a missing user into 401. A user sees only their own
//! conversations and approvals — another user's answer 404, so existence is not revealed — and
//! an admin sees all.

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "countersign_session";

pub mod client_ip;
pub mod csrf;
pub mod limits;
pub mod oidc;
pub mod pages;
pub mod password;
pub mod scopes;
pub mod session_store;
pub mod signed_in;
pub mod tokens;

use axum::{
    extract::{FromRequestParts, Request, State},
    http::{HeaderMap, header, request::Parts},
    middleware::Next,
    response::Response,
};
use domain::UserId;
use tower_sessions::Session;

use self::scopes::Scopes;
use crate::{error::ApiError, people::User};

/// Session key holding the logged-in user's id.
pub const SESSION_USER: &str = "user_id";

/// The resolved identity of a request (None: anonymous).
#[derive(Clone, Debug, Default)]
pub struct MaybeUser(pub Option<User>);

/// Marks a request a bearer token authenticated (not a cookie): another site cannot send one, so
/// such a request needs no cross-site check (`csrf`).
#[derive(Clone, Copy, Debug)]
pub struct ByToken;

/// What authenticated a request, as a key that names it without revealing it: `token:<id>` or
/// `session:<digest of the session id>`. Logout and token revocation tell every replica the key
/// (engine/src/people/credentials.rs) and the event streams it opened close (`streams`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential(pub String);

impl Credential {
    pub fn of_token(token_id: &str) -> Self {
        Self(crate::people::token_key(token_id))
    }

    /// Not a credential anyone presents: its revocation ends everything of the account (it was
    /// turned off), whichever token or session it came with.
    pub fn of_user(user: &domain::UserId) -> Self {
        Self(crate::people::account_key(user))
    }

    pub fn of_session(session: &Session) -> Option<Self> {
        session.id().map(|id| Self(format!("session:{}", tokens::digest(&id.to_string()))))
    }
}

/// When the person behind a session signed in (ms), for gates that ask for a fresh sign-in.
#[derive(Clone, Copy, Debug)]
pub struct SignedInAt(pub i64);

/// Marks a request whose bearer token is unknown or revoked: it counts as anonymous, and a route
/// that needs a user answers 401 saying so.
#[derive(Clone, Copy, Debug)]
pub struct BadToken;

/// Middleware: finds the user behind a bearer token or the session cookie. It needs only the
/// engine's reads (taken from the app's state), so this module does not name `AppState`.
pub async fn resolve(State(reads): State<engine::reads::Reads>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let user = match bearer(req.headers()) {
        Some(token) => match reads.user_for_token(&tokens::digest(token)).await? {
            Some((user, token_id, scopes)) => {
                // A stored scope list that does not parse allows nothing (fail closed).
                let scopes = Scopes::parse(&scopes).unwrap_or(Scopes::NONE);
                if let Some(scope) = scopes::needed(req.method(), req.uri().path())
                    && !scopes.allows(scope)
                {
                    return Err(ApiError::Forbidden(format!(
                        "this API token may {scopes_said}; {} {} needs a token with the {} scope (countersign token create --scopes …)",
                        req.method(),
                        req.uri().path(),
                        scope.as_str(),
                        scopes_said = scopes.said(),
                    )));
                }
                req.extensions_mut().insert(ByToken);
                req.extensions_mut().insert(Credential::of_token(&token_id));
                req.extensions_mut().insert(scopes);
                Some(user)
            }
            // Anonymous, so public routes (health, login) still answer; the others say why.
            None => {
                req.extensions_mut().insert(BadToken);
                None
            }
        },
        None => match req.extensions().get::<Session>().cloned() {
            Some(session) => match session.get::<UserId>(SESSION_USER).await.map_err(|e| anyhow::anyhow!("session: {e}"))? {
                // A provider's session past its end (`[oidc] session_max_secs`): over, however
                // active it was.
                Some(_)
                    if session
                        .get::<i64>(signed_in::SESSION_ENDS_AT)
                        .await
                        .ok()
                        .flatten()
                        .is_some_and(|end| end <= engine::clock::now_ms()) =>
                {
                    session.flush().await.map_err(|e| anyhow::anyhow!("session: {e}"))?;
                    None
                }
                Some(id) => {
                    if let Some(credential) = Credential::of_session(&session) {
                        req.extensions_mut().insert(credential);
                    }
                    // A person in the browser may do all they are allowed to.
                    req.extensions_mut().insert(Scopes::ALL);
                    // A session from before sign-in times were kept counts as an old sign-in.
                    let at = session.get::<i64>(signed_in::SIGNED_IN_AT).await.ok().flatten().unwrap_or(0);
                    req.extensions_mut().insert(SignedInAt(at));
                    reads.user(&id).await?
                }
                None => None,
            },
            None => None,
        },
    };
    req.extensions_mut().insert(MaybeUser(user));
    Ok(next.run(req).await)
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(str::trim)
}

/// A logged-in user, with where the request came from (for the audit trail).
#[derive(Clone, Debug)]
pub struct CurrentUser {
    pub user: User,
    /// When the session's person signed in (ms); `None` for a bearer token.
    pub signed_in_at: Option<i64>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for CurrentUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let user = parts.extensions.get::<MaybeUser>().and_then(|v| v.0.clone()).ok_or_else(|| {
            ApiError::Unauthorized(if parts.extensions.get::<BadToken>().is_some() {
                "the API token is unknown or revoked".into()
            } else {
                "log in or send an API token".into()
            })
        })?;
        let Ok(client_ip::ClientIp(ip)) = client_ip::ClientIp::from_request_parts(parts, _state).await;
        let user_agent = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let signed_in_at = parts.extensions.get::<SignedInAt>().map(|s| s.0);
        Ok(Self { user, signed_in_at, ip, user_agent })
    }
}

/// A logged-in admin. As an extractor placed before the query or body, it refuses a user with 403
/// before anything else of the request is read, so a user learns nothing from validation errors.
#[derive(Clone, Debug)]
pub struct Admin(pub CurrentUser);

impl<S: Send + Sync> FromRequestParts<S> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let user = CurrentUser::from_request_parts(parts, state).await?;
        if user.user.is_admin() { Ok(Self(user)) } else { Err(ApiError::Forbidden("only admins may do this".into())) }
    }
}

impl CurrentUser {
    /// May this user see a conversation owned by `owner_id`?
    pub fn can_see(&self, owner_id: Option<&UserId>) -> bool {
        self.user.is_admin() || owner_id == Some(&self.user.id)
    }

    /// `None` for admins (everything), else the user's id.
    pub fn owner_filter(&self) -> Option<&UserId> {
        (!self.user.is_admin()).then_some(&self.user.id)
    }
}
