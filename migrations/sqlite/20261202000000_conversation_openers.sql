-- conversations.opened_by: the credential that made the conversation, as server/src/auth/mod.rs
-- `Credential` names it (`token:<id>`, `session:<digest>`), so that a token that may only call
-- stops the tasks it started and no others (docs/security.md, "Tokens").
ALTER TABLE conversations ADD COLUMN opened_by TEXT;
