//! argon2id password hashing, always off the async runtime.

use anyhow::Context;
use argon2::{
    Argon2, PasswordHash, PasswordHasher, PasswordVerifier,
    password_hash::{SaltString, rand_core::OsRng},
};

pub const MIN_LENGTH: usize = 8;

pub async fn hash(password: String) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("{e}"))
    })
    .await
    .context("password hashing task failed")?
}

/// Constant work whether or not the user exists: pass `None` to verify against a dummy hash.
pub async fn verify(password: String, stored: Option<String>) -> anyhow::Result<bool> {
    tokio::task::spawn_blocking(move || {
        const DUMMY: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$yZ8u4k2P3cRb0p0Vb2r0iO4mV0rj3dQm7CMtq0cBn3c";
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
}
