//! Reading a conversation's view in O(recent), not O(history): the fold's result is kept as a
//! snapshot (`view_snapshots`), and a read folds only the events after it. The fold stays the one
//! source of truth (docs/architecture.md, decision 1): a snapshot is a cache of `fold(events[..=last_seq])`,
//! refreshed by reads once enough events follow it, and one written by another `FOLD_VERSION` is
//! ignored and rebuilt. `domain/tests/fold_props.rs` shows snapshot + tail = fold of everything.
//!
//! A reload reads less still: the page of the view it shows (`view_pages`, domain/src/page.rs),
//! kept the same way, so its cost follows the page, not the chat's length.

use anyhow::Context;
use domain::{ConversationId, ConversationView, fold::FOLD_VERSION};

use super::{Store, db::Db, events};
use clock::now_ms;

/// How many events may follow a snapshot before a read stores a newer one.
pub const REFRESH_AFTER: usize = 64;

/// The conversation's view now: its snapshot (if it is of this fold version) plus the events after it.
pub async fn view(store: &Store, conversation_id: &ConversationId) -> anyhow::Result<ConversationView> {
    let row: Option<(i64, String)> = sqlx::query_as("SELECT fold_version, view FROM view_snapshots WHERE conversation_id = $1")
        .bind(conversation_id)
        .fetch_optional(store.pool())
        .await
        .context("failed to load a view snapshot")?;
    let mut view = match row {
        Some((version, text)) if version == FOLD_VERSION => serde_json::from_str(&text).unwrap_or_else(|err| {
            tracing::warn!(%conversation_id, error = %err, "unreadable view snapshot; folding the whole log");
            ConversationView::default()
        }),
        _ => ConversationView::default(),
    };
    let tail = events::after(store.pool(), conversation_id, view.last_seq).await?;
    for event in &tail {
        view.apply(event);
    }
    if tail.len() >= REFRESH_AFTER {
        // Off the read's path: the answer does not wait for the write.
        let (store, conversation_id, snapshot) = (store.clone(), conversation_id.clone(), view.clone());
        tokio::spawn(async move {
            if let Err(err) = save(&store, &conversation_id, &snapshot).await {
                tracing::warn!(%conversation_id, error = ?err, "could not store a view snapshot");
            }
        });
    }
    Ok(view)
}

/// The page of the conversation's view with its last `items` items: the stored page (if it is of
/// this fold version and size) plus the events after it, paged again.
pub async fn page(store: &Store, conversation_id: &ConversationId, items: usize) -> anyhow::Result<ConversationView> {
    // One row by its key, of a page's size whatever the chat's length. On a threaded reader, not
    // a quick one: read on the tokio worker, the server-rendered chat page that follows took 1.1–1.4
    // times the CPU to render, most likely as SQLite's allocations for the blob share that
    // worker's heap (docs/performance-notes.md, "What a chat page costs"). The conversation's
    // `last_seq` says how long the tail is, so a short one is read quickly.
    let row: Option<(i64, i64, String, i64)> = sqlx::query_as(
        "SELECT p.fold_version, p.page_items, p.view, c.last_seq FROM view_pages p
         JOIN conversations c ON c.id = p.conversation_id WHERE p.conversation_id = $1",
    )
    .bind(conversation_id)
    .fetch_optional(Db::from(store).read())
    .await
    .context("failed to load a view page")?;
    let stored = row.filter(|(version, size, ..)| *version == FOLD_VERSION && *size == items as i64).and_then(|(_, _, text, last_seq)| {
        serde_json::from_str::<ConversationView>(&text)
            .inspect_err(|err| tracing::warn!(%conversation_id, error = %err, "unreadable view page; paging the whole view"))
            .ok()
            .map(|page| (page, last_seq))
    });
    let (page, refresh) = match stored {
        Some((mut page, last_seq)) => {
            let tail = events::about_after(store, conversation_id, page.last_seq, last_seq - page.last_seq).await?;
            for event in &tail {
                page.apply(event);
            }
            (page.page(items), tail.len() >= REFRESH_AFTER)
        }
        None => (view(store, conversation_id).await?.page(items), true),
    };
    if refresh {
        let (store, conversation_id, snapshot) = (store.clone(), conversation_id.clone(), page.clone());
        tokio::spawn(async move {
            if let Err(err) = save_page(&store, &conversation_id, &snapshot, items).await {
                tracing::warn!(%conversation_id, error = ?err, "could not store a view page");
            }
        });
    }
    Ok(page)
}

/// Stores `page` (of `items` items) unless a newer one of the same version and size is there.
pub async fn save_page(store: &Store, conversation_id: &ConversationId, page: &ConversationView, items: usize) -> anyhow::Result<()> {
    let text = serde_json::to_string(page).context("failed to encode a view page")?;
    sqlx::query(
        "INSERT INTO view_pages (conversation_id, fold_version, page_items, last_seq, view, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (conversation_id) DO UPDATE SET fold_version = excluded.fold_version, page_items = excluded.page_items,
             last_seq = excluded.last_seq, view = excluded.view, updated_at = excluded.updated_at
         WHERE view_pages.fold_version <> excluded.fold_version OR view_pages.page_items <> excluded.page_items
             OR view_pages.last_seq < excluded.last_seq",
    )
    .bind(conversation_id)
    .bind(FOLD_VERSION)
    .bind(items as i64)
    .bind(page.last_seq)
    .bind(text)
    .bind(now_ms())
    .execute(store.writer().exec())
    .await
    .context("failed to store a view page")?;
    Ok(())
}

/// Stores `view` as the snapshot unless a newer one (same version, later event) is there.
pub async fn save(store: &Store, conversation_id: &ConversationId, view: &ConversationView) -> anyhow::Result<()> {
    let text = serde_json::to_string(view).context("failed to encode a view snapshot")?;
    sqlx::query(
        "INSERT INTO view_snapshots (conversation_id, fold_version, last_seq, view, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (conversation_id) DO UPDATE SET fold_version = excluded.fold_version, last_seq = excluded.last_seq,
             view = excluded.view, updated_at = excluded.updated_at
         WHERE view_snapshots.fold_version <> excluded.fold_version OR view_snapshots.last_seq < excluded.last_seq",
    )
    .bind(conversation_id)
    .bind(FOLD_VERSION)
    .bind(view.last_seq)
    .bind(text)
    .bind(now_ms())
    .execute(store.writer().exec())
    .await
    .context("failed to store a view snapshot")?;
    Ok(())
}
