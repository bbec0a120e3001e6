-- Webhook deliveries, written in the same transaction as the event they announce, so a restart
-- loses none; a delivering process leases a row, so with several replicas each is sent by one.
CREATE TABLE webhook_outbox (
    id              INTEGER PRIMARY KEY,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,  -- the exact JSON that is signed and POSTed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    delivered_at    INTEGER,
    failed_at       INTEGER,        -- gave up after the last attempt
    last_error      TEXT,
    lease_owner     TEXT,
    lease_until     INTEGER,
    created_at      INTEGER NOT NULL
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
