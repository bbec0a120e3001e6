-- People who sign in through the organisation's identity provider (OpenID Connect,
-- docs/sign-in.md): an account made at a first sign-in names the provider's subject
-- ("<issuer> <sub>"), and the approver groups the provider names are kept apart from the
-- ones admins make here, because they change only at the provider.
ALTER TABLE users ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX users_by_oidc_subject ON users (oidc_subject);
ALTER TABLE user_groups ADD COLUMN source TEXT NOT NULL DEFAULT 'admin' CHECK (source IN ('admin', 'idp'));
-- approvals.reauthenticate_secs: its gate says `reauthenticate = true`: whoever decides must have
-- signed in within this many seconds (docs/config.md).
ALTER TABLE approvals ADD COLUMN reauthenticate_secs BIGINT;
-- users.disabled_at: an admin turned the account off (someone who left): it logs in neither with
-- a password nor through the provider, and its tokens and sessions no longer work.
ALTER TABLE users ADD COLUMN disabled_at BIGINT;
