-- The `retry` timeout action: an approval nobody decided is asked again with a fresh deadline,
-- retries_left more times (from the gate's max_retries); resent counts the times it was asked
-- again; the timeout_action CHECK gains 'retry'. Twin of migrations/sqlite/20261125000017_retries.sql.
ALTER TABLE approvals ADD COLUMN retries_left BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN resent BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals DROP CONSTRAINT approvals_timeout_action_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_timeout_action_check
    CHECK (timeout_action IN ('reject', 'approve', 'skip', 'abort', 'escalate', 'retry'));
