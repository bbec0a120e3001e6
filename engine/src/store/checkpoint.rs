//! SQLite: copying the write-ahead log back into the database file (a checkpoint, which syncs the
//! file to disk) happens on a background task instead of inside whichever commit crossed the
//! log's size limit. Left to SQLite's automatic checkpoint, roughly one commit in a few hundred
//! paid for the sync, which was the tail of the decision latency (docs/performance-notes.md).
//! Every connection sets `wal_autocheckpoint = 0` (store/mod.rs); a passive checkpoint never
//! blocks the writer or the readers. PostgreSQL: nothing to do.

use std::time::Duration;

use super::{Backend, Store};

/// Checkpoints the log every `every` while the process runs.
pub async fn keep_checkpointing(store: Store, every: Duration) {
    if store.backend() != Backend::Sqlite {
        return;
    }
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(err) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(store.pool()).await {
            tracing::warn!(error = %err, "checkpointing the write-ahead log failed; trying again");
        }
    }
}
