-- Twin of migrations/sqlite/20261126000033_event_seq_trigger.sql. PostgreSQL takes an event's
-- sequence number in one statement without a trigger (store/events.rs: an UPDATE … RETURNING in a
-- CTE, which also takes the conversation's row lock), so nothing changes here; the version is kept
-- so both backends stay at the same migration.
SELECT 1;
