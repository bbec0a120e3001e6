//! The webhook outbox: one row per delivery, inserted with the event it announces and worked off
//! by `webhooks::run` (leased, retried with backoff, marked delivered or failed).

use anyhow::Context;
use sqlx::{AnyConnection, AnyExecutor};

use super::{Backend, time::now_ms};

/// Where committed events of some kinds are announced (from `[[webhooks]]`).
#[derive(Clone, Debug)]
pub struct Target {
    pub url: String,
    pub events: Vec<String>,
}

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct Delivery {
    pub id: i64,
    pub url: String,
    pub body: String,
    pub attempts: i64,
}

/// Which deliveries a sender works off: webhooks (HTTP), emails (`mailto:` targets) or
/// Slack-compatible messages (`slack:post`, `slack:update`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Webhook,
    Email,
    Slack,
}

impl Kind {
    fn sql(self) -> &'static str {
        match self {
            Self::Webhook => "url NOT LIKE 'mailto:%' AND url NOT LIKE 'slack:%'",
            Self::Email => "url LIKE 'mailto:%'",
            Self::Slack => "url LIKE 'slack:%'",
        }
    }
}

/// Slack deliveries: post an approval's message, or update it once decided.
pub const SLACK_POST: &str = "slack:post";
pub const SLACK_UPDATE: &str = "slack:update";

/// The delivery target of an email to `address`.
pub fn mailto(address: &str) -> String {
    format!("mailto:{address}")
}

pub async fn insert(conn: &mut AnyConnection, url: &str, body: &str) -> anyhow::Result<()> {
    let now = now_ms();
    sqlx::query("INSERT INTO webhook_outbox (url, body, next_attempt_at, created_at) VALUES ($1, $2, $3, $4)")
        .bind(url)
        .bind(body)
        .bind(now)
        .bind(now)
        .execute(conn)
        .await
        .context("failed to queue a webhook delivery")?;
    Ok(())
}

/// Leases up to `limit` due deliveries to `owner` until `until` and returns them.
///
/// The conditions are repeated outside the subquery: under PostgreSQL's READ COMMITTED a row
/// another replica leased meanwhile is re-checked against them and skipped, so two replicas never
/// both send one delivery; `SKIP LOCKED` lets them pass each other's rows instead of waiting.
pub async fn claim_due(
    pool: &sqlx::AnyPool,
    backend: Backend,
    owner: &str,
    until: i64,
    limit: i64,
    kind: Kind,
) -> anyhow::Result<Vec<Delivery>> {
    let now = now_ms();
    let kind = kind.sql();
    let skip_locked = if backend == Backend::Postgres { "FOR UPDATE SKIP LOCKED" } else { "" };
    // As for task leases: on PostgreSQL a holder with no connection left is gone (its process
    // died), so its deliveries need not wait for the lease; SQLite drops them at start-up.
    let holder_gone = match backend {
        Backend::Postgres => "OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = webhook_outbox.lease_owner)",
        Backend::Sqlite => "",
    };
    sqlx::query(&format!(
        "UPDATE webhook_outbox SET lease_owner = $1, lease_until = $2
         WHERE id IN (SELECT id FROM webhook_outbox
                      WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $3 AND {kind}
                        AND (lease_until IS NULL OR lease_until < $3 {holder_gone})
                      ORDER BY id LIMIT $4 {skip_locked})
           AND delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $3
           AND (lease_until IS NULL OR lease_until < $3 {holder_gone})",
    ))
    .bind(owner)
    .bind(until)
    .bind(now)
    .bind(limit)
    .execute(pool)
    .await
    .context("failed to claim webhook deliveries")?;
    sqlx::query_as(
        "SELECT id, url, body, attempts FROM webhook_outbox
         WHERE lease_owner = $1 AND lease_until = $2 AND delivered_at IS NULL AND failed_at IS NULL ORDER BY id",
    )
    .bind(owner)
    .bind(until)
    .fetch_all(pool)
    .await
    .context("failed to load claimed webhook deliveries")
}

pub async fn delivered(db: impl AnyExecutor<'_>, id: i64) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE webhook_outbox SET delivered_at = $1, attempts = attempts + 1, lease_owner = NULL, lease_until = NULL WHERE id = $2",
    )
    .bind(now_ms())
    .bind(id)
    .execute(db)
    .await
    .context("failed to mark a webhook delivered")?;
    Ok(())
}

/// Records a failed attempt: tried again at `retry_at`, or given up when `None`.
pub async fn attempt_failed(db: impl AnyExecutor<'_>, id: i64, error: &str, retry_at: Option<i64>) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE webhook_outbox SET attempts = attempts + 1, last_error = $1, next_attempt_at = COALESCE($2, next_attempt_at),
            failed_at = CASE WHEN $2 IS NULL THEN $3 ELSE NULL END, lease_owner = NULL, lease_until = NULL
         WHERE id = $4",
    )
    .bind(error)
    .bind(retry_at)
    .bind(now_ms())
    .bind(id)
    .execute(db)
    .await
    .context("failed to record a webhook attempt")?;
    Ok(())
}

/// SQLite at start-up: deliveries leased by the previous run of the one server process are free
/// again (the same reasoning as `tasks::forget_leases_at_start_up`).
pub async fn forget_leases_at_start_up(pool: &sqlx::AnyPool) -> anyhow::Result<u64> {
    let result = sqlx::query(
        "UPDATE webhook_outbox SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL AND delivered_at IS NULL",
    )
    .execute(pool)
    .await
    .context("failed to drop the webhook leases of a previous run")?;
    Ok(result.rows_affected())
}

/// The JSON body announcing `event`: what is queued with the event's commit, then signed and
/// POSTed by `webhooks::run`.
pub fn payload(event: &domain::Event) -> String {
    serde_json::json!({ "event": event.body.name(), "seq": event.seq, "conversation_id": event.conversation_id, "at": event.at, "data": event.body })
        .to_string()
}
