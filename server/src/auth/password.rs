//! argon2id password hashing, always off the async runtime, and at most one hash per core at a
//! time: each takes 19 MiB and a core for tens of milliseconds, so unbounded parallel logins would
//! take all memory and every core (the blocking pool has 512 threads).

use std::{
    sync::{
        LazyLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

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

/// Hashes running at once: one per core.
static HASHING: LazyLock<tokio::sync::Semaphore> =
    LazyLock::new(|| tokio::sync::Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get())));
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// How long a password check waits for a free core before the caller is told to come back.
const WAIT_FOR_CORE: Duration = Duration::from_secs(10);

/// Every core has been busy hashing for [`WAIT_FOR_CORE`]: answer 503, try again shortly.
#[derive(Debug, thiserror::Error)]
#[error("the server is busy checking passwords; try again in a moment")]
pub struct Busy;

/// The most hashes that ran at once in this process (shown in /metrics).
pub fn peak_in_flight() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Runs `work` on the blocking pool once a core is free for it.
async fn on_a_free_core<T: Send + 'static>(work: impl FnOnce() -> anyhow::Result<T> + Send + 'static) -> anyhow::Result<T> {
    let _permit = tokio::time::timeout(WAIT_FOR_CORE, HASHING.acquire()).await.map_err(|_| Busy)?.context("hashing closed")?;
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(now, Ordering::SeqCst);
    let result = tokio::task::spawn_blocking(work).await;
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    result.context("password hashing task failed")?
}

pub async fn hash(password: String) -> anyhow::Result<String> {
    on_a_free_core(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("{e}"))
    })
    .await
}

/// A hash with the same parameters as [`hash`] makes, verified when the user does not exist.
const DUMMY: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$yZ8u4k2P3cRb0p0Vb2r0iO4mV0rj3dQm7CMtq0cBn3c";

/// Constant work whether or not the user exists: pass `None` to verify against a dummy hash.
pub async fn verify(password: String, stored: Option<String>) -> anyhow::Result<bool> {
    on_a_free_core(move || {
        let text = stored.as_deref().unwrap_or(DUMMY);
        let parsed = PasswordHash::new(text).map_err(|e| anyhow::anyhow!("stored hash unreadable: {e}"))?;
        let ok = Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok();
        Ok(ok && stored.is_some())
    })
    .await
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

    /// Twenty checks at once run at most one per core: memory stays at cores × 19 MiB.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn parallel_checks_wait_for_a_free_core() {
        let stored = hash("correct horse".into()).await.unwrap();
        let checks: Vec<_> = (0..20).map(|i| tokio::spawn(verify(format!("guess {i}"), Some(stored.clone())))).collect();
        for check in checks {
            assert!(!check.await.unwrap().unwrap());
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        assert!(peak_in_flight() >= 1 && peak_in_flight() <= cores, "peak {} on {cores} cores", peak_in_flight());
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
