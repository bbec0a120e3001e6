//! PostgreSQL replicas tell each other what they committed: a commit NOTIFYs, and every other
//! replica's listener publishes the event on its own bus (reading it back from the shared database
//! when it was too large for a notification). Revoked credentials travel the same way.

use anyhow::Context;
use app::domain::Event;
use sqlx::{Any, Transaction, postgres::PgListener};

use super::{NativePool, Store, events};

/// The NOTIFY channel: `instance|e|event json` or `instance|r|conversation_id|seq` for every
/// committed event, `instance|x|credential key` for a revoked credential.
const CHANNEL: &str = "countersign_events";

/// Announces that the credential with this key ended, here and (PostgreSQL) on the other replicas.
pub async fn publish_revoked(store: &Store, key: &str) -> anyhow::Result<()> {
    store.bus().publish_revoked(key.to_owned());
    if let NativePool::Postgres(pool) = store.native() {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(format!("{}|x|{key}", store.bus().instance()))
            .execute(pool)
            .await
            .context("failed to tell the other replicas about a revoked credential")?;
    }
    Ok(())
}

/// PostgreSQL: queues one notification per event; they are delivered if and when the transaction commits.
pub async fn notify(tx: &mut Transaction<'static, Any>, instance: &str, events: &[Event]) -> anyhow::Result<()> {
    for event in events {
        // The event itself when it fits in a notification (PostgreSQL allows 8,000 bytes), so the
        // other replicas need not read it back; otherwise where to read it.
        let json = serde_json::to_string(event).context("failed to encode an event")?;
        let payload = if json.len() <= MAX_INLINE_EVENT {
            format!("{instance}|e|{json}")
        } else {
            format!("{instance}|r|{}|{}", event.conversation_id, event.seq)
        };
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(payload)
            .execute(&mut **tx)
            .await
            .context("failed to notify the other replicas")?;
    }
    Ok(())
}

/// Below PostgreSQL's 8,000-byte payload limit, with room for the instance name.
const MAX_INLINE_EVENT: usize = 7_000;

/// PostgreSQL: publishes the other replicas' events on this process's bus until the process
/// stops. A dropped connection is re-established; SSE streams fill any gap from the store.
pub async fn listen(store: Store) {
    let NativePool::Postgres(pool) = store.native().clone() else { return };
    loop {
        if let Err(err) = relay(&store, &pool).await {
            tracing::warn!(error = ?err, "listening for other replicas' events failed; retrying");
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

async fn relay(store: &Store, pool: &sqlx::PgPool) -> anyhow::Result<()> {
    let mut listener = PgListener::connect_with(pool).await.context("LISTEN connection")?;
    listener.listen(CHANNEL).await.context("LISTEN")?;
    loop {
        let notification = listener.recv().await.context("receiving a notification")?;
        let mut parts = notification.payload().splitn(3, '|');
        let (Some(instance), Some(kind), Some(rest)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if instance == store.bus().instance() {
            continue;
        }
        let event = match kind {
            "x" => {
                store.bus().publish_revoked(rest.to_owned());
                continue;
            }
            "e" => serde_json::from_str::<Event>(rest).ok(),
            _ => {
                let Some((conversation_id, seq)) = rest.split_once('|') else { continue };
                let Ok(seq) = seq.parse::<i64>() else { continue };
                events::after(store.pool(), &conversation_id.into(), seq - 1).await?.into_iter().find(|e| e.seq == seq)
            }
        };
        if let Some(event) = event {
            store.bus().publish_remote(event);
        }
    }
}
