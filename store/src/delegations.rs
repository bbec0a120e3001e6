//! Delegations: who decides in whose place, and until when (engine/src/people/delegations.rs
//! makes and ends them; the decision rule consults [`delegators_of`]).

use super::Db;
use anyhow::Context;
use domain::wire::Delegation;
use sqlx::AnyConnection;

use clock::{new_id, now_ms, rfc3339};

#[derive(sqlx::FromRow, Clone, Debug, PartialEq, Eq)]
pub struct DelegationRow {
    pub id: String,
    pub from_user: String,
    pub to_user: String,
    pub starts_at: i64,
    pub ends_at: i64,
    pub created_at: i64,
    pub created_by: String,
    pub revoked_at: Option<i64>,
    pub revoked_by: Option<String>,
}

impl DelegationRow {
    pub fn active_at(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.starts_at <= now && now < self.ends_at
    }

    /// The delegation as the API shows it, `active` now.
    pub fn to_wire(&self) -> Delegation {
        Delegation {
            active: self.active_at(now_ms()),
            id: self.id.clone(),
            from: self.from_user.clone(),
            to: self.to_user.clone(),
            starts_at: rfc3339(self.starts_at),
            ends_at: rfc3339(self.ends_at),
            created_by: self.created_by.clone(),
            revoked_at: self.revoked_at.map(rfc3339),
            revoked_by: self.revoked_by.clone(),
        }
    }
}

const SELECT: &str = "SELECT id, from_user, to_user, starts_at, ends_at, created_at, created_by, revoked_at, revoked_by FROM delegations";

/// The people `delegate` decides for at `now` (not transitive: a delegate's own delegations do
/// not pass on what was delegated to them). Only between accounts that are on: a person whose
/// account was turned off is no one's delegate, and their delegate no longer decides for them
/// (judged here, in the caller's transaction, not only when the account was turned off).
pub async fn delegators_of(db: impl Into<Db<'_>>, delegate: &str, now: i64) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT DISTINCT d.from_user FROM delegations d
         WHERE lower(d.to_user) = lower($1) AND d.revoked_at IS NULL AND d.starts_at <= $2 AND d.ends_at > $2
           AND EXISTS (SELECT 1 FROM users f WHERE lower(f.username) = lower(d.from_user) AND f.disabled_at IS NULL)
           AND EXISTS (SELECT 1 FROM users t WHERE lower(t.username) = lower(d.to_user) AND t.disabled_at IS NULL)
         ORDER BY d.from_user",
    )
    .bind(delegate)
    .bind(now)
    .fetch_all(db.into().read_few())
    .await
    .context("failed to look up delegations")
}

pub async fn insert(
    conn: &mut AnyConnection,
    from: &str,
    to: &str,
    starts_at: i64,
    ends_at: i64,
    by: &str,
) -> anyhow::Result<DelegationRow> {
    let row = DelegationRow {
        id: new_id(),
        from_user: from.to_owned(),
        to_user: to.to_owned(),
        starts_at,
        ends_at,
        created_at: now_ms(),
        created_by: by.to_owned(),
        revoked_at: None,
        revoked_by: None,
    };
    sqlx::query(
        "INSERT INTO delegations (id, from_user, to_user, starts_at, ends_at, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&row.id)
    .bind(&row.from_user)
    .bind(&row.to_user)
    .bind(row.starts_at)
    .bind(row.ends_at)
    .bind(row.created_at)
    .bind(&row.created_by)
    .execute(conn)
    .await
    .context("failed to record a delegation")?;
    Ok(row)
}

pub async fn get(db: impl Into<Db<'_>>, id: &str) -> anyhow::Result<Option<DelegationRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE id = $1"))
        .bind(id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to load a delegation")
}

/// Delegations given or received by `user` (every one for `None`), newest first.
pub async fn list(db: impl Into<Db<'_>>, user: Option<&str>) -> anyhow::Result<Vec<DelegationRow>> {
    sqlx::query_as(&format!(
        "{SELECT} WHERE $1 IS NULL OR lower(from_user) = lower($1) OR lower(to_user) = lower($1) ORDER BY created_at DESC, id LIMIT 500"
    ))
    .bind(user)
    .fetch_all(db.into().read())
    .await
    .context("failed to list delegations")
}

/// Ends a delegation now; false if it was already revoked.
pub async fn revoke(conn: &mut AnyConnection, id: &str, by: &str) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE delegations SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL")
        .bind(now_ms())
        .bind(by)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to revoke a delegation")?;
    Ok(result.rows_affected() == 1)
}

/// Ends now every delegation `user` gave or received that has not ended yet (their account was
/// turned off), as `by`; the delegations ended.
pub async fn revoke_all_of(conn: &mut AnyConnection, user: &str, by: &str) -> anyhow::Result<Vec<DelegationRow>> {
    sqlx::query_as(
        "UPDATE delegations SET revoked_at = $1, revoked_by = $2
         WHERE revoked_at IS NULL AND ends_at > $1 AND (lower(from_user) = lower($3) OR lower(to_user) = lower($3))
         RETURNING id, from_user, to_user, starts_at, ends_at, created_at, created_by, revoked_at, revoked_by",
    )
    .bind(now_ms())
    .bind(by)
    .bind(user)
    .fetch_all(conn)
    .await
    .context("failed to end a person's delegations")
}
