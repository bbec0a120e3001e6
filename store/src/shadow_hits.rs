//! Calls a shadow gate would have stopped (they ran unasked), and calls a draft configuration
//! would have treated otherwise (their gate is `draft:…@<the draft's version>`,
//! engine/src/draft.rs), for the queue's Decided tab.

use super::Db;
use anyhow::Context;
use domain::{CallId, ConversationId, UserId, wire::ShadowHit};
use sqlx::AnyConnection;

use clock::{now_ms, rfc3339};

pub async fn record(
    conn: &mut AnyConnection,
    conversation_id: &ConversationId,
    call_id: &CallId,
    gate: &str,
    tool: &str,
    summary: &str,
) -> anyhow::Result<()> {
    sqlx::query("INSERT INTO shadow_hits (conversation_id, call_id, gate, tool, summary, at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(conversation_id)
        .bind(call_id)
        .bind(gate)
        .bind(tool)
        .bind(summary)
        .bind(now_ms())
        .execute(conn)
        .await
        .context("failed to record a shadow hit")?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct Row {
    conversation_id: String,
    title: String,
    username: Option<String>,
    call_id: String,
    gate: String,
    tool: String,
    summary: String,
    at: i64,
}

/// Which shadow hits to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// Shadow gates' and the draft's.
    All,
    /// Shadow gates' (`mode = "shadow"`).
    Gates,
    /// The draft's (`COUNTERSIGN_AGENTS_DRAFT`).
    Draft,
}

/// The prefix of a draft's shadow hits' gate (`draft:big-refunds`, `draft:none`). A gate's name
/// may not start with it (engine/src/agents/validate.rs), so a shadow gate's hits and a draft's never mix.
pub const DRAFT_PREFIX: &str = "draft:";

/// A draft's hit's gate as it is stored, `draft:big-refunds@9a0d3c5e2b44`: the table has no
/// column for the draft's version, and hits of drafts run one after another must stay apart.
pub fn stored_gate(gate: &str, version: &str) -> String {
    format!("{gate}@{version}")
}

/// A stored hit's gate and, for a draft's, the draft's version ([`stored_gate`]); `None`: a
/// shadow gate's hit, or a draft's stored before versions were kept.
pub fn split_version(stored: &str) -> (&str, Option<&str>) {
    let is_version = |v: &str| v.len() == 12 && v.bytes().all(|b| b.is_ascii_hexdigit());
    match stored.rsplit_once('@') {
        Some((gate, version)) if stored.starts_with(DRAFT_PREFIX) && is_version(version) => (gate, Some(version)),
        _ => (stored, None),
    }
}

/// The newest shadow hits of one kind, of one owner's conversations (`None`: everyone's).
pub async fn list(db: impl Into<Db<'_>>, owner_id: Option<&UserId>, which: Which, limit: i64) -> anyhow::Result<Vec<ShadowHit>> {
    // A gate's name may not start with the draft's prefix (agents/validate.rs): it tells them apart.
    let prefix = DRAFT_PREFIX;
    let kind = match which {
        Which::All => String::new(),
        Which::Gates => format!("AND substr(s.gate, 1, {}) <> '{prefix}'", prefix.len()),
        Which::Draft => format!("AND substr(s.gate, 1, {}) = '{prefix}'", prefix.len()),
    };
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT s.conversation_id, c.title, u.username, s.call_id, s.gate, s.tool, s.summary, s.at
         FROM shadow_hits s JOIN conversations c ON c.id = s.conversation_id LEFT JOIN users u ON u.id = c.owner_id
         WHERE ($1 IS NULL OR c.owner_id = $1) {kind} ORDER BY s.at DESC, s.id DESC LIMIT $2",
    ))
    .bind(owner_id)
    .bind(limit)
    .fetch_all(db.into().read())
    .await
    .context("failed to list shadow hits")?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let (gate, version) = split_version(&r.gate);
            ShadowHit {
                conversation_id: r.conversation_id.into(),
                conversation_title: r.title,
                owner: r.username,
                call_id: r.call_id.into(),
                draft: r.gate.starts_with(DRAFT_PREFIX),
                draft_version: version.map(str::to_owned),
                gate: gate.to_owned(),
                tool: r.tool,
                summary: r.summary,
                at: rfc3339(r.at),
            }
        })
        .collect())
}

/// How many shadow hits the draft (`COUNTERSIGN_AGENTS_DRAFT`) of version `version` has recorded
/// since `since_ms`, per gate (`draft:…`, without the version), in the gates' order: for the
/// Policy page.
pub async fn draft_counts(db: impl Into<Db<'_>>, since_ms: i64, version: &str) -> anyhow::Result<Vec<(String, i64)>> {
    let prefix = DRAFT_PREFIX;
    let sql = format!(
        "SELECT gate, COUNT(*) FROM shadow_hits WHERE substr(gate, 1, {}) = '{prefix}' AND at >= $1 GROUP BY gate ORDER BY gate",
        prefix.len()
    );
    let counts: Vec<(String, i64)> =
        sqlx::query_as(&sql).bind(since_ms).fetch_all(db.into().read()).await.context("failed to count the draft's shadow hits")?;
    // Another draft's hits (a replica started with another file) are not this one's.
    Ok(counts
        .into_iter()
        .filter_map(|(stored, n)| match split_version(&stored) {
            (gate, Some(v)) if v == version => Some((gate.to_owned(), n)),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hits_stored_gate_carries_the_drafts_version() {
        let stored = stored_gate("draft:big-refunds", "9a0d3c5e2b44");
        assert_eq!(stored, "draft:big-refunds@9a0d3c5e2b44");
        assert_eq!(split_version(&stored), ("draft:big-refunds", Some("9a0d3c5e2b44")));
        assert_eq!(split_version("draft:none"), ("draft:none", None), "stored before versions were kept");
        assert_eq!(split_version("ops@example"), ("ops@example", None), "a shadow gate's name");
    }
}
