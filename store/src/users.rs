//! Accounts and API tokens. Password hashes and token hashes never leave this module's row
//! types (they are not `Serialize`).

use super::Db;
use anyhow::Context;
use domain::UserId;
use serde::Serialize;

use clock::{new_id, now_ms, rfc3339};

pub use domain::Role;

/// Who is acting: what handlers and the engine's use cases see of a user.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = Account)]
pub struct User {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    pub created_at: String,
}

/// The user as pages and clients see them.
impl From<&User> for domain::wire::Me {
    fn from(user: &User) -> Self {
        Self { id: user.id.clone(), username: user.username.clone(), role: user.role, stands_in_for: Vec::new() }
    }
}

impl User {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

#[derive(sqlx::FromRow)]
struct UserRow {
    id: UserId,
    username: String,
    #[sqlx(try_from = "String")]
    role: Role,
    created_at: i64,
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> Self {
        User { id: r.id, username: r.username, role: r.role, created_at: rfc3339(r.created_at) }
    }
}

/// A user with the stored password hash, for logging in only.
pub struct Credentials {
    pub user: User,
    /// `None`: the account has no password (made when its person first signed in through the
    /// identity provider).
    pub password_hash: Option<String>,
}

pub async fn insert(db: impl Into<Db<'_>>, username: &str, password_hash: &str, role: Role) -> anyhow::Result<Option<User>> {
    let row: Option<UserRow> = sqlx::query_as(
        "INSERT INTO users (id, username, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING id, username, role, created_at",
    )
    .bind(new_id::<UserId>())
    .bind(username)
    .bind(password_hash)
    .bind(role.as_str())
    .bind(now_ms())
    .fetch_optional(db.into().write())
    .await
    .context("failed to create user")?;
    Ok(row.map(Into::into))
}

pub async fn get(db: impl Into<Db<'_>>, id: &UserId) -> anyhow::Result<Option<User>> {
    let row: Option<UserRow> = sqlx::query_as("SELECT id, username, role, created_at FROM users WHERE id = $1 AND disabled_at IS NULL")
        .bind(id)
        .fetch_optional(db.into().read_few())
        .await
        .context("failed to load user")?;
    Ok(row.map(Into::into))
}

pub async fn credentials(db: impl Into<Db<'_>>, username: &str) -> anyhow::Result<Option<Credentials>> {
    let row: Option<(String, String, String, i64, String)> = sqlx::query_as(
        "SELECT id, username, role, created_at, password_hash FROM users WHERE lower(username) = lower($1) AND disabled_at IS NULL",
    )
    .bind(username)
    .fetch_optional(db.into().read())
    .await
    .context("failed to load credentials")?;
    row.map(|(id, username, role, created_at, password_hash)| {
        let password_hash = Some(password_hash).filter(|h| !h.is_empty());
        Ok(Credentials { user: UserRow { id: id.into(), username, role: role.parse()?, created_at }.into(), password_hash })
    })
    .transpose()
}

/// The user names of the accounts that may sign in (not disabled), as stored: whom a gate's
/// approvers can stand for.
pub async fn enabled_names(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT username FROM users WHERE disabled_at IS NULL ORDER BY username")
        .fetch_all(db.into().read())
        .await
        .context("failed to list the accounts")?;
    Ok(rows.into_iter().map(|(name,)| name).collect())
}

pub async fn list(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<User>> {
    let rows: Vec<UserRow> = sqlx::query_as("SELECT id, username, role, created_at FROM users ORDER BY username")
        .fetch_all(db.into().read())
        .await
        .context("failed to list users")?;
    Ok(rows.into_iter().map(Into::into).collect())
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    #[serde(skip)]
    pub created_at_ms: i64,
    pub revoked: bool,
    /// What it may do: `read`, `decide`, `call` (server/src/auth/scopes.rs).
    pub scopes: Vec<String>,
}

#[derive(sqlx::FromRow)]
struct TokenRow {
    id: String,
    name: String,
    created_at: i64,
    revoked_at: Option<i64>,
    scopes: String,
}

/// Stores a token's hash with its scopes (names separated by spaces).
pub async fn insert_token(db: impl Into<Db<'_>>, user_id: &UserId, name: &str, token_hash: &str, scopes: &str) -> anyhow::Result<String> {
    let id = new_id();
    sqlx::query("INSERT INTO api_tokens (id, user_id, name, token_hash, created_at, scopes) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&id)
        .bind(user_id)
        .bind(name)
        .bind(token_hash)
        .bind(now_ms())
        .bind(scopes)
        .execute(db.into().write())
        .await
        .context("failed to store token")?;
    Ok(id)
}

/// The user behind a live (not revoked) token, with the token's id and scopes.
pub async fn user_for_token(db: impl Into<Db<'_>>, token_hash: &str) -> anyhow::Result<Option<(User, String, String)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: UserRow,
        token_id: String,
        scopes: String,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT u.id, u.username, u.role, u.created_at, t.id AS token_id, t.scopes FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL",
    )
    .bind(token_hash)
    .fetch_optional(db.into().read_few())
    .await
    .context("failed to check token")?;
    Ok(row.map(|r| (r.user.into(), r.token_id, r.scopes)))
}

pub async fn tokens_of(db: impl Into<Db<'_>>, user_id: &UserId) -> anyhow::Result<Vec<TokenInfo>> {
    // Booleans are computed here: SQLite has none to return through the portable driver.
    let rows: Vec<TokenRow> =
        sqlx::query_as("SELECT id, name, created_at, revoked_at, scopes FROM api_tokens WHERE user_id = $1 ORDER BY created_at")
            .bind(user_id)
            .fetch_all(db.into().read())
            .await
            .context("failed to list tokens")?;
    Ok(rows
        .into_iter()
        .map(|r| TokenInfo {
            id: r.id,
            name: r.name,
            created_at_ms: r.created_at,
            revoked: r.revoked_at.is_some(),
            scopes: r.scopes.split_whitespace().map(str::to_owned).collect(),
        })
        .collect())
}

/// Revokes one of the user's tokens; false when there is no such live token.
pub async fn revoke_token(db: impl Into<Db<'_>>, user_id: &UserId, token_id: &str) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL")
        .bind(now_ms())
        .bind(token_id)
        .bind(user_id)
        .execute(db.into().write())
        .await
        .context("failed to revoke token")?;
    Ok(result.rows_affected() == 1)
}

/// Sets (or with `None` clears) a user's email address; false if there is no such user.
pub async fn set_email(db: impl Into<Db<'_>>, username: &str, email: Option<&str>) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE users SET email = $1 WHERE lower(username) = lower($2)")
        .bind(email)
        .bind(username)
        .execute(db.into().write())
        .await
        .context("failed to set an email address")?;
    Ok(result.rows_affected() == 1)
}

/// A user's email address, if they have one.
pub async fn email_of(db: impl Into<Db<'_>>, username: &str) -> anyhow::Result<Option<String>> {
    let email: Option<Option<String>> = sqlx::query_scalar("SELECT email FROM users WHERE lower(username) = lower($1)")
        .bind(username)
        .fetch_optional(db.into().read())
        .await
        .context("failed to read an email address")?;
    Ok(email.flatten().filter(|e| !e.is_empty()))
}

/// The admins' user names.
pub async fn admins(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar("SELECT username FROM users WHERE role = 'admin' ORDER BY username")
        .fetch_all(db.into().read())
        .await
        .context("failed to list admins")
}

/// The account made for an identity provider's subject (`<issuer> <sub>`), if there is one, and
/// whether an admin disabled it.
pub async fn by_subject(conn: &mut sqlx::AnyConnection, subject: &str) -> anyhow::Result<Option<(User, bool)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: UserRow,
        disabled_at: Option<i64>,
    }
    let row: Option<Row> = sqlx::query_as("SELECT id, username, role, created_at, disabled_at FROM users WHERE oidc_subject = $1")
        .bind(subject)
        .fetch_optional(conn)
        .await
        .context("failed to find a signed-in user")?;
    Ok(row.map(|r| (r.user.into(), r.disabled_at.is_some())))
}

/// Turns an account off (`disabled = true`) or on again; the account's user name as stored, or
/// `None` if there is no such account.
pub async fn set_disabled(conn: &mut sqlx::AnyConnection, username: &str, disabled: bool) -> anyhow::Result<Option<(UserId, String)>> {
    sqlx::query_as("UPDATE users SET disabled_at = $1 WHERE lower(username) = lower($2) RETURNING id, username")
        .bind(disabled.then(now_ms))
        .bind(username)
        .fetch_optional(conn)
        .await
        .context("failed to turn an account off or on")
}

/// Revokes every live token of the user; the ids of those revoked.
pub async fn revoke_all_tokens(conn: &mut sqlx::AnyConnection, username: &str) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar(
        "UPDATE api_tokens SET revoked_at = $1 WHERE revoked_at IS NULL
         AND user_id IN (SELECT id FROM users WHERE lower(username) = lower($2)) RETURNING id",
    )
    .bind(now_ms())
    .bind(username)
    .fetch_all(conn)
    .await
    .context("failed to revoke a user's tokens")
}

/// Makes the account of a person who signed in through the identity provider: no password
/// (the empty hash never verifies); `None` if the user name is taken.
pub async fn insert_signed_in(conn: &mut sqlx::AnyConnection, username: &str, subject: &str, role: Role) -> anyhow::Result<Option<User>> {
    let row: Option<UserRow> = sqlx::query_as(
        "INSERT INTO users (id, username, password_hash, role, created_at, oidc_subject) VALUES ($1, $2, '', $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING id, username, role, created_at",
    )
    .bind(new_id::<UserId>())
    .bind(username)
    .bind(role.as_str())
    .bind(now_ms())
    .bind(subject)
    .fetch_optional(conn)
    .await
    .context("failed to create a signed-in user")?;
    Ok(row.map(Into::into))
}

/// Sets a signed-in user's role and email address as the identity provider now says (no
/// verified address: none).
pub async fn refresh_signed_in(conn: &mut sqlx::AnyConnection, id: &UserId, role: Role, email: Option<&str>) -> anyhow::Result<()> {
    sqlx::query("UPDATE users SET role = $1, email = $2 WHERE id = $3")
        .bind(role.as_str())
        .bind(email)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to refresh a signed-in user")?;
    Ok(())
}

/// The user with this email address (ignoring case), if exactly one has it.
pub async fn by_email(db: impl Into<Db<'_>>, email: &str) -> anyhow::Result<Option<String>> {
    let names: Vec<String> = sqlx::query_scalar("SELECT username FROM users WHERE lower(email) = lower($1) LIMIT 2")
        .bind(email)
        .fetch_all(db.into().read())
        .await
        .context("failed to find a user by email")?;
    Ok(if names.len() == 1 { names.into_iter().next() } else { None })
}
