-- Escalation to a named user or group instead of the admins: the gate's target, kept with the
-- approval when it is asked (`escalation_target`); once escalated, the target's name
-- (`escalated_to`, NULL: the admins) and the people who may decide, as ",bob,carol," so a
-- queue query can match one name (`escalated_members`).
-- Twin of migrations/sqlite/20261125000019_escalation_targets.sql.
ALTER TABLE approvals ADD COLUMN escalation_target TEXT;
ALTER TABLE approvals ADD COLUMN escalated_to TEXT;
ALTER TABLE approvals ADD COLUMN escalated_members TEXT;
