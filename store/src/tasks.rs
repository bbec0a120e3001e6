//! Tasks: one user turn and everything the agent does for it. `status` is a projection of the
//! task's `task-status` events, written in the same transaction.

use super::Db;
use anyhow::Context;
use domain::{CallId, ConversationId, TaskId};
use domain::{EventBody, Machine, TaskStatus, wire::Task};
use sqlx::AnyConnection;

use super::{Backend, Write};
use clock::{new_id, now_ms, rfc3339};

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct TaskRow {
    pub id: TaskId,
    pub conversation_id: ConversationId,
    #[sqlx(try_from = "String")]
    pub status: TaskStatus,
    pub steps: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// The agent driving it when not the conversation's (a worker's task).
    pub agent: Option<String>,
    /// A worker's task answers this delegating call of its supervisor.
    pub parent_call_id: Option<CallId>,
    /// The credential that started it, as `server::auth::Credential` names it (`token:<id>`,
    /// `session:<digest>`); a worker's task has its supervisor's. None for a task started by no
    /// credential, or before this was kept. A token that may only call stops only the tasks it
    /// started (docs/security.md, "Tokens").
    pub started_by: Option<String>,
}

impl TaskRow {
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    pub fn to_wire(&self) -> Task {
        Task {
            id: self.id.clone(),
            conversation_id: self.conversation_id.clone(),
            status: self.status(),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
            summary: None,
        }
    }
}

const COLUMNS: &str = "id, conversation_id, status, steps, created_at, updated_at, agent, parent_call_id, started_by";

/// [`TaskRow`]'s columns as `alias.column`, for a query that joins `tasks AS alias` to another table.
pub(super) fn columns_of(alias: &str) -> String {
    COLUMNS.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}

pub async fn get(db: impl Into<Db<'_>>, id: &TaskId) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tasks WHERE id = $1"))
        .bind(id)
        .fetch_optional(db.into().read_few())
        .await
        .context("failed to load task")
}

/// The conversation's newest task that has not finished, if any.
pub async fn open_in_conversation(db: impl Into<Db<'_>>, conversation_id: &ConversationId) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM tasks WHERE conversation_id = $1 AND status IN ('working', 'input_required')
         ORDER BY created_at DESC LIMIT 1"
    ))
    .bind(conversation_id)
    .fetch_optional(db.into().read())
    .await
    .context("failed to find open task")
}

pub async fn ids_with_status(db: impl Into<Db<'_>>, status: TaskStatus) -> anyhow::Result<Vec<TaskId>> {
    sqlx::query_scalar("SELECT id FROM tasks WHERE status = $1")
        .bind(status.as_str())
        .fetch_all(db.into().read())
        .await
        .context("failed to list tasks")
}

/// Starts a task of `conversation_id`, working, with `steps` model steps taken (1 for a client's
/// call recorded the short way, whose one step is the call); its row as stored (no read back).
/// `started_by`: the credential that starts it ([`TaskRow::started_by`]).
pub async fn insert(
    conn: &mut AnyConnection,
    conversation_id: &ConversationId,
    steps: i64,
    started_by: Option<&str>,
) -> anyhow::Result<TaskRow> {
    let id: TaskId = new_id();
    let now = now_ms();
    sqlx::query(
        "INSERT INTO tasks (id, conversation_id, status, steps, created_at, updated_at, started_by) VALUES ($1, $2, 'working', $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(conversation_id)
    .bind(steps)
    .bind(now)
    .bind(now)
    .bind(started_by)
    .execute(conn)
    .await
    .context("failed to create task")?;
    let conversation_id = conversation_id.to_owned();
    Ok(TaskRow {
        id,
        conversation_id,
        status: TaskStatus::Working,
        steps,
        created_at: now,
        updated_at: now,
        agent: None,
        parent_call_id: None,
        started_by: started_by.map(str::to_owned),
    })
}

/// Starts a worker's task for a supervisor's delegating call, with its `task-status` event. It
/// was started by whoever started its supervisor's task (`started_by`, copied from that task).
pub async fn insert_worker(
    w: &mut Write,
    conversation_id: &ConversationId,
    agent: &str,
    parent_call_id: &CallId,
) -> anyhow::Result<TaskId> {
    let id: TaskId = new_id();
    let now = now_ms();
    sqlx::query(
        "INSERT INTO tasks (id, conversation_id, status, created_at, updated_at, agent, parent_call_id, started_by)
         VALUES ($1, $2, 'working', $3, $4, $5, $6,
                 (SELECT s.started_by FROM tool_calls c JOIN tasks s ON s.id = c.task_id WHERE c.id = $6))",
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
pub async fn worker_for_call(db: impl Into<Db<'_>>, call_id: &CallId) -> anyhow::Result<Option<TaskRow>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tasks WHERE parent_call_id = $1"))
        .bind(call_id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to find a worker task")
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
    for &state in from {
        state.transition(to)?;
    }
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

/// Counts one more model step, only while the task is still working (an abort stops it), as a
/// compare-and-set on the step number the driver read before asking the model: a reply to a step
/// someone else already took is dropped.
pub async fn take_step(conn: &mut AnyConnection, task_id: &TaskId, expected_steps: i64) -> anyhow::Result<Option<i64>> {
    sqlx::query_scalar(
        "UPDATE tasks SET steps = steps + 1, failed_attempts = 0, updated_at = $1
         WHERE id = $2 AND status = 'working' AND steps = $3 RETURNING steps",
    )
    .bind(now_ms())
    .bind(task_id)
    .bind(expected_steps)
    .fetch_optional(conn)
    .await
    .context("failed to count a model step")
}

/// Counts one failed attempt at driving the task and returns how many there have been since its
/// last model step (0: the task has finished, nothing to count).
pub async fn count_failed_attempt(w: &mut Write, task_id: &TaskId) -> anyhow::Result<i64> {
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
pub async fn needing_work(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<TaskId>> {
    sqlx::query_scalar(
        "SELECT id FROM tasks WHERE status = 'working'
         UNION SELECT DISTINCT c.task_id FROM tool_calls c JOIN tasks t ON t.id = c.task_id
         WHERE c.state IN ('approved', 'executing') AND t.status IN ('working', 'input_required')",
    )
    .fetch_all(db.into().read())
    .await
    .context("failed to find tasks needing work")
}

/// One driver's claim on a task: the fencing token every write of that driver is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub task_id: TaskId,
    pub token: String,
}

/// The database's clock in Unix milliseconds, as SQL: lease times never compare one host's
/// clock with another's.
pub fn db_now_ms(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
        Backend::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
    }
}

/// Claims the task for one driver of `owner` (this process) for `lease_ms`, unless a live lease
/// is held, by anyone: a second driver in the same process gets no claim either. Returns the
/// lease, with a token of its own, when claimed.
pub async fn claim(db: impl Into<Db<'_>>, backend: Backend, task_id: &TaskId, owner: &str, lease_ms: i64) -> anyhow::Result<Option<Lease>> {
    let token = new_id();
    let now = db_now_ms(backend);
    let holder_gone = match backend {
        // Each process names its connections after itself (`Store::connect`); a process that
        // died has none left, so its leases need not run out first.
        Backend::Postgres => "OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = tasks.lease_owner)",
        // One server process per SQLite file: its leases are dropped when it starts
        // (`forget_leases_at_start_up`).
        Backend::Sqlite => "",
    };
    let result = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = $1, lease_token = $2, lease_until = {now} + $3
         WHERE id = $4 AND (lease_token IS NULL OR lease_until IS NULL OR lease_until < {now} {holder_gone})"
    ))
    .bind(owner)
    .bind(&token)
    .bind(lease_ms)
    .bind(task_id)
    .execute(db.into().write())
    .await
    .context("failed to claim a task")?;
    Ok((result.rows_affected() == 1).then(|| Lease { task_id: task_id.to_owned(), token }))
}

/// SQLite at start-up: the leases in the file belong to a server process that is gone (a SQLite
/// database has one), so the tasks they held resume at once instead of after the lease. Should a
/// second process share the file after all, its drivers only lose their leases: their writes are
/// fenced, so the task moves on here and nothing is done twice. Returns how many were dropped.
pub async fn forget_leases_at_start_up(db: impl Into<Db<'_>>) -> anyhow::Result<u64> {
    let result = sqlx::query("UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL")
        .execute(db.into().write())
        .await
        .context("failed to drop the leases of a previous run")?;
    Ok(result.rows_affected())
}

/// Gives the task up, so any driver may claim it next; does nothing if the lease is not ours.
pub async fn release(db: impl Into<Db<'_>>, lease: &Lease) -> anyhow::Result<()> {
    sqlx::query("UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2")
        .bind(&lease.task_id)
        .bind(&lease.token)
        .execute(db.into().write())
        .await
        .context("failed to release a task")?;
    Ok(())
}

/// Extends the leases of `owner`'s live drivers (its heartbeat). A lease that already ran out is
/// not revived: another process may have claimed the task since.
pub async fn renew(db: impl Into<Db<'_>>, backend: Backend, owner: &str, lease_ms: i64) -> anyhow::Result<()> {
    let now = db_now_ms(backend);
    // PostgreSQL: a row another transaction holds (a frozen replica's write, this driver's own
    // commit) is skipped this round instead of stalling every other renewal behind it.
    let skip_locked = match backend {
        Backend::Postgres => "AND id IN (SELECT id FROM tasks WHERE lease_owner = $2 ORDER BY id FOR UPDATE SKIP LOCKED)",
        Backend::Sqlite => "",
    };
    sqlx::query(&format!(
        "UPDATE tasks SET lease_until = {now} + $1
         WHERE lease_owner = $2 AND lease_token IS NOT NULL AND lease_until >= {now} {skip_locked}"
    ))
    .bind(lease_ms)
    .bind(owner)
    .execute(db.into().write())
    .await
    .context("failed to renew task leases")?;
    Ok(())
}

/// Like [`check_held`], and gives the lease up in the same statement: the check and the release
/// of a driver's last write. The row stays locked until the commit on PostgreSQL, as with
/// `check_held`'s `FOR SHARE`.
pub async fn release_held(conn: &mut AnyConnection, backend: Backend, lease: &Lease) -> anyhow::Result<()> {
    let now = db_now_ms(backend);
    let released = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_until = NULL
         WHERE id = $1 AND lease_token = $2 AND lease_until >= {now}"
    ))
    .bind(&lease.task_id)
    .bind(&lease.token)
    .execute(conn)
    .await
    .context("failed to release a task lease")?;
    match released.rows_affected() {
        1 => Ok(()),
        _ => Err(crate::LeaseLost(lease.task_id.clone()).into()),
    }
}

/// Fails with [`crate::Error::LeaseLost`] unless `lease` is still live and this driver's, inside the write
/// transaction that is about to commit. It stays so until the commit: SQLite has one writer, and
/// on PostgreSQL the row lock taken here makes a concurrent claim wait for the commit.
pub async fn check_held(conn: &mut AnyConnection, backend: Backend, lease: &Lease) -> anyhow::Result<()> {
    let now = db_now_ms(backend);
    let lock = match backend {
        Backend::Postgres => "FOR SHARE",
        Backend::Sqlite => "",
    };
    let held: Option<i64> =
        sqlx::query_scalar(&format!("SELECT 1 FROM tasks WHERE id = $1 AND lease_token = $2 AND lease_until >= {now} {lock}"))
            .bind(&lease.task_id)
            .bind(&lease.token)
            .fetch_optional(conn)
            .await
            .context("failed to check a task lease")?;
    match held {
        Some(_) => Ok(()),
        None => Err(crate::LeaseLost(lease.task_id.clone()).into()),
    }
}
