-- Countersign's schema on SQLite, as one baseline (its twin: migrations/postgres, compared by
-- server/tests/api/schema.rs). Times are Unix milliseconds. A migration that has landed is never
-- edited: later changes are new files beside this one (server/tests/api/migrations.rs holds every
-- file's checksum).

-- The approval engine. Times are Unix milliseconds (INTEGER).

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    agent       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    -- Sequence number of the newest event; bumped in the transaction that appends.
    last_seq    INTEGER NOT NULL DEFAULT 0
);

-- One row per event, never updated: the truth of a conversation.
CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             INTEGER NOT NULL,
    task_id         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    body            TEXT NOT NULL,  -- JSON of domain::EventBody
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

-- Projection: one row per user turn.
CREATE TABLE tasks (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    status          TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'canceled')),
    -- Number of model steps taken; a bound against runaway loops.
    steps           INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX tasks_by_conversation ON tasks (conversation_id, created_at);
CREATE INDEX tasks_by_status ON tasks (status);

-- Projection: one row per proposed tool call, with its execution state.
CREATE TABLE tool_calls (
    id              TEXT PRIMARY KEY NOT NULL,
    task_id         TEXT NOT NULL REFERENCES tasks(id),
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    step            INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,  -- JSON the call runs with (edited args after an edit)
    state           TEXT NOT NULL CHECK (state IN (
                        'pending_approval', 'approved', 'rejected', 'expired', 'canceled', 'deferred',
                        'executing', 'succeeded', 'failed')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX tool_calls_by_task ON tool_calls (task_id, step, position);

-- Projection: the approval queue. State machine enforced by conditional UPDATEs.
CREATE TABLE approvals (
    id              TEXT PRIMARY KEY NOT NULL,
    call_id         TEXT NOT NULL UNIQUE REFERENCES tool_calls(id),
    task_id         TEXT NOT NULL REFERENCES tasks(id),
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    agent           TEXT NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,  -- JSON as proposed
    gate            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    risk            TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high')),
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired', 'canceled', 'deferred')),
    timeout_action  TEXT NOT NULL CHECK (timeout_action IN ('reject', 'approve', 'skip', 'abort', 'escalate')),
    -- Set when the approval was handed to the admins (on demand or by an `escalate` timeout).
    escalated_at    INTEGER,
    escalated_by    TEXT,
    created_at      INTEGER NOT NULL,
    deadline        INTEGER NOT NULL,
    decided_at      INTEGER,
    decided_by      TEXT,
    reason          TEXT,
    edited_args     TEXT
);
CREATE INDEX approvals_by_state ON approvals (state, created_at);
CREATE INDEX approvals_pending_deadline ON approvals (deadline) WHERE state = 'pending';
CREATE INDEX approvals_by_task ON approvals (task_id);

-- The demo domain the built-in tools act on.
CREATE TABLE orders (
    id             INTEGER PRIMARY KEY NOT NULL,
    customer       TEXT NOT NULL,
    item           TEXT NOT NULL,
    amount_cents   INTEGER NOT NULL CHECK (amount_cents >= 0),
    refunded_cents INTEGER NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents),
    status         TEXT NOT NULL CHECK (status IN ('open', 'canceled', 'refunded'))
);
INSERT INTO orders (id, customer, item, amount_cents, status) VALUES
    (1001, 'alice', 'Espresso machine', 24900, 'open'),
    (1002, 'alice', 'Coffee grinder', 8950, 'open'),
    (1003, 'bob', 'Milk frother', 3999, 'open'),
    (1004, 'bob', 'Barista course', 120000, 'open'),
    (1005, 'carol', 'Descaling kit', 1500, 'open'),
    (1006, 'alice', 'Travel mug', 2500, 'open');

-- People: accounts, API tokens, conversation owners, and the hash-chained audit trail.

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL,  -- argon2id PHC string
    role          TEXT NOT NULL CHECK (role IN ('user', 'admin')),
    created_at    INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,  -- SHA-256 of the secret, hex
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

-- Conversations created before accounts existed have no owner: only admins see them.
ALTER TABLE conversations ADD COLUMN owner_id TEXT REFERENCES users(id);
CREATE INDEX conversations_by_owner ON conversations (owner_id, created_at);

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    actor     TEXT NOT NULL,
    entry     TEXT NOT NULL,  -- canonical JSON of the whole entry (sorted keys), which the hash covers
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL   -- SHA-256(prev_hash || entry), hex
);
CREATE INDEX audit_by_kind ON audit_log (kind, id);

-- Append-only: the database refuses changes to written entries.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- Grants: a human's standing permission for one tool in one conversation ("always allow"),
-- optionally limited in time or number of uses, revocable.
CREATE TABLE grants (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    tool            TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER,
    max_uses        INTEGER CHECK (max_uses IS NULL OR max_uses > 0),
    uses            INTEGER NOT NULL DEFAULT 0,
    revoked_at      INTEGER,
    revoked_by      TEXT
);
CREATE INDEX grants_by_conversation ON grants (conversation_id, tool);

-- Conversational confirmation: an approval may be answered by the user's
-- yes/no reply in the chat instead of the card's buttons. Same state machine, same decision event.
ALTER TABLE approvals ADD COLUMN confirm TEXT NOT NULL DEFAULT 'card' CHECK (confirm IN ('card', 'chat'));

-- Sub-agents (supervisor -> worker): a worker's task runs inside the supervisor's
-- conversation, answers one delegating call, and is driven by its own agent.
ALTER TABLE tasks ADD COLUMN agent TEXT;
ALTER TABLE tasks ADD COLUMN parent_call_id TEXT REFERENCES tool_calls(id);
CREATE INDEX tasks_by_parent_call ON tasks (parent_call_id) WHERE parent_call_id IS NOT NULL;

-- Per-task claims: the process driving a task holds a lease on it, so with several server
-- processes on one database each task is driven by one of them at a time. A lease is renewed
-- while the driver works and released when it stops; a crashed holder's lease runs out.
ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until BIGINT;

-- Webhook deliveries, written in the same transaction as the event they announce, so a restart
-- loses none; a delivering process leases a row, so with several replicas each is sent by one.
CREATE TABLE webhook_outbox (
    id              INTEGER PRIMARY KEY,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,  -- the exact JSON that is signed and POSTed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    delivered_at    INTEGER,
    failed_at       INTEGER,        -- gave up after the last attempt
    last_error      TEXT,
    lease_owner     TEXT,
    lease_until     INTEGER,
    created_at      INTEGER NOT NULL
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;

-- Failed attempts at driving a task since its last model step: after a few, the turn fails with
-- a message instead of being retried forever (engine/src/orchestrator/mod.rs, MAX_FAILED_ATTEMPTS).
ALTER TABLE tasks ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0;

-- Fenced task leases: each claim gets its own token; renew, release and every
-- write the driver makes are conditional on it, so a driver that lost its lease changes nothing.
ALTER TABLE tasks ADD COLUMN lease_token TEXT;

-- The audit chain without a global lock in every write (docs/reliability.md): a write transaction
-- stages its entries here; a short chaining transaction moves them into audit_log in order,
-- computing the hashes. (SQLite has one writer and chains in the writing transaction itself; the
-- table keeps both schemas alike.)
CREATE TABLE audit_staging (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    at    INTEGER NOT NULL,
    kind  TEXT NOT NULL,
    actor TEXT NOT NULL,
    entry TEXT NOT NULL
);

-- Counted attempts (logins per user name and per client address, decisions per user) in fixed
-- windows, shared by every replica so N replicas do not allow N times the limit
-- (engine/src/store/limits.rs).
CREATE TABLE attempt_limits (
    key          TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    count        BIGINT NOT NULL
);

-- Signed anchors of the audit chain (engine/src/store/audit_anchors.rs). A 'checkpoint' signs
-- the chain head so a rewrite or a cut tail is detectable; a 'pruned' anchor signs the last
-- entry of a prefix that retention removed, so verification starts from it. The signature is an
-- HMAC with COUNTERSIGN_AUDIT_KEY, which the database does not hold.
CREATE TABLE audit_anchors (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    kind      TEXT NOT NULL CHECK (kind IN ('checkpoint', 'pruned')),
    at        INTEGER NOT NULL,
    entry_id  INTEGER NOT NULL,
    entries   INTEGER NOT NULL,  -- entries in the chain up to and including entry_id
    hash      TEXT NOT NULL,     -- the hash of entry entry_id
    signature TEXT NOT NULL
);
CREATE TRIGGER audit_anchors_no_update BEFORE UPDATE ON audit_anchors
BEGIN SELECT RAISE(ABORT, 'audit_anchors is append-only'); END;
CREATE TRIGGER audit_anchors_no_delete BEFORE DELETE ON audit_anchors
BEGIN SELECT RAISE(ABORT, 'audit_anchors is append-only'); END;

-- Entries may go only once a pruning anchor covers them (retention).
DROP TRIGGER audit_log_no_delete;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.id > COALESCE((SELECT MAX(entry_id) FROM audit_anchors WHERE kind = 'pruned'), 0)
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- What a decision on this approval must include, from its gate at the time it was asked:
-- require_reason = 1: a rejection needs a reason; allow_modification = 0: approving with edited
-- arguments is refused.
ALTER TABLE approvals ADD COLUMN require_reason INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN allow_modification INTEGER NOT NULL DEFAULT 1;

-- Reminders and the escalation timeout of a pending approval, stored so they survive restarts
-- (the sweeper reads them): escalate_at hands it to the admins (the deadline stays);
-- next_reminder_at is when the next reminder is due, every reminder_interval_ms while
-- reminders_left > 0.
ALTER TABLE approvals ADD COLUMN escalate_at INTEGER;
ALTER TABLE approvals ADD COLUMN next_reminder_at INTEGER;
ALTER TABLE approvals ADD COLUMN reminder_interval_ms INTEGER;
ALTER TABLE approvals ADD COLUMN reminders_left INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN reminders_sent INTEGER NOT NULL DEFAULT 0;

-- What a decider reads besides the call: the user's request that led to it, the agent's stated
-- reasoning, and the steps of the turn already done (JSON, domain::wire::ApprovalContext).
ALTER TABLE approvals ADD COLUMN context TEXT;
-- Why the call is risky: factors, consequences, reversibility (JSON, domain::wire::RiskAssessment).
ALTER TABLE approvals ADD COLUMN assessment TEXT;

-- The `retry` timeout action: an approval nobody decided is asked again with a fresh deadline,
-- retries_left more times (from the gate's max_retries); resent counts the times it was asked
-- again. The timeout_action CHECK gains 'retry': SQLite cannot change a CHECK in place, so the
-- table is rebuilt (nothing references approvals).
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

-- Grants for one exact call of one task: the steps of an approved plan (a `plan` gate). A
-- standing grant ("always allow") has neither; a planned step lets through only a call of its
-- tool with exactly these arguments (JSON), in its task, once.
ALTER TABLE grants ADD COLUMN args TEXT;
ALTER TABLE grants ADD COLUMN task_id TEXT;

-- Escalation to a named user or group instead of the admins: the gate's target, kept with the
-- approval when it is asked (`escalation_target`); once escalated, the target's name
-- (`escalated_to`, NULL: the admins) and the people who may decide, as ",bob,carol," so a
-- queue query can match one name (`escalated_members`).
ALTER TABLE approvals ADD COLUMN escalation_target TEXT;
ALTER TABLE approvals ADD COLUMN escalated_to TEXT;
ALTER TABLE approvals ADD COLUMN escalated_members TEXT;

-- Whether the call can be undone (fully / partially / irreversible), from its risk assessment,
-- as a column so the queue can filter and sort by it (GET /api/approvals?reversibility=…&order=reversibility).
-- Older rows take it from their stored assessment (serialized by serde_json, compact).
ALTER TABLE approvals ADD COLUMN reversibility TEXT;
UPDATE approvals SET reversibility = CASE
    WHEN assessment LIKE '%"reversibility":"irreversible"%' THEN 'irreversible'
    WHEN assessment LIKE '%"reversibility":"fully"%' THEN 'fully'
    ELSE 'partially' END
  WHERE assessment IS NOT NULL;

-- A conversation's folded view as of `last_seq` (JSON of domain::ConversationView), so a
-- reload folds only the events after it (engine/src/store/snapshots.rs). A cache, never the
-- truth: a snapshot of another `fold_version` is ignored and rebuilt from the events.
CREATE TABLE view_snapshots (
    conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id),
    fold_version    INTEGER NOT NULL,
    last_seq        INTEGER NOT NULL,
    view            TEXT NOT NULL,
    updated_at      INTEGER NOT NULL
);

-- The page of a conversation's view a reload shows (its last `page_items` items, waiting cards,
-- their turns; app/src/domain/page.rs) as of `last_seq`, so a reload reads one small row and folds
-- only the events after it (engine/src/store/snapshots.rs). A cache like view_snapshots: one of
-- another `fold_version` or page size is ignored and rebuilt.
CREATE TABLE view_pages (
    conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id),
    fold_version    INTEGER NOT NULL,
    page_items      INTEGER NOT NULL,
    last_seq        INTEGER NOT NULL,
    view            TEXT NOT NULL,
    updated_at      INTEGER NOT NULL
);

-- Four-eyes, from the approval's gate at the time it was asked: separate_requester = 1 means the
-- user whose conversation made the call may not approve it.
ALTER TABLE approvals ADD COLUMN separate_requester INTEGER NOT NULL DEFAULT 0;

-- Lookups that ran through every pending approval, so that each got slower as approvals waited
-- (with tens of thousands waiting, every read and every sweep paid for all of them; docs/performance-notes.md):
-- a conversation's approvals (its pending count on every conversation read, earlier refusals of a
-- call), and the sweeper's due reminders and escalations.
CREATE INDEX approvals_by_conversation ON approvals (conversation_id, state);
CREATE INDEX approvals_pending_reminder ON approvals (next_reminder_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_escalation ON approvals (escalate_at) WHERE state = 'pending' AND escalated_at IS NULL;

-- Who may decide: a gate's `approvers` as they stood when the approval was asked
-- (JSON of domain::rules::Approvers) and their people as ",a,b," for the queue's lookups;
-- quorum: how many distinct people must approve, and who did so far (JSON array of names).
-- Groups that admins manage through the API (groups in the configuration file stay there).
ALTER TABLE approvals ADD COLUMN approvers TEXT;
ALTER TABLE approvals ADD COLUMN approver_members TEXT;
ALTER TABLE approvals ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]';

CREATE TABLE user_groups (
    name       TEXT PRIMARY KEY NOT NULL COLLATE NOCASE,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL
);

CREATE TABLE user_group_members (
    group_name TEXT NOT NULL REFERENCES user_groups(name) ON DELETE CASCADE COLLATE NOCASE,
    username   TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (group_name, username)
);

-- Delegation: a person lets another decide in their place for a period (out of
-- office) — wherever a gate's approvers or an escalation name them. Names as the accounts spell
-- them.
CREATE TABLE delegations (
    id         TEXT PRIMARY KEY NOT NULL,
    from_user  TEXT NOT NULL,
    to_user    TEXT NOT NULL,
    starts_at  INTEGER NOT NULL,
    ends_at    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at INTEGER,
    revoked_by TEXT
);
CREATE INDEX delegations_by_delegate ON delegations (to_user, ends_at);

-- Secrets the server makes for itself once and every replica shares (e.g. the key decision links
-- are signed with, when COUNTERSIGN_LINK_KEY is not set).
CREATE TABLE server_secrets (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

-- Email notifications: a person's address, and for each approval whom its gate
-- notifies and where (JSON [[person, address], ...]), so reminders re-send to the same people.
-- Emails wait in the webhook outbox as mailto: deliveries (leased, retried, sent once).
ALTER TABLE users ADD COLUMN email TEXT;
ALTER TABLE approvals ADD COLUMN notify TEXT;

-- The Slack-compatible message each approval was posted as, so it can be updated when
-- the approval is decided anywhere.
CREATE TABLE slack_messages (
    approval_id TEXT PRIMARY KEY NOT NULL,
    channel     TEXT NOT NULL,
    ts          TEXT NOT NULL
);

-- Calls a shadow gate (mode = "shadow") would have stopped and that ran unasked, for
-- the queue's Decided tab.
CREATE TABLE shadow_hits (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    gate            TEXT NOT NULL,
    tool            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    at              INTEGER NOT NULL
);
CREATE INDEX shadow_hits_by_time ON shadow_hits (at);

-- Policy versions: the version (a hash) of the agent configuration that asked each
-- approval, that was in force when it was decided, and that made each grant.
ALTER TABLE approvals ADD COLUMN policy_version TEXT;
ALTER TABLE approvals ADD COLUMN decided_policy_version TEXT;
ALTER TABLE grants ADD COLUMN policy_version TEXT;

-- The MCP approval gateway: a call an outside client proposes is a one-step task of a
-- conversation of the client's user; `seen_at` / `gone_at` say whether the client still waits for
-- it (an approved call whose client is gone is not run, docs/mcp-gateway.md). Each client (an API
-- token) has one conversation per agent, whose id is derived from them (server/src/protocols/mcp.rs).
CREATE TABLE client_calls (
    task_id         TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    client          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,
    seen_at         INTEGER NOT NULL,
    gone_at         INTEGER
);
-- The name a client gave in MCP's `initialize` (clientInfo.name), kept with its credential: the
-- gateway is stateless, so later requests say only which token they carry.
CREATE TABLE client_names (
    user_id         TEXT NOT NULL,
    client_key      TEXT NOT NULL,
    name            TEXT NOT NULL,
    PRIMARY KEY (user_id, client_key)
);

-- One statement per appended event (fewer round trips inside a write): the event takes
-- its conversation's next sequence number in its own INSERT (store/events.rs), and this trigger
-- moves the conversation's counter along in the same statement. SQLite's one writer orders it.
-- PostgreSQL does the same in one statement without a trigger (an UPDATE … RETURNING in a CTE,
-- which also takes the conversation's row lock), so its baseline has no such trigger.
CREATE TRIGGER events_take_seq AFTER INSERT ON events
BEGIN
    UPDATE conversations SET last_seq = NEW.seq WHERE id = NEW.conversation_id;
END;

-- The sweeper's partial indexes over pending approvals held every pending approval, also those
-- without a reminder or an escalation (most of them), so each such approval cost two index
-- writes for nothing: one when asked, one when decided (docs/performance-notes.md, "The read path").
-- The sweeper's queries compare the key with `<=`, which implies it is not null, so they still
-- use these indexes.
DROP INDEX approvals_pending_reminder;
DROP INDEX approvals_pending_escalation;
CREATE INDEX approvals_pending_reminder ON approvals (next_reminder_at)
    WHERE state = 'pending' AND next_reminder_at IS NOT NULL;
CREATE INDEX approvals_pending_escalation ON approvals (escalate_at)
    WHERE state = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL;

-- A grant covers only calls that the same gate, for the same agent, under the same configuration
-- version would stop (docs/security.md): it records the gate and the agent, and optionally bounds
-- on the arguments (JSON: {"exact": args} or {"at_most": {"field": number}}). Grants from before
-- name no gate, so they cover nothing.
-- approvals.grantable = 0: its gate may not be approved "for good" (approvers, quorum, four-eyes,
-- no edits or a required reason, unless the gate says grantable = true).
-- approvals.approved_people: who acted for each counted approval of a quorum (the person at the
-- keyboard, where approved_by holds whom they decided as), so a person counts once.
ALTER TABLE grants ADD COLUMN gate TEXT;
ALTER TABLE grants ADD COLUMN agent TEXT;
ALTER TABLE grants ADD COLUMN bounds TEXT;
ALTER TABLE approvals ADD COLUMN grantable INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN approved_people TEXT NOT NULL DEFAULT '[]';

-- What an API token may do (docs/security.md, "Tokens"): its scopes, names separated by spaces,
-- among read, decide and call. Tokens from before keep every right they had.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read decide call';

-- Each pair of signed decision links issued (docs/security.md, "Decision links"), so that one can
-- be revoked before it expires. The token itself is never stored: it is signed, not looked up.
CREATE TABLE decision_links (
    id TEXT PRIMARY KEY,
    approval_id TEXT NOT NULL,
    decider TEXT NOT NULL,
    issued_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    revoked_by TEXT
);
