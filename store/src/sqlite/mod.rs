//! SQLite's connection plan (docs/performance-notes.md, "The write path" and "Quick reads"):
//! which connections there are and how each is set up ([`open`]); how busy the one writer is
//! (`writer_load.rs`) and its retries while another connection holds the lock (`busy.rs`);
//! and the write-ahead log kept short off the commit path (`checkpoint.rs`, `writeback.rs`).

pub(super) mod busy;
pub mod checkpoint;
pub mod held;
pub mod writeback;
pub mod writer_load;

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use sqlx::{
    AnyPool,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous},
};

use self::held::Held;
use super::{Backend, Connections, SQLITE_MIGRATIONS, migration_failed, portable_pool};

/// Opens the file at `url` (created if missing), applies pending migrations, and returns the
/// readers, the writer, the quick readers and the native pool (the session store's).
pub(super) async fn open(url: &str) -> anyhow::Result<(AnyPool, Connections, Connections, SqlitePool)> {
    let options = SqliteConnectOptions::from_str(url)
        .with_context(|| format!("invalid database URL {url:?}"))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10))
        .pragma("wal_autocheckpoint", "0");
    if let Some(dir) = options.get_filename().parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("failed to create data dir {}", dir.display()))?;
    }
    let native = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .with_context(|| format!("failed to open database {url}"))?;
    SQLITE_MIGRATIONS.run(&native).await.map_err(migration_failed)?;
    // The portable pools open the same file; WAL is a property of the file, the rest is per
    // connection. The busy timeout covers the rare write outside the writer (the session store);
    // checkpoints run in the background (`checkpoint::keep_checkpointing`), not in a commit,
    // and a log started over is cut back to 64 MiB if a burst made it longer.
    const SESSION: &str = "PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0; \
         PRAGMA journal_size_limit = 67108864";
    // The readers keep their worker threads; the pool's check of a reader it takes back looks
    // at the thread's channel instead of a round trip to it (`ping=channel`, vendor/README.md).
    let separator = if url.contains('?') { '&' } else { '?' };
    let readers_url = format!("{url}{separator}ping=channel");
    let pool =
        portable_pool(Backend::Sqlite, 8, SESSION).connect(&readers_url).await.with_context(|| format!("failed to open database {url}"))?;
    // The writer runs its statements on the calling task: no thread hand-off per statement
    // (vendor/README.md). Its statements are short, and it is the only portable connection
    // that writes, so it seldom waits for SQLite's lock. So do the quick readers.
    let inline_url = format!("{url}{separator}worker=inline");
    // No busy handler on the writer and the quick readers: they run on the calling task, so
    // SQLite's wait for a lock another connection holds (the session store, another process
    // such as the CLI; a reader waits only while another connection recovers the log) would
    // hold a runtime worker. A statement fails at once instead and is tried again after a
    // sleep (`held.rs`, `busy.rs`).
    const INLINE_SESSION: &str = "PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0; \
         PRAGMA journal_size_limit = 67108864";
    // Both are held by the store, outside sqlx's pool (`held.rs`).
    let writer = Held::open(&inline_url, 1, INLINE_SESSION).await.with_context(|| format!("failed to open database {url}"))?;
    let quick = Held::open(&inline_url, 2, INLINE_SESSION).await.with_context(|| format!("failed to open database {url}"))?;
    Ok((pool, Connections::Held(writer), Connections::Held(quick), native))
}
