-- The audit chain without a global lock in every write (docs/reliability.md): a write transaction
-- stages its entries here; a short chaining transaction (one at a time, any replica) moves them
-- into audit_log in order, computing the hashes. A frozen replica can then delay the chain, never
-- another replica's writes.
CREATE TABLE audit_staging (
    id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at    BIGINT NOT NULL,
    kind  TEXT NOT NULL,
    actor TEXT NOT NULL,
    entry TEXT NOT NULL
);
