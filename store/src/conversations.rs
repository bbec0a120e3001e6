//! Conversations (chats).

use super::Db;
use anyhow::Context;
use domain::wire::Conversation;
use domain::{ConversationId, UserId};

use super::users::User;
use clock::{new_id, now_ms, rfc3339};

#[derive(sqlx::FromRow)]
struct Row {
    id: ConversationId,
    title: String,
    agent: String,
    created_at: i64,
    last_seq: i64,
    owner_id: Option<UserId>,
    owner: Option<String>,
    pending: i64,
}

impl From<Row> for Conversation {
    fn from(r: Row) -> Self {
        Conversation {
            id: r.id,
            title: r.title,
            agent: r.agent,
            created_at: rfc3339(r.created_at),
            last_seq: r.last_seq,
            owner_id: r.owner_id,
            owner: r.owner,
            pending: r.pending,
        }
    }
}

// The pending count is a subquery per conversation row (an index lookup, `approvals_by_conversation`):
// a join with the counts of every conversation made each read cost as much as all pending approvals.
const SELECT: &str = "SELECT c.id, c.title, c.agent, c.created_at, c.last_seq, c.owner_id, u.username AS owner,
        (SELECT COUNT(*) FROM approvals a WHERE a.conversation_id = c.id AND a.state = 'pending') AS pending
    FROM conversations c LEFT JOIN users u ON u.id = c.owner_id";

/// A new conversation of `owner`'s; `opened_by`: the credential that made it, as
/// `server::auth::Credential` names it. (Who may stop a task is kept with the task:
/// `tasks::TaskRow::started_by`.)
pub async fn create(
    pool: impl Into<Db<'_>>,
    title: &str,
    agent: &str,
    owner: &User,
    opened_by: Option<&str>,
) -> anyhow::Result<Conversation> {
    create_with_id(pool, &new_id(), title, agent, owner, opened_by).await?.context("BUG: a new conversation id was taken")
}

/// Like [`create`], with the id given; `None` if it is taken. Answers what it wrote without
/// reading it back: a new conversation has no events and nothing pending, and its owner is
/// `owner`. An id a door is given or derives goes through [`open_or_create`] instead, which
/// never adopts someone else's conversation.
async fn create_with_id(
    pool: impl Into<Db<'_>>,
    id: &ConversationId,
    title: &str,
    agent: &str,
    owner: &User,
    opened_by: Option<&str>,
) -> anyhow::Result<Option<Conversation>> {
    let created_at = now_ms();
    let inserted = sqlx::query(
        "INSERT INTO conversations (id, title, agent, created_at, owner_id, opened_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(title)
    .bind(agent)
    .bind(created_at)
    .bind(&owner.id)
    .bind(opened_by)
    .execute(pool.into().write())
    .await
    .context("failed to create conversation")?;
    Ok((inserted.rows_affected() == 1).then(|| Conversation {
        id: id.clone(),
        title: title.to_owned(),
        agent: agent.to_owned(),
        created_at: rfc3339(created_at),
        last_seq: 0,
        owner_id: Some(owner.id.clone()),
        owner: Some(owner.username.clone()),
        pending: 0,
    }))
}

/// What the MCP gateway's conversation ids start with ([`gateway_id`]): an id a client chooses
/// (an AG-UI `threadId`) never does, so no one can make a gateway client's conversation first.
pub const GATEWAY_ID_PREFIX: &str = "mcp-";

/// The conversation id of an MCP gateway client (its user and credential) and agent: the
/// gateway's prefix and a digest shaped as a UUID. Derived from who asks, so two first calls at
/// once (on any replicas) make one conversation.
pub fn gateway_id(user: &UserId, key: &str, agent: &str) -> ConversationId {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("mcp\u{0}{}\u{0}{key}\u{0}{agent}", &**user));
    let bytes: [u8; 16] = digest[..16].try_into().expect("a SHA-256 digest has 32 bytes");
    ConversationId::from(format!("{GATEWAY_ID_PREFIX}{}", uuid::Uuid::from_bytes(bytes)))
}

/// Who chose the id of a conversation made on first use ([`open_or_create`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdFrom {
    /// The MCP gateway ([`gateway_id`]).
    Gateway,
    /// A client (an AG-UI `threadId`): never one of the gateway's ids.
    Client,
}

/// `owner`'s conversation `id` (with `agent`, when one is named); `None` when there is none, or
/// it is someone else's or another agent's: a door answers both the same way, so another
/// person's conversation is neither used nor revealed.
pub async fn owned(
    db: impl Into<Db<'_>>,
    id: &ConversationId,
    owner: &UserId,
    agent: Option<&str>,
) -> anyhow::Result<Option<Conversation>> {
    Ok(get(db, id).await?.filter(|c| c.owner_id.as_ref() == Some(owner) && agent.is_none_or(|a| c.agent == a)))
}

/// A conversation belongs to one person on every door: `owner`'s conversation `id` with
/// `agent`, made for them now when no conversation has that id. `None` when the id is someone
/// else's (or another agent's), or a client chose one of the gateway's ids: the door answers
/// that as it answers an id it does not know, and nothing is written. Two first uses at once
/// make one conversation (the second insert does nothing and reads the first's). `opened_by`:
/// the credential that asks, kept when it makes the conversation (as [`create`]).
pub async fn open_or_create(
    db: impl Into<Db<'_>>,
    id: &ConversationId,
    from: IdFrom,
    title: &str,
    agent: &str,
    owner: &User,
    opened_by: Option<&str>,
) -> anyhow::Result<Option<Conversation>> {
    if from == IdFrom::Client && id.starts_with(GATEWAY_ID_PREFIX) {
        return Ok(None);
    }
    let mine = |c: Conversation| (c.owner_id.as_ref() == Some(&owner.id) && c.agent == agent).then_some(c);
    let mut db: Db<'_> = db.into();
    if let Some(found) = get(db.again(), id).await? {
        return Ok(mine(found));
    }
    if let Some(made) = create_with_id(db.again(), id, title, agent, owner, opened_by).await? {
        return Ok(Some(made));
    }
    // Made meanwhile by another request: read where it was written.
    let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE c.id = $1"))
        .bind(id)
        .fetch_optional(db.again().write())
        .await
        .context("failed to load conversation")?;
    Ok(row.map(Conversation::from).and_then(mine))
}

pub async fn get(pool: impl Into<Db<'_>>, id: &ConversationId) -> anyhow::Result<Option<Conversation>> {
    let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE c.id = $1"))
        .bind(id)
        .fetch_optional(pool.into().read_few())
        .await
        .context("failed to load conversation")?;
    Ok(row.map(Into::into))
}

/// Newest first; `owner_id` None lists everyone's (admins).
pub async fn list(pool: impl Into<Db<'_>>, owner_id: Option<&UserId>, limit: i64) -> anyhow::Result<Vec<Conversation>> {
    let rows: Vec<Row> =
        sqlx::query_as(&format!("{SELECT} WHERE $1 IS NULL OR c.owner_id = $1 ORDER BY c.created_at DESC, c.id DESC LIMIT $2"))
            .bind(owner_id)
            .bind(limit)
            .fetch_all(pool.into().read())
            .await
            .context("failed to list conversations")?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Names a chat after its first message while it still has the default title.
pub async fn title_from_first_message(conn: &mut sqlx::AnyConnection, id: &ConversationId, text: &str) -> anyhow::Result<()> {
    let title = naming::title_from(text);
    sqlx::query("UPDATE conversations SET title = $1 WHERE id = $2 AND title = $3 AND last_seq = 0")
        .bind(title)
        .bind(id)
        .bind(DEFAULT_TITLE)
        .execute(conn)
        .await
        .context("failed to title conversation")?;
    Ok(())
}

pub use domain::naming::{self, DEFAULT_TITLE};
