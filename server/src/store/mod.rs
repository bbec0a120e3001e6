//! Persistence: one portable pool (SQLite by default, PostgreSQL to scale out), migrations, and
//! one module of queries per table.
//! A state change and the event that records it are written in one transaction (`Write`).

pub mod approvals;
pub mod audit;
pub mod calls;
pub mod conversations;
pub mod events;
pub mod grants;
pub mod orders;
pub mod outbox;
pub mod sessions;
pub mod tasks;
pub mod time;
pub mod users;

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use app::domain::{Event, EventBody};
use sqlx::{
    Any, AnyPool, Executor, Transaction,
    any::AnyPoolOptions,
    postgres::{PgPool, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous},
};

use crate::bus::Bus;

/// Which database the URL chose: SQLite by default, PostgreSQL to scale out (DESIGN decision 6).
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

/// Arbitrary but fixed: the advisory lock that makes PostgreSQL writes one at a time, like
/// SQLite's `BEGIN IMMEDIATE`, across every replica.
const WRITE_LOCK: i64 = 0x0043_6f75_6e74_6572; // "Counter"

/// Options of the portable pool: `session` (settings of the backend's SQL) runs on every new
/// connection.
fn portable_pool(max_connections: u32, session: &'static str) -> AnyPoolOptions {
    AnyPoolOptions::new().max_connections(max_connections).after_connect(move |conn, _| {
        Box::pin(async move {
            conn.execute(session).await?;
            Ok(())
        })
    })
}

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    native: NativePool,
    bus: Bus,
    /// Webhook targets: an event they want is queued in the transaction that appends it.
    webhooks: std::sync::Arc<Vec<outbox::Target>>,
}

impl Store {
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
            sqlx::migrate!("../migrations/postgres").run(&native).await.context("failed to migrate the database")?;
            // A replica that froze inside a transaction must not stall the others for long:
            // PostgreSQL ends its session after 15 s idle in a transaction (releasing its locks),
            // and a wait for a lock gives up after 30 s (longer, so waiters outlast a frozen holder).
            let pool = portable_pool(16, "SET lock_timeout = '30s'; SET idle_in_transaction_session_timeout = '15s'")
                .connect(url)
                .await
                .context("failed to connect to PostgreSQL")?;
            return Ok(Self { pool, native: NativePool::Postgres(native), bus, webhooks: Default::default() });
        }
        let options = SqliteConnectOptions::from_str(url)
            .with_context(|| format!("invalid database URL {url:?}"))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        if let Some(dir) = options.get_filename().parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("failed to create data dir {}", dir.display()))?;
        }
        let native = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(options)
            .await
            .with_context(|| format!("failed to open database {url}"))?;
        sqlx::migrate!("../migrations/sqlite").run(&native).await.context("failed to migrate the database")?;
        // The portable pool opens the same file; WAL is a property of the file, the rest is per
        // connection.
        let pool = portable_pool(8, "PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
            .connect(url)
            .await
            .with_context(|| format!("failed to open database {url}"))?;
        Ok(Self { pool, native: NativePool::Sqlite(native), bus, webhooks: Default::default() })
    }

    /// Queues deliveries of the events these targets want from now on.
    pub fn with_webhooks(mut self, targets: Vec<outbox::Target>) -> Self {
        self.webhooks = std::sync::Arc::new(targets);
        self
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
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

    /// Cheap round trip used by the health check.
    pub async fn ping(&self) -> anyhow::Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.context("database ping failed")?;
        Ok(())
    }

    /// Starts a write transaction; writes happen one at a time. SQLite: `BEGIN IMMEDIATE` takes
    /// the write lock up front, so concurrent writers queue on the busy timeout instead of
    /// failing when they upgrade. PostgreSQL: a transaction-scoped advisory lock does the same
    /// for every replica (per-conversation sequence numbers and conditional state changes then
    /// need no retry logic).
    pub async fn write(&self) -> anyhow::Result<Write> {
        let tx = match self.backend() {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await.context("failed to begin a write transaction")?,
            Backend::Postgres => {
                let mut tx = self.pool.begin().await.context("failed to begin a write transaction")?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(WRITE_LOCK)
                    .execute(&mut *tx)
                    .await
                    .context("failed to take the write lock")?;
                tx
            }
        };
        Ok(Write {
            tx,
            events: Vec::new(),
            bus: self.bus.clone(),
            notify: self.backend() == Backend::Postgres,
            webhooks: self.webhooks.clone(),
            fence: None,
        })
    }

    /// A write on behalf of the driver holding `lease`: it commits only while that lease is still
    /// live and this driver's (DESIGN decision 7). Otherwise nothing of it is stored and the commit
    /// fails with [`tasks::LeaseLost`], which the driver logs and stops on.
    pub async fn write_as(&self, lease: &tasks::Lease) -> anyhow::Result<Write> {
        let mut w = self.write().await?;
        w.fence = Some((lease.clone(), self.backend()));
        Ok(w)
    }
}

/// A write transaction that collects the events it appends and publishes them to live
/// subscribers only after it committed.
pub struct Write {
    pub tx: Transaction<'static, Any>,
    events: Vec<Event>,
    bus: Bus,
    /// PostgreSQL: tell the other replicas too (NOTIFY is delivered at commit).
    notify: bool,
    webhooks: std::sync::Arc<Vec<outbox::Target>>,
    /// The lease this write is made under, checked just before the commit.
    fence: Option<(tasks::Lease, Backend)>,
}

impl Write {
    pub async fn append(&mut self, conversation_id: &str, body: EventBody) -> anyhow::Result<Event> {
        let event = events::append(&mut self.tx, conversation_id, body).await?;
        for target in self.webhooks.iter().filter(|t| t.events.iter().any(|e| e == event.body.name())) {
            outbox::insert(&mut self.tx, &target.url, &crate::webhooks::payload(&event)).await?;
        }
        self.events.push(event.clone());
        Ok(event)
    }

    pub async fn commit(mut self) -> anyhow::Result<Vec<Event>> {
        if let Some((lease, backend)) = &self.fence {
            // On failure `self` is dropped here, which rolls the transaction back.
            tasks::check_held(&mut self.tx, *backend, lease).await?;
        }
        if self.notify && !self.events.is_empty() {
            crate::bus::notify(&mut self.tx, self.bus.instance(), &self.events).await?;
        }
        self.tx.commit().await.context("failed to commit")?;
        for event in &self.events {
            self.bus.publish_local(event.clone());
        }
        Ok(self.events)
    }
}
