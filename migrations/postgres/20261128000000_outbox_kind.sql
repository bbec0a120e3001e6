-- One outbox for every channel, with what each row delivers as a column instead of a prefix of
-- its URL: `kind` is webhook, email or slack; `target` is the webhook's URL, the email address,
-- or the Slack action (post, update). One worker sends them all (engine/src/delivery.rs).
ALTER TABLE webhook_outbox RENAME TO outbox;
ALTER TABLE outbox RENAME COLUMN url TO target;
ALTER TABLE outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'email', 'slack'));
UPDATE outbox SET kind = 'email', target = substr(target, 8) WHERE target LIKE 'mailto:%';
UPDATE outbox SET kind = 'slack', target = substr(target, 7) WHERE target LIKE 'slack:%';
DROP INDEX webhook_outbox_due;
CREATE INDEX outbox_due ON outbox (kind, next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
