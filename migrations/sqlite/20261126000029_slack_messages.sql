-- The Slack-compatible message each approval was posted as (issue 17), so it can be updated when
-- the approval is decided anywhere. Twin of migrations/postgres/20261126000029_slack_messages.sql.
CREATE TABLE slack_messages (
    approval_id TEXT PRIMARY KEY NOT NULL,
    channel     TEXT NOT NULL,
    ts          TEXT NOT NULL
);
