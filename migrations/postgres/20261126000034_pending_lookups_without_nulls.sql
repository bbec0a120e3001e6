-- The sweeper's partial indexes over pending approvals held every pending approval, also those
-- without a reminder or an escalation (most of them), so each such approval cost two index
-- writes for nothing: one when asked, one when decided (docs/performance-notes.md, "stop 37").
-- The sweeper's queries compare the key with `<=`, which implies it is not null, so they still
-- use these indexes. Twin of migrations/sqlite/20261126000034_pending_lookups_without_nulls.sql.
DROP INDEX approvals_pending_reminder;
DROP INDEX approvals_pending_escalation;
CREATE INDEX approvals_pending_reminder ON approvals (next_reminder_at)
    WHERE state = 'pending' AND next_reminder_at IS NOT NULL;
CREATE INDEX approvals_pending_escalation ON approvals (escalate_at)
    WHERE state = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL;
