-- Delegation (issue 17): a person lets another decide in their place for a period (out of
-- office) — wherever a gate's approvers or an escalation name them. Names as the accounts spell
-- them. Twin of migrations/postgres/20261126000026_delegations.sql.
CREATE TABLE delegations (
    id         TEXT PRIMARY KEY NOT NULL,
    from_user  TEXT NOT NULL,
    to_user    TEXT NOT NULL,
    starts_at  INTEGER NOT NULL,
    ends_at    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at INTEGER,
    revoked_by TEXT
);
CREATE INDEX delegations_by_delegate ON delegations (to_user, ends_at);
