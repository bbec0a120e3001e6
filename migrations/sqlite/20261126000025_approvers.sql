-- Who may decide (issue 17): a gate's `approvers` as they stood when the approval was asked
-- (JSON of app::domain::rules::Approvers) and their people as ",a,b," for the queue's lookups;
-- quorum: how many distinct people must approve, and who did so far (JSON array of names).
-- Groups that admins manage through the API (groups in the configuration file stay there).
-- Twin of migrations/postgres/20261126000025_approvers.sql.
ALTER TABLE approvals ADD COLUMN approvers TEXT;
ALTER TABLE approvals ADD COLUMN approver_members TEXT;
ALTER TABLE approvals ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]';

CREATE TABLE user_groups (
    name       TEXT PRIMARY KEY NOT NULL COLLATE NOCASE,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL
);

CREATE TABLE user_group_members (
    group_name TEXT NOT NULL REFERENCES user_groups(name) ON DELETE CASCADE COLLATE NOCASE,
    username   TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (group_name, username)
);
