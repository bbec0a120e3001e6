//! What people sign in and call with, made and ended: accounts with a password made (and their
//! email addresses set) by the command line, a person's API tokens made and revoked, and a session
//! that logged out. A credential that ends is told to every replica (`store/replicas.rs`,
//! a NOTIFY on PostgreSQL) in the same call, so the event streams it opened close wherever they
//! are (server/src/streams.rs) and no caller can forget to say so. Turning an account off ends
//! its tokens and the account the same way (`accounts.rs`).

use domain::{Role, UserId};

use crate::store::{
    Store, replicas,
    users::{self, User},
};

/// A person's own API tokens, made and revoked, and the ends of their sessions (an account turned
/// off is `People::disable_user`'s); the command line makes accounts and tokens through it too
/// (server/src/cli.rs).
#[derive(Clone)]
pub struct Accounts {
    store: Store,
}

/// The key an API token's revocation is told by (the server names a request's credential by it:
/// `Credential`, server/src/auth/mod.rs).
pub fn token_key(token_id: &str) -> String {
    format!("token:{token_id}")
}

/// The key that ends everything of an account at once (it was turned off), whichever token or
/// session it came with: not a credential anyone presents.
pub fn account_key(user_id: &UserId) -> String {
    format!("user:{user_id}")
}

impl Accounts {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Makes the account `name` with this password hash (server/src/auth/password.rs) and role;
    /// `None` when the name is taken. The command line checks the name first (server/src/cli.rs).
    pub async fn add_user(&self, name: &str, password_hash: &str, role: Role) -> anyhow::Result<Option<User>> {
        users::insert(&self.store, name, password_hash, role).await
    }

    /// Sets (or with `None` clears) where `name`'s email notifications go; false when there is no
    /// such user.
    pub async fn set_email(&self, name: &str, email: Option<&str>) -> anyhow::Result<bool> {
        users::set_email(&self.store, name, email).await
    }

    /// Stores a new API token of `user_id` by the digest of its secret (server/src/auth/tokens.rs)
    /// with its scopes (names separated by spaces); its id.
    pub async fn create_token(&self, user_id: &UserId, name: &str, digest: &str, scopes: &str) -> anyhow::Result<String> {
        users::insert_token(&self.store, user_id, name, digest, scopes).await
    }

    /// Revokes one of `user_id`'s live tokens and tells every replica (requests check the token
    /// each time; open event streams learn it this way); false when there is no such live token.
    pub async fn revoke_token(&self, user_id: &UserId, token_id: &str) -> anyhow::Result<bool> {
        if !users::revoke_token(&self.store, user_id, token_id).await? {
            return Ok(false);
        }
        replicas::publish_revoked(&self.store, &token_key(token_id)).await?;
        Ok(true)
    }

    /// A session ended (logged out): tells every replica, so the event streams it opened close.
    /// `key` names the session as the server does (`Credential::of_session`, server/src/auth/mod.rs).
    pub async fn signed_out(&self, key: &str) -> anyhow::Result<()> {
        replicas::publish_revoked(&self.store, key).await
    }
}

/// Tells every replica that `user_id`'s account and these tokens of it ended (it was turned off).
pub(super) async fn account_ended(store: &Store, user_id: &UserId, tokens: &[String]) -> anyhow::Result<()> {
    for token in tokens {
        replicas::publish_revoked(store, &token_key(token)).await?;
    }
    replicas::publish_revoked(store, &account_key(user_id)).await
}
