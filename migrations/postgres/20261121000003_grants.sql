CREATE TABLE grants (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    tool            TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT,
    max_uses        BIGINT CHECK (max_uses IS NULL OR max_uses > 0),
    uses            BIGINT NOT NULL DEFAULT 0,
    revoked_at      BIGINT,
    revoked_by      TEXT
);
CREATE INDEX grants_by_conversation ON grants (conversation_id, tool);
