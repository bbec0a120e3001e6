//! Where the store's statements get a connection: sqlx's pool (PostgreSQL, SQLite's readers) or
//! connections the store holds itself (SQLite's writer and quick readers, `sqlite/held.rs`); and
//! a write transaction on either ([`Tx`]).

use std::ops::{Deref, DerefMut};

use sqlx::{Any, AnyConnection, AnyPool, Error, Transaction};

use super::{
    db::Exec,
    sqlite::held::{Held, HeldConn},
};

/// A set of connections a statement can run on.
#[derive(Clone, Debug)]
pub enum Connections {
    Pool(AnyPool),
    Held(Held),
}

impl Connections {
    /// Where a statement runs on one of them (an `Executor`).
    pub fn exec(&self) -> Exec<'_> {
        match self {
            Self::Pool(pool) => Exec::Pool(pool),
            Self::Held(held) => Exec::Held(held),
        }
    }

    /// How many connections are open.
    pub fn size(&self) -> usize {
        match self {
            Self::Pool(pool) => pool.size() as usize,
            Self::Held(held) => held.size(),
        }
    }

    /// How many of them are not in use right now.
    pub fn num_idle(&self) -> usize {
        match self {
            Self::Pool(pool) => pool.num_idle(),
            Self::Held(held) => held.num_idle(),
        }
    }

    /// A transaction begun with `statement` on one of the connections.
    pub(super) async fn begin(&self, statement: &'static str) -> Result<Tx, Error> {
        match self {
            Self::Pool(pool) => pool.begin_with(statement).await.map(|tx| Tx(Open::Pooled(tx))),
            Self::Held(held) => {
                let mut conn = held.acquire().await?;
                conn.begin(statement).await?;
                Ok(Tx(Open::Held(conn)))
            }
        }
    }

    /// One connection, kept until the guard drops (such as to keep the writer's other users out).
    pub(super) async fn hold(&self) -> Result<Box<dyn DerefMut<Target = AnyConnection> + Send>, Error> {
        Ok(match self {
            Self::Pool(pool) => Box::new(pool.acquire().await?),
            Self::Held(held) => Box::new(held.acquire().await?),
        })
    }

    /// Closes the connections: what is lent closes when it comes back, nothing more is lent.
    pub async fn close(&self) {
        match self {
            Self::Pool(pool) => pool.close().await,
            Self::Held(held) => held.close(),
        }
    }
}

/// An open write transaction: rolled back if dropped before [`Tx::commit`]. Used through its
/// connection (`&mut *w.tx`, or `&mut w.tx` where a `&mut AnyConnection` is asked for).
pub struct Tx(Open);

enum Open {
    Pooled(Transaction<'static, Any>),
    Held(HeldConn),
}

impl Tx {
    pub async fn commit(self) -> Result<(), Error> {
        match self.0 {
            Open::Pooled(tx) => tx.commit().await,
            Open::Held(mut conn) => conn.commit().await,
        }
    }
}

impl Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Open::Pooled(tx) => tx,
            Open::Held(conn) => conn,
        }
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Open::Pooled(tx) => tx,
            Open::Held(conn) => conn,
        }
    }
}
