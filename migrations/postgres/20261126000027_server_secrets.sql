-- Secrets the server makes for itself once and every replica shares (e.g. the key decision links
-- are signed with, when COUNTERSIGN_LINK_KEY is not set). Twin of
-- migrations/sqlite/20261126000027_server_secrets.sql.
CREATE TABLE server_secrets (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
