-- Per-task claims: the process driving a task holds a lease on it, so with several server
-- processes on one database each task is driven by one of them at a time. A lease is renewed
-- while the driver works and released when it stops; a crashed holder's lease runs out.
ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until BIGINT;
