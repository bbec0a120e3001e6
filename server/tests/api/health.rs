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
    assert!(html.contains("/countersign.js"), "hydration script is linked: {html}");
}

/// The bundle's path names its build: cached for good there, never served for another build;
/// pages are never cached and every answer names the build (server/src/assets.rs).
#[tokio::test]
async fn the_bundle_is_served_under_its_builds_hash_and_cached_for_good_while_pages_are_not() {
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    for (ext, body) in [("js", "export default 1;"), ("wasm", "\0asm"), ("css", "body{}")] {
        std::fs::write(pkg.join(format!("countersign.{ext}")), body).unwrap();
    }
    std::fs::write(site.path().join("secret.txt"), "not a bundle file").unwrap();
    let app = crate::helpers::spawn_app_with(crate::helpers::Options {
        site_root: Some(site.path().display().to_string()),
        ..Default::default()
    })
    .await;

    let page = app.client.get(app.url("/")).send().await.unwrap();
    let build = page.headers()["x-countersign-build"].to_str().unwrap().to_owned();
    assert_eq!(build.len(), 16, "{build}");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    let html = page.text().await.unwrap();
    assert!(html.contains(&format!("/pkg/{build}/countersign.js")), "{html}");
    assert!(html.contains(&format!("/pkg/{build}/countersign.css")), "{html}");
    assert!(html.contains(&format!(r#"name="countersign-build" content="{build}""#)), "{html}");

    let js = app.client.get(app.url(&format!("/pkg/{build}/countersign.js"))).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert_eq!(js.headers()["cache-control"], "public, max-age=31536000, immutable");
    assert_eq!(js.text().await.unwrap(), "export default 1;");
    // Another build's bundle, a file that is not there, a way out of pkg/: not found.
    for path in [
        "/pkg/0123456789abcdef/countersign.js".to_owned(),
        format!("/pkg/{build}/nope.js"),
        format!("/pkg/{build}/..%2Fsecret.txt"),
        format!("/pkg/{build}/%2E%2E%2Fsecret.txt"),
    ] {
        let response = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
        assert_ne!(
            response.headers().get("cache-control").map(|v| v.to_str().unwrap()),
            Some("public, max-age=31536000, immutable"),
            "{path}"
        );
    }
    let (status, _) = app.get_json("/api/session").await;
    assert_eq!(status, 200);
    let api = app.client.get(app.url("/api/session")).send().await.unwrap();
    assert_eq!(api.headers()["x-countersign-build"].to_str().unwrap(), build);
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
