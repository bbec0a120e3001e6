//! Attempt counters in fixed windows, kept in the database so every replica counts against the
//! same limit (logins per user name and per client address, decisions per user: the engine's `limits` says which).
//!
//! A window starts at the first attempt after the previous one ended; attempts over the limit are
//! refused until it ends, and refused attempts do not extend it.

use super::Db;
use std::time::Duration;

use anyhow::Context;

use clock::now_ms;

/// Counts one attempt under `key`. `Ok(None)`: allowed (the attempt is counted);
/// `Ok(Some(wait))`: over `limit`, allowed again after `wait`.
pub async fn take(writer: impl Into<Db<'_>>, key: &str, limit: u32, window: Duration) -> anyhow::Result<Option<Duration>> {
    let now = now_ms();
    let window_ms = window.as_millis() as i64;
    // Both SET expressions read the row as it was, so an ended window restarts at 1 from now.
    let (count, start): (i64, i64) = sqlx::query_as(
        "INSERT INTO attempt_limits (key, window_start, count) VALUES ($1, $2, 1)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN attempt_limits.window_start <= $3 THEN 1 ELSE attempt_limits.count + 1 END,
           window_start = CASE WHEN attempt_limits.window_start <= $3 THEN $2 ELSE attempt_limits.window_start END
         RETURNING count, window_start",
    )
    .bind(key)
    .bind(now)
    .bind(now - window_ms)
    .fetch_one(writer.into().write())
    .await
    .context("failed to count an attempt")?;
    if count <= i64::from(limit) {
        return Ok(None);
    }
    let wait_ms = (start + window_ms - now).max(1);
    Ok(Some(Duration::from_millis(wait_ms as u64)))
}

/// Uncounts one attempt that turned out not to count (a login with the right password).
pub async fn give_back(writer: impl Into<Db<'_>>, key: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE attempt_limits SET count = count - 1 WHERE key = $1 AND count > 0")
        .bind(key)
        .execute(writer.into().write())
        .await
        .context("failed to uncount an attempt")?;
    Ok(())
}

/// Deletes counters whose window ended more than `window` ago (the sweeper calls it), so the
/// table holds only the keys of the last window.
pub async fn forget_ended(writer: impl Into<Db<'_>>, window: Duration) -> anyhow::Result<u64> {
    let done = sqlx::query("DELETE FROM attempt_limits WHERE window_start < $1")
        .bind(now_ms() - 2 * window.as_millis() as i64)
        .execute(writer.into().write())
        .await
        .context("failed to delete old attempt counters")?;
    Ok(done.rows_affected())
}
