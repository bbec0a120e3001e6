//! Login sessions live in the same database as everything else (they survive restarts and are
//! shared by replicas): tower-sessions' SQLite or PostgreSQL store, whichever the URL chose.

use async_trait::async_trait;
use tower_sessions::{
    ExpiredDeletion, SessionStore,
    session::{Id, Record},
    session_store::Result,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use engine::database::SessionPool;

#[derive(Clone, Debug)]
pub enum Sessions {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl Sessions {
    /// The sessions kept in `pool`, with their table created if needed.
    pub async fn open(pool: &SessionPool) -> anyhow::Result<Self> {
        let sessions = match pool {
            SessionPool::Sqlite(pool) => {
                let table = SqliteStore::new(pool.clone());
                table.migrate().await?;
                Self::Sqlite(table)
            }
            SessionPool::Postgres(pool) => {
                let table = PostgresStore::new(pool.clone());
                table.migrate().await?;
                Self::Postgres(table)
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
