//! Secrets the server makes for itself once, shared by every replica through the database.

use super::Db;
use anyhow::Context;

/// The secret named `name`: the stored one, or `fresh` stored now (the first replica to store
/// one wins; the others read it).
pub async fn get_or_create(pool: impl Into<Db<'_>>, name: &str, fresh: String) -> anyhow::Result<String> {
    let mut pool: Db<'_> = pool.into();
    sqlx::query("INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
        .bind(name)
        .bind(&fresh)
        .execute(pool.again().write())
        .await
        .context("failed to store a server secret")?;
    sqlx::query_scalar("SELECT value FROM server_secrets WHERE name = $1")
        .bind(name)
        .fetch_one(pool.again().write())
        .await
        .context("failed to read a server secret")
}
