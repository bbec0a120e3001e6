-- Each pair of signed decision links issued (docs/security.md, "Decision links"), so that one can
-- be revoked before it expires. The token itself is never stored: it is signed, not looked up.
-- Twin of migrations/sqlite/20261127000037_decision_links.sql.
CREATE TABLE decision_links (
    id TEXT PRIMARY KEY,
    approval_id TEXT NOT NULL,
    decider TEXT NOT NULL,
    issued_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT,
    revoked_by TEXT
);
