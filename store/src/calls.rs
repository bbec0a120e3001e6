//! Tool calls and their execution state; the moves are [`CallState`]'s table.

use super::Db;
use anyhow::Context;
use domain::{CallId, ConversationId, TaskId};
use domain::{CallState, Machine};
use serde_json::Value;
use sqlx::AnyConnection;

use clock::now_ms;

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct CallRow {
    pub id: CallId,
    pub task_id: TaskId,
    pub conversation_id: ConversationId,
    pub step: i64,
    pub position: i64,
    pub tool: String,
    #[sqlx(try_from = "super::strict_columns::JsonText")]
    pub args: Value,
    #[sqlx(try_from = "String")]
    pub state: CallState,
}

impl CallRow {
    pub fn args(&self) -> Value {
        self.args.clone()
    }
}

pub struct NewCall<'a> {
    pub id: &'a CallId,
    pub task_id: &'a TaskId,
    pub conversation_id: &'a ConversationId,
    pub step: i64,
    pub position: i64,
    pub tool: &'a str,
    pub args: &'a Value,
    pub state: CallState,
}

pub async fn insert(conn: &mut AnyConnection, call: NewCall<'_>) -> anyhow::Result<()> {
    anyhow::ensure!(call.state.may_start_in(), "BUG: a tool call cannot start as {}", call.state);
    let now = now_ms();
    sqlx::query(
        "INSERT INTO tool_calls (id, task_id, conversation_id, step, position, tool, args, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(call.id)
    .bind(call.task_id)
    .bind(call.conversation_id)
    .bind(call.step)
    .bind(call.position)
    .bind(call.tool)
    .bind(call.args.to_string())
    .bind(call.state.as_str())
    .bind(now)
    .bind(now)
    .execute(conn)
    .await
    .with_context(|| format!("failed to record tool call {}", call.id))?;
    Ok(())
}

pub async fn get(db: impl Into<Db<'_>>, id: &CallId) -> anyhow::Result<Option<CallRow>> {
    sqlx::query_as("SELECT id, task_id, conversation_id, step, position, tool, args, state FROM tool_calls WHERE id = $1")
        .bind(id)
        .fetch_optional(db.into().read_few())
        .await
        .context("failed to load tool call")
}

/// The calls the model proposed in one step of a task, in the order it proposed them.
pub async fn for_step(db: impl Into<Db<'_>>, task_id: &TaskId, step: i64) -> anyhow::Result<Vec<CallRow>> {
    sqlx::query_as(
        "SELECT id, task_id, conversation_id, step, position, tool, args, state FROM tool_calls
         WHERE task_id = $1 AND step = $2 ORDER BY position",
    )
    .bind(task_id)
    .bind(step)
    .fetch_all(db.into().read_few())
    .await
    .context("failed to load tool calls")
}

/// Conditional transition: true when the call was in `from` and is now in `to`; an error when the
/// table does not allow the move.
pub async fn transition(
    conn: &mut AnyConnection,
    id: &CallId,
    from: CallState,
    to: CallState,
    args: Option<&Value>,
) -> anyhow::Result<bool> {
    from.transition(to)?;
    let result = sqlx::query("UPDATE tool_calls SET state = $1, args = COALESCE($2, args), updated_at = $3 WHERE id = $4 AND state = $5")
        .bind(to.as_str())
        .bind(args.map(|a| a.to_string()))
        .bind(now_ms())
        .bind(id)
        .bind(from.as_str())
        .execute(conn)
        .await
        .with_context(|| format!("failed to move tool call {id} from {from} to {to}"))?;
    Ok(result.rows_affected() == 1)
}

/// Calls of a task in one of `states`.
pub async fn in_states(db: impl Into<Db<'_>>, task_id: &TaskId, states: &[CallState]) -> anyhow::Result<Vec<CallRow>> {
    let placeholders = (0..states.len()).map(|i| format!("${}", i + 2)).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT id, task_id, conversation_id, step, position, tool, args, state FROM tool_calls
         WHERE task_id = $1 AND state IN ({placeholders}) ORDER BY step, position"
    );
    let mut query = sqlx::query_as(&sql).bind(task_id);
    for s in states {
        query = query.bind(s.as_str());
    }
    query.fetch_all(db.into().read()).await.context("failed to load tool calls")
}
