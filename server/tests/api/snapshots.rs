//! Reading a chat in O(recent): `GET /api/conversations/{id}` answers from the stored snapshot of
//! the fold plus the events after it, and once enough events follow the snapshot a read stores a
//! newer one. The fold stays the truth: the answer always equals the fold of the whole log, and a
//! snapshot of another fold version (or one that does not parse) is rebuilt, not trusted. By
//! default the answer is a page of it (domain/src/page.rs), kept and read the same way.

use countersign::bus::Bus;
use domain::{ConversationView, TaskStatus, fold::FOLD_VERSION, page::EarlierItems};
use engine::store::Store;
use serde_json::json;

use crate::helpers::{Options, TestApp, database_url, eventually, spawn_app, spawn_app_with};

/// The whole view the API answers with (no events), and the fold of the whole log.
async fn both(app: &TestApp, c: &str) -> (ConversationView, ConversationView) {
    let (status, body) = app.get_json(&format!("/api/conversations/{c}?items=all")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("events").is_none(), "events only when asked for");
    let view: ConversationView = serde_json::from_value(body["view"].clone()).unwrap();
    (view, app.detail(c).await.view)
}

#[tokio::test]
async fn a_read_answers_from_the_snapshot_and_the_tail_and_a_stale_or_foreign_snapshot_is_rebuilt() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    for _ in 0..8 {
        let task = app.say(&c, "look up order 1001").await;
        app.wait_task(&task, TaskStatus::Completed).await;
    }
    let (view, whole) = both(&app, &c).await;
    assert_eq!(view, whole);
    assert!(whole.last_seq as usize >= engine::store::snapshots::REFRESH_AFTER, "{}", whole.last_seq);

    // That read stored a snapshot of everything so far.
    let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.unwrap();
    let stored: (i64, i64) = eventually("a snapshot", || async {
        sqlx::query_as("SELECT fold_version, last_seq FROM view_snapshots WHERE conversation_id = $1")
            .bind(c.as_str())
            .fetch_optional(store.testing().pool())
            .await
            .unwrap()
    })
    .await;
    assert_eq!(stored, (FOLD_VERSION, whole.last_seq));

    // A later turn is folded onto the snapshot.
    let task = app.say(&c, "refund order 1001").await;
    app.wait_task(&task, TaskStatus::InputRequired).await;
    let (view, whole) = both(&app, &c).await;
    assert_eq!(view, whole, "snapshot + tail = the whole fold");

    // A snapshot of another fold version, or unreadable, is not trusted.
    for (version, text) in
        [(FOLD_VERSION - 1, r#"{"last_seq": 3, "items": [], "tasks": []}"#.to_owned()), (FOLD_VERSION, "not json".to_owned())]
    {
        sqlx::query("UPDATE view_snapshots SET fold_version = $1, view = $2 WHERE conversation_id = $3")
            .bind(version)
            .bind(&text)
            .bind(c.as_str())
            .execute(store.testing().writer().exec())
            .await
            .unwrap();
        let (view, whole) = both(&app, &c).await;
        assert_eq!(view, whole, "version {version}: rebuilt from the events");
    }
    let (status, body) = app.get_json(&format!("/api/conversations/{c}?events=some")).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/events")), "{body}");
}

/// The page a reload shows (`GET /api/conversations/{id}`, and the chat page), read from its stored page.
async fn page(app: &TestApp, c: &str) -> ConversationView {
    let (status, body) = app.get_json(&format!("/api/conversations/{c}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_value(body["view"].clone()).unwrap()
}

#[tokio::test]
async fn a_long_chat_is_read_a_page_at_a_time_and_every_waiting_card_is_on_the_page() {
    let app = spawn_app_with(Options { page_items: Some(4), ..Default::default() }).await;
    let c = app.create_conversation().await;
    for _ in 0..3 {
        let task = app.say(&c, "look up order 1001").await;
        app.wait_task(&task, TaskStatus::Completed).await;
    }
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let first = page(&app, &c).await;
    let whole = app.detail(&c).await.view;
    assert_eq!(first, whole.page(4));
    assert_eq!(first.items.len(), 4, "{:?}", first.items);
    assert_eq!(first.pending_count(), 2);
    assert_eq!(first.earlier, Some(whole.items[whole.items.len() - 4].seq()));
    assert!(first.tasks.len() < whole.tasks.len(), "only the turns on the page");

    // That read kept the page; a decision later, the stored page plus its tail is still the page of everything.
    let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.unwrap();
    eventually("a stored page", || async {
        sqlx::query_scalar::<_, i64>("SELECT last_seq FROM view_pages WHERE conversation_id = $1 AND page_items = 4")
            .bind(c.as_str())
            .fetch_optional(store.testing().pool())
            .await
            .unwrap()
    })
    .await;
    app.post_json(&approvals[0].approve_url, json!({})).await;
    let whole = eventually("the approved refund to run", || async {
        let whole = app.detail(&c).await.view;
        whole.card(&approvals[0].call_id).is_some_and(|card| card.result.is_some()).then_some(whole)
    })
    .await;
    let later = page(&app, &c).await;
    assert_eq!(later, whole.page(4));
    assert_eq!(later.pending_count(), 1, "the card still waiting stays on the page however many items follow");
    assert_eq!(later.card(&approvals[1].call_id).map(|card| card.status), whole.card(&approvals[1].call_id).map(|card| card.status));

    // "Show earlier" until the start gives the whole chat back, in order.
    let mut shown = later;
    while let Some(before) = shown.earlier {
        let (status, body) = app.get_json(&format!("/api/conversations/{c}/items?before={before}&limit=3")).await;
        assert_eq!(status, 200, "{body}");
        shown.prepend(serde_json::from_value::<EarlierItems>(body).unwrap());
    }
    assert_eq!(shown.items, whole.items);

    // Bad cursors and sizes are refused and say which; another user's chat is not found.
    for (query, field) in [("before=0", "/before"), ("before=5&limit=0", "/limit"), ("before=5&limit=501", "/limit")] {
        let (status, body) = app.get_json(&format!("/api/conversations/{c}/items?{query}")).await;
        assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some(field)), "{query}: {body}");
    }
    for query in ["", "before=soon", "before=5&sort=up"] {
        assert_eq!(app.get_json(&format!("/api/conversations/{c}/items?{query}")).await.0, 422, "{query}");
    }
    let (status, body) = app.get_json(&format!("/api/conversations/{c}?items=most")).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/items")), "{body}");
    assert_eq!(app.as_user("bob").get_json(&format!("/api/conversations/{c}/items?before=5")).await.0, 404);
    assert_eq!(page(&app, &c).await.pending_count(), 1, "nothing changed");
    app.post_json(&approvals[1].approve_url, json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
}
