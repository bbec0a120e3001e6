-- Grants for one exact call of one task: the steps of an approved plan (a `plan` gate). A
-- standing grant ("always allow") has neither; a planned step lets through only a call of its
-- tool with exactly these arguments (JSON), in its task, once.
-- Twin of migrations/postgres/20261125000018_plan_grants.sql.
ALTER TABLE grants ADD COLUMN args TEXT;
ALTER TABLE grants ADD COLUMN task_id TEXT;
