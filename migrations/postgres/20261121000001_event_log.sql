-- PostgreSQL twin of migrations/sqlite/20261121000001_event_log.sql (same tables, same meaning;
-- integers are BIGINT so they read back as i64).

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    agent       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    last_seq    BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             BIGINT NOT NULL,
    task_id         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    status          TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'canceled')),
    steps           BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX tasks_by_conversation ON tasks (conversation_id, created_at);
CREATE INDEX tasks_by_status ON tasks (status);

CREATE TABLE tool_calls (
    id              TEXT PRIMARY KEY NOT NULL,
    task_id         TEXT NOT NULL REFERENCES tasks(id),
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    step            BIGINT NOT NULL,
    position        BIGINT NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN (
                        'pending_approval', 'approved', 'rejected', 'expired', 'canceled', 'deferred',
                        'executing', 'succeeded', 'failed')),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX tool_calls_by_task ON tool_calls (task_id, step, position);

CREATE TABLE approvals (
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
    timeout_action  TEXT NOT NULL CHECK (timeout_action IN ('reject', 'approve', 'skip', 'abort', 'escalate')),
    escalated_at    BIGINT,
    escalated_by    TEXT,
    created_at      BIGINT NOT NULL,
    deadline        BIGINT NOT NULL,
    decided_at      BIGINT,
    decided_by      TEXT,
    reason          TEXT,
    edited_args     TEXT
);
CREATE INDEX approvals_by_state ON approvals (state, created_at);
CREATE INDEX approvals_pending_deadline ON approvals (deadline) WHERE state = 'pending';
CREATE INDEX approvals_by_task ON approvals (task_id);

CREATE TABLE orders (
    id             BIGINT PRIMARY KEY NOT NULL,
    customer       TEXT NOT NULL,
    item           TEXT NOT NULL,
    amount_cents   BIGINT NOT NULL CHECK (amount_cents >= 0),
    refunded_cents BIGINT NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents),
    status         TEXT NOT NULL CHECK (status IN ('open', 'canceled', 'refunded'))
);
INSERT INTO orders (id, customer, item, amount_cents, status) VALUES
    (1001, 'alice', 'Espresso machine', 24900, 'open'),
    (1002, 'alice', 'Coffee grinder', 8950, 'open'),
    (1003, 'bob', 'Milk frother', 3999, 'open'),
    (1004, 'bob', 'Barista course', 120000, 'open'),
    (1005, 'carol', 'Descaling kit', 1500, 'open'),
    (1006, 'alice', 'Travel mug', 2500, 'open');
