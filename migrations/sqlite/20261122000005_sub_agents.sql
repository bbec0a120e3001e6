-- Sub-agents (seed 001's supervisor -> worker): a worker's task runs inside the supervisor's
-- conversation, answers one delegating call, and is driven by its own agent.
ALTER TABLE tasks ADD COLUMN agent TEXT;
ALTER TABLE tasks ADD COLUMN parent_call_id TEXT REFERENCES tool_calls(id);
CREATE INDEX tasks_by_parent_call ON tasks (parent_call_id) WHERE parent_call_id IS NOT NULL;
