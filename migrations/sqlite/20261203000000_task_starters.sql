-- tasks.started_by: the credential that started the task, as server/src/auth/mod.rs `Credential`
-- names it (`token:<id>`, `session:<digest>`), so that a token that may only call stops the tasks
-- it started and no others, not even in a conversation it opened (docs/security.md, "Tokens").
-- Tasks from before this column have none: no such token stops them.
ALTER TABLE tasks ADD COLUMN started_by TEXT;
