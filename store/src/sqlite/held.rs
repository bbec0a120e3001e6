//! Connections the store holds itself, outside sqlx's pool: SQLite's writer and quick readers.
//! They run their statements on the calling task (`?worker=inline`, vendor/README.md), so a
//! statement costs no thread hand-off; and they go back where they came from in the guard's
//! drop, with nothing to check and no task spawned (sqlx's pool spawns one per return to ping
//! the connection, which woke another runtime worker after every statement:
//! docs/performance-notes.md, "The write path").
//!
//! Waiters are served first come, first served (tokio's semaphore is fair), as by sqlx's pool.
//! A SQLite connection is a file handle in this process: it cannot go stale or be cut the way a
//! network connection can, so none is ever checked or replaced; they close with the store (or
//! [`Held::close`]).

use std::{
    ops::{Deref, DerefMut},
    sync::{Arc, Mutex},
};

use futures::{StreamExt, TryStreamExt, future::BoxFuture, stream::BoxStream};
use sqlx::{
    Any, AnyConnection, Connection, Database, Describe, Either, Error, Execute, Executor, TransactionManager,
    any::{AnyArguments, AnyQueryResult, AnyRow},
    query::Query,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

type Manager = <Any as Database>::TransactionManager;

/// A fixed set of open connections, lent one at a time ([`Held::acquire`]).
#[derive(Clone)]
pub struct Held {
    inner: Arc<Inner>,
}

struct Inner {
    idle: Mutex<Vec<AnyConnection>>,
    /// One permit per idle connection: whoever holds a permit finds a connection in `idle`.
    permits: Arc<Semaphore>,
    size: usize,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("size", &self.inner.size).field("idle", &self.num_idle()).finish()
    }
}

impl Held {
    /// Opens `size` connections to `url`, each set up by `session` (SQL run once on it).
    pub async fn open(url: &str, size: usize, session: &str) -> Result<Self, Error> {
        let mut conns = Vec::with_capacity(size);
        for _ in 0..size {
            let mut conn = AnyConnection::connect(url).await?;
            conn.execute(session).await?;
            conns.push(conn);
        }
        Ok(Self { inner: Arc::new(Inner { idle: Mutex::new(conns), permits: Arc::new(Semaphore::new(size)), size }) })
    }

    /// Waits for a connection (in the order callers asked) and lends it until the guard drops;
    /// after [`Self::close`], `PoolClosed`.
    pub async fn acquire(&self) -> Result<HeldConn, Error> {
        let permit = self.inner.permits.clone().acquire_owned().await.map_err(|_| Error::PoolClosed)?;
        // A permit stands for an idle connection, unless `close` emptied `idle` since it was granted.
        let conn = self.inner.idle.lock().unwrap_or_else(|e| e.into_inner()).pop().ok_or(Error::PoolClosed)?;
        Ok(HeldConn { conn: Some(conn), inner: self.inner.clone(), _permit: permit })
    }

    /// Closes the idle connections and each lent one when it comes back; nothing more is lent.
    pub fn close(&self) {
        self.inner.permits.close();
        self.inner.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// How many connections are not lent right now.
    pub fn num_idle(&self) -> usize {
        self.inner.permits.available_permits()
    }

    /// How many connections there are.
    pub fn size(&self) -> usize {
        self.inner.size
    }
}

/// A lent connection. Dropped, it goes back at once; a transaction still open on it (a write
/// whose caller went away) is rolled back first, in the drop, which an inline connection runs
/// in place.
pub struct HeldConn {
    conn: Option<AnyConnection>,
    inner: Arc<Inner>,
    // Released after the connection is back in `idle` (fields drop after `Drop::drop` ran).
    _permit: OwnedSemaphorePermit,
}

impl HeldConn {
    /// Begins a transaction with `statement` (such as `BEGIN IMMEDIATE`); nested, a savepoint.
    pub async fn begin(&mut self, statement: &'static str) -> Result<(), Error> {
        Manager::begin(self, Some(statement.into())).await
    }

    /// Commits the transaction [`Self::begin`] opened.
    pub async fn commit(&mut self) -> Result<(), Error> {
        Manager::commit(self).await
    }
}

impl Deref for HeldConn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        self.conn.as_ref().expect("a lent connection is there until its drop")
    }
}

impl DerefMut for HeldConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("a lent connection is there until its drop")
    }
}

impl Drop for HeldConn {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else { return };
        if Manager::get_transaction_depth(&conn) > 0 {
            Manager::start_rollback(&mut conn);
        }
        if !self.inner.permits.is_closed() {
            self.inner.idle.lock().unwrap_or_else(|e| e.into_inner()).push(conn);
        }
    }
}

/// Each statement takes a connection for itself, as on a pool, and is run again while SQLite
/// answers busy (`busy.rs`): these connections have no busy handler, since they run on the
/// calling task. A stream is read whole before the connection goes back: these connections
/// serve short statements only (`Store::quick`, the writer).
impl<'c> Executor<'c> for &'c Held {
    type Database = Any;

    fn execute<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<AnyQueryResult, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        retried(self, query, |held, query| Box::pin(async move { held.acquire().await?.execute(query).await }))
    }

    fn fetch_many<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        whole(retried(self, query, |held, query| {
            Box::pin(async move { held.acquire().await?.fetch_many(query).try_collect::<Vec<_>>().await })
        }))
    }

    fn fetch<'e, 'q: 'e, E>(self, query: E) -> BoxStream<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        whole(retried(self, query, |held, query| Box::pin(async move { held.acquire().await?.fetch_all(query).await })))
    }

    fn fetch_all<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Vec<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        retried(self, query, |held, query| Box::pin(async move { held.acquire().await?.fetch_all(query).await }))
    }

    fn fetch_one<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<AnyRow, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        retried(self, query, |held, query| Box::pin(async move { held.acquire().await?.fetch_one(query).await }))
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Option<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        retried(self, query, |held, query| Box::pin(async move { held.acquire().await?.fetch_optional(query).await }))
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [<Any as Database>::TypeInfo],
    ) -> BoxFuture<'e, Result<<Any as Database>::Statement<'q>, Error>>
    where
        'c: 'e,
    {
        Box::pin(async move { self.acquire().await?.prepare_with(sql, parameters).await })
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Any>, Error>>
    where
        'c: 'e,
    {
        Box::pin(async move { self.acquire().await?.describe(sql).await })
    }
}

/// Runs `query` through `run` until SQLite does not answer busy: its SQL and arguments are
/// kept, so each try is the same statement, on a connection taken again.
fn retried<'e, 'q: 'e, E, T>(
    held: &'e Held,
    mut query: E,
    run: impl Fn(&'e Held, Query<'q, Any, AnyArguments<'q>>) -> BoxFuture<'e, Result<T, Error>> + Send + Sync + 'e,
) -> BoxFuture<'e, Result<T, Error>>
where
    E: 'q + Execute<'q, Any>,
    T: Send + 'e,
{
    let sql = query.sql();
    let arguments = query.take_arguments();
    Box::pin(async move {
        let arguments = arguments.map_err(Error::Encode)?.unwrap_or_default();
        super::busy::retrying(|| run(held, sqlx::query_with(sql, copy(&arguments)))).await
    })
}

/// The same arguments again (sqlx's `AnyArguments` is not `Clone`, its values are).
fn copy<'q>(arguments: &AnyArguments<'q>) -> AnyArguments<'q> {
    let mut copy = AnyArguments::default();
    copy.values.0 = arguments.values.0.clone();
    copy
}

/// A stream of what `all` read whole.
fn whole<'e, T: Send + 'e>(all: impl std::future::Future<Output = Result<Vec<T>, Error>> + Send + 'e) -> BoxStream<'e, Result<T, Error>> {
    futures::stream::once(all)
        .flat_map(|read| match read {
            Ok(items) => futures::stream::iter(items.into_iter().map(Ok).collect::<Vec<_>>()),
            Err(err) => futures::stream::iter(vec![Err(err)]),
        })
        .boxed()
}
