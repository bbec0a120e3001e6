-- Counted attempts (logins per user name and per client address, decisions per user) in fixed
-- windows, shared by every replica so N replicas do not allow N times the limit
-- (server/src/store/limits.rs).
CREATE TABLE attempt_limits (
    key          TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    count        BIGINT NOT NULL
);
