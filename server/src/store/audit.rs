//! The audit trail: append-only (triggers refuse UPDATE and DELETE) and hash-chained. Each
//! entry's hash is SHA-256 over the previous entry's hash and the entry's canonical JSON, so an
//! edited, removed or reordered entry breaks the chain from that point on.

use anyhow::Context;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AnyExecutor};

use super::time::{now_ms, rfc3339};

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

/// Appends one entry; only [`super::Write::commit`] calls it, under the lock that orders the chain.
pub(super) async fn append(conn: &mut AnyConnection, kind: &str, actor: &str, data: Value) -> anyhow::Result<()> {
    let prev: Option<String> = sqlx::query_scalar("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut *conn)
        .await
        .context("failed to read the audit chain head")?;
    let prev = prev.unwrap_or_else(|| GENESIS.to_owned());
    let at = now_ms();
    let entry = canonical(&json!({ "at": rfc3339(at), "kind": kind, "actor": actor, "data": data }));
    let hash = chain_hash(&prev, &entry);
    sqlx::query("INSERT INTO audit_log (at, kind, actor, entry, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(at)
        .bind(kind)
        .bind(actor)
        .bind(&entry)
        .bind(&prev)
        .bind(&hash)
        .execute(conn)
        .await
        .context("failed to append to the audit trail")?;
    Ok(())
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
    db: impl AnyExecutor<'_>,
    after_id: i64,
    kind: Option<&str>,
    actor: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<AuditRow>> {
    sqlx::query_as(
        "SELECT id, at, kind, actor, entry, prev_hash, hash FROM audit_log
         WHERE id > $1 AND ($2 IS NULL OR kind = $2) AND ($3 IS NULL OR actor = $3) ORDER BY id LIMIT $4",
    )
    .bind(after_id)
    .bind(kind)
    .bind(actor)
    .bind(limit)
    .fetch_all(db)
    .await
    .context("failed to read the audit trail")
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verification {
    pub ok: bool,
    pub entries: i64,
    /// The first entry whose hash or link does not check out.
    pub first_broken: Option<i64>,
    pub problem: Option<String>,
}

/// Walks the whole chain in order.
pub async fn verify(pool: &sqlx::AnyPool) -> anyhow::Result<Verification> {
    let mut prev = GENESIS.to_owned();
    let mut after = 0;
    let mut entries = 0;
    loop {
        let rows = page(pool, after, None, None, 1000).await?;
        if rows.is_empty() {
            return Ok(Verification { ok: true, entries, first_broken: None, problem: None });
        }
        for row in rows {
            entries += 1;
            after = row.id;
            let problem = if row.prev_hash != prev {
                Some("its prev_hash does not match the previous entry's hash (an entry was removed or changed)")
            } else if chain_hash(&row.prev_hash, &row.entry) != row.hash {
                Some("its hash does not match its content (the entry was edited)")
            } else if serde_json::from_str::<Value>(&row.entry).map(|v| canonical(&v)).ok().as_deref() != Some(row.entry.as_str()) {
                Some("its content is not canonical JSON")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Ok(Verification { ok: false, entries, first_broken: Some(row.id), problem: Some(problem.to_owned()) });
            }
            prev = row.hash;
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
