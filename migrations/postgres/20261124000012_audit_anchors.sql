-- Signed anchors of the audit chain (server/src/store/audit_anchors.rs). A 'checkpoint' signs
-- the chain head so a rewrite or a cut tail is detectable; a 'pruned' anchor signs the last
-- entry of a prefix that retention removed, so verification starts from it. The signature is an
-- HMAC with COUNTERSIGN_AUDIT_KEY, which the database does not hold.
CREATE TABLE audit_anchors (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind      TEXT NOT NULL CHECK (kind IN ('checkpoint', 'pruned')),
    at        BIGINT NOT NULL,
    entry_id  BIGINT NOT NULL,
    entries   BIGINT NOT NULL,  -- entries in the chain up to and including entry_id
    hash      TEXT NOT NULL,    -- the hash of entry entry_id
    signature TEXT NOT NULL
);

CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER audit_anchors_no_change BEFORE UPDATE OR DELETE ON audit_anchors FOR EACH ROW EXECUTE FUNCTION append_only();
-- TRUNCATE skips row triggers: each table refuses it with a statement trigger.
CREATE TRIGGER audit_anchors_no_truncate BEFORE TRUNCATE ON audit_anchors FOR EACH STATEMENT EXECUTE FUNCTION append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION append_only();

-- Entries may go only once a pruning anchor covers them (retention).
CREATE FUNCTION audit_log_delete_pruned_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.id > COALESCE((SELECT max(entry_id) FROM audit_anchors WHERE kind = 'pruned'), 0) THEN
        RAISE EXCEPTION 'audit_log is append-only';
    END IF;
    RETURN OLD;
END $$;
DROP TRIGGER audit_log_no_delete ON audit_log;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_delete_pruned_only();
