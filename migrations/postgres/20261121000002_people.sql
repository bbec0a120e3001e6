-- PostgreSQL twin of migrations/sqlite/20261121000002_people.sql. User names are unique without
-- regard to case (SQLite's COLLATE NOCASE) through an index on lower(username).

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    username      TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('user', 'admin')),
    created_at    BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_by_name ON users (lower(username));

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

ALTER TABLE conversations ADD COLUMN owner_id TEXT REFERENCES users(id);
CREATE INDEX conversations_by_owner ON conversations (owner_id, created_at);

CREATE TABLE audit_log (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        BIGINT NOT NULL,
    kind      TEXT NOT NULL,
    actor     TEXT NOT NULL,
    entry     TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE INDEX audit_by_kind ON audit_log (kind, id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
