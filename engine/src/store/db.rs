//! Where a repository function runs its statements. Given the [`Store`], the function itself
//! picks the connection its statement needs: a reader for a read whose length grows with the
//! data, a quick reader for a row or a few by an indexed key, the writer for a single statement
//! that writes. Given a transaction (`&mut *w.tx`) or a connection, it runs there. So no code
//! outside `store/` chooses a pool, and the choice sits next to the SQL it is made for.

use futures::{StreamExt, future::BoxFuture, stream::BoxStream};
use sqlx::{
    Any, AnyConnection, AnyPool, Describe, Either, Error, Execute, Executor,
    any::{AnyArguments, AnyQueryResult, AnyRow},
};

use super::Store;

/// What a repository function is handed: the store, or a transaction or connection of the
/// caller's (any `&Store`, `&mut AnyConnection` or, inside the store, `&AnyPool`).
pub enum Db<'c> {
    Store(&'c Store),
    Conn(&'c mut AnyConnection),
    Pool(&'c AnyPool),
}

impl<'c> From<&'c Store> for Db<'c> {
    fn from(store: &'c Store) -> Self {
        Self::Store(store)
    }
}

impl<'c> From<&'c mut AnyConnection> for Db<'c> {
    fn from(conn: &'c mut AnyConnection) -> Self {
        Self::Conn(conn)
    }
}

impl<'c> From<&'c AnyPool> for Db<'c> {
    fn from(pool: &'c AnyPool) -> Self {
        Self::Pool(pool)
    }
}

impl<'c> Db<'c> {
    /// A read whose length grows with the data (a list, a log, an export).
    pub(super) fn read(self) -> Exec<'c> {
        self.on(Store::pool)
    }

    /// A row or a few by an indexed key, on the path of a request or a task's driver
    /// ([`Store::quick`]).
    pub(super) fn read_few(self) -> Exec<'c> {
        self.on(Store::quick)
    }

    /// A read of about `rows` rows, known before it is made ([`Store::reader_for`]).
    pub(super) fn read_rows(self, rows: i64) -> Exec<'c> {
        self.on(|store| store.reader_for(rows))
    }

    /// A single statement that writes, outside a transaction. On SQLite it is tried again while
    /// another connection holds the write lock (`sqlite/busy.rs`).
    pub(super) fn write(self) -> Exec<'c> {
        match self {
            Self::Store(store) if store.backend() == super::Backend::Sqlite => Exec::Writer(store.writer()),
            other => other.on(Store::writer),
        }
    }

    /// The same place again, for a function with more than one statement.
    pub(super) fn again(&mut self) -> Db<'_> {
        match self {
            Self::Store(store) => Db::Store(store),
            Self::Conn(conn) => Db::Conn(conn),
            Self::Pool(pool) => Db::Pool(pool),
        }
    }

    fn on(self, pick: impl FnOnce(&'c Store) -> &'c AnyPool) -> Exec<'c> {
        match self {
            Self::Store(store) => Exec::Pool(pick(store)),
            Self::Conn(conn) => Exec::Conn(conn),
            Self::Pool(pool) => Exec::Pool(pool),
        }
    }
}

/// The executor a [`Db`] picked: a pool or the caller's connection.
#[derive(Debug)]
pub(super) enum Exec<'c> {
    Pool(&'c AnyPool),
    Conn(&'c mut AnyConnection),
    /// SQLite's writer, which has no busy handler: a statement that finds the write lock taken
    /// is run again after a sleep.
    Writer(&'c AnyPool),
}

/// Runs `query` on the writer until it is not busy: its SQL and arguments are kept, so each
/// try is the same statement.
fn retried<'e, 'q: 'e, E, T>(
    writer: &'e AnyPool,
    mut query: E,
    run: impl Fn(&'e AnyPool, sqlx::query::Query<'q, Any, AnyArguments<'q>>) -> BoxFuture<'e, Result<T, Error>> + Send + Sync + 'e,
) -> BoxFuture<'e, Result<T, Error>>
where
    E: 'q + Execute<'q, Any>,
    T: Send + 'e,
{
    let sql = query.sql();
    let arguments = query.take_arguments();
    Box::pin(async move {
        let arguments = arguments.map_err(Error::Encode)?.unwrap_or_default();
        super::sqlite::busy::retrying(|| run(writer, sqlx::query_with(sql, copy(&arguments)))).await
    })
}

/// The same arguments again (sqlx's `AnyArguments` is not `Clone`, its values are).
fn copy<'q>(arguments: &AnyArguments<'q>) -> AnyArguments<'q> {
    let mut copy = AnyArguments::default();
    copy.values.0 = arguments.values.0.clone();
    copy
}

/// Each call goes to the pool's or the connection's own implementation (their fast paths
/// included).
impl<'c> Executor<'c> for Exec<'c> {
    type Database = Any;

    fn execute<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<AnyQueryResult, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.execute(query),
            Self::Conn(conn) => conn.execute(query),
            Self::Writer(writer) => retried(writer, query, |w, q| w.execute(q)),
        }
    }

    fn fetch<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            // A stream is not retried (no write here reads one).
            Self::Pool(pool) | Self::Writer(pool) => pool.fetch(query),
            Self::Conn(conn) => conn.fetch(query),
        }
    }

    fn fetch_many<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) | Self::Writer(pool) => pool.fetch_many(query),
            Self::Conn(conn) => conn.fetch_many(query).boxed(),
        }
    }

    fn fetch_all<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Vec<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_all(query),
            Self::Conn(conn) => conn.fetch_all(query),
            Self::Writer(writer) => retried(writer, query, |w, q| w.fetch_all(q)),
        }
    }

    fn fetch_one<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_one(query),
            Self::Conn(conn) => conn.fetch_one(query),
            Self::Writer(writer) => retried(writer, query, |w, q| w.fetch_one(q)),
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Option<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_optional(query),
            Self::Conn(conn) => conn.fetch_optional(query),
            Self::Writer(writer) => retried(writer, query, |w, q| w.fetch_optional(q)),
        }
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [<Any as sqlx::Database>::TypeInfo],
    ) -> BoxFuture<'e, Result<<Any as sqlx::Database>::Statement<'q>, Error>>
    where
        'c: 'e,
    {
        match self {
            Self::Pool(pool) | Self::Writer(pool) => pool.prepare_with(sql, parameters),
            Self::Conn(conn) => conn.prepare_with(sql, parameters),
        }
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Any>, Error>>
    where
        'c: 'e,
    {
        match self {
            Self::Pool(pool) | Self::Writer(pool) => pool.describe(sql),
            Self::Conn(conn) => conn.describe(sql),
        }
    }
}
