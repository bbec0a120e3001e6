//! Starting a session once a person proved who they are (a password, or the identity provider),
//! and what the session keeps about that: when they signed in (gates with `reauthenticate` ask
//! for a recent sign-in), when a provider's session ends however active it is, and the
//! provider's ID token (sent back to it at logout). `auth::resolve` reads the first two on every
//! request.

use engine::clock::now_ms;
use tower_sessions::{Expiry, Session};

use super::SESSION_USER;
use crate::agents::MAX_SESSION_SECS;

/// Session key: when the person last proved who they are (ms).
pub const SIGNED_IN_AT: &str = "signed_in_at";
/// Session key: when a session started through the provider ends (ms).
pub const SESSION_ENDS_AT: &str = "session_ends_at";
/// Session key: the ID token of a provider's sign-in.
pub const ID_TOKEN: &str = "oidc_id_token";

/// How a session was started: by a password (now), or by the provider, which says when it last
/// checked the person (`auth_time`; `None` when it does not say; kept as now if it is later) and
/// for how long the session may live.
pub enum SignedIn {
    Password,
    Provider { id_token: String, auth_time_ms: Option<i64>, max_secs: u64 },
}

/// A fresh session for the user (a new id: one planted before is worthless). A provider's session
/// ends `max_secs` from now whatever happens to it meanwhile (`SESSION_ENDS_AT`, checked on every
/// request by `auth::resolve`).
pub async fn start_session(session: &Session, user: &domain::UserId, how: SignedIn) -> anyhow::Result<()> {
    let fail = |e: tower_sessions::session::Error| anyhow::anyhow!("session: {e}");
    session.cycle_id().await.map_err(fail)?;
    session.insert(SESSION_USER, user).await.map_err(fail)?;
    match how {
        SignedIn::Password => {
            session.insert(SIGNED_IN_AT, now_ms()).await.map_err(fail)?;
            // Whatever a provider's session left in it is not this one's.
            session.remove::<String>(ID_TOKEN).await.map_err(fail)?;
            session.remove::<i64>(SESSION_ENDS_AT).await.map_err(fail)?;
        }
        SignedIn::Provider { id_token, auth_time_ms, max_secs } => {
            // The provider may have let the person in from a session of its own, without asking
            // anything: the sign-in is as recent as its `auth_time` (0: it did not say), and no
            // later than now (a provider's clock ahead of ours makes no sign-in fresher).
            session.insert(SIGNED_IN_AT, auth_time_ms.map_or(0, |at| at.min(now_ms()))).await.map_err(fail)?;
            session.insert(ID_TOKEN, id_token).await.map_err(fail)?;
            let max_ms = i64::try_from(max_secs.min(MAX_SESSION_SECS)).unwrap_or(0) * 1000;
            let ends_at = now_ms() + max_ms;
            session.insert(SESSION_ENDS_AT, ends_at).await.map_err(fail)?;
            let until =
                tower_sessions::cookie::time::OffsetDateTime::now_utc() + tower_sessions::cookie::time::Duration::milliseconds(max_ms);
            session.set_expiry(Some(Expiry::AtDateTime(until)));
        }
    }
    Ok(())
}
