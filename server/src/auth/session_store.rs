//! Login sessions live in the same database as everything else (they survive restarts and are
//! shared by replicas): tower-sessions' SQLite or PostgreSQL store, whichever the URL chose.

use async_trait::async_trait;
use tower_sessions::{
    ExpiredDeletion, SessionStore,
    session::{Id, Record},
    session_store::Result,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::store::NativePool;

#[derive(Clone, Debug)]
pub enum Sessions {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl Sessions {
    /// The store for `pool`, with its table created if needed.
    pub async fn open(pool: &NativePool) -> anyhow::Result<Self> {
        let sessions = match pool {
            NativePool::Sqlite(pool) => {
                let store = SqliteStore::new(pool.clone());
                store.migrate().await?;
                Self::Sqlite(store)
            }
            NativePool::Postgres(pool) => {
                let store = PostgresStore::new(pool.clone());
                store.migrate().await?;
                Self::Postgres(store)
            }
        };
        Ok(sessions)
    }
}

#[async_trait]
impl SessionStore for Sessions {
    async fn create(&self, record: &mut Record) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.create(record).await,
            Self::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.save(record).await,
            Self::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> Result<Option<Record>> {
        match self {
            Self::Sqlite(s) => s.load(id).await,
            Self::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.delete(id).await,
            Self::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for Sessions {
    async fn delete_expired(&self) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.delete_expired().await,
            Self::Postgres(s) => s.delete_expired().await,
        }
    }
}
