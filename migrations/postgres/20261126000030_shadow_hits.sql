-- Calls a shadow gate (mode = "shadow") would have stopped and that ran unasked (issue 17), for
-- the queue's Decided tab. Twin of migrations/sqlite/20261126000030_shadow_hits.sql.
CREATE TABLE shadow_hits (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    gate            TEXT NOT NULL,
    tool            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    at              BIGINT NOT NULL
);
CREATE INDEX shadow_hits_by_time ON shadow_hits (at);
