-- Fenced task leases (DESIGN decision 7): each claim gets its own token; renew, release and every
-- write the driver makes are conditional on it, so a driver that lost its lease changes nothing.
ALTER TABLE tasks ADD COLUMN lease_token TEXT;
