-- The `retry` timeout action: an approval nobody decided is asked again with a fresh deadline,
-- retries_left more times (from the gate's max_retries); resent counts the times it was asked
-- again. The timeout_action CHECK gains 'retry': SQLite cannot change a CHECK in place, so the
-- table is rebuilt (nothing references approvals). Twin of
-- migrations/postgres/20261125000017_retries.sql.
CREATE TABLE approvals_new (
    id              TEXT PRIMARY KEY NOT NULL,
    call_id         TEXT NOT NULL UNIQUE REFERENCES tool_calls(id),
    task_id         TEXT NOT NULL REFERENCES tasks(id),
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    agent           TEXT NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,
    gate            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    risk            TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high')),
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired', 'canceled', 'deferred')),
    timeout_action  TEXT NOT NULL CHECK (timeout_action IN ('reject', 'approve', 'skip', 'abort', 'escalate', 'retry')),
    escalated_at    INTEGER,
    escalated_by    TEXT,
    created_at      INTEGER NOT NULL,
    deadline        INTEGER NOT NULL,
    decided_at      INTEGER,
    decided_by      TEXT,
    reason          TEXT,
    edited_args     TEXT,
    confirm         TEXT NOT NULL DEFAULT 'card' CHECK (confirm IN ('card', 'chat')),
    require_reason  INTEGER NOT NULL DEFAULT 0,
    allow_modification INTEGER NOT NULL DEFAULT 1,
    escalate_at     INTEGER,
    next_reminder_at INTEGER,
    reminder_interval_ms INTEGER,
    reminders_left  INTEGER NOT NULL DEFAULT 0,
    reminders_sent  INTEGER NOT NULL DEFAULT 0,
    context         TEXT,
    assessment      TEXT,
    retries_left    INTEGER NOT NULL DEFAULT 0,
    resent          INTEGER NOT NULL DEFAULT 0
);
INSERT INTO approvals_new (id, call_id, task_id, conversation_id, agent, tool, args, gate, summary, risk, state,
        timeout_action, escalated_at, escalated_by, created_at, deadline, decided_at, decided_by, reason, edited_args,
        confirm, require_reason, allow_modification, escalate_at, next_reminder_at, reminder_interval_ms,
        reminders_left, reminders_sent, context, assessment)
    SELECT id, call_id, task_id, conversation_id, agent, tool, args, gate, summary, risk, state,
        timeout_action, escalated_at, escalated_by, created_at, deadline, decided_at, decided_by, reason, edited_args,
        confirm, require_reason, allow_modification, escalate_at, next_reminder_at, reminder_interval_ms,
        reminders_left, reminders_sent, context, assessment
    FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_new RENAME TO approvals;
CREATE INDEX approvals_by_state ON approvals (state, created_at);
CREATE INDEX approvals_pending_deadline ON approvals (deadline) WHERE state = 'pending';
CREATE INDEX approvals_by_task ON approvals (task_id);
