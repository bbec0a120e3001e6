//! The audit trail checked: every link of the hash chain (`audit.rs`) from its start, against the
//! signed anchors (`audit_anchors.rs`) and an anchor kept outside the database.

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::{
    Store,
    audit::{Direction, GENESIS, canonical, chain_hash, select, settle},
    audit_anchors::{self, Anchor, AuditKey},
};

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Verification {
    pub ok: bool,
    /// Entries read (the kept ones; pruned entries are counted in `pruned_through`).
    pub entries: i64,
    /// The first entry whose hash or link does not check out (0: before the first kept entry).
    pub first_broken: Option<i64>,
    pub problem: Option<String>,
    /// Whether the anchors' signatures were checked (a key is configured).
    pub signatures_checked: bool,
    /// The newest checkpoint the chain was checked against: entry id, hash and time.
    pub checkpoint: Option<CheckedAnchor>,
    /// Entries after the newest checkpoint: not yet anchored, so a cut there is not detectable.
    pub after_checkpoint: i64,
    /// The entry through which retention pruned the trail (verification starts after it).
    pub pruned_through: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CheckedAnchor {
    pub entry_id: i64,
    pub hash: String,
    pub at: String,
}

/// An anchor kept outside the database (`ID:HASH`, as the `audit checkpoint` log line prints it).
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalAnchor {
    pub entry_id: i64,
    pub hash: String,
}

impl std::str::FromStr for ExternalAnchor {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (id, hash) = text.trim().split_once(':').ok_or("an anchor is ENTRY_ID:HASH")?;
        let entry_id = id.parse().map_err(|_| format!("{id:?} is not an entry id"))?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("the hash of an anchor is 64 hex digits".into());
        }
        Ok(Self { entry_id, hash: hash.to_ascii_lowercase() })
    }
}

/// Walks the chain in order from its start (genesis, or the newest pruning anchor), checking
/// every link, every anchor's signature (with `key`), that each checkpoint's entry still has the
/// signed hash, that no checkpoint covers an entry the chain no longer has (a cut tail), and
/// `external` when given.
pub async fn verify(store: &Store, key: Option<&AuditKey>, external: Option<&ExternalAnchor>) -> anyhow::Result<Verification> {
    settle(store).await?;
    let pool = store.pool();
    let anchors = audit_anchors::all(pool).await?;
    let mut report = Verification {
        ok: true,
        entries: 0,
        first_broken: None,
        problem: None,
        signatures_checked: key.is_some(),
        checkpoint: None,
        after_checkpoint: 0,
        pruned_through: None,
    };
    let broken = |mut report: Verification, at: i64, problem: String| {
        report.ok = false;
        report.first_broken = Some(at);
        report.problem = Some(problem);
        Ok(report)
    };
    if let Some(key) = key
        && let Some(forged) = anchors.iter().find(|a| !key.signed(a))
    {
        let problem = format!(
            "the {} anchor of entry {} is not signed with the configured key (forged, or the key changed)",
            forged.kind, forged.entry_id
        );
        return broken(report, forged.entry_id, problem);
    }
    let pruned = anchors.iter().rev().find(|a| a.kind == "pruned");
    let checkpoints: std::collections::HashMap<i64, &Anchor> =
        anchors.iter().filter(|a| a.kind == "checkpoint").map(|a| (a.entry_id, a)).collect();
    let mut expected: Vec<(i64, String, &str)> = checkpoints.values().map(|a| (a.entry_id, a.hash.clone(), "signed checkpoint")).collect();
    if let Some(e) = external {
        expected.push((e.entry_id, e.hash.clone(), "anchor you gave"));
    }
    let mut prev = pruned.map_or_else(|| GENESIS.to_owned(), |a| a.hash.clone());
    report.pruned_through = pruned.map(|a| a.entry_id);
    let mut after = pruned.map_or(0, |a| a.entry_id);
    let mut last_id = after;
    loop {
        let rows = select(pool, Direction::Oldest, after, None, None, 1000).await?;
        if rows.is_empty() {
            break;
        }
        for row in rows {
            report.entries += 1;
            after = row.id;
            last_id = row.id;
            let problem = if row.prev_hash != prev {
                Some("its prev_hash does not match the previous entry's hash (an entry was removed or changed)".to_owned())
            } else if chain_hash(&row.prev_hash, &row.entry) != row.hash {
                Some("its hash does not match its content (the entry was edited)".to_owned())
            } else if serde_json::from_str::<Value>(&row.entry).map(|v| canonical(&v)).ok().as_deref() != Some(row.entry.as_str()) {
                Some("its content is not canonical JSON".to_owned())
            } else {
                expected
                    .iter()
                    .find(|(id, hash, _)| *id == row.id && *hash != row.hash)
                    .map(|(_, _, whose)| format!("its hash differs from the {whose}: the chain was recomputed from here or earlier"))
            };
            if let Some(problem) = problem {
                return broken(report, row.id, problem);
            }
            prev = row.hash;
        }
    }
    if let Some((id, _, whose)) = expected.iter().filter(|(id, ..)| *id > last_id).max_by_key(|(id, ..)| *id) {
        let problem = format!("the {whose} covers entry {id}, but the chain ends at entry {last_id}: entries were removed from its end");
        return broken(report, last_id + 1, problem);
    }
    if let Some(newest) = anchors.iter().filter(|a| a.kind == "checkpoint").max_by_key(|a| a.entry_id) {
        report.checkpoint = Some(CheckedAnchor { entry_id: newest.entry_id, hash: newest.hash.clone(), at: newest.at() });
        let newer: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE id > $1")
            .bind(newest.entry_id)
            .fetch_one(pool)
            .await
            .context("failed to count unanchored entries")?;
        report.after_checkpoint = newer;
    } else {
        report.after_checkpoint = report.entries;
    }
    Ok(report)
}
