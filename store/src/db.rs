//! Where a repository function runs its statements. Given the [`Store`], the function itself
//! picks the connection its statement needs: a reader for a read whose length grows with the
//! data, a quick reader for a row or a few by an indexed key, the writer for a single statement
//! that writes. Given a transaction (`&mut *w.tx`) or a connection, it runs there. So no code
//! outside `store/` chooses a pool, and the choice sits next to the SQL it is made for.

use futures::{StreamExt, future::BoxFuture, stream::BoxStream};
use sqlx::{
    Any, AnyConnection, AnyPool, Describe, Either, Error, Execute, Executor,
    any::{AnyQueryResult, AnyRow},
};

use super::{Store, sqlite::held::Held};

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
        self.on(|store| Exec::Pool(store.pool()))
    }

    /// A row or a few by an indexed key, on the path of a request or a task's driver
    /// ([`Store::quick`]).
    pub(super) fn read_few(self) -> Exec<'c> {
        self.on(|store| store.quick().exec())
    }

    /// A read of about `rows` rows, known before it is made ([`Store::reader_for`]).
    pub(super) fn read_rows(self, rows: i64) -> Exec<'c> {
        self.on(|store| store.reader_for(rows))
    }

    /// A single statement that writes, outside a transaction. On SQLite it is tried again while
    /// another connection holds the write lock (`sqlite/held.rs`).
    pub(super) fn write(self) -> Exec<'c> {
        self.on(|store| store.writer().exec())
    }

    /// The same place again, for a function with more than one statement.
    pub(super) fn again(&mut self) -> Db<'_> {
        match self {
            Self::Store(store) => Db::Store(store),
            Self::Conn(conn) => Db::Conn(conn),
            Self::Pool(pool) => Db::Pool(pool),
        }
    }

    fn on(self, pick: impl FnOnce(&'c Store) -> Exec<'c>) -> Exec<'c> {
        match self {
            Self::Store(store) => pick(store),
            Self::Conn(conn) => Exec::Conn(conn),
            Self::Pool(pool) => Exec::Pool(pool),
        }
    }
}

/// The executor a [`Db`] picked: a pool, the store's own connections or the caller's connection.
#[derive(Debug)]
pub enum Exec<'c> {
    Pool(&'c AnyPool),
    Held(&'c Held),
    Conn(&'c mut AnyConnection),
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
            Self::Held(held) => held.execute(query),
            Self::Conn(conn) => conn.execute(query),
        }
    }

    fn fetch<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch(query),
            Self::Held(held) => held.fetch(query),
            Self::Conn(conn) => conn.fetch(query),
        }
    }

    fn fetch_many<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_many(query),
            Self::Held(held) => held.fetch_many(query),
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
            Self::Held(held) => held.fetch_all(query),
            Self::Conn(conn) => conn.fetch_all(query),
        }
    }

    fn fetch_one<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_one(query),
            Self::Held(held) => held.fetch_one(query),
            Self::Conn(conn) => conn.fetch_one(query),
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Option<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self {
            Self::Pool(pool) => pool.fetch_optional(query),
            Self::Held(held) => held.fetch_optional(query),
            Self::Conn(conn) => conn.fetch_optional(query),
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
            Self::Pool(pool) => pool.prepare_with(sql, parameters),
            Self::Held(held) => held.prepare_with(sql, parameters),
            Self::Conn(conn) => conn.prepare_with(sql, parameters),
        }
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Any>, Error>>
    where
        'c: 'e,
    {
        match self {
            Self::Pool(pool) => pool.describe(sql),
            Self::Held(held) => held.describe(sql),
            Self::Conn(conn) => conn.describe(sql),
        }
    }
}
