-- Policy versions (issue 17): the version (a hash) of the agent configuration that asked each
-- approval, that was in force when it was decided, and that made each grant.
-- Twin of migrations/sqlite/20261126000031_policy_versions.sql.
ALTER TABLE approvals ADD COLUMN policy_version TEXT;
ALTER TABLE approvals ADD COLUMN decided_policy_version TEXT;
ALTER TABLE grants ADD COLUMN policy_version TEXT;
