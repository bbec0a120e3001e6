-- A grant covers only calls that the same gate, for the same agent, under the same configuration
-- version would stop (docs/security.md): it records the gate and the agent, and optionally bounds
-- on the arguments (JSON: {"exact": args} or {"at_most": {"field": number}}). Grants from before
-- name no gate, so they cover nothing.
-- approvals.grantable = 0: its gate may not be approved "for good" (approvers, quorum, four-eyes,
-- no edits or a required reason, unless the gate says grantable = true).
-- approvals.approved_people: who acted for each counted approval of a quorum (the person at the
-- keyboard, where approved_by holds whom they decided as), so a person counts once.
-- Twin of migrations/sqlite/20261127000035_bound_grants.sql.
ALTER TABLE grants ADD COLUMN gate TEXT;
ALTER TABLE grants ADD COLUMN agent TEXT;
ALTER TABLE grants ADD COLUMN bounds TEXT;
ALTER TABLE approvals ADD COLUMN grantable BIGINT NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN approved_people TEXT NOT NULL DEFAULT '[]';
