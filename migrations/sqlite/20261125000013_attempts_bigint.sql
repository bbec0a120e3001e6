-- Twin of migrations/postgres/20261125000013_attempts_bigint.sql, which widens
-- tasks.failed_attempts to BIGINT there; SQLite's INTEGER already holds 8 bytes. Nothing to do.
SELECT 1;
