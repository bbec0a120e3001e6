//! Grants: standing permissions for one tool in one conversation, bound to the gate, agent and
//! configuration version they were given under (which calls they cover: engine/src/grant_cover.rs).
//! Using one is a conditional update, so a limited grant is never used more often than allowed.

use super::Db;
use anyhow::Context;
use domain::{ConversationId, GrantId, TaskId};
use serde_json::Value;
use sqlx::AnyConnection;

use clock::{new_id, now_ms};

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct GrantRow {
    pub id: GrantId,
    pub conversation_id: ConversationId,
    pub tool: String,
    pub created_by: String,
    pub expires_at: Option<i64>,
    pub max_uses: Option<i64>,
    pub uses: i64,
    pub revoked_at: Option<i64>,
}

/// A grant to record: standing (`exact` None) or for one exact call in one task (a plan's step).
pub struct NewGrant<'a> {
    pub conversation_id: &'a ConversationId,
    pub tool: &'a str,
    pub created_by: &'a str,
    pub expires_at: Option<i64>,
    pub max_uses: Option<i64>,
    pub exact: Option<(&'a TaskId, &'a Value)>,
    /// The configuration version it is made under.
    pub policy_version: &'a str,
    /// The gate it was given under, and the agent whose calls it covers.
    pub gate: &'a str,
    pub agent: &'a str,
    /// Bounds on the arguments (`grant_cover::bounds`).
    pub bounds: Option<&'a Value>,
}

pub async fn insert(conn: &mut AnyConnection, g: NewGrant<'_>) -> anyhow::Result<GrantId> {
    let id: GrantId = new_id();
    sqlx::query(
        "INSERT INTO grants (id, conversation_id, tool, created_by, created_at, expires_at, max_uses, task_id, args, policy_version,
            gate, agent, bounds)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&id)
    .bind(g.conversation_id)
    .bind(g.tool)
    .bind(g.created_by)
    .bind(now_ms())
    .bind(g.expires_at)
    .bind(g.max_uses)
    .bind(g.exact.map(|(task, _)| task))
    .bind(g.exact.map(|(_, args)| args.to_string()))
    .bind(g.policy_version)
    .bind(g.gate)
    .bind(g.agent)
    .bind(g.bounds.map(Value::to_string))
    .execute(conn)
    .await
    .context("failed to create grant")?;
    Ok(id)
}

/// Conditions under which a grant lets a call through ($1: now).
const USABLE: &str = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $1) AND (max_uses IS NULL OR uses < max_uses)";

/// A grant still in force, as `grant_cover::covers` reads it.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct GrantTerms {
    pub id: GrantId,
    /// Who gave it (whose authority it carries).
    pub created_by: String,
    pub gate: Option<String>,
    pub agent: Option<String>,
    pub policy_version: Option<String>,
    pub task_id: Option<String>,
    /// A plan's step: its exact arguments (JSON).
    pub args: Option<String>,
    /// JSON bounds on the arguments.
    pub bounds: Option<String>,
}

/// Decoded JSON of a grant's terms: a plan step's arguments and the bounds. A column that does
/// not decode is an error, never "no bounds" (that would widen the grant).
pub struct Decoded {
    pub step_args: Option<Value>,
    pub bounds: Option<Value>,
}

impl GrantTerms {
    pub fn decoded(&self) -> anyhow::Result<Decoded> {
        let parse = |text: &Option<String>, what: &str| {
            text.as_deref().map(serde_json::from_str::<Value>).transpose().with_context(|| format!("grant {}: {what} is not JSON", self.id))
        };
        Ok(Decoded { step_args: parse(&self.args, "args")?, bounds: parse(&self.bounds, "bounds")? })
    }
}

/// The grants in force for `tool` in the conversation, oldest first: which of them covers a
/// call is `grant_cover::covers`'s to say.
pub async fn in_force(db: impl Into<Db<'_>>, conversation_id: &ConversationId, tool: &str) -> anyhow::Result<Vec<GrantTerms>> {
    sqlx::query_as(&format!(
        "SELECT id, created_by, gate, agent, policy_version, task_id, args, bounds FROM grants
         WHERE {USABLE} AND conversation_id = $2 AND tool = $3 ORDER BY created_at, id"
    ))
    .bind(now_ms())
    .bind(conversation_id)
    .bind(tool)
    .fetch_all(db.into().read())
    .await
    .context("failed to look for a grant")
}

/// Counts one use of the grant, only while it still lets a call through (conditional: a use
/// never goes past `max_uses`, nor happens after it expired or was revoked). The grant as it is
/// now, or `None` if it could not be used.
pub async fn use_grant(conn: &mut AnyConnection, id: &GrantId) -> anyhow::Result<Option<GrantRow>> {
    sqlx::query_as(&format!(
        "UPDATE grants SET uses = uses + 1 WHERE {USABLE} AND id = $2
         RETURNING id, conversation_id, tool, created_by, expires_at, max_uses, uses, revoked_at"
    ))
    .bind(now_ms())
    .bind(id)
    .fetch_optional(conn)
    .await
    .context("failed to use a grant")
}

pub async fn get(db: impl Into<Db<'_>>, id: &GrantId) -> anyhow::Result<Option<GrantRow>> {
    sqlx::query_as("SELECT id, conversation_id, tool, created_by, expires_at, max_uses, uses, revoked_at FROM grants WHERE id = $1")
        .bind(id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to load grant")
}

pub async fn revoke(conn: &mut AnyConnection, id: &GrantId, by: &str) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE grants SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL")
        .bind(now_ms())
        .bind(by)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to revoke grant")?;
    Ok(result.rows_affected() == 1)
}

/// Standing grants still in force that were made under another configuration than `version`.
pub async fn standing_under_other_policy(db: impl Into<Db<'_>>, version: &str) -> anyhow::Result<Vec<GrantRow>> {
    sqlx::query_as(&format!(
        "SELECT id, conversation_id, tool, created_by, expires_at, max_uses, uses, revoked_at FROM grants
         WHERE {USABLE} AND task_id IS NULL AND (policy_version IS NULL OR policy_version <> $2)"
    ))
    .bind(now_ms())
    .bind(version)
    .fetch_all(db.into().read())
    .await
    .context("failed to list grants made under another configuration")
}

/// A standing grant in force ("always allow"), and what binds it (engine/src/grant_cover.rs).
#[derive(Clone, Debug)]
pub struct StandingGrant {
    pub id: String,
    pub conversation_id: String,
    pub tool: String,
    /// The gate it was given under; `None`: made before grants named one (it covers nothing).
    pub gate: Option<String>,
    pub agent: Option<String>,
    pub policy_version: Option<String>,
    pub created_by: String,
    pub created_at_ms: i64,
}

/// The standing grants in force now, with what binds them: the gate, the agent, the configuration
/// version (for `countersign policy replay`: which of them a draft would end).
pub async fn standing(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<StandingGrant>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: String,
        conversation_id: String,
        tool: String,
        created_by: String,
        created_at: i64,
        gate: Option<String>,
        agent: Option<String>,
        policy_version: Option<String>,
    }
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT id, conversation_id, tool, created_by, created_at, gate, agent, policy_version FROM grants
         WHERE {USABLE} AND task_id IS NULL ORDER BY created_at, id"
    ))
    .bind(now_ms())
    .fetch_all(db.into().read())
    .await
    .context("failed to list the standing grants")?;
    Ok(rows
        .into_iter()
        .map(|r| StandingGrant {
            id: r.id,
            conversation_id: r.conversation_id,
            tool: r.tool,
            gate: r.gate,
            agent: r.agent,
            policy_version: r.policy_version,
            created_by: r.created_by,
            created_at_ms: r.created_at,
        })
        .collect())
}
