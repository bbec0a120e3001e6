-- Reminders and the escalation timeout of a pending approval, stored so they survive restarts
-- (the sweeper reads them): escalate_at hands it to the admins (the deadline stays);
-- next_reminder_at is when the next reminder is due, every reminder_interval_ms while
-- reminders_left > 0. Twin of migrations/postgres/20261125000015_reminders.sql.
ALTER TABLE approvals ADD COLUMN escalate_at INTEGER;
ALTER TABLE approvals ADD COLUMN next_reminder_at INTEGER;
ALTER TABLE approvals ADD COLUMN reminder_interval_ms INTEGER;
ALTER TABLE approvals ADD COLUMN reminders_left INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN reminders_sent INTEGER NOT NULL DEFAULT 0;
