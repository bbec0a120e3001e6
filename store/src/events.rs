//! The append-only event log.

use super::Db;
use anyhow::Context;
use domain::ConversationId;
use domain::{Event, EventBody};
use sqlx::AnyConnection;

use clock::{now_ms, rfc3339};

/// PostgreSQL: appends one event with the conversation's next sequence number, in one statement.
/// Its CTE's UPDATE moves the counter on and holds the conversation's row until the commit, and it
/// queues the NOTIFY that tells the other replicas (`instance` is this process's name; see
/// `replica_notice.rs`) in the same statement: no round trip of its own per event. SQLite's events are
/// numbered by the write and inserted together at its commit ([`last_seq`], [`insert_all`]).
pub async fn append(conn: &mut AnyConnection, instance: &str, conversation_id: &ConversationId, body: EventBody) -> anyhow::Result<Event> {
    // The notification's payload is `$7 || seq || $8` (`replica_notice::notice`); its `::text` is there
    // because the Any driver cannot decode `void`.
    const SQL: &str = "WITH next AS (UPDATE conversations SET last_seq = last_seq + 1 WHERE id = $1 RETURNING id, last_seq), \
         added AS (INSERT INTO events (conversation_id, seq, task_id, kind, body, created_at) \
         SELECT id, last_seq, $2, $3, $4, $5 FROM next RETURNING seq) \
         SELECT seq, pg_notify($6, $7 || seq::text || $8)::text FROM added";
    let now = now_ms();
    let json = serde_json::to_string(&body).context("failed to encode event")?;
    let mut event = Event { seq: 0, conversation_id: conversation_id.to_owned(), at: rfc3339(now), body };
    let (before, after) = super::replica_notice::notice(instance, &event)?;
    let (seq,) = sqlx::query_as::<_, (i64,)>(SQL)
        .bind(conversation_id)
        .bind(event.body.task_id())
        .bind(event.body.name())
        .bind(json)
        .bind(now)
        .bind(super::replica_notice::CHANNEL)
        .bind(before)
        .bind(after)
        .fetch_optional(&mut *conn)
        .await
        .context("failed to append event")?
        .with_context(|| format!("failed to append event: no conversation {conversation_id}"))?;
    event.seq = seq;
    Ok(event)
}

/// An event numbered by a SQLite write, to be inserted at its commit ([`insert_all`]).
pub struct Unwritten {
    pub event: Event,
    json: String,
    created_at: i64,
}

impl Unwritten {
    /// `body` as the `seq`th event of its conversation, stamped now.
    pub fn new(conversation_id: &ConversationId, seq: i64, body: EventBody) -> anyhow::Result<Self> {
        let created_at = now_ms();
        let json = serde_json::to_string(&body).context("failed to encode event")?;
        let event = Event { seq, conversation_id: conversation_id.to_owned(), at: rfc3339(created_at), body };
        Ok(Self { event, json, created_at })
    }
}

/// SQLite: the sequence number of a conversation's newest event, read once per write; its one
/// writer numbers the write's events from there.
pub async fn last_seq(conn: &mut AnyConnection, conversation_id: &ConversationId) -> anyhow::Result<i64> {
    sqlx::query_scalar("SELECT last_seq FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut *conn)
        .await
        .context("failed to append event")?
        .with_context(|| format!("failed to append event: no conversation {conversation_id}"))
}

/// How many events one INSERT carries (six parameters each, far below SQLite's limit).
const ROWS_PER_INSERT: usize = 64;

/// SQLite: a write's events, in as few statements as there are chunks of [`ROWS_PER_INSERT`]
/// (a statement costs more than the rows it adds: docs/performance-notes.md, "The MCP gateway").
/// The `events_take_seq` trigger moves each conversation's counter on, row by row.
pub async fn insert_all(conn: &mut AnyConnection, events: &[Unwritten]) -> anyhow::Result<()> {
    for chunk in events.chunks(ROWS_PER_INSERT) {
        let rows = (0..chunk.len())
            .map(|i| {
                let n = i * 6;
                format!("(${}, ${}, ${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4, n + 5, n + 6)
            })
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("INSERT INTO events (conversation_id, seq, task_id, kind, body, created_at) VALUES {rows}");
        let mut query = sqlx::query(&sql);
        for row in chunk {
            let event = &row.event;
            query = query
                .bind(&event.conversation_id)
                .bind(event.seq)
                .bind(event.body.task_id())
                .bind(event.body.name())
                .bind(&row.json)
                .bind(row.created_at);
        }
        query.execute(&mut *conn).await.context("failed to append events")?;
    }
    Ok(())
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
