//! PostgreSQL replicas tell each other what they committed: a commit NOTIFYs, and every other
//! replica's listener publishes the event on its own bus (reading it back from the shared database
//! when it was too large for a notification). Revoked credentials travel the same way; what a
//! notification says is `replica_notice.rs`'s.

use anyhow::Context;
use sqlx::postgres::PgListener;

use super::{
    NativePool, Store, events,
    replica_notice::{self, CHANNEL, Notice},
};

/// Announces that the credential with this key ended, here and (PostgreSQL) on the other replicas.
pub async fn publish_revoked(store: &Store, key: &str) -> anyhow::Result<()> {
    store.bus().publish_revoked(key.to_owned());
    if let NativePool::Postgres(pool) = store.native() {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(replica_notice::revoked(store.bus().instance(), key))
            .execute(pool)
            .await
            .context("failed to tell the other replicas about a revoked credential")?;
    }
    Ok(())
}

/// PostgreSQL: publishes the other replicas' events on this process's bus until the process
/// stops. A dropped connection is re-established; SSE streams fill any gap from the store.
pub async fn listen(store: Store, pulse: impl crate::Heartbeat) {
    let NativePool::Postgres(pool) = store.native().clone() else { return };
    loop {
        if let Err(err) = relay(&store, &pool, &pulse).await {
            tracing::warn!(error = ?err, "listening for other replicas' events failed; retrying");
            pulse.failed(err);
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

async fn relay(store: &Store, pool: &sqlx::PgPool, pulse: &impl crate::Heartbeat) -> anyhow::Result<()> {
    let mut listener = PgListener::connect_with(pool).await.context("LISTEN connection")?;
    listener.listen(CHANNEL).await.context("LISTEN")?;
    pulse.ok();
    loop {
        let notification = listener.recv().await.context("receiving a notification")?;
        let Some((instance, notice)) = replica_notice::parse(notification.payload()) else { continue };
        if instance == store.bus().instance() {
            continue;
        }
        let event = match notice {
            Notice::Revoked(key) => {
                store.bus().publish_revoked(key.to_owned());
                continue;
            }
            Notice::Event(event) => Some(*event),
            Notice::ReadBack { conversation_id, seq } => {
                events::after(store.pool(), &conversation_id.into(), seq - 1).await?.into_iter().find(|e| e.seq == seq)
            }
        };
        if let Some(event) = event {
            store.bus().publish_remote(event);
        }
    }
}
