//! argon2id password hashing, always off the async runtime.

use anyhow::Context;
use argon2::{
    Argon2, PasswordHash, PasswordHasher, PasswordVerifier,
    password_hash::{SaltString, rand_core::OsRng},
};

pub const MIN_LENGTH: usize = 8;

/// The passwords the README documents for the demo accounts: never accepted for a real account.
const DEMO_PASSWORDS: [&str; 2] = ["demo-password", "admin-password"];

/// Why `password` is not good enough for a new account named `name`, if it is not: shorter than
/// [`MIN_LENGTH`], the user name itself, or a password the README publishes.
pub fn weakness(name: &str, password: &str) -> Option<String> {
    if password.chars().count() < MIN_LENGTH {
        return Some(format!("the password must have at least {MIN_LENGTH} characters"));
    }
    if password.eq_ignore_ascii_case(name.trim()) {
        return Some("the password may not be the user name".into());
    }
    if DEMO_PASSWORDS.iter().any(|d| password.eq_ignore_ascii_case(d)) {
        return Some("that password is published in the README for the demo accounts; choose another".into());
    }
    None
}

pub async fn hash(password: String) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("{e}"))
    })
    .await
    .context("password hashing task failed")?
}

/// A hash with the same parameters as [`hash`] makes, verified when the user does not exist.
const DUMMY: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$yZ8u4k2P3cRb0p0Vb2r0iO4mV0rj3dQm7CMtq0cBn3c";

/// Constant work whether or not the user exists: pass `None` to verify against a dummy hash.
pub async fn verify(password: String, stored: Option<String>) -> anyhow::Result<bool> {
    tokio::task::spawn_blocking(move || {
        let text = stored.as_deref().unwrap_or(DUMMY);
        let parsed = PasswordHash::new(text).map_err(|e| anyhow::anyhow!("stored hash unreadable: {e}"))?;
        let ok = Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok();
        Ok(ok && stored.is_some())
    })
    .await
    .context("password check task failed")?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let h = hash("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse".into(), Some(h.clone())).await.unwrap());
        assert!(!verify("wrong".into(), Some(h)).await.unwrap());
        assert!(!verify("anything".into(), None).await.unwrap());
    }

    /// An unknown user name costs the same argon2 work as a wrong password: the dummy hash has
    /// the parameters of a real one, so the two paths cannot be told apart by their time.
    #[tokio::test]
    async fn the_dummy_hash_costs_what_a_real_one_does() {
        let real = hash("correct horse".into()).await.unwrap();
        let (real, dummy) = (PasswordHash::new(&real).unwrap(), PasswordHash::new(DUMMY).unwrap());
        assert_eq!((real.algorithm, real.version, real.params.to_string()), (dummy.algorithm, dummy.version, dummy.params.to_string()));
    }

    #[test]
    fn weak_passwords_are_named() {
        assert!(weakness("ada", "short").unwrap().contains("at least 8"));
        assert!(weakness("adalovelace", "AdaLovelace").unwrap().contains("user name"));
        assert!(weakness("ada", "demo-password").unwrap().contains("published"));
        assert!(weakness("ada", "Admin-Password").unwrap().contains("published"));
        assert_eq!(weakness("ada", "correct horse battery"), None);
    }
}
