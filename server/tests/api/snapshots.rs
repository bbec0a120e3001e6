//! Reading a chat in O(recent): `GET /api/conversations/{id}` answers from the stored snapshot of
//! the fold plus the events after it, and once enough events follow the snapshot a read stores a
//! newer one. The fold stays the truth: the answer always equals the fold of the whole log, and a
//! snapshot of another fold version (or one that does not parse) is rebuilt, not trusted.

use app::domain::{ConversationView, TaskStatus, fold::FOLD_VERSION};
use countersign::{bus::Bus, store::Store};

use crate::helpers::{TestApp, database_url, eventually, spawn_app};

/// The view the API answers with (no events), and the fold of the whole log.
async fn both(app: &TestApp, c: &str) -> (ConversationView, ConversationView) {
    let (status, body) = app.get_json(&format!("/api/conversations/{c}")).await;
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
    assert!(whole.last_seq as usize >= countersign::store::snapshots::REFRESH_AFTER, "{}", whole.last_seq);

    // That read stored a snapshot of everything so far.
    let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.unwrap();
    let stored: (i64, i64) = eventually("a snapshot", || async {
        sqlx::query_as("SELECT fold_version, last_seq FROM view_snapshots WHERE conversation_id = $1")
            .bind(c.as_str())
            .fetch_optional(store.pool())
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
            .execute(store.writer())
            .await
            .unwrap();
        let (view, whole) = both(&app, &c).await;
        assert_eq!(view, whole, "version {version}: rebuilt from the events");
    }
    let (status, body) = app.get_json(&format!("/api/conversations/{c}?events=some")).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/events")), "{body}");
}
