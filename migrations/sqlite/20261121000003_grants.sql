-- Grants: a human's standing permission for one tool in one conversation ("always allow"),
-- optionally limited in time or number of uses, revocable.
CREATE TABLE grants (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    tool            TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER,
    max_uses        INTEGER CHECK (max_uses IS NULL OR max_uses > 0),
    uses            INTEGER NOT NULL DEFAULT 0,
    revoked_at      INTEGER,
    revoked_by      TEXT
);
CREATE INDEX grants_by_conversation ON grants (conversation_id, tool);
