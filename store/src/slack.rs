//! The Slack-compatible messages approvals were posted as (server/src/channels/slack.rs).

use super::Db;
use anyhow::Context;
use domain::ApprovalId;

/// Remembers where an approval was posted (the first post wins).
pub async fn record(db: impl Into<Db<'_>>, approval_id: &ApprovalId, channel: &str, ts: &str) -> anyhow::Result<()> {
    sqlx::query("INSERT INTO slack_messages (approval_id, channel, ts) VALUES ($1, $2, $3) ON CONFLICT (approval_id) DO NOTHING")
        .bind(approval_id)
        .bind(channel)
        .bind(ts)
        .execute(db.into().write())
        .await
        .context("failed to record a Slack message")?;
    Ok(())
}

/// Where an approval was posted: (channel, ts).
pub async fn message_of(db: impl Into<Db<'_>>, approval_id: &ApprovalId) -> anyhow::Result<Option<(String, String)>> {
    sqlx::query_as("SELECT channel, ts FROM slack_messages WHERE approval_id = $1")
        .bind(approval_id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to look up a Slack message")
}
