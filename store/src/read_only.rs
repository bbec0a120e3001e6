//! The database opened for reading only (`countersign policy replay`): one that exists, with this
//! build's schema, never created or migrated. A mistyped path is then said instead of replayed
//! as an empty history, and the database of a server of another release is left as it is.

use std::str::FromStr;

use anyhow::{Context, bail};
use sqlx::{
    AnyPool,
    migrate::{Migrate, Migrator},
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqlitePoolOptions},
};

use super::{Backend, Connections, NativePool, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS, Store, portable_pool};
use crate::bus::Bus;

/// Why a database without the migrations table is not read.
const NO_SCHEMA: &str = "it has no Countersign schema (no migration was ever applied to it): is it the server's database?";

impl Store {
    /// Opens the database at `url` for reading only. It must exist and have exactly this build's
    /// migrations applied: not fewer (an older release's, which its server migrates when this
    /// build starts on it) nor more (a newer release's). Nothing is migrated or written
    /// (SQLite's own `-wal` and `-shm` files aside, [`sqlite`]).
    pub async fn connect_read_only(url: &str, bus: Bus) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let (pool, native) =
            if url.starts_with("postgres://") || url.starts_with("postgresql://") { postgres(url).await? } else { sqlite(url).await? };
        Ok(Self {
            writer: Connections::Pool(pool.clone()),
            quick: Connections::Pool(pool.clone()),
            pool,
            native,
            bus,
            webhooks: Default::default(),
            load: Default::default(),
            chain_kick: Default::default(),
        })
    }
}

/// SQLite: the file, opened read-only (neither it nor its directory is created). The server's
/// database is in WAL mode, and SQLite reads one only beside its `-wal` and `-shm` files, which
/// it makes if they are missing: a reader needs write access to the directory, as the server has.
async fn sqlite(url: &str) -> anyhow::Result<(AnyPool, NativePool)> {
    let options = SqliteConnectOptions::from_str(url)
        .with_context(|| format!("invalid database URL {url:?}"))?
        .create_if_missing(false)
        .read_only(true);
    let file = options.get_filename().to_owned();
    if !file.is_file() {
        bail!(
            "there is no database at {} (COUNTERSIGN_DATA_DIR or DATABASE_URL): the replay reads the server's and creates none",
            file.display()
        );
    }
    let native = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .with_context(|| format!("failed to open database {url}"))?;
    let mut conn = native.acquire().await.with_context(|| format!("failed to open database {url}"))?;
    let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'")
        .fetch_one(&mut *conn)
        .await
        .context("failed to read the database's schema")?;
    check_schema(&SQLITE_MIGRATIONS, &mut *conn, tables > 0).await.with_context(|| format!("the database at {}", file.display()))?;
    drop(conn);
    let separator = if url.contains('?') { '&' } else { '?' };
    let pool = portable_pool(Backend::Sqlite, 4, "PRAGMA busy_timeout = 10000")
        .connect(&format!("{url}{separator}mode=ro"))
        .await
        .with_context(|| format!("failed to open database {url}"))?;
    Ok((pool, NativePool::Sqlite(native)))
}

/// PostgreSQL: connections whose transactions are read-only.
async fn postgres(url: &str) -> anyhow::Result<(AnyPool, NativePool)> {
    let native =
        PgPoolOptions::new().max_connections(1).connect(url).await.context("failed to connect to PostgreSQL (check DATABASE_URL)")?;
    let mut conn = native.acquire().await.context("failed to connect to PostgreSQL")?;
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_tables WHERE tablename = '_sqlx_migrations' AND schemaname = ANY(current_schemas(false))",
    )
    .fetch_one(&mut *conn)
    .await
    .context("failed to read the database's schema")?;
    check_schema(&POSTGRES_MIGRATIONS, &mut *conn, tables > 0).await.context("the PostgreSQL database (DATABASE_URL)")?;
    drop(conn);
    let pool = portable_pool(Backend::Postgres, 4, "SET default_transaction_read_only = on")
        .connect(url)
        .await
        .context("failed to connect to PostgreSQL")?;
    Ok((pool, NativePool::Postgres(native)))
}

/// Fails, saying how, unless the migrations applied on `conn` are exactly `migrator`'s; only reads.
async fn check_schema(migrator: &Migrator, conn: &mut (impl Migrate + Send), has_table: bool) -> anyhow::Result<()> {
    if !has_table {
        bail!("{NO_SCHEMA}");
    }
    let dirty = conn.dirty_version().await.context("failed to read the database's migrations")?;
    let applied = conn.list_applied_migrations().await.context("failed to read the database's migrations")?;
    let applied: Vec<(i64, &[u8])> = applied.iter().map(|a| (a.version, &*a.checksum)).collect();
    match difference(&known(migrator), &applied, dirty) {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

/// The up migrations of `migrator`: version and checksum.
fn known(migrator: &Migrator) -> Vec<(i64, &[u8])> {
    migrator.iter().filter(|m| !m.migration_type.is_down_migration()).map(|m| (m.version, &*m.checksum)).collect()
}

/// Why a database with the migrations `applied` (version and checksum; `dirty`: one that failed
/// part-way) does not have the schema of a build with the migrations `known`; none if it does.
fn difference(known: &[(i64, &[u8])], applied: &[(i64, &[u8])], dirty: Option<i64>) -> Option<String> {
    if let Some(version) = dirty {
        return Some(format!("its migration {version} failed part-way: start the server on it to see why"));
    }
    if applied.is_empty() {
        return Some(NO_SCHEMA.to_owned());
    }
    if let Some((version, _)) = applied.iter().find(|(v, _)| checksum(known, *v).is_none()) {
        return Some(format!(
            "its schema is newer than this build's (it has migration {version}, which this build does not know): replay it with \
             the release that made it"
        ));
    }
    if let Some((version, _)) = applied.iter().find(|(v, sum)| checksum(known, *v) != Some(*sum)) {
        return Some(format!("its migration {version} is not this build's: replay it with the build that made it"));
    }
    if let Some((version, _)) = known.iter().find(|(v, _)| checksum(applied, *v).is_none()) {
        return Some(format!(
            "its schema is older than this build's (migration {version} is not applied): replay it with the release that made \
             it, or start this build's server on it first (which migrates it)"
        ));
    }
    None
}

/// The checksum of migration `version` in `list`, if it is there.
fn checksum<'a>(list: &[(i64, &'a [u8])], version: i64) -> Option<&'a [u8]> {
    list.iter().find(|(v, _)| *v == version).map(|(_, sum)| *sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_database_with_exactly_this_builds_migrations_is_read() {
        let (a, b, c): (&[u8], &[u8], &[u8]) = (b"a", b"b", b"c");
        let build = [(1, a), (2, b)];
        assert_eq!(difference(&build, &build, None), None);
        let said = |applied: &[(i64, &[u8])], dirty: Option<i64>| difference(&build, applied, dirty).unwrap_or_default();
        assert!(said(&[], None).starts_with("it has no Countersign schema"));
        assert!(said(&[(1, a)], None).starts_with("its schema is older than this build's (migration 2 is not applied)"));
        assert!(said(&[(1, a), (2, b), (3, c)], None).starts_with("its schema is newer than this build's (it has migration 3,"));
        assert!(said(&[(1, a), (2, c)], None).starts_with("its migration 2 is not this build's"));
        assert!(said(&[(1, a), (2, b)], Some(2)).starts_with("its migration 2 failed part-way"));
        for migrator in [&SQLITE_MIGRATIONS, &POSTGRES_MIGRATIONS] {
            let this_build = known(migrator);
            assert!(!this_build.is_empty());
            assert_eq!(difference(&this_build, &this_build, None), None);
        }
    }
}
