-- PostgreSQL twin of migrations/sqlite/20261122000007_webhook_outbox.sql.
CREATE TABLE webhook_outbox (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    delivered_at    BIGINT,
    failed_at       BIGINT,
    last_error      TEXT,
    lease_owner     TEXT,
    lease_until     BIGINT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
