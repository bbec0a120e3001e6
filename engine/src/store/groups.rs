//! Groups of people that admins manage through the API (`/api/groups`); groups declared in the
//! configuration file (`[[groups]]`) are not stored here and cannot be changed through the API.

use super::Db;
use anyhow::Context;
use sqlx::AnyConnection;

use super::time::now_ms;

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

/// Every stored group with its members, by name.
pub async fn list(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT g.name, m.username FROM user_groups g LEFT JOIN user_group_members m ON lower(m.group_name) = lower(g.name)
         ORDER BY lower(g.name), m.username",
    )
    .fetch_all(db.into().read())
    .await
    .context("failed to list groups")?;
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (name, member) in rows {
        if groups.last().is_none_or(|(last, _)| last != &name) {
            groups.push((name, Vec::new()));
        }
        if let (Some(member), Some((_, members))) = (member, groups.last_mut()) {
            members.push(member);
        }
    }
    Ok(groups)
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
