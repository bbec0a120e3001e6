-- tasks.failed_attempts was created as INTEGER (4 bytes) here and INTEGER (8 bytes) on SQLite;
-- every other counter is BIGINT. Found by the schema twin test (server/tests/api/schema.rs).
ALTER TABLE tasks ALTER COLUMN failed_attempts TYPE BIGINT;
