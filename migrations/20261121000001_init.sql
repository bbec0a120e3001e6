-- Bookkeeping of the server itself; the approval engine's tables come in later migrations.
CREATE TABLE IF NOT EXISTS server_info (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
INSERT OR IGNORE INTO server_info (key, value) VALUES ('schema', 'countersign');
