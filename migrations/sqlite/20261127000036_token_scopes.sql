-- What an API token may do (docs/security.md, "Tokens"): its scopes, names separated by spaces,
-- among read, decide and call. Tokens from before keep every right they had.
-- Twin of migrations/postgres/20261127000036_token_scopes.sql.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read decide call';
