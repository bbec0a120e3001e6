-- Failed attempts at driving a task since its last model step: after a few, the turn fails with
-- a message instead of being retried forever (server/src/orchestrator/mod.rs, MAX_FAILED_ATTEMPTS).
ALTER TABLE tasks ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0;
