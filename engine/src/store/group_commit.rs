//! SQLite group commit: writes that queue for the one writer connection share its transaction,
//! each inside a savepoint of its own, and are made durable by one COMMIT
//! (docs/performance-notes.md, "group commit").
//!
//! - A write with nobody queued behind it commits alone, at once.
//! - A write that others queue behind releases its savepoint and hands the open transaction on.
//!   It returns only once the group's COMMIT is done, and fails if that COMMIT fails: a caller
//!   never sees a write as committed before it is.
//! - The first write that joins a group also queues a closer behind the writes queued at that
//!   moment; the closer commits the group when its turn comes (if nobody did before). A group
//!   therefore ends even if every member's caller went away, and never grows past the queue
//!   it started with.
//! - A write dropped without commit rolls back to its savepoint only; the group's other writes stay.

use std::{
    ops::{Deref, DerefMut},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use anyhow::Context;
use sqlx::{Any, AnyConnection, AnyPool, Executor, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

/// The writer connection's shared state.
#[derive(Debug)]
pub struct Writer {
    pool: AnyPool,
    group: Arc<Mutex<Group>>,
    /// Writes queued for `group`.
    waiting: AtomicUsize,
}

/// The open transaction of the current group, if any.
#[derive(Debug, Default)]
struct Group {
    tx: Option<Transaction<'static, Any>>,
    /// Which group it is: a closer commits only the group it was queued for.
    generation: u64,
    /// Writes that released their savepoint into it and wait for its COMMIT.
    members: usize,
    /// Tells the members how the COMMIT went.
    done: Option<watch::Sender<Option<Result<(), String>>>>,
}

impl Group {
    /// Commits the group's transaction and tells its members.
    async fn finish(&mut self) -> anyhow::Result<()> {
        let Some(tx) = self.tx.take() else { return Ok(()) };
        let result = tx.commit().await.map_err(|e| format!("{e:#}"));
        self.members = 0;
        if let Some(done) = self.done.take() {
            done.send_replace(Some(result.clone()));
        }
        result.map_err(anyhow::Error::msg).context("failed to commit")
    }

    /// Rolls the whole transaction back (its savepoints could not be) and tells the members.
    async fn abandon(&mut self, why: &str) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.rollback().await;
        }
        self.members = 0;
        if let Some(done) = self.done.take() {
            done.send_replace(Some(Err(why.to_owned())));
        }
    }
}

const SAVEPOINT: &str = "SAVEPOINT countersign_write";
const RELEASE: &str = "RELEASE countersign_write";
const ROLLBACK: &str = "ROLLBACK TO countersign_write; RELEASE countersign_write";

impl Writer {
    pub fn new(pool: AnyPool) -> Arc<Self> {
        Arc::new(Self { pool, group: Default::default(), waiting: AtomicUsize::new(0) })
    }

    /// Waits for the writer connection, then opens this write's savepoint (and the group's
    /// transaction first if none is open).
    pub async fn begin(self: &Arc<Self>) -> anyhow::Result<Held> {
        let queued = Queued::new(&self.waiting);
        let mut guard = self.group.clone().lock_owned().await;
        drop(queued);
        if guard.tx.is_none() {
            // The first write of a group needs no savepoint: undoing it undoes the whole group.
            let tx = self.pool.begin_with("BEGIN IMMEDIATE").await.context("failed to begin a write transaction")?;
            guard.tx = Some(tx);
            guard.generation += 1;
            guard.done = Some(watch::channel(None).0);
            return Ok(Held { guard: Some(guard), writer: self.clone(), savepoint: false });
        }
        let mut held = Held { guard: Some(guard), writer: self.clone(), savepoint: true };
        held.execute(SAVEPOINT).await.context("failed to begin a write transaction")?;
        Ok(held)
    }
}

/// Counts a write as queued until it holds the writer (or gave up waiting).
struct Queued<'a>(&'a AtomicUsize);

impl<'a> Queued<'a> {
    fn new(waiting: &'a AtomicUsize) -> Self {
        waiting.fetch_add(1, Ordering::Relaxed);
        Self(waiting)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The writer connection while one write holds it, inside that write's savepoint.
#[derive(Debug)]
pub struct Held {
    /// `None` once committed (or handed to the clean-up of a dropped write).
    guard: Option<OwnedMutexGuard<Group>>,
    writer: Arc<Writer>,
    /// Whether this write opened a savepoint (every write but a group's first).
    savepoint: bool,
}

impl Held {
    fn tx(&mut self) -> &mut Transaction<'static, Any> {
        self.guard.as_mut().and_then(|g| g.tx.as_mut()).expect("a held write has its group's transaction")
    }

    async fn execute(&mut self, sql: &str) -> anyhow::Result<()> {
        let conn: &mut AnyConnection = self.tx();
        conn.execute(sql).await?;
        Ok(())
    }

    /// Keeps this write: alone, with a COMMIT; with writes queued behind it, in the group's
    /// COMMIT, which this waits for.
    pub async fn commit(mut self) -> anyhow::Result<()> {
        if self.savepoint {
            self.execute(RELEASE).await.context("failed to commit")?;
        }
        let mut guard = self.guard.take().expect("a held write has its guard");
        if self.writer.waiting.load(Ordering::Relaxed) == 0 {
            return guard.finish().await;
        }
        guard.members += 1;
        let mut done = guard.done.as_ref().expect("an open group can report").subscribe();
        if guard.members == 1 {
            // Queued now, the closer comes after the writes already waiting.
            let (group, generation) = (self.writer.group.clone(), guard.generation);
            tokio::spawn(async move {
                let mut guard = group.lock_owned().await;
                if guard.generation == generation && guard.tx.is_some() {
                    let _ = guard.finish().await;
                }
            });
        }
        drop(guard);
        let outcome = done.wait_for(Option::is_some).await.map_err(|_| anyhow::anyhow!("the group commit did not report"))?;
        match outcome.clone().expect("waited for an outcome") {
            Ok(()) => Ok(()),
            Err(why) => Err(anyhow::Error::msg(why).context("failed to commit")),
        }
    }
}

impl Deref for Held {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        self.guard.as_ref().and_then(|g| g.tx.as_deref()).expect("a held write has its group's transaction")
    }
}

impl DerefMut for Held {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.tx()
    }
}

impl Drop for Held {
    /// A write dropped without commit: its savepoint is rolled back before anyone else gets the
    /// connection; a group left without members is rolled back whole (it holds SQLite's lock).
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else { return };
        let savepoint = self.savepoint;
        tokio::spawn(async move {
            let undone = match guard.tx.as_deref_mut() {
                Some(conn) if savepoint => conn.execute(ROLLBACK).await.is_ok(),
                _ => true,
            };
            if !undone {
                guard.abandon("a write of the same group could not be rolled back alone").await;
            } else if guard.members == 0 {
                guard.abandon("rolled back").await;
            }
        });
    }
}
