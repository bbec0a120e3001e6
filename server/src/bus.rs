//! Fan-out of committed events to live SSE streams. Streams send an event from here when it is
//! the next one they expect and read the store for any gap, so a lagging subscriber loses
//! nothing. With PostgreSQL, a commit also NOTIFYs the other replicas, whose listener reads the
//! event from the shared database and publishes it on their bus: a user streaming from replica A
//! sees a decision made on replica B. Assistant deltas travel on their own channel: they are never
//! stored (nor sent to other replicas), and a lost one only makes the live draft lag until the
//! stored reply arrives.

use anyhow::Context;
use app::domain::{Event, wire::AssistantDelta};
use sqlx::{Any, Transaction, postgres::PgListener};
use tokio::sync::broadcast;

use crate::store::{NativePool, Store, events};

/// The NOTIFY channel: `instance|e|event json` or `instance|r|conversation_id|seq` for every
/// committed event, `instance|x|credential key` for a revoked credential.
const CHANNEL: &str = "countersign_events";

#[derive(Clone, Debug)]
pub struct Bus {
    /// This process, so its listener skips what it committed itself.
    instance: String,
    sender: broadcast::Sender<Event>,
    /// Only events committed by this process: side effects (webhooks) run once, where the commit happened.
    local: broadcast::Sender<Event>,
    deltas: broadcast::Sender<AssistantDelta>,
    /// Credentials that just ended (logout, token revoked), by [`crate::auth::Credential`] key:
    /// the event streams they opened close, on every replica.
    revoked: broadcast::Sender<String>,
}

impl Default for Bus {
    fn default() -> Self {
        Self {
            instance: uuid::Uuid::now_v7().simple().to_string(),
            sender: broadcast::channel(4096).0,
            local: broadcast::channel(4096).0,
            deltas: broadcast::channel(1024).0,
            revoked: broadcast::channel(256).0,
        }
    }
}

impl Bus {
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// An event this process committed.
    pub fn publish_local(&self, event: Event) {
        // No subscribers is fine: nobody is watching.
        let _ = self.local.send(event.clone());
        let _ = self.sender.send(event);
    }

    /// An event another replica committed.
    fn publish_remote(&self, event: Event) {
        let _ = self.sender.send(event);
    }

    /// Every committed event, from any replica.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }

    /// Events this process committed.
    pub fn subscribe_local(&self) -> broadcast::Receiver<Event> {
        self.local.subscribe()
    }

    pub fn publish_delta(&self, delta: AssistantDelta) {
        let _ = self.deltas.send(delta);
    }

    pub fn subscribe_deltas(&self) -> broadcast::Receiver<AssistantDelta> {
        self.deltas.subscribe()
    }

    pub fn subscribe_revoked(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }
}

/// Announces that the credential with this key ended, here and (PostgreSQL) on the other replicas.
pub async fn publish_revoked(store: &Store, key: &str) -> anyhow::Result<()> {
    let _ = store.bus().revoked.send(key.to_owned());
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
                let _ = store.bus().revoked.send(rest.to_owned());
                continue;
            }
            "e" => serde_json::from_str::<Event>(rest).ok(),
            _ => {
                let Some((conversation_id, seq)) = rest.split_once('|') else { continue };
                let Ok(seq) = seq.parse::<i64>() else { continue };
                events::after(store.pool(), conversation_id, seq - 1).await?.into_iter().find(|e| e.seq == seq)
            }
        };
        if let Some(event) = event {
            store.bus().publish_remote(event);
        }
    }
}
