//! Calls an outside client proposes (the MCP approval gateway, server/src/protocols/mcp/): one
//! per task, with whether the client still waits for its outcome; and the name each client gave.

use super::Db;
use anyhow::Context;
use domain::{ConversationId, TaskId, UserId};
use serde_json::Value;
use sqlx::AnyConnection;

use super::tasks::TaskRow;
use clock::now_ms;

/// A client that said nothing for this long (no heartbeat from the request that waits) is gone:
/// its replica crashed or its connection dropped without a word.
pub const CLIENT_SILENCE_MS: i64 = 30_000;

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct ClientCall {
    pub task_id: TaskId,
    pub conversation_id: ConversationId,
    /// Who asked, as the card and the audit trail name it (e.g. "MCP client claude-code").
    pub client: String,
    pub tool: String,
    #[sqlx(try_from = "super::strict_columns::JsonText")]
    pub args: Value,
    pub seen_at: i64,
    pub gone_at: Option<i64>,
}

impl ClientCall {
    /// A call `client` makes now, its client waiting.
    pub fn new(task_id: &TaskId, conversation_id: &ConversationId, client: &str, tool: &str, args: &Value) -> Self {
        Self {
            task_id: task_id.clone(),
            conversation_id: conversation_id.clone(),
            client: client.to_owned(),
            tool: tool.to_owned(),
            args: args.clone(),
            seen_at: now_ms(),
            gone_at: None,
        }
    }

    pub fn args(&self) -> Value {
        self.args.clone()
    }

    /// Whether no one waits for the call's outcome any more.
    pub fn client_gone(&self, now: i64) -> bool {
        self.gone_at.is_some() || now - self.seen_at > CLIENT_SILENCE_MS
    }
}

pub async fn insert(conn: &mut AnyConnection, call: &ClientCall) -> anyhow::Result<()> {
    sqlx::query("INSERT INTO client_calls (task_id, conversation_id, client, tool, args, seen_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&call.task_id)
        .bind(&call.conversation_id)
        .bind(&call.client)
        .bind(&call.tool)
        .bind(call.args.to_string())
        .bind(call.seen_at)
        .execute(conn)
        .await
        .context("failed to record the client's call")?;
    Ok(())
}

pub async fn get(db: impl Into<Db<'_>>, task_id: &TaskId) -> anyhow::Result<Option<ClientCall>> {
    sqlx::query_as("SELECT task_id, conversation_id, client, tool, args, seen_at, gone_at FROM client_calls WHERE task_id = $1")
        .bind(task_id)
        .fetch_optional(db.into().read_few())
        .await
        .context("failed to load the client's call")
}

/// A task with its outside client's call, if an outside client proposed it, in one read: a driver
/// needs both when it starts, and nearly every task has no client call.
pub async fn task_with_call(db: impl Into<Db<'_>>, task_id: &TaskId) -> anyhow::Result<Option<(TaskRow, Option<ClientCall>)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        task: TaskRow,
        client: Option<String>,
        tool: Option<String>,
        #[sqlx(try_from = "super::strict_columns::NullableJsonText")]
        args: Option<Value>,
        seen_at: Option<i64>,
        gone_at: Option<i64>,
    }
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {}, c.client, c.tool, c.args, c.seen_at, c.gone_at
             FROM tasks t LEFT JOIN client_calls c ON c.task_id = t.id WHERE t.id = $1",
            super::tasks::columns_of("t")
        )
    });
    let row: Option<Row> = sqlx::query_as(SQL.as_str())
        .bind(task_id)
        .fetch_optional(db.into().read_few())
        .await
        .with_context(|| format!("failed to load task {task_id}"))?;
    Ok(row.map(|r| {
        let call = match (r.client, r.tool, r.args, r.seen_at) {
            (Some(client), Some(tool), Some(args), Some(seen_at)) => Some(ClientCall {
                task_id: r.task.id.clone(),
                conversation_id: r.task.conversation_id.clone(),
                client,
                tool,
                args,
                seen_at,
                gone_at: r.gone_at,
            }),
            _ => None,
        };
        (r.task, call)
    }))
}

/// The client still waits (a heartbeat), or has gone (`gone`). A client once gone stays gone; a
/// call whose task ended keeps its record as it ended (no one waits for it any more).
pub async fn mark(db: impl Into<Db<'_>>, task_id: &TaskId, gone: bool) -> anyhow::Result<()> {
    let sql = match gone {
        true => {
            "UPDATE client_calls SET gone_at = $1 WHERE task_id = $2 AND gone_at IS NULL \
             AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = client_calls.task_id AND t.status IN ('working', 'input_required'))"
        }
        false => "UPDATE client_calls SET seen_at = $1 WHERE task_id = $2 AND gone_at IS NULL",
    };
    sqlx::query(sql).bind(now_ms()).bind(task_id).execute(db.into().write()).await.context("failed to record whether the client waits")?;
    Ok(())
}

/// Records which request of its client made the call (the MCP gateway: its credential and the
/// JSON-RPC request id), so that the client's cancellation of that request finds it.
pub async fn set_request(conn: &mut AnyConnection, task_id: &TaskId, request_key: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE client_calls SET request_key = $1 WHERE task_id = $2")
        .bind(request_key)
        .bind(task_id)
        .execute(conn)
        .await
        .context("failed to record the client's request")?;
    Ok(())
}

/// Every call the client's request `request_key` made that is still held: its client waits and
/// its task has not ended, oldest first. A key is not unique: MCP clients number their requests
/// from 0 in every session, so a client that reconnects with the same token repeats ids, and two
/// clients sharing a token use the same ids at once. A call that ended is never among them.
pub async fn by_request(db: impl Into<Db<'_>>, request_key: &str) -> anyhow::Result<Vec<TaskId>> {
    sqlx::query_scalar(
        "SELECT c.task_id FROM client_calls c JOIN tasks t ON t.id = c.task_id \
         WHERE c.request_key = $1 AND c.gone_at IS NULL AND t.status IN ('working', 'input_required') \
         ORDER BY t.created_at, t.id",
    )
    .bind(request_key)
    .fetch_all(db.into().read_few())
    .await
    .context("failed to find the client's request")
}

/// The client was answered "input required" and comes back with its answer (MCP 2026-07-28):
/// it counts as waiting until `until` (the approval's deadline), with no request open meanwhile.
pub async fn expect_back(db: impl Into<Db<'_>>, task_id: &TaskId, until: i64) -> anyhow::Result<()> {
    sqlx::query("UPDATE client_calls SET seen_at = $1 WHERE task_id = $2 AND gone_at IS NULL")
        .bind(until)
        .bind(task_id)
        .execute(db.into().write())
        .await
        .context("failed to record that the client comes back")?;
    Ok(())
}

/// Keeps the name a client calls itself (MCP's `clientInfo.name`) for its credential.
pub async fn name_client(db: impl Into<Db<'_>>, user: &UserId, client_key: &str, name: &str) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO client_names (user_id, client_key, name) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, client_key) DO UPDATE SET name = excluded.name",
    )
    .bind(user)
    .bind(client_key)
    .bind(name)
    .execute(db.into().write())
    .await
    .context("failed to keep the client's name")?;
    Ok(())
}

/// The name the client with this credential last gave, if any.
pub async fn client_name(pool: impl Into<Db<'_>>, user: &UserId, client_key: &str) -> anyhow::Result<Option<String>> {
    sqlx::query_scalar("SELECT name FROM client_names WHERE user_id = $1 AND client_key = $2")
        .bind(user)
        .bind(client_key)
        .fetch_optional(pool.into().read_few())
        .await
        .context("failed to read the client's name")
}
