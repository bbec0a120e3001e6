//! People as the server's doors look them up: an account by name (with its password hash, for
//! logging in), by email address, by id or by API token; every account; a person's tokens; and
//! whom someone stands in for now (their delegations in force).

use domain::UserId;

use super::Reads;
use crate::{
    clock::now_ms,
    store::{
        delegations,
        users::{self, Credentials, TokenInfo, User},
    },
};

impl Reads {
    /// The account named `name` (ignoring case), if it is on, with its password hash: for logging
    /// in, and for whoever a door acts as by name (a link's person, a Slack user, an email's).
    pub async fn credentials(&self, name: &str) -> anyhow::Result<Option<Credentials>> {
        users::credentials(&self.store, name).await
    }

    /// The name of the one account with this email address (ignoring case); `None` when no one or
    /// more than one has it.
    pub async fn user_by_email(&self, email: &str) -> anyhow::Result<Option<String>> {
        users::by_email(&self.store, email).await
    }

    /// `name`'s email address, if they have one.
    pub async fn email_of(&self, name: &str) -> anyhow::Result<Option<String>> {
        users::email_of(&self.store, name).await
    }

    /// The account (on) behind a live API token found by its digest (server/src/auth/tokens.rs),
    /// with the token's id and its scopes as stored.
    pub async fn user_for_token(&self, digest: &str) -> anyhow::Result<Option<(User, String, String)>> {
        users::user_for_token(&self.store, digest).await
    }

    /// The account with this id, if it is on (a session's user).
    pub async fn user(&self, id: &UserId) -> anyhow::Result<Option<User>> {
        users::get(&self.store, id).await
    }

    /// Every account, on or off, by name.
    pub async fn users(&self) -> anyhow::Result<Vec<User>> {
        users::list(&self.store).await
    }

    /// The API tokens of `user_id`, revoked ones too, oldest first (never their secrets).
    pub async fn tokens_of(&self, user_id: &UserId) -> anyhow::Result<Vec<TokenInfo>> {
        users::tokens_of(&self.store, user_id).await
    }

    /// The people `name` decides in place of now: the delegations in force between accounts that
    /// are on (`store/delegations.rs`, `delegators_of`).
    pub async fn stands_in_for(&self, name: &str) -> anyhow::Result<Vec<String>> {
        delegations::delegators_of(&self.store, name, now_ms()).await
    }
}
