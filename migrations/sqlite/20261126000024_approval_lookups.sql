-- Lookups that ran through every pending approval, so that each got slower as approvals waited
-- (with tens of thousands waiting, every read and every sweep paid for all of them; docs/performance-notes.md):
-- a conversation's approvals (its pending count on every conversation read, earlier refusals of a
-- call), and the sweeper's due reminders and escalations. Twin of
-- migrations/postgres/20261126000024_approval_lookups.sql.
CREATE INDEX approvals_by_conversation ON approvals (conversation_id, state);
CREATE INDEX approvals_pending_reminder ON approvals (next_reminder_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_escalation ON approvals (escalate_at) WHERE state = 'pending' AND escalated_at IS NULL;
