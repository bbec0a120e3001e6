//! The outbox: one row per message to deliver (a webhook, an email, a Slack post or update),
//! queued in the transaction of the write that caused it and worked off by the one delivery
//! worker (`engine/src/delivery.rs`: leased, retried with backoff, marked delivered or failed).

use super::Db;
use anyhow::Context;
use domain::ApprovalId;
use sqlx::AnyConnection;

use super::Backend;
use clock::now_ms;

/// Where committed events of some kinds are announced (from `[[webhooks]]`).
#[derive(Clone, Debug)]
pub struct Target {
    pub url: String,
    pub events: Vec<String>,
}

/// What an outbox row delivers (its `kind` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// POST an event's JSON, signed, to a configured URL (`engine/src/webhooks.rs`).
    Webhook,
    /// Email a person about an approval (`server/src/channels/email.rs`).
    Email,
    /// Post an approval's Slack message, or update it once decided (`server/src/channels/slack.rs`).
    Slack,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Email => "email",
            Self::Slack => "slack",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [Self::Webhook, Self::Email, Self::Slack].into_iter().find(|k| k.as_str() == text)
    }
}

/// One email about an approval, as queued in the outbox and read by its sender.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct EmailNotice {
    pub approval_id: ApprovalId,
    /// Whom it is for (their links are made for them).
    pub person: String,
    /// 0: it was just asked; n: the n-th reminder.
    #[serde(default)]
    pub reminder: u32,
}

/// What the Slack channel does with an approval's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlackAction {
    Post,
    Update,
}

/// One message to deliver, queued in the transaction of the write that caused it.
pub enum Message<'a> {
    Webhook { url: &'a str, body: String },
    Email { address: &'a str, notice: &'a EmailNotice },
    Slack { action: SlackAction, approval_id: &'a ApprovalId },
}

/// A leased delivery, as its sender reads it.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub id: i64,
    pub kind: Kind,
    /// The webhook's URL, the email address, or `post` / `update` (Slack).
    pub target: String,
    pub body: String,
    /// Attempts before this one.
    pub attempts: i64,
}

impl Delivery {
    /// The email this row asks for; an error naming the row when it cannot be read.
    pub fn email(&self) -> Result<EmailNotice, String> {
        serde_json::from_str(&self.body).map_err(|err| format!("outbox row {}: unreadable email notice: {err}", self.id))
    }

    /// The Slack action and approval this row asks for; an error naming the row when it cannot be read.
    pub fn slack(&self) -> Result<(SlackAction, ApprovalId), String> {
        let action = match self.target.as_str() {
            "post" => SlackAction::Post,
            "update" => SlackAction::Update,
            other => return Err(format!("outbox row {}: unknown Slack action {other:?}", self.id)),
        };
        #[derive(serde::Deserialize)]
        struct Body {
            approval_id: ApprovalId,
        }
        let body: Body =
            serde_json::from_str(&self.body).map_err(|err| format!("outbox row {}: unreadable Slack delivery: {err}", self.id))?;
        Ok((action, body.approval_id))
    }
}

pub async fn queue(conn: &mut AnyConnection, message: Message<'_>) -> anyhow::Result<()> {
    let (kind, target, body) = match message {
        Message::Webhook { url, body } => (Kind::Webhook, url.to_owned(), body),
        Message::Email { address, notice } => (Kind::Email, address.to_owned(), serde_json::to_string(notice)?),
        Message::Slack { action, approval_id } => {
            let target = match action {
                SlackAction::Post => "post",
                SlackAction::Update => "update",
            };
            (Kind::Slack, target.to_owned(), serde_json::json!({ "approval_id": approval_id }).to_string())
        }
    };
    let now = now_ms();
    sqlx::query("INSERT INTO outbox (kind, target, body, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(kind.as_str())
        .bind(target)
        .bind(body)
        .bind(now)
        .bind(now)
        .execute(conn)
        .await
        .with_context(|| format!("failed to queue a {} delivery", kind.as_str()))?;
    Ok(())
}

/// Leases up to `limit` due deliveries to `owner` until `until` and returns them.
///
/// The conditions are repeated outside the subquery: under PostgreSQL's READ COMMITTED a row
/// another replica leased meanwhile is re-checked against them and skipped, so two replicas never
/// both send one delivery; `SKIP LOCKED` lets them pass each other's rows instead of waiting.
pub async fn claim_due(
    pool: impl Into<Db<'_>>,
    backend: Backend,
    owner: &str,
    until: i64,
    limit: i64,
    kinds: &[Kind],
) -> anyhow::Result<Vec<Delivery>> {
    let mut pool: Db<'_> = pool.into();
    let now = now_ms();
    // The kinds are this crate's own words, never input.
    let kinds = kinds.iter().map(|k| format!("'{}'", k.as_str())).collect::<Vec<_>>().join(", ");
    let kind = format!("kind IN ({kinds})");
    let skip_locked = if backend == Backend::Postgres { "FOR UPDATE SKIP LOCKED" } else { "" };
    // As for task leases: on PostgreSQL a holder with no connection left is gone (its process
    // died), so its deliveries need not wait for the lease; SQLite drops them at start-up.
    let holder_gone = match backend {
        Backend::Postgres => "OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = outbox.lease_owner)",
        Backend::Sqlite => "",
    };
    sqlx::query(&format!(
        "UPDATE outbox SET lease_owner = $1, lease_until = $2
         WHERE id IN (SELECT id FROM outbox
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
    .execute(pool.again().write())
    .await
    .context("failed to claim webhook deliveries")?;
    let rows: Vec<(i64, String, String, String, i64)> = sqlx::query_as(
        "SELECT id, kind, target, body, attempts FROM outbox
         WHERE lease_owner = $1 AND lease_until = $2 AND delivered_at IS NULL AND failed_at IS NULL ORDER BY id",
    )
    .bind(owner)
    .bind(until)
    .fetch_all(pool.again().write())
    .await
    .context("failed to load claimed deliveries")?;
    rows.into_iter()
        .map(|(id, kind, target, body, attempts)| {
            let kind = Kind::parse(&kind).with_context(|| format!("outbox row {id} has an unknown kind {kind:?}"))?;
            Ok(Delivery { id, kind, target, body, attempts })
        })
        .collect()
}

pub async fn delivered(db: impl Into<Db<'_>>, id: i64) -> anyhow::Result<()> {
    sqlx::query("UPDATE outbox SET delivered_at = $1, attempts = attempts + 1, lease_owner = NULL, lease_until = NULL WHERE id = $2")
        .bind(now_ms())
        .bind(id)
        .execute(db.into().write())
        .await
        .context("failed to mark a webhook delivered")?;
    Ok(())
}

/// Records a failed attempt: tried again at `retry_at`, or given up when `None`.
pub async fn attempt_failed(db: impl Into<Db<'_>>, id: i64, error: &str, retry_at: Option<i64>) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE outbox SET attempts = attempts + 1, last_error = $1, next_attempt_at = COALESCE($2, next_attempt_at),
            failed_at = CASE WHEN $2 IS NULL THEN $3 ELSE NULL END, lease_owner = NULL, lease_until = NULL
         WHERE id = $4",
    )
    .bind(error)
    .bind(retry_at)
    .bind(now_ms())
    .bind(id)
    .execute(db.into().write())
    .await
    .context("failed to record a webhook attempt")?;
    Ok(())
}

/// SQLite at start-up: deliveries leased by the previous run of the one server process are free
/// again (the same reasoning as `tasks::forget_leases_at_start_up`).
pub async fn forget_leases_at_start_up(pool: impl Into<Db<'_>>) -> anyhow::Result<u64> {
    let result =
        sqlx::query("UPDATE outbox SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL AND delivered_at IS NULL")
            .execute(pool.into().write())
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
