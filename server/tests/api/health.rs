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
    assert!(html.contains("Refund the rest of order 1001"), "{html}");
    assert!(html.contains("<title>(1) Countersign</title>"), "{html}");
}

#[tokio::test]
async fn an_unknown_page_is_a_404() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/no/such/page")).send().await.unwrap();
    assert_eq!(response.status(), 404);
}
