//! The audit trail: append-only (triggers refuse UPDATE and DELETE) and hash-chained. Each
//! entry's hash is SHA-256 over the previous entry's hash and the entry's canonical JSON, so an
//! edited, removed or reordered entry breaks the chain from that point on.

use anyhow::Context;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AnyExecutor};

use clock::{now_ms, rfc3339};

pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// JSON with object keys sorted at every level and no insignificant whitespace.
pub fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

pub fn chain_hash(prev_hash: &str, entry: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(b"\n");
    hasher.update(entry.as_bytes());
    hex::encode(hasher.finalize())
}

/// The entry's canonical JSON, as the hash covers it.
fn entry_text(at: i64, kind: &str, actor: &str, data: Value) -> String {
    canonical(&json!({ "at": rfc3339(at), "kind": kind, "actor": actor, "data": data }))
}

/// Appends a write's entries to the chain, in order; only [`super::Write::commit`] calls it, on
/// SQLite, whose one writer orders the chain.
pub(super) async fn append(conn: &mut AnyConnection, entries: Vec<(&'static str, String, Value)>) -> anyhow::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    // The head is read once: each entry follows the one before it in this write.
    let mut prev = head(&mut *conn).await?;
    for (kind, actor, data) in entries {
        let at = now_ms();
        prev = insert_chained(&mut *conn, &prev, at, kind, &actor, &entry_text(at, kind, &actor, data)).await?;
    }
    Ok(())
}

/// The newest entry's hash, or (all pruned) the pruning anchor's, or the genesis hash.
async fn head(conn: &mut AnyConnection) -> anyhow::Result<String> {
    let prev: Option<String> = sqlx::query_scalar("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut *conn)
        .await
        .context("failed to read the audit chain head")?;
    if let Some(prev) = prev {
        return Ok(prev);
    }
    // Everything pruned: the chain goes on from the pruning anchor's entry.
    let pruned: Option<String> = sqlx::query_scalar("SELECT hash FROM audit_anchors WHERE kind = 'pruned' ORDER BY id DESC LIMIT 1")
        .fetch_optional(conn)
        .await
        .context("failed to read the pruning anchor")?;
    Ok(pruned.unwrap_or_else(|| GENESIS.to_owned()))
}

/// Inserts an entry after `prev`; returns its hash.
async fn insert_chained(conn: &mut AnyConnection, prev: &str, at: i64, kind: &str, actor: &str, entry: &str) -> anyhow::Result<String> {
    let hash = chain_hash(prev, entry);
    sqlx::query("INSERT INTO audit_log (at, kind, actor, entry, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(at)
        .bind(kind)
        .bind(actor)
        .bind(entry)
        .bind(prev)
        .bind(&hash)
        .execute(conn)
        .await
        .context("failed to append to the audit trail")?;
    Ok(hash)
}

/// PostgreSQL: stages one entry inside the caller's write transaction, with no lock; it joins
/// the chain when [`chain_staged`] next runs: [`keep_chaining`] soon after the commit, or a
/// reader of the trail first ([`settle`]).
pub(super) async fn stage(conn: &mut AnyConnection, kind: &str, actor: &str, data: Value) -> anyhow::Result<()> {
    let at = now_ms();
    sqlx::query("INSERT INTO audit_staging (at, kind, actor, entry) VALUES ($1, $2, $3, $4)")
        .bind(at)
        .bind(kind)
        .bind(actor)
        .bind(entry_text(at, kind, actor, data))
        .execute(conn)
        .await
        .context("failed to stage an audit entry")?;
    Ok(())
}

/// Arbitrary but fixed: the PostgreSQL advisory lock that lets one chaining transaction run at a
/// time across every replica.
pub(super) const CHAIN_LOCK: i64 = 0x0043_6f75_6e74_6572; // "Counter"

/// The most staged entries one chaining transaction takes, so it stays short.
const CHAIN_BATCH: usize = 1000;

/// What one [`chain_staged`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Chained {
    /// Another replica's chaining transaction runs; it, or the next, takes the staged entries.
    Busy,
    /// This many entries joined the chain (the most one transaction takes is 1,000).
    Entries(usize),
}

/// PostgreSQL: moves staged entries into the chain, in staging order, in one short transaction.
/// A replica frozen while chaining holds up only the chain (until PostgreSQL ends its idle
/// transaction), never anyone's writes.
pub async fn chain_staged(pool: &sqlx::AnyPool) -> anyhow::Result<Chained> {
    let mut tx = pool.begin().await.context("failed to begin chaining the audit trail")?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(CHAIN_LOCK)
        .fetch_one(&mut *tx)
        .await
        .context("failed to take the audit chain's lock")?;
    if !locked {
        return Ok(Chained::Busy);
    }
    let staged: Vec<(i64, i64, String, String, String)> =
        sqlx::query_as("SELECT id, at, kind, actor, entry FROM audit_staging ORDER BY id LIMIT $1")
            .bind(CHAIN_BATCH as i64)
            .fetch_all(&mut *tx)
            .await
            .context("failed to read staged audit entries")?;
    let Some(last) = staged.last().map(|row| row.0) else { return Ok(Chained::Entries(0)) };
    let mut prev = head(&mut tx).await?;
    for (_, at, kind, actor, entry) in &staged {
        prev = insert_chained(&mut tx, &prev, *at, kind, actor, entry).await?;
    }
    sqlx::query("DELETE FROM audit_staging WHERE id <= $1").bind(last).execute(&mut *tx).await.context("failed to clear staged entries")?;
    tx.commit().await.context("failed to commit the audit chain")?;
    Ok(Chained::Entries(staged.len()))
}

/// PostgreSQL: chains everything staged so far. While another replica is chaining, waits a
/// little for it; after 200 ms the background sweep (every second) finishes the job instead.
async fn chain_all(pool: &sqlx::AnyPool) -> anyhow::Result<()> {
    for _ in 0..40 {
        match chain_staged(pool).await? {
            Chained::Entries(n) if n == CHAIN_BATCH => continue,
            Chained::Entries(_) => return Ok(()),
            Chained::Busy => {}
        }
        let left: Option<i64> = sqlx::query_scalar("SELECT id FROM audit_staging LIMIT 1")
            .fetch_optional(pool)
            .await
            .context("failed to look at staged entries")?;
        if left.is_none() {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    Ok(())
}

/// Before the trail is read: chains what is staged (PostgreSQL), so a client that reads the
/// trail right after a change finds its entry. SQLite chains in the write itself.
pub async fn settle(store: &super::Store) -> anyhow::Result<()> {
    match store.backend() {
        super::Backend::Postgres => chain_all(store.pool()).await,
        super::Backend::Sqlite => Ok(()),
    }
}

/// How long [`keep_chaining`] lets commits gather before chaining them: one chaining transaction
/// (about seven statements) for all of them instead of one per audited commit, off the commit's
/// path (docs/performance-notes.md, "PostgreSQL: row locks and fewer round trips").
const CHAIN_GATHER: std::time::Duration = std::time::Duration::from_millis(20);

/// PostgreSQL: chains staged entries in the background while the process runs, woken by the
/// commits that staged them (`Write::commit`). The sweeper's pass every second covers what a
/// process that died had staged.
pub async fn keep_chaining(store: super::Store, pulse: impl crate::Heartbeat) {
    if store.backend() != super::Backend::Postgres {
        return;
    }
    let kick = store.chain_kick();
    loop {
        kick.notified().await;
        tokio::time::sleep(CHAIN_GATHER).await;
        match chain_all(store.pool()).await {
            Ok(_) => pulse.ok(),
            Err(err) => {
                tracing::warn!(error = ?err, "chaining the audit trail failed; the sweep will retry");
                pulse.failed(err);
            }
        }
    }
}

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct AuditRow {
    pub id: i64,
    #[serde(skip)]
    pub at: i64,
    pub kind: String,
    pub actor: String,
    pub entry: String,
    pub prev_hash: String,
    pub hash: String,
}

impl AuditRow {
    /// The entry as the API shows it: its JSON plus id and hashes.
    pub fn to_json(&self) -> Value {
        let mut value: Value = serde_json::from_str(&self.entry).unwrap_or_else(|_| json!({ "unreadable": self.entry }));
        value["id"] = json!(self.id);
        value["prev_hash"] = json!(self.prev_hash);
        value["hash"] = json!(self.hash);
        value
    }
}

/// Entries after `after_id`, oldest first, optionally of one kind or actor.
pub async fn page(
    store: &super::Store,
    after_id: i64,
    kind: Option<&str>,
    actor: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<AuditRow>> {
    settle(store).await?;
    select(store.pool(), Direction::Oldest, after_id, kind, actor, limit).await
}

/// The newest `limit` entries, newest first, optionally of one kind or actor (the audit page).
pub async fn newest(store: &super::Store, kind: Option<&str>, actor: Option<&str>, limit: i64) -> anyhow::Result<Vec<AuditRow>> {
    settle(store).await?;
    select(store.pool(), Direction::Newest, 0, kind, actor, limit).await
}

pub(crate) enum Direction {
    Oldest,
    Newest,
}

pub(crate) async fn select(
    db: impl AnyExecutor<'_>,
    order: Direction,
    after_id: i64,
    kind: Option<&str>,
    actor: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<AuditRow>> {
    let sql = match order {
        Direction::Oldest => {
            "SELECT id, at, kind, actor, entry, prev_hash, hash FROM audit_log
             WHERE id > $1 AND ($2 IS NULL OR kind = $2) AND ($3 IS NULL OR actor = $3) ORDER BY id LIMIT $4"
        }
        Direction::Newest => {
            "SELECT id, at, kind, actor, entry, prev_hash, hash FROM audit_log
             WHERE id > $1 AND ($2 IS NULL OR kind = $2) AND ($3 IS NULL OR actor = $3) ORDER BY id DESC LIMIT $4"
        }
    };
    sqlx::query_as(sql).bind(after_id).bind(kind).bind(actor).bind(limit).fetch_all(db).await.context("failed to read the audit trail")
}

/// Every entry as one JSON line, oldest first (the export and `countersign audit export`).
pub async fn export_lines(store: &super::Store) -> anyhow::Result<String> {
    settle(store).await?;
    let mut out = String::new();
    let mut after = 0;
    loop {
        let rows = select(store.pool(), Direction::Oldest, after, None, None, 1000).await?;
        let Some(last) = rows.last() else { return Ok(out) };
        after = last.id;
        for row in &rows {
            out.push_str(&row.to_json().to_string());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v = json!({ "b": 1, "a": { "d": [ { "y": 1, "x": 2 } ], "c": "é" } });
        assert_eq!(canonical(&v), r#"{"a":{"c":"é","d":[{"x":2,"y":1}]},"b":1}"#);
    }

    #[test]
    fn the_hash_covers_the_previous_hash_and_the_entry() {
        let h = chain_hash(GENESIS, "{}");
        assert_ne!(h, chain_hash(GENESIS, "{ }"));
        assert_ne!(h, chain_hash(&h, "{}"));
        assert_eq!(h.len(), 64);
    }
}
