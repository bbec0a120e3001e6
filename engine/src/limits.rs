//! How often a caller may try: logins per user name and per client address, decisions per user.
//! Over a limit, the web layer answers 429 with `Retry-After`. The counters live in the database
//! (`store::limits`), so several replicas share one limit instead of each allowing it again.
//!
//! Logins count failures (OWASP ASVS 2.2.1): an attempt is counted before the password is checked,
//! so a burst of parallel guesses cannot slip past the limit, and given back when the password was
//! right. The limit is checked before any hashing, so refused guesses cost no argon2 work.

use domain::UserId;
use std::{sync::Arc, time::Duration};

use crate::store::{Db, Store, limits as counters};

/// Why an attempt was not let through: over a limit (the web layer answers 429 with
/// `Retry-After`), or the counters could not be read.
#[derive(Debug)]
pub enum LimitRefusal {
    Limited { message: String, retry_after_secs: u64 },
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for LimitRefusal {
    fn from(err: anyhow::Error) -> Self {
        Self::Failed(err)
    }
}

/// At most `limit` attempts in each `window`.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    pub limit: u32,
    pub window: Duration,
}

/// The limits, with the store their counters are kept in.
#[derive(Clone, Debug)]
pub struct Limits {
    store: Store,
    pub login_per_name: Rate,
    pub login_per_address: Rate,
    pub decisions_per_user: Rate,
}

/// A user name is compared as typed but trimmed and case-folded, and only its start is kept: the
/// key is not a place to store 64 KiB per request.
fn name_key(name: &str) -> String {
    let folded: String = name.trim().to_lowercase().chars().take(128).collect();
    format!("login-name:{folded}")
}

/// A login attempt that was allowed and counted; [`LoginAttempt::succeeded`] uncounts it.
pub struct LoginAttempt {
    store: Store,
    keys: [String; 2],
}

impl Limits {
    pub fn new(store: Store, login_per_name: Rate, login_per_address: Rate, decisions_per_user: Rate) -> Self {
        Self { store, login_per_name, login_per_address, decisions_per_user }
    }

    /// The longest window, after which a counter can be forgotten.
    pub fn longest_window(&self) -> Duration {
        self.login_per_name.window.max(self.login_per_address.window).max(self.decisions_per_user.window)
    }

    /// Every minute, deletes counters older than any window, so the table holds only recent keys.
    pub async fn forget_old_counters(self: Arc<Self>) {
        let mut every = tokio::time::interval(Duration::from_secs(60));
        loop {
            every.tick().await;
            if let Err(err) = counters::forget_ended(&self.store, self.longest_window()).await {
                tracing::warn!(error = ?err, "could not delete old attempt counters");
            }
        }
    }

    /// Counts a decision (or an abort) by `user_id`, or refuses it when they have used this
    /// window's. The decision use cases call it, each before its write
    /// (`Decisions::count_attempt`, engine/src/orchestrator/decisions/authority.rs).
    pub async fn decision(&self, user_id: &UserId) -> Result<(), LimitRefusal> {
        take(&self.store, &format!("decide:{user_id}"), self.decisions_per_user, "too many decisions").await
    }

    /// Counts a login attempt for `name` from `address`, or refuses it (429) when either has used
    /// its failures for this window.
    pub async fn login(&self, name: &str, address: Option<&str>) -> Result<LoginAttempt, LimitRefusal> {
        let store = &self.store;
        let name_key = name_key(name);
        let address_key = format!("login-address:{}", address.unwrap_or("unknown"));
        take(store, &address_key, self.login_per_address, "too many failed logins from this address").await?;
        if let Err(refused) = take(store, &name_key, self.login_per_name, "too many failed logins for this user name").await {
            counters::give_back(store, &address_key).await?;
            return Err(refused);
        }
        Ok(LoginAttempt { store: store.clone(), keys: [name_key, address_key] })
    }
}

impl LoginAttempt {
    /// The password was right: this attempt is not a failure.
    pub async fn succeeded(self) -> Result<(), LimitRefusal> {
        for key in &self.keys {
            counters::give_back(&self.store, key).await?;
        }
        Ok(())
    }
}

async fn take(db: impl Into<Db<'_>>, key: &str, rule: Rate, what: &str) -> Result<(), LimitRefusal> {
    match counters::take(db, key, rule.limit, rule.window).await? {
        None => Ok(()),
        Some(wait) => {
            // Never longer than the window: the database's clock may run a little ahead of ours.
            let retry_after_secs = wait.min(rule.window).as_secs_f64().ceil().max(1.0) as u64;
            Err(LimitRefusal::Limited { message: format!("{what}; try again in {retry_after_secs} s"), retry_after_secs })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_are_keyed_trimmed_folded_and_short() {
        assert_eq!(name_key("  Alice "), "login-name:alice");
        assert_eq!(name_key(&"x".repeat(10_000)).len(), "login-name:".len() + 128);
    }
}
