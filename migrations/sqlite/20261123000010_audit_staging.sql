-- The audit chain without a global lock in every write (docs/reliability.md): a write transaction
-- stages its entries here; a short chaining transaction moves them into audit_log in order,
-- computing the hashes. (SQLite has one writer and chains in the writing transaction itself; the
-- table keeps both schemas alike.)
CREATE TABLE audit_staging (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    at    INTEGER NOT NULL,
    kind  TEXT NOT NULL,
    actor TEXT NOT NULL,
    entry TEXT NOT NULL
);
