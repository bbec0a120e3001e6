//! PostgreSQL replicas tell each other what they committed: a commit NOTIFYs, and every other
//! replica's listener publishes the event on its own bus (reading it back from the shared database
//! when it was too large for a notification). Revoked credentials travel the same way.

use anyhow::Context;
use domain::Event;
use sqlx::postgres::PgListener;

use super::{NativePool, Store, events};

/// The NOTIFY channel: `instance|s|seq|event json` or `instance|r|conversation_id|seq` for every
/// committed event (see [`notice`]), `instance|x|credential key` for a revoked credential.
pub(super) const CHANNEL: &str = "countersign_events";

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

/// PostgreSQL: the notification for `event`, whose sequence number the database is about to
/// give it, as the text before and after that number: `instance|s|` seq `|event json` when the
/// event fits in a notification (PostgreSQL allows 8,000 bytes), so the other replicas need not
/// read it back; otherwise `instance|r|conversation_id|` seq, where to read it. The event is
/// queued with its INSERT (`events::append`) and delivered if and when the transaction commits.
pub(super) fn notice(instance: &str, event: &Event) -> anyhow::Result<(String, String)> {
    let json = serde_json::to_string(event).context("failed to encode an event")?;
    Ok(if json.len() <= MAX_INLINE_EVENT {
        (format!("{instance}|s|"), format!("|{json}"))
    } else {
        (format!("{instance}|r|{}|", event.conversation_id), String::new())
    })
}

/// Below PostgreSQL's 8,000-byte payload limit, with room for the instance name.
const MAX_INLINE_EVENT: usize = 7_000;

/// PostgreSQL: publishes the other replicas' events on this process's bus until the process
/// stops. A dropped connection is re-established; SSE streams fill any gap from the store.
pub async fn listen(store: Store, pulse: crate::background::Pulse) {
    let NativePool::Postgres(pool) = store.native().clone() else { return };
    loop {
        if let Err(err) = relay(&store, &pool, &pulse).await {
            tracing::warn!(error = ?err, "listening for other replicas' events failed; retrying");
            pulse.failed(err);
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

async fn relay(store: &Store, pool: &sqlx::PgPool, pulse: &crate::background::Pulse) -> anyhow::Result<()> {
    let mut listener = PgListener::connect_with(pool).await.context("LISTEN connection")?;
    listener.listen(CHANNEL).await.context("LISTEN")?;
    pulse.ok();
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
            "s" => rest.split_once('|').and_then(|(seq, json)| {
                let mut event = serde_json::from_str::<Event>(json).ok()?;
                event.seq = seq.parse().ok()?;
                Some(event)
            }),
            "r" => {
                let Some((conversation_id, seq)) = rest.split_once('|') else { continue };
                let Ok(seq) = seq.parse::<i64>() else { continue };
                events::after(store.pool(), &conversation_id.into(), seq - 1).await?.into_iter().find(|e| e.seq == seq)
            }
            _ => continue,
        };
        if let Some(event) = event {
            store.bus().publish_remote(event);
        }
    }
}
