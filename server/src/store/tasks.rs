//! Tasks: one user turn and everything the agent does for it. `status` is a projection of the
//! task's `task-status` events, written in the same transaction.

use anyhow::Context;
use app::domain::{EventBody, TaskStatus, wire::Task};
use sqlx::{AnyConnection, AnyExecutor};

use super::{
    Write,
    time::{new_id, now_ms, rfc3339},
};

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct TaskRow {
    pub id: String,
    pub conversation_id: String,
    pub status: String,
    pub steps: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// The agent driving it when not the conversation's (a worker's task).
    pub agent: Option<String>,
    /// A worker's task answers this delegating call of its supervisor.
    pub parent_call_id: Option<String>,
}

impl TaskRow {
    pub fn status(&self) -> TaskStatus {
        TaskStatus::parse(&self.status).expect("BUG: the CHECK constraint admits only known statuses")
    }

    pub fn to_wire(&self) -> Task {
        Task {
            id: self.id.clone(),
            conversation_id: self.conversation_id.clone(),
            status: self.status(),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        }
    }
}

const COLUMNS: &str = "id, conversation_id, status, steps, created_at, updated_at, agent, parent_call_id";

pub async fn get(db: impl AnyExecutor<'_>, id: &str) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tasks WHERE id = $1")).bind(id).fetch_optional(db).await.context("failed to load task")
}

/// The conversation's newest task that has not finished, if any.
pub async fn open_in_conversation(db: impl AnyExecutor<'_>, conversation_id: &str) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM tasks WHERE conversation_id = $1 AND status IN ('working', 'input_required')
         ORDER BY created_at DESC LIMIT 1"
    ))
    .bind(conversation_id)
    .fetch_optional(db)
    .await
    .context("failed to find open task")
}

pub async fn ids_with_status(db: impl AnyExecutor<'_>, status: TaskStatus) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar("SELECT id FROM tasks WHERE status = $1").bind(status.as_str()).fetch_all(db).await.context("failed to list tasks")
}

pub async fn insert(conn: &mut AnyConnection, conversation_id: &str) -> anyhow::Result<String> {
    let id = new_id();
    let now = now_ms();
    sqlx::query("INSERT INTO tasks (id, conversation_id, status, created_at, updated_at) VALUES ($1, $2, 'working', $3, $4)")
        .bind(&id)
        .bind(conversation_id)
        .bind(now)
        .bind(now)
        .execute(conn)
        .await
        .context("failed to create task")?;
    Ok(id)
}

/// Starts a worker's task for a supervisor's delegating call, with its `task-status` event.
pub async fn insert_worker(w: &mut Write, conversation_id: &str, agent: &str, parent_call_id: &str) -> anyhow::Result<String> {
    let id = new_id();
    let now = now_ms();
    sqlx::query(
        "INSERT INTO tasks (id, conversation_id, status, created_at, updated_at, agent, parent_call_id) VALUES ($1, $2, 'working', $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(conversation_id)
    .bind(now)
    .bind(now)
    .bind(agent)
    .bind(parent_call_id)
    .execute(&mut *w.tx)
    .await
    .context("failed to create a worker task")?;
    let parent_call_id = Some(parent_call_id.to_owned());
    w.append(conversation_id, EventBody::TaskStatus { task_id: id.clone(), status: TaskStatus::Working, message: None, parent_call_id })
        .await?;
    Ok(id)
}

/// The worker's task answering a delegating call, if one was started.
pub async fn worker_for_call(db: impl AnyExecutor<'_>, call_id: &str) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tasks WHERE parent_call_id = $1"))
        .bind(call_id)
        .fetch_optional(db)
        .await
        .context("failed to find a worker task")
}

/// Ids of the conversation's worker tasks (their events are not the supervisor's transcript).
pub async fn worker_ids(db: impl AnyExecutor<'_>, conversation_id: &str) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar("SELECT id FROM tasks WHERE conversation_id = $1 AND parent_call_id IS NOT NULL")
        .bind(conversation_id)
        .fetch_all(db)
        .await
        .context("failed to list worker tasks")
}

/// Moves the task from one of `from` to `to` and appends the `task-status` event.
/// Returns false (and writes nothing) when the task was not in one of `from`.
pub async fn transition(
    w: &mut Write,
    task: &TaskRow,
    from: &[TaskStatus],
    to: TaskStatus,
    message: Option<String>,
) -> anyhow::Result<bool> {
    let allowed: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
    let placeholders = (0..allowed.len()).map(|i| format!("${}", i + 4)).collect::<Vec<_>>().join(", ");
    let sql = format!("UPDATE tasks SET status = $1, updated_at = $2 WHERE id = $3 AND status IN ({placeholders})");
    let mut query = sqlx::query(&sql).bind(to.as_str()).bind(now_ms()).bind(&task.id);
    for s in &allowed {
        query = query.bind(*s);
    }
    let changed = query.execute(&mut *w.tx).await.context("failed to update task status")?.rows_affected() == 1;
    if changed {
        let parent_call_id = task.parent_call_id.clone();
        w.append(&task.conversation_id, EventBody::TaskStatus { task_id: task.id.clone(), status: to, message, parent_call_id }).await?;
    }
    Ok(changed)
}

/// Counts one more model step, only while the task is still working (an abort stops it).
pub async fn take_step(conn: &mut AnyConnection, task_id: &str) -> anyhow::Result<Option<i64>> {
    sqlx::query_scalar(
        "UPDATE tasks SET steps = steps + 1, failed_attempts = 0, updated_at = $1 WHERE id = $2 AND status = 'working' RETURNING steps",
    )
        .bind(now_ms())
        .bind(task_id)
        .fetch_optional(conn)
        .await
        .context("failed to count a model step")
}

/// Counts one failed attempt at driving the task and returns how many there have been since its
/// last model step (0: the task has finished, nothing to count).
pub async fn count_failed_attempt(w: &mut Write, task_id: &str) -> anyhow::Result<i64> {
    let attempts: Option<i64> = sqlx::query_scalar(
        "UPDATE tasks SET failed_attempts = failed_attempts + 1, updated_at = $1
         WHERE id = $2 AND status IN ('working', 'input_required') RETURNING failed_attempts",
    )
    .bind(now_ms())
    .bind(task_id)
    .fetch_optional(&mut *w.tx)
    .await
    .context("failed to count a failed attempt")?;
    Ok(attempts.unwrap_or(0))
}

/// Tasks a driver should look at: working ones, and unfinished ones with an approved call not yet
/// run or a call left executing by a crash.
pub async fn needing_work(db: impl AnyExecutor<'_>) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT id FROM tasks WHERE status = 'working'
         UNION SELECT DISTINCT c.task_id FROM tool_calls c JOIN tasks t ON t.id = c.task_id
         WHERE c.state IN ('approved', 'executing') AND t.status IN ('working', 'input_required')",
    )
    .fetch_all(db)
    .await
    .context("failed to find tasks needing work")
}

/// Claims the task for `owner` until `until` (ms) unless another owner holds a live lease.
/// With several server processes on one database, only the claimant drives the task.
pub async fn claim(db: impl AnyExecutor<'_>, task_id: &str, owner: &str, now: i64, until: i64) -> anyhow::Result<bool> {
    let result = sqlx::query(
        "UPDATE tasks SET lease_owner = $1, lease_until = $2
         WHERE id = $3 AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until < $4)",
    )
    .bind(owner)
    .bind(until)
    .bind(task_id)
    .bind(now)
    .execute(db)
    .await
    .context("failed to claim a task")?;
    Ok(result.rows_affected() == 1)
}

/// Gives the task up, so any process may drive it next.
pub async fn release(db: impl AnyExecutor<'_>, task_id: &str, owner: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2")
        .bind(task_id)
        .bind(owner)
        .execute(db)
        .await
        .context("failed to release a task")?;
    Ok(())
}

/// Extends every lease `owner` holds (its heartbeat).
pub async fn renew(db: impl AnyExecutor<'_>, owner: &str, until: i64) -> anyhow::Result<()> {
    sqlx::query("UPDATE tasks SET lease_until = $1 WHERE lease_owner = $2")
        .bind(until)
        .bind(owner)
        .execute(db)
        .await
        .context("failed to renew task leases")?;
    Ok(())
}
