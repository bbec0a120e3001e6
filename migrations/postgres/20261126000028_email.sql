-- Email notifications (issue 17): a person's address, and for each approval whom its gate
-- notifies and where (JSON [[person, address], ...]), so reminders re-send to the same people.
-- Emails wait in the webhook outbox as mailto: deliveries (leased, retried, sent once).
-- Twin of migrations/sqlite/20261126000028_email.sql.
ALTER TABLE users ADD COLUMN email TEXT;
ALTER TABLE approvals ADD COLUMN notify TEXT;
