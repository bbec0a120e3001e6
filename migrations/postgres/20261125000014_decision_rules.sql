-- What a decision on this approval must include, from its gate at the time it was asked:
-- require_reason = 1: a rejection needs a reason; allow_modification = 0: approving with edited
-- arguments is refused. Twin of migrations/sqlite/20261125000014_decision_rules.sql.
ALTER TABLE approvals ADD COLUMN require_reason BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN allow_modification BIGINT NOT NULL DEFAULT 1;
