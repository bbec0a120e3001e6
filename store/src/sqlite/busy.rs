//! SQLite's write lock held by another connection (the session store, another process such as
//! the CLI's audit prune): the writer has no busy handler, since it runs on the calling task and
//! SQLite's handler sleeps in place, holding a runtime worker for up to its whole timeout. A
//! statement that finds the lock taken fails at once with `SQLITE_BUSY`, and is tried again here
//! after an async sleep, until [`WAIT`] has passed.

use std::{
    future::Future,
    time::{Duration, Instant},
};

/// How long a write waits for the lock in all (what `busy_timeout` was).
pub const WAIT: Duration = Duration::from_secs(10);

/// Whether SQLite answered "busy" (`SQLITE_BUSY` and its extended codes).
pub fn is_busy(err: &sqlx::Error) -> bool {
    err.as_database_error().and_then(|e| e.code()).and_then(|code| code.parse::<i32>().ok()).is_some_and(|code| code & 0xff == 5)
}

/// Runs `attempt` until it is not busy, sleeping 1 ms, 2 ms, 4 ms … (at most 50 ms) between
/// tries; after [`WAIT`] the last busy error is the answer.
pub async fn retrying<T, F, Fut>(mut attempt: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match attempt().await {
            Err(err) if is_busy(&err) && started.elapsed() < WAIT => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}
