-- People (issue 5): accounts, API tokens, conversation owners, and the hash-chained audit trail.

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL,  -- argon2id PHC string
    role          TEXT NOT NULL CHECK (role IN ('user', 'admin')),
    created_at    INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,  -- SHA-256 of the secret, hex
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

-- Conversations created before accounts existed have no owner: only admins see them.
ALTER TABLE conversations ADD COLUMN owner_id TEXT REFERENCES users(id);
CREATE INDEX conversations_by_owner ON conversations (owner_id, created_at);

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    actor     TEXT NOT NULL,
    entry     TEXT NOT NULL,  -- canonical JSON of the whole entry (sorted keys), which the hash covers
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL   -- SHA-256(prev_hash || entry), hex
);
CREATE INDEX audit_by_kind ON audit_log (kind, id);

-- Append-only: the database refuses changes to written entries.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
