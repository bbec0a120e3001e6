//! Conversations (chats).

use anyhow::Context;
use app::domain::wire::Conversation;
use sqlx::SqlitePool;

use super::time::{new_id, now_ms, rfc3339};

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    title: String,
    agent: String,
    created_at: i64,
    last_seq: i64,
}

impl From<Row> for Conversation {
    fn from(r: Row) -> Self {
        Conversation { id: r.id, title: r.title, agent: r.agent, created_at: rfc3339(r.created_at), last_seq: r.last_seq }
    }
}

const COLUMNS: &str = "id, title, agent, created_at, last_seq";

pub async fn create(pool: &SqlitePool, title: &str, agent: &str) -> anyhow::Result<Conversation> {
    let row: Row = sqlx::query_as(&format!(
        "INSERT INTO conversations (id, title, agent, created_at) VALUES (?, ?, ?, ?) RETURNING {COLUMNS}"
    ))
    .bind(new_id())
    .bind(title)
    .bind(agent)
    .bind(now_ms())
    .fetch_one(pool)
    .await
    .context("failed to create conversation")?;
    Ok(row.into())
}

pub async fn get(pool: &SqlitePool, id: &str) -> anyhow::Result<Option<Conversation>> {
    let row: Option<Row> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM conversations WHERE id = ?"))
        .bind(id)
        .fetch_optional(pool)
        .await
        .context("failed to load conversation")?;
    Ok(row.map(Into::into))
}

/// Newest first.
pub async fn list(pool: &SqlitePool, limit: i64) -> anyhow::Result<Vec<Conversation>> {
    let rows: Vec<Row> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM conversations ORDER BY created_at DESC, id DESC LIMIT ?"))
        .bind(limit)
        .fetch_all(pool)
        .await
        .context("failed to list conversations")?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Names a chat after its first message while it still has the default title.
pub async fn title_from_first_message(conn: &mut sqlx::SqliteConnection, id: &str, text: &str) -> anyhow::Result<()> {
    let mut title: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        title.push('…');
    }
    sqlx::query("UPDATE conversations SET title = ? WHERE id = ? AND title = ? AND last_seq = 0")
        .bind(title)
        .bind(id)
        .bind(DEFAULT_TITLE)
        .execute(conn)
        .await
        .context("failed to title conversation")?;
    Ok(())
}

pub const DEFAULT_TITLE: &str = "New chat";
