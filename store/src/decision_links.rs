//! Signed decision links as issued: one row per pair (approve and reject share an id), so that a
//! link can be revoked before it expires. The token is never stored (server/src/links/token.rs).

use super::Db;
use anyhow::Context;
use sqlx::AnyConnection;

use clock::now_ms;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct LinkRow {
    pub id: String,
    pub approval_id: String,
    pub decider: String,
    pub issued_by: String,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
    pub revoked_by: Option<String>,
}

pub struct NewLink<'a> {
    pub id: &'a str,
    pub approval_id: &'a str,
    pub decider: &'a str,
    pub issued_by: &'a str,
    pub expires_at: i64,
}

pub async fn insert(conn: &mut AnyConnection, link: NewLink<'_>) -> anyhow::Result<()> {
    sqlx::query("INSERT INTO decision_links (id, approval_id, decider, issued_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(link.id)
        .bind(link.approval_id)
        .bind(link.decider)
        .bind(link.issued_by)
        .bind(now_ms())
        .bind(link.expires_at)
        .execute(conn)
        .await
        .context("failed to record a decision link")?;
    Ok(())
}

pub async fn get(db: impl Into<Db<'_>>, id: &str) -> anyhow::Result<Option<LinkRow>> {
    sqlx::query_as("SELECT id, approval_id, decider, issued_by, expires_at, revoked_at, revoked_by FROM decision_links WHERE id = $1")
        .bind(id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to load a decision link")
}

/// Revokes a link; false when it was already revoked.
pub async fn revoke(conn: &mut AnyConnection, id: &str, by: &str) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE decision_links SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL")
        .bind(now_ms())
        .bind(by)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to revoke a decision link")?;
    Ok(result.rows_affected() == 1)
}
