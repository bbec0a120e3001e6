//! Groups of people that admins manage through the API (`/api/groups`); groups declared in the
//! configuration file (`[[groups]]`) are not stored here and cannot be changed through the API.

use super::Db;
use anyhow::Context;
use sqlx::AnyConnection;

use clock::now_ms;

/// A stored group's members (user names as their accounts spell them), by group name; `None` if
/// no such group is stored. Names match ignoring case.
pub async fn members(db: impl Into<Db<'_>>, name: &str) -> anyhow::Result<Option<Vec<String>>> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT g.name, m.username FROM user_groups g LEFT JOIN user_group_members m ON lower(m.group_name) = lower(g.name)
         WHERE lower(g.name) = lower($1) ORDER BY m.username",
    )
    .bind(name)
    .fetch_all(db.into().read())
    .await
    .context("failed to load a group")?;
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(rows.into_iter().filter_map(|(_, member)| member).collect()))
}

/// A stored group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGroup {
    pub name: String,
    pub members: Vec<String>,
    /// Named by the identity provider (changed there, at each member's sign-in), not by an admin.
    pub from_idp: bool,
}

/// Every stored group with its members, by name.
pub async fn list(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<StoredGroup>> {
    let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT g.name, g.source, m.username FROM user_groups g LEFT JOIN user_group_members m ON lower(m.group_name) = lower(g.name)
         ORDER BY lower(g.name), m.username",
    )
    .fetch_all(db.into().read())
    .await
    .context("failed to list groups")?;
    let mut groups: Vec<StoredGroup> = Vec::new();
    for (name, source, member) in rows {
        if groups.last().is_none_or(|last| last.name != name) {
            groups.push(StoredGroup { name, members: Vec::new(), from_idp: source == IDP });
        }
        if let (Some(member), Some(group)) = (member, groups.last_mut()) {
            group.members.push(member);
        }
    }
    Ok(groups)
}

/// `user_groups.source` of a group the identity provider names.
const IDP: &str = "idp";

/// Whether a stored group of that name comes from the identity provider (`None`: no such group).
pub async fn is_from_idp(conn: &mut AnyConnection, name: &str) -> anyhow::Result<Option<bool>> {
    let source: Option<String> = sqlx::query_scalar("SELECT source FROM user_groups WHERE lower(name) = lower($1)")
        .bind(name)
        .fetch_optional(conn)
        .await
        .context("failed to read a group's source")?;
    Ok(source.map(|s| s == IDP))
}

/// Every stored group `username` is a member of (made by an admin or, with `from_idp`, named by
/// the identity provider).
pub async fn groups_of(conn: &mut AnyConnection, username: &str) -> anyhow::Result<Vec<(String, bool)>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT g.name, g.source FROM user_groups g JOIN user_group_members m ON lower(m.group_name) = lower(g.name)
         WHERE lower(m.username) = lower($1) ORDER BY lower(g.name)",
    )
    .bind(username)
    .fetch_all(conn)
    .await
    .context("failed to list a person's groups")?;
    Ok(rows.into_iter().map(|(name, source)| (name, source == IDP)).collect())
}

/// Makes a group the identity provider names, unless one of that name exists.
pub async fn create_from_idp(conn: &mut AnyConnection, name: &str) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO user_groups (name, created_at, created_by, source) SELECT $1, $2, 'identity provider', 'idp'
         WHERE NOT EXISTS (SELECT 1 FROM user_groups WHERE lower(name) = lower($1))",
    )
    .bind(name)
    .bind(now_ms())
    .execute(conn)
    .await
    .context("failed to create a provider group")?;
    Ok(())
}

/// Adds (`member = true`) or removes one person of a stored group.
pub async fn set_member(conn: &mut AnyConnection, name: &str, username: &str, member: bool) -> anyhow::Result<()> {
    let statement = if member {
        "INSERT INTO user_group_members (group_name, username) SELECT name, $2 FROM user_groups WHERE lower(name) = lower($1)
         AND NOT EXISTS (SELECT 1 FROM user_group_members WHERE lower(group_name) = lower($1) AND lower(username) = lower($2))"
    } else {
        "DELETE FROM user_group_members WHERE lower(group_name) = lower($1) AND lower(username) = lower($2)"
    };
    sqlx::query(statement).bind(name).bind(username).execute(conn).await.context("failed to change a group member")?;
    Ok(())
}

/// Creates an empty group; false if one of that name (ignoring case) exists.
pub async fn create(conn: &mut AnyConnection, name: &str, by: &str) -> anyhow::Result<bool> {
    let result = sqlx::query(
        "INSERT INTO user_groups (name, created_at, created_by) SELECT $1, $2, $3
         WHERE NOT EXISTS (SELECT 1 FROM user_groups WHERE lower(name) = lower($1))",
    )
    .bind(name)
    .bind(now_ms())
    .bind(by)
    .execute(conn)
    .await
    .context("failed to create a group")?;
    Ok(result.rows_affected() == 1)
}

/// Replaces a stored group's members (the caller checked the group exists and the names are
/// accounts' names).
pub async fn set_members(conn: &mut AnyConnection, name: &str, members: &[String]) -> anyhow::Result<()> {
    sqlx::query("DELETE FROM user_group_members WHERE lower(group_name) = lower($1)")
        .bind(name)
        .execute(&mut *conn)
        .await
        .context("failed to change a group's members")?;
    for member in members {
        sqlx::query("INSERT INTO user_group_members (group_name, username) SELECT name, $2 FROM user_groups WHERE lower(name) = lower($1)")
            .bind(name)
            .bind(member)
            .execute(&mut *conn)
            .await
            .context("failed to add a group member")?;
    }
    Ok(())
}

/// Deletes a stored group and its members; false if there was none.
pub async fn delete(conn: &mut AnyConnection, name: &str) -> anyhow::Result<bool> {
    sqlx::query("DELETE FROM user_group_members WHERE lower(group_name) = lower($1)")
        .bind(name)
        .execute(&mut *conn)
        .await
        .context("failed to delete a group's members")?;
    let result = sqlx::query("DELETE FROM user_groups WHERE lower(name) = lower($1)")
        .bind(name)
        .execute(conn)
        .await
        .context("failed to delete a group")?;
    Ok(result.rows_affected() == 1)
}
