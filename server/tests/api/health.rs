use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use crate::helpers::spawn_app;

#[tokio::test]
async fn healthz_reports_ok_with_a_reachable_database() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["database"], "ok");
}

#[tokio::test]
async fn the_database_file_is_created_and_migrated_on_start_up() {
    let app = spawn_app().await;
    if crate::helpers::sqlite_only("the_database_file_is_created_and_migrated_on_start_up") {
        assert!(app.data_dir.path().join("countersign.db").exists());
    }
}

#[tokio::test]
async fn the_home_page_is_server_rendered_with_the_hydration_script() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    assert!(html.contains("New chat"), "{html}");
    assert!(html.contains("/pkg/countersign.js"), "hydration script is linked: {html}");
}

#[tokio::test]
async fn a_chat_page_is_rendered_with_its_cards_in_their_state() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    app.pending_turn(&c, "refund order 1001", 1).await;
    let html = app.client.get(app.url(&format!("/c/{c}"))).send().await.unwrap().text().await.unwrap();
    assert!(html.contains(r#"data-status="pending_approval""#), "{html}");
    assert!(html.contains("Refund $249.00 (everything left) on order 1001"), "{html}");
    assert!(html.contains("<title>(1) Countersign</title>"), "{html}");
}

#[tokio::test]
async fn an_unknown_page_is_a_404() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/no/such/page")).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

/// The conditions of a hang once seen in the suite: servers starting in the same process while
/// pages render. Starting a server generated Leptos' route list under a process-wide "suppress
/// resource loads" flag, and a page whose data load began in that window never finished (the
/// browser would show half a page forever). Every page must arrive whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_render_whole_while_other_servers_start_in_the_same_process() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    app.pending_turn(&c, "refund order 1001", 1).await;
    let starting = Arc::new(AtomicBool::new(true));
    let rendered = Arc::new(AtomicU32::new(0));
    let renderers: Vec<_> = (0..3)
        .map(|_| {
            let (app, c, starting, rendered) = (app.clone(), c.clone(), starting.clone(), rendered.clone());
            tokio::spawn(async move {
                while starting.load(Ordering::SeqCst) {
                    let response = app.client.get(app.url(&format!("/c/{c}"))).timeout(Duration::from_secs(15)).send().await;
                    let html = response.expect("the page answers").text().await.expect("the whole page arrives in time");
                    assert!(html.contains(r#"data-status="pending_approval""#) && html.contains("</html>"), "{html}");
                    rendered.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for _ in 0..6 {
        spawn_app().await;
    }
    starting.store(false, Ordering::SeqCst);
    for renderer in renderers {
        renderer.await.expect("every render finished");
    }
    assert!(rendered.load(Ordering::SeqCst) > 0);
}
