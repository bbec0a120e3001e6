-- Signed anchors of the audit chain (server/src/store/audit_anchors.rs). A 'checkpoint' signs
-- the chain head so a rewrite or a cut tail is detectable; a 'pruned' anchor signs the last
-- entry of a prefix that retention removed, so verification starts from it. The signature is an
-- HMAC with COUNTERSIGN_AUDIT_KEY, which the database does not hold.
CREATE TABLE audit_anchors (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    kind      TEXT NOT NULL CHECK (kind IN ('checkpoint', 'pruned')),
    at        INTEGER NOT NULL,
    entry_id  INTEGER NOT NULL,
    entries   INTEGER NOT NULL,  -- entries in the chain up to and including entry_id
    hash      TEXT NOT NULL,     -- the hash of entry entry_id
    signature TEXT NOT NULL
);
CREATE TRIGGER audit_anchors_no_update BEFORE UPDATE ON audit_anchors
BEGIN SELECT RAISE(ABORT, 'audit_anchors is append-only'); END;
CREATE TRIGGER audit_anchors_no_delete BEFORE DELETE ON audit_anchors
BEGIN SELECT RAISE(ABORT, 'audit_anchors is append-only'); END;

-- Entries may go only once a pruning anchor covers them (retention).
DROP TRIGGER audit_log_no_delete;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.id > COALESCE((SELECT MAX(entry_id) FROM audit_anchors WHERE kind = 'pruned'), 0)
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
