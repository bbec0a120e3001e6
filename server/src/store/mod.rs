//! Persistence: the SQLite pool, migrations, and one module of queries per table.
//! A state change and the event that records it are written in one transaction (`Write`).

pub mod approvals;
pub mod audit;
pub mod calls;
pub mod conversations;
pub mod events;
pub mod grants;
pub mod orders;
pub mod tasks;
pub mod time;
pub mod users;

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use app::domain::{Event, EventBody};
use sqlx::{
    Sqlite, SqlitePool, Transaction,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

use crate::bus::Bus;

#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    bus: Bus,
}

impl Store {
    /// Opens (creating if needed) the database at `url` and applies pending migrations.
    #[tracing::instrument(skip(bus))]
    pub async fn connect(url: &str, bus: Bus) -> anyhow::Result<Self> {
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
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .with_context(|| format!("failed to open database {url}"))?;
        sqlx::migrate!("../migrations").run(&pool).await.context("failed to migrate the database")?;
        Ok(Self { pool, bus })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    /// Cheap round trip used by the health check.
    pub async fn ping(&self) -> anyhow::Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.context("database ping failed")?;
        Ok(())
    }

    /// Starts a write transaction. `BEGIN IMMEDIATE` takes SQLite's write lock up front, so
    /// concurrent writers queue on the busy timeout instead of failing when they upgrade.
    pub async fn write(&self) -> anyhow::Result<Write> {
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await.context("failed to begin a write transaction")?;
        Ok(Write { tx, events: Vec::new(), bus: self.bus.clone() })
    }
}

/// A write transaction that collects the events it appends and publishes them to live
/// subscribers only after it committed.
pub struct Write {
    pub tx: Transaction<'static, Sqlite>,
    events: Vec<Event>,
    bus: Bus,
}

impl Write {
    pub async fn append(&mut self, conversation_id: &str, body: EventBody) -> anyhow::Result<Event> {
        let event = events::append(&mut self.tx, conversation_id, body).await?;
        self.events.push(event.clone());
        Ok(event)
    }

    pub async fn commit(self) -> anyhow::Result<Vec<Event>> {
        self.tx.commit().await.context("failed to commit")?;
        for event in &self.events {
            self.bus.publish(event.clone());
        }
        Ok(self.events)
    }
}
