-- Four-eyes, from the approval's gate at the time it was asked: separate_requester = 1 means the
-- user whose conversation made the call may not approve it. Twin of
-- migrations/sqlite/20261126000023_separate_requester.sql.
ALTER TABLE approvals ADD COLUMN separate_requester BIGINT NOT NULL DEFAULT 0;
