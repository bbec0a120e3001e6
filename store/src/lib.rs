//! Persistence: one portable pool (SQLite by default, PostgreSQL to scale out), migrations, and
//! one module of queries per table, and the bus committed events are published on
//! (docs/architecture.md, "Crates"). It knows nothing of what uses it: the engine above it.
//! A state change and the event that records it are written in one transaction (`Write`).

pub mod approvals;
pub mod audit;
pub mod audit_anchors;
pub mod audit_verify;
pub mod backup;
pub mod bus;
pub mod calls;
pub mod client_calls;
mod connections;
pub mod conversations;
mod db;
pub mod decision_links;
pub mod delegations;
pub mod events;
pub mod grants;
pub mod groups;
pub mod limits;
mod new_row;
pub mod orders;
pub mod outbox;
mod read_only;
pub mod recorded;
mod replica_notice;
pub mod replicas;
pub mod secrets;
pub mod shadow_hits;
pub mod slack;
pub mod snapshots;
pub mod sqlite;
mod strict_columns;
pub mod tasks;
pub mod users;

use domain::{ApprovalId, ConversationId, GrantId, TaskId};
use std::time::Duration;

use anyhow::Context;
use domain::{Event, EventBody};
use sqlx::{
    Any, AnyPool, Executor,
    any::AnyPoolOptions,
    postgres::{PgPool, PgPoolOptions},
    sqlite::SqlitePool,
};

pub use self::connections::{Connections, Tx};
pub use self::db::{Db, Exec};
use crate::bus::Bus;

/// A driver's write found its task's lease gone (it ran out, or another driver claimed the task):
/// the write was dropped and nothing of it was stored. Carried in the `anyhow::Error` a fenced
/// write returns; the engine says it as its own `Error::LeaseLost`.
#[derive(Debug)]
pub struct LeaseLost(pub TaskId);

impl std::fmt::Display for LeaseLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the lease on task {} is no longer held by this driver; its write was dropped", self.0)
    }
}

impl std::error::Error for LeaseLost {}

/// How a loop the store runs in the background (the audit chain, checkpoints, the database's
/// clock, the replicas' relay) says how its last pass went: the caller's health handle.
pub trait Heartbeat: Send + Sync + 'static {
    /// A pass went well.
    fn ok(&self);
    /// A pass failed (the loop retries by itself).
    fn failed(&self, err: anyhow::Error);
}

/// This build's migrations, per backend (embedded when it is built).
static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Why the database could not be brought to this build's schema, said so an admin knows what to
/// do. A database that applied migrations this build does not have was made by a development
/// build from before the schema became one baseline (migrations/*/…_baseline.sql), or by a newer
/// release.
fn migration_failed(err: sqlx::migrate::MigrateError) -> anyhow::Error {
    match err {
        sqlx::migrate::MigrateError::VersionMissing(version) => anyhow::anyhow!(
            "the database has migration {version} applied, which this build does not know: it was made by a development build from \
             before the schema baseline of 2026-11-27 or by a newer release. Start this build on a new data directory (or database), \
             or run the release that made it"
        ),
        other => anyhow::Error::new(other).context("failed to migrate the database"),
    }
}

/// Which database the URL chose: SQLite by default, PostgreSQL to scale out (docs/architecture.md, decision 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The same database through its own driver, for what the portable pool cannot do: migrations,
/// the session store, and PostgreSQL's LISTEN/NOTIFY.
#[derive(Clone, Debug)]
pub enum NativePool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// What a write transaction is about: the conversation it is ordered in. PostgreSQL: the
/// transaction locks that conversation's row first, so writes of one conversation happen one at a
/// time (sequence numbers and state changes need no retry logic) while different conversations
/// commit in parallel. SQLite has one writer, so there the scope changes nothing.
#[derive(Clone, Copy, Debug)]
pub enum WriteScope<'a> {
    Conversation(&'a ConversationId),
    Task(&'a TaskId),
    Approval(&'a ApprovalId),
    Grant(&'a GrantId),
    /// Groups and delegations: no conversation of their own (a group's change re-resolves the
    /// pending approvals that name it through conditional updates). Ordered with decisions by
    /// the `AUTHORITY` lock.
    People,
}

/// The PostgreSQL advisory lock that orders decisions with changes of who may decide (groups,
/// delegations): a decision holds it shared ([`Write::hold_authority`]), a change holds it alone
/// (`WriteScope::People`), so a decision never commits on authority that a change removed before it
/// (docs/security.md, "The authority rules"). An advisory lock writes no row, so decisions do not
/// contend with each other. SQLite's one writer orders every write already.
const AUTHORITY: &str = "7461001";

impl WriteScope<'_> {
    /// Locks the scope's conversation row; a scope that names nothing locks nothing (the write
    /// then finds nothing to change and says so).
    async fn lock(self, conn: &mut sqlx::AnyConnection) -> anyhow::Result<()> {
        let (sql, id): (_, &str) = match self {
            WriteScope::Conversation(id) => ("SELECT id FROM conversations WHERE id = $1 FOR UPDATE", id),
            WriteScope::Task(id) => {
                ("SELECT id FROM conversations WHERE id = (SELECT conversation_id FROM tasks WHERE id = $1) FOR UPDATE", id)
            }
            WriteScope::Approval(id) => {
                ("SELECT id FROM conversations WHERE id = (SELECT conversation_id FROM approvals WHERE id = $1) FOR UPDATE", id)
            }
            WriteScope::Grant(id) => {
                ("SELECT id FROM conversations WHERE id = (SELECT conversation_id FROM grants WHERE id = $1) FOR UPDATE", id)
            }
            // Who may decide changes: alone, after every decision under way (see `AUTHORITY`).
            WriteScope::People => ("SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1::bigint)) AS l", AUTHORITY),
        };
        sqlx::query(sql).bind(id).fetch_optional(conn).await.context("failed to take the write's lock")?;
        Ok(())
    }
}

/// Options of the portable pool: `session` (settings of the backend's SQL) runs on every new
/// connection.
fn portable_pool(backend: Backend, max_connections: u32, session: &'static str) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max_connections)
        // A SQLite connection is a file handle in this process: it cannot go stale the way a
        // network connection can, so the round trip that checks it on every acquire is saved.
        .test_before_acquire(backend == Backend::Postgres)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                conn.execute(session).await?;
                Ok(())
            })
        })
}

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    /// Where writes go. SQLite: one connection the store holds, so writers queue for it (in
    /// order, without sleeping on `SQLITE_BUSY`) while readers use `pool`. PostgreSQL: the same
    /// pool as `pool`.
    writer: Connections,
    /// Short reads on a request's or a driver's path (see [`Store::quick`]). SQLite: two
    /// connections the store holds, which run on the calling task. PostgreSQL: the same pool as
    /// `pool`.
    quick: Connections,
    native: NativePool,
    bus: Bus,
    /// Webhook targets: an event they want is queued in the transaction that appends it.
    webhooks: std::sync::Arc<Vec<outbox::Target>>,
    /// How many [`Write`]s wait to begin (SQLite: for the one writer connection), and whether
    /// they queued lately.
    load: std::sync::Arc<sqlite::writer_load::WriterLoad>,
    /// PostgreSQL: wakes [`audit::keep_chaining`] after a commit that staged audit entries.
    chain_kick: std::sync::Arc<tokio::sync::Notify>,
}

impl Store {
    /// Measures how far the database's clock runs ahead of this host's and makes `clock::now_ms`
    /// follow it (PostgreSQL; SQLite's clock is this host's). The reading is taken halfway
    /// through the round trip. The offset found, in ms.
    pub async fn follow_database_clock(&self) -> anyhow::Result<i64> {
        if self.backend() != Backend::Postgres {
            return Ok(0);
        }
        let sql = format!("SELECT {}", tasks::db_now_ms(Backend::Postgres));
        let before = clock::host_now_ms();
        let database: i64 = sqlx::query_scalar(&sql).fetch_one(&self.pool).await.context("failed to read the database's clock")?;
        let after = clock::host_now_ms();
        let ahead = database - (before + after) / 2;
        clock::follow_database_clock(ahead);
        Ok(ahead)
    }

    /// Keeps following the database's clock (a host's clock may be stepped while it runs).
    pub async fn keep_following_database_clock(self, every: Duration, pulse: impl crate::Heartbeat) {
        loop {
            tokio::time::sleep(every).await;
            match self.follow_database_clock().await {
                Ok(_) => pulse.ok(),
                Err(err) => {
                    tracing::warn!(error = ?err, "could not read the database's clock; keeping the last offset");
                    pulse.failed(err);
                }
            }
        }
    }

    /// Opens the database at `url` (`sqlite://…`, created if missing, or `postgres://…`) and
    /// applies pending migrations.
    #[tracing::instrument(skip(bus))]
    pub async fn connect(url: &str, bus: Bus) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // Every connection is named after this process, so another replica can tell from
            // `pg_stat_activity` that a lease's holder is gone (its connections closed with it).
            let separator = if url.contains('?') { '&' } else { '?' };
            let url = &format!("{url}{separator}application_name={}", bus.instance());
            let native = PgPoolOptions::new()
                .max_connections(4)
                .connect(url)
                .await
                .context("failed to connect to PostgreSQL (check DATABASE_URL)")?;
            POSTGRES_MIGRATIONS.run(&native).await.map_err(migration_failed)?;
            // A replica that froze inside a transaction must not stall the others for long:
            // PostgreSQL ends its session after 15 s idle in a transaction (releasing its locks),
            // and a wait for a lock gives up after 30 s (longer, so waiters outlast a frozen holder).
            let pool = portable_pool(Backend::Postgres, 16, "SET lock_timeout = '30s'; SET idle_in_transaction_session_timeout = '15s'")
                .connect(url)
                .await
                .context("failed to connect to PostgreSQL")?;
            return Ok(Self {
                writer: Connections::Pool(pool.clone()),
                quick: Connections::Pool(pool.clone()),
                pool,
                native: NativePool::Postgres(native),
                bus,
                webhooks: Default::default(),
                load: Default::default(),
                chain_kick: Default::default(),
            });
        }
        let (pool, writer, quick, native) = sqlite::open(url).await?;
        Ok(Self {
            pool,
            writer,
            quick,
            native: NativePool::Sqlite(native),
            bus,
            webhooks: Default::default(),
            load: Default::default(),
            chain_kick: Default::default(),
        })
    }

    /// Queues deliveries of the events these targets want from now on.
    pub fn with_webhooks(mut self, targets: Vec<outbox::Target>) -> Self {
        self.webhooks = std::sync::Arc::new(targets);
        self
    }

    /// For reads (and, on PostgreSQL, anything).
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// For short reads on the path of a request or a task's driver: a row or a few by an indexed
    /// key (a token, a conversation, a task's calls). On SQLite they run on the calling task,
    /// which costs less than the hand-off to a reader's thread that `pool` makes but holds the
    /// task's thread meanwhile; so never a read whose length grows with the data (a whole event
    /// log, a list, an export): those use `pool` (docs/performance-notes.md, "Quick reads").
    ///
    /// SQLite: while the writer is idle and writes have not queued for it lately, a quick read
    /// runs on the writer. A connection drops its whole page cache when another connection
    /// committed, and the writer commits between nearly any two reads, so the quick readers read
    /// every page again from the file; the writer's cache holds what it wrote. Under concurrent
    /// writes the reads keep off it, since a write would wait for them there
    /// (docs/performance-notes.md, "Quick reads").
    pub(crate) fn quick(&self) -> &Connections {
        if self.backend() == Backend::Sqlite && self.writer.num_idle() > 0 && !self.load.contended() {
            return &self.writer;
        }
        &self.quick
    }

    /// For a read of about `rows` rows, known before it is made (a conversation's events after a
    /// cursor, from its `last_seq`): [`Self::quick`] when that is a few, `pool` otherwise.
    pub(crate) fn reader_for(&self, rows: i64) -> Exec<'_> {
        if rows <= QUICK_READ_ROWS { self.quick().exec() } else { Exec::Pool(&self.pool) }
    }

    /// The pools themselves, for tests of the connection plan and for raw SQL in tests (the
    /// `testing` feature, on in the test builds only).
    #[cfg(feature = "testing")]
    pub fn testing(&self) -> Testing<'_> {
        Testing(self)
    }

    /// One connection for several reads that belong together (outside a write).
    pub async fn connection(&self) -> anyhow::Result<sqlx::pool::PoolConnection<Any>> {
        self.pool.acquire().await.context("no database connection")
    }

    /// For writes outside a [`Write`] (single statements such as lease claims).
    pub(crate) fn writer(&self) -> &Connections {
        &self.writer
    }

    pub fn native(&self) -> &NativePool {
        &self.native
    }

    pub fn backend(&self) -> Backend {
        match self.native {
            NativePool::Sqlite(_) => Backend::Sqlite,
            NativePool::Postgres(_) => Backend::Postgres,
        }
    }

    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    pub(crate) fn chain_kick(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.chain_kick.clone()
    }

    /// Cheap round trip used by the health check.
    pub async fn ping(&self) -> anyhow::Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.context("database ping failed")?;
        Ok(())
    }

    /// Starts a write transaction ordered in `scope`'s conversation. SQLite: `BEGIN IMMEDIATE` on
    /// the one writer connection. PostgreSQL: READ COMMITTED with the conversation's row locked
    /// first (see [`WriteScope`]); state shared between conversations (orders, grants, leases) changes
    /// only through conditional statements, and audit entries are staged and chained after the commit
    /// (`audit::keep_chaining`), so no write waits on a global lock.
    pub async fn write(&self, scope: WriteScope<'_>) -> anyhow::Result<Write> {
        let tx = match self.backend() {
            Backend::Sqlite => {
                let waiting = self.load.wait();
                let tx = sqlite::busy::retrying(|| self.writer.begin("BEGIN IMMEDIATE")).await;
                drop(waiting);
                tx.context("failed to begin a write transaction")?
            }
            Backend::Postgres => {
                let mut tx =
                    self.writer.begin("BEGIN ISOLATION LEVEL READ COMMITTED").await.context("failed to begin a write transaction")?;
                scope.lock(&mut tx).await?;
                tx
            }
        };
        Ok(Write {
            tx,
            events: Vec::new(),
            unwritten: Vec::new(),
            next_seq: Vec::new(),
            audit: Vec::new(),
            backend: self.backend(),
            bus: self.bus.clone(),
            webhooks: self.webhooks.clone(),
            load: self.load.clone(),
            chain_kick: self.chain_kick.clone(),
            fence: None,
            release: false,
        })
    }

    /// A write on behalf of the driver holding `lease`, ordered in its task's conversation: it
    /// commits only while that lease is still live and this driver's (docs/architecture.md, decision 7).
    /// Otherwise nothing of it is stored and the commit fails with [`crate::Error::LeaseLost`], which the
    /// driver logs and stops on.
    pub async fn write_as(&self, lease: &tasks::Lease) -> anyhow::Result<Write> {
        let mut w = self.write(WriteScope::Task(&lease.task_id)).await?;
        w.fence = Some(lease.clone());
        Ok(w)
    }
}

/// See [`Store::testing`].
#[cfg(feature = "testing")]
pub struct Testing<'a>(&'a Store);

#[cfg(feature = "testing")]
impl<'a> Testing<'a> {
    pub fn pool(&self) -> &'a AnyPool {
        self.0.pool()
    }

    pub fn quick(&self) -> &'a Connections {
        self.0.quick()
    }

    pub fn writer(&self) -> &'a Connections {
        self.0.writer()
    }
}

/// The most rows a read may return to run on a quick reader ([`Store::reader_for`]): the history
/// of a short chat, read on every model step (docs/performance-notes.md, "Quick reads").
pub const QUICK_READ_ROWS: i64 = 64;

/// A write transaction that collects the events it appends and publishes them to live
/// subscribers only after it committed.
pub struct Write {
    pub tx: Tx,
    events: Vec<Event>,
    /// SQLite: the events appended so far, inserted together at the commit
    /// ([`events::insert_all`]), and the next sequence number of each conversation they go to.
    unwritten: Vec<events::Unwritten>,
    next_seq: Vec<(ConversationId, i64)>,
    /// Audit entries, written at the commit: SQLite appends them to the chain (its one writer
    /// orders it); PostgreSQL stages them and chains them soon after the commit.
    audit: Vec<(&'static str, String, serde_json::Value)>,
    backend: Backend,
    bus: Bus,
    webhooks: std::sync::Arc<Vec<outbox::Target>>,
    load: std::sync::Arc<sqlite::writer_load::WriterLoad>,
    chain_kick: std::sync::Arc<tokio::sync::Notify>,
    /// The lease this write is made under, checked just before the commit.
    fence: Option<tasks::Lease>,
    /// Whether the commit also gives that lease up (the driver's last write).
    release: bool,
}

impl Write {
    /// For a decision, before it reads the approval and who may decide it: waits for a change
    /// of groups or delegations under way, and keeps the next from committing before this write
    /// does ([`AUTHORITY`]).
    pub async fn hold_authority(&mut self) -> anyhow::Result<()> {
        if self.backend == Backend::Postgres {
            sqlx::query(&format!("SELECT count(*) FROM (SELECT pg_advisory_xact_lock_shared({AUTHORITY}::bigint)) AS l"))
                .fetch_one(&mut *self.tx)
                .await
                .context("failed to wait for a change of who may decide")?;
        }
        Ok(())
    }

    pub async fn append(&mut self, conversation_id: &ConversationId, body: EventBody) -> anyhow::Result<Event> {
        let event = match self.backend {
            Backend::Sqlite => {
                let row = events::Unwritten::new(conversation_id, self.take_seq(conversation_id).await?, body)?;
                let event = row.event.clone();
                self.unwritten.push(row);
                event
            }
            Backend::Postgres => events::append(&mut self.tx, self.bus.instance(), conversation_id, body).await?,
        };
        for target in self.webhooks.iter().filter(|t| t.events.iter().any(|e| e == event.body.name())) {
            outbox::queue(&mut self.tx, outbox::Message::Webhook { url: &target.url, body: outbox::payload(&event) }).await?;
        }
        self.events.push(event.clone());
        Ok(event)
    }

    /// Records an audit entry with this transaction: it is in the chain if and only if the
    /// transaction commits.
    pub fn audit(&mut self, kind: domain::AuditKind, actor: &str, data: serde_json::Value) {
        self.audit.push((kind.as_str(), actor.to_owned(), data));
    }

    /// Makes the commit give up the lease it is fenced by, in the same transaction: for a
    /// driver's last write, which then needs no commit of its own to release the task.
    pub fn release_lease_at_commit(&mut self) {
        self.release = true;
    }

    /// SQLite: the next sequence number of `conversation_id` in this write (its counter is read
    /// once; the one writer orders the writes).
    async fn take_seq(&mut self, conversation_id: &ConversationId) -> anyhow::Result<i64> {
        let index = match self.next_seq.iter().position(|(id, _)| id == conversation_id) {
            Some(index) => index,
            None => {
                let last = events::last_seq(&mut self.tx, conversation_id).await?;
                self.next_seq.push((conversation_id.clone(), last + 1));
                self.next_seq.len() - 1
            }
        };
        let next = &mut self.next_seq[index].1;
        *next += 1;
        Ok(*next - 1)
    }

    pub async fn commit(mut self) -> anyhow::Result<Vec<Event>> {
        events::insert_all(&mut self.tx, &std::mem::take(&mut self.unwritten)).await?;
        if let Some(lease) = &self.fence {
            // On failure `self` is dropped here, which rolls the transaction back.
            match self.release {
                true => tasks::release_held(&mut self.tx, self.backend, lease).await?,
                false => tasks::check_held(&mut self.tx, self.backend, lease).await?,
            }
        }
        let audited = !self.audit.is_empty();
        let entries = std::mem::take(&mut self.audit);
        match self.backend {
            Backend::Sqlite => audit::append(&mut self.tx, entries).await?,
            Backend::Postgres => {
                for (kind, actor, data) in entries {
                    audit::stage(&mut self.tx, kind, &actor, data).await?;
                }
            }
        }
        self.tx.commit().await.context("failed to commit")?;
        // From here on the events are published even if this future is dropped at the yield
        // below (a caller whose client hung up): they are committed.
        let committed = Committed { bus: self.bus.clone(), events: std::mem::take(&mut self.events) };
        if self.load.waiting() > 0 {
            // SQLite: the one writer connection went back to its pool and woke the next write's
            // task. Yielding lets that task begin now instead of after what this one does before
            // it next awaits (publishing wakes streams, which would run first): fewer idle gaps
            // between writes (docs/performance-notes.md, "A yield after the commit"). A stream
            // that gets an event out of order meanwhile reads the gap from the store.
            tokio::task::yield_now().await;
        }
        let events = committed.publish();
        if audited && self.backend == Backend::Postgres {
            // Chained in the background, several commits at a time; a reader of the trail
            // chains what is staged first (`audit::settle`).
            self.chain_kick.notify_one();
        }
        Ok(events)
    }
}

/// A commit's events on their way to the live subscribers: published by [`Committed::publish`],
/// or when dropped before (a commit whose caller went away after the COMMIT).
struct Committed {
    bus: Bus,
    events: Vec<Event>,
}

impl Committed {
    fn publish(mut self) -> Vec<Event> {
        let events = std::mem::take(&mut self.events);
        for event in &events {
            self.bus.publish_local(event.clone());
        }
        events
    }
}

impl Drop for Committed {
    fn drop(&mut self) {
        for event in self.events.drain(..) {
            self.bus.publish_local(event);
        }
    }
}
