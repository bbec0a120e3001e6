//! The append-only event log.

use super::Db;
use anyhow::Context;
use domain::ConversationId;
use domain::{Event, EventBody};
use sqlx::AnyConnection;

use super::time::{now_ms, rfc3339};

/// Appends one event with the conversation's next sequence number, in one statement: SQLite reads
/// the counter in the INSERT and a trigger moves it on (its one writer orders them); PostgreSQL
/// moves it in a CTE whose UPDATE holds the conversation's row until the commit, and queues the
/// NOTIFY that tells the other replicas (`instance` is this process's name; see `replicas.rs`) in
/// the same statement: no round trip of its own per event.
pub async fn append(
    conn: &mut AnyConnection,
    backend: super::Backend,
    instance: &str,
    conversation_id: &ConversationId,
    body: EventBody,
) -> anyhow::Result<Event> {
    let sql = match backend {
        super::Backend::Sqlite => {
            "INSERT INTO events (conversation_id, seq, task_id, kind, body, created_at) \
             SELECT id, last_seq + 1, $2, $3, $4, $5 FROM conversations WHERE id = $1 RETURNING seq"
        }
        // The notification's payload is `$7 || seq || $8` (`replicas::notice`); its `::text` is
        // there because the Any driver cannot decode `void`.
        super::Backend::Postgres => {
            "WITH next AS (UPDATE conversations SET last_seq = last_seq + 1 WHERE id = $1 RETURNING id, last_seq), \
             added AS (INSERT INTO events (conversation_id, seq, task_id, kind, body, created_at) \
             SELECT id, last_seq, $2, $3, $4, $5 FROM next RETURNING seq) \
             SELECT seq, pg_notify($6, $7 || seq::text || $8)::text FROM added"
        }
    };
    let now = now_ms();
    let json = serde_json::to_string(&body).context("failed to encode event")?;
    let mut event = Event { seq: 0, conversation_id: conversation_id.to_owned(), at: rfc3339(now), body };
    let query =
        sqlx::query_as::<_, (i64,)>(sql).bind(conversation_id).bind(event.body.task_id()).bind(event.body.name()).bind(json).bind(now);
    let query = match backend {
        super::Backend::Sqlite => query,
        super::Backend::Postgres => {
            let (before, after) = super::replicas::notice(instance, &event)?;
            query.bind(super::replicas::CHANNEL).bind(before).bind(after)
        }
    };
    let (seq,) = query
        .fetch_optional(&mut *conn)
        .await
        .context("failed to append event")?
        .with_context(|| format!("failed to append event: no conversation {conversation_id}"))?;
    event.seq = seq;
    Ok(event)
}

#[derive(sqlx::FromRow)]
struct EventRow {
    conversation_id: ConversationId,
    seq: i64,
    body: String,
    created_at: i64,
}

impl EventRow {
    fn into_event(self) -> anyhow::Result<Event> {
        let body: EventBody =
            serde_json::from_str(&self.body).with_context(|| format!("corrupt event {}#{}", self.conversation_id, self.seq))?;
        Ok(Event { seq: self.seq, conversation_id: self.conversation_id, at: rfc3339(self.created_at), body })
    }
}

/// Events of a conversation after sequence number `after`, in order.
pub async fn after(db: impl Into<Db<'_>>, conversation_id: &ConversationId, after: i64) -> anyhow::Result<Vec<Event>> {
    events_after(db.into().read(), conversation_id, after).await
}

/// [`after`] when about `rows` events are known to follow (a conversation's `last_seq` minus
/// the cursor): a few are read on a quick reader.
pub async fn about_after(db: impl Into<Db<'_>>, conversation_id: &ConversationId, after: i64, rows: i64) -> anyhow::Result<Vec<Event>> {
    events_after(db.into().read_rows(rows), conversation_id, after).await
}

async fn events_after(db: impl sqlx::AnyExecutor<'_>, conversation_id: &ConversationId, after: i64) -> anyhow::Result<Vec<Event>> {
    let rows: Vec<EventRow> =
        sqlx::query_as("SELECT conversation_id, seq, body, created_at FROM events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq")
            .bind(conversation_id)
            .bind(after)
            .fetch_all(db)
            .await
            .context("failed to load events")?;
    rows.into_iter().map(EventRow::into_event).collect()
}

/// One task's events in a conversation, in order.
pub async fn of_task(pool: impl Into<Db<'_>>, conversation_id: &ConversationId, task_id: &domain::TaskId) -> anyhow::Result<Vec<Event>> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT conversation_id, seq, body, created_at FROM events WHERE conversation_id = $1 AND task_id = $2 ORDER BY seq",
    )
    .bind(conversation_id)
    .bind(task_id)
    .fetch_all(pool.into().read())
    .await
    .context("failed to load the task's events")?;
    rows.into_iter().map(EventRow::into_event).collect()
}
