//! SQLite: copying the write-ahead log back into the database file (a checkpoint, which syncs the
//! file to disk) happens on a background task instead of inside whichever commit crossed the
//! log's size limit. Left to SQLite's automatic checkpoint, roughly one commit in a few hundred
//! paid for the sync, which was the tail of the decision latency (docs/performance-notes.md,
//! "Checkpoints and the log's write-back").
//! Every connection sets `wal_autocheckpoint = 0` (store/mod.rs); a passive checkpoint never
//! blocks the writer or the readers. PostgreSQL: nothing to do.
//!
//! A passive checkpoint never starts the log over, though: SQLite reuses the log from its
//! beginning only when a write begins while no reader still reads from it, and under steady
//! load some reader always does. The log then grew without end (2.5 GB after 37,000 paused
//! tasks, every read slower for it), so once it passes [`LOG_LIMIT_FRAMES`] it is started over
//! (a `RESTART` checkpoint) while this task holds the writer connection: writes wait for that
//! (at most [`RESTART_WAIT_MS`]) instead of failing on a busy database. Started over, not
//! truncated: the next writes reuse the file's blocks, where a truncated log had the file
//! system allocate them again (docs/performance-notes.md, "Checkpoints and the log's write-back");
//! `journal_size_limit` (store/mod.rs) shrinks a log that a burst made larger.

use std::time::Duration;

use anyhow::Context;
use sqlx::Acquire;

use crate::{Backend, Store};

/// About 32 MiB of 4 KiB pages.
pub const LOG_LIMIT_FRAMES: i64 = 8192;

/// How long a restarting checkpoint waits for readers to leave the log before it tries again on
/// a later round (the writer waits that long at most).
const RESTART_WAIT_MS: u32 = 200;

/// Checkpoints the log every `every` while the process runs.
pub async fn keep_checkpointing(store: Store, every: Duration, pulse: impl crate::Heartbeat) {
    if store.backend() != Backend::Sqlite {
        return;
    }
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match checkpoint(&store, LOG_LIMIT_FRAMES).await {
            Ok(_) => pulse.ok(),
            Err(err) => {
                tracing::warn!(error = %err, "checkpointing the write-ahead log failed; trying again");
                pulse.failed(err);
            }
        }
    }
}

/// What one round did.
#[derive(Debug, PartialEq, Eq)]
pub enum Checkpointed {
    /// Copied what it could into the database file; the log stays (`frames` long).
    Copied { frames: i64 },
    /// The log was past its limit and was copied whole: the next write starts it over.
    Restarted,
    /// The log was past its limit, but readers kept it for longer than the wait: next round.
    Busy { frames: i64 },
}

/// One round: a passive checkpoint, and a restarting one when the log is longer than
/// `limit_frames`.
pub async fn checkpoint(store: &Store, limit_frames: i64) -> anyhow::Result<Checkpointed> {
    let (_, frames, _): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(store.pool()).await.context("passive checkpoint")?;
    if frames <= limit_frames {
        return Ok(Checkpointed::Copied { frames });
    }
    // Holding the writer keeps the store's writes out while the log is copied whole. The checkpoint
    // itself, and its wait for readers to leave the log, runs on a reader connection with a
    // thread of its own: the writer runs on the calling task (vendor/README.md).
    let _writes_wait = store.writer().hold().await.context("the writer connection")?;
    let mut reader = store.pool().acquire().await.context("a reader connection")?;
    let conn = reader.acquire().await?;
    sqlx::query(&format!("PRAGMA busy_timeout = {RESTART_WAIT_MS}")).execute(&mut *conn).await?;
    let restarted: Result<(i64, i64, i64), _> = sqlx::query_as("PRAGMA wal_checkpoint(RESTART)").fetch_one(&mut *conn).await;
    // Back to the connection's own wait, whatever the checkpoint did (store/mod.rs).
    sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
    match restarted.context("restarting checkpoint")? {
        (0, _, _) => Ok(Checkpointed::Restarted),
        _ => Ok(Checkpointed::Busy { frames }),
    }
}
