//! Signed anchors of the audit chain. The chain alone shows an edited or removed entry in the
//! middle, but not a cut tail or a chain recomputed from some point on: whoever can write the
//! database can redo the hashes. An anchor signs an entry's hash with `COUNTERSIGN_AUDIT_KEY`
//! (HMAC-SHA256), which the database does not hold, so it cannot be forged there:
//! - a *checkpoint* signs the head every minute (and is logged, so a copy lives outside the
//!   database: `audit verify --anchor ID:HASH` checks the chain against such a copy);
//! - a *pruned* anchor signs the last entry of a prefix that retention deleted; verification
//!   starts from it, and the database lets entries go only once such an anchor covers them.
//!
//! What verification can and cannot detect is listed in docs/security.md ("Audit trail").

use super::Db;
use anyhow::Context;
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

use super::{Backend, Store};
use clock::{now_ms, rfc3339};

/// A transaction in which the chain does not move: SQLite's one writer, or PostgreSQL's chaining
/// lock (`audit::chain_staged` takes the same one).
async fn chain_held(store: &Store) -> anyhow::Result<super::Tx> {
    match store.backend() {
        Backend::Sqlite => store.writer().begin("BEGIN IMMEDIATE").await.context("failed to begin an audit anchor"),
        Backend::Postgres => {
            let mut tx = store.writer().begin("BEGIN").await.context("failed to begin an audit anchor")?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(super::audit::CHAIN_LOCK)
                .execute(&mut *tx)
                .await
                .context("failed to take the audit chain's lock")?;
            Ok(tx)
        }
    }
}

/// The key anchors are signed with (from configuration; never stored in the database).
#[derive(Clone)]
pub struct AuditKey(Vec<u8>);

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditKey(…)")
    }
}

impl AuditKey {
    pub const MIN_LENGTH: usize = 32;

    pub fn new(text: &str) -> anyhow::Result<Self> {
        if text.len() < Self::MIN_LENGTH {
            anyhow::bail!("COUNTERSIGN_AUDIT_KEY must have at least {} characters (e.g. `openssl rand -hex 32`)", Self::MIN_LENGTH);
        }
        Ok(Self(text.as_bytes().to_vec()))
    }

    fn mac(&self, anchor: &Anchor) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("BUG: HMAC takes keys of any length");
        let message = format!(
            "countersign-audit-anchor\n{}\n{}\n{}\n{}\n{}",
            anchor.kind, anchor.entry_id, anchor.entries, anchor.hash, anchor.at_ms
        );
        mac.update(message.as_bytes());
        mac
    }

    fn sign(&self, anchor: &Anchor) -> String {
        hex::encode(self.mac(anchor).finalize().into_bytes())
    }

    /// Whether `anchor`'s signature is this key's (compared in constant time).
    pub fn signed(&self, anchor: &Anchor) -> bool {
        hex::decode(&anchor.signature).is_ok_and(|sig| self.mac(anchor).verify_slice(&sig).is_ok())
    }
}

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct Anchor {
    #[serde(skip)]
    pub id: i64,
    pub kind: String,
    #[sqlx(rename = "at")]
    #[serde(skip)]
    pub at_ms: i64,
    pub entry_id: i64,
    pub entries: i64,
    pub hash: String,
    #[serde(skip)]
    pub signature: String,
}

impl Anchor {
    pub fn at(&self) -> String {
        rfc3339(self.at_ms)
    }
}

/// Every anchor, oldest first.
pub async fn all(pool: impl Into<Db<'_>>) -> anyhow::Result<Vec<Anchor>> {
    sqlx::query_as("SELECT id, kind, at, entry_id, entries, hash, signature FROM audit_anchors ORDER BY id")
        .fetch_all(pool.into().read())
        .await
        .context("failed to read the audit anchors")
}

/// The chain's newest entry (id, hash) and how many entries the chain has had up to it.
async fn head(conn: &mut sqlx::AnyConnection, at_or_before_ms: Option<i64>) -> anyhow::Result<Option<(i64, String, i64)>> {
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT id, hash FROM audit_log WHERE ($1 IS NULL OR at < $1) ORDER BY id DESC LIMIT 1")
            .bind(at_or_before_ms)
            .fetch_optional(&mut *conn)
            .await
            .context("failed to read the audit chain head")?;
    let Some((id, hash)) = row else { return Ok(None) };
    let pruned: Option<i64> = sqlx::query_scalar("SELECT entries FROM audit_anchors WHERE kind = 'pruned' ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut *conn)
        .await
        .context("failed to read the pruning anchor")?;
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE id <= $1")
        .bind(id)
        .fetch_one(&mut *conn)
        .await
        .context("failed to count audit entries")?;
    Ok(Some((id, hash, pruned.unwrap_or(0) + kept)))
}

async fn insert(
    conn: &mut sqlx::AnyConnection,
    key: &AuditKey,
    kind: &str,
    (entry_id, hash, entries): (i64, String, i64),
) -> anyhow::Result<Anchor> {
    let mut anchor = Anchor { id: 0, kind: kind.to_owned(), at_ms: now_ms(), entry_id, entries, hash, signature: String::new() };
    anchor.signature = key.sign(&anchor);
    anchor.id = sqlx::query_scalar(
        "INSERT INTO audit_anchors (kind, at, entry_id, entries, hash, signature) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(&anchor.kind)
    .bind(anchor.at_ms)
    .bind(anchor.entry_id)
    .bind(anchor.entries)
    .bind(&anchor.hash)
    .bind(&anchor.signature)
    .fetch_one(&mut *conn)
    .await
    .context("failed to store an audit anchor")?;
    Ok(anchor)
}

/// Signs the chain's head unless the newest checkpoint already covers it.
pub async fn checkpoint(store: &Store, key: &AuditKey) -> anyhow::Result<Option<Anchor>> {
    super::audit::settle(store).await?;
    let mut tx = chain_held(store).await?;
    let Some(head) = head(&mut tx, None).await? else { return Ok(None) };
    let newest: Option<i64> = sqlx::query_scalar("SELECT entry_id FROM audit_anchors WHERE kind = 'checkpoint' ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut *tx)
        .await
        .context("failed to read the newest checkpoint")?;
    if newest == Some(head.0) {
        return Ok(None);
    }
    let anchor = insert(&mut tx, key, "checkpoint", head).await?;
    tx.commit().await.context("failed to commit an audit checkpoint")?;
    Ok(Some(anchor))
}

/// Retention: deletes the entries older than `before_ms` behind a signed anchor of the last one,
/// so the rest still verifies. Returns how many entries went.
pub async fn prune(store: &Store, key: &AuditKey, before_ms: i64) -> anyhow::Result<u64> {
    let mut tx = chain_held(store).await?;
    let Some(last) = head(&mut tx, Some(before_ms)).await? else { return Ok(0) };
    let entry_id = last.0;
    insert(&mut tx, key, "pruned", last).await?;
    let deleted = sqlx::query("DELETE FROM audit_log WHERE id <= $1")
        .bind(entry_id)
        .execute(&mut *tx)
        .await
        .context("failed to delete pruned audit entries")?
        .rows_affected();
    tx.commit().await.context("failed to commit the pruning")?;
    Ok(deleted)
}

/// With a key: a checkpoint every `every`, logged so a copy lives outside the database, and
/// entries older than `retention` pruned behind an anchor.
pub async fn keep_anchoring(
    store: Store,
    key: AuditKey,
    every: std::time::Duration,
    retention: Option<std::time::Duration>,
    pulse: impl crate::Heartbeat,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        if let Some(retention) = retention {
            match prune(&store, &key, now_ms() - retention.as_millis() as i64).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(entries = n, "pruned audit entries past their retention"),
                Err(err) => {
                    tracing::warn!(error = ?err, "could not prune the audit trail");
                    pulse.failed(err);
                    continue;
                }
            }
        }
        match checkpoint(&store, &key).await {
            Ok(Some(a)) => {
                tracing::info!(anchor = %format!("{}:{}", a.entry_id, a.hash), entries = a.entries, "audit checkpoint");
                pulse.ok();
            }
            Ok(None) => pulse.ok(),
            Err(err) => {
                tracing::warn!(error = ?err, "could not sign an audit checkpoint");
                pulse.failed(err);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor() -> Anchor {
        Anchor { id: 1, kind: "checkpoint".into(), at_ms: 1, entry_id: 7, entries: 7, hash: "ab".repeat(32), signature: String::new() }
    }

    #[test]
    fn a_signature_covers_every_field_and_needs_the_key() {
        let key = AuditKey::new(&"k".repeat(32)).unwrap();
        let mut a = anchor();
        a.signature = key.sign(&a);
        assert!(key.signed(&a));
        assert!(!AuditKey::new(&"x".repeat(32)).unwrap().signed(&a), "another key");
        for change in [|a: &mut Anchor| a.entry_id = 8, |a: &mut Anchor| a.entries = 6, |a: &mut Anchor| a.hash = "cd".repeat(32)] {
            let mut forged = a.clone();
            change(&mut forged);
            assert!(!key.signed(&forged));
        }
        assert!(AuditKey::new("short").unwrap_err().to_string().contains("at least 32"));
    }
}
