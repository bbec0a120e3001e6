//! Bad input gets a clear JSON error and changes nothing.

use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, error_code, raw_post, spawn_app, spawn_app_with};

/// A 422's `details`: always a list of `{path, message}`, whatever refused the request (the
/// body's shape, a query parameter, a rule); the paths, in order.
fn problem_paths(body: &Value) -> Vec<String> {
    let details = body["error"]["details"].as_array().unwrap_or_else(|| panic!("details is a list: {body}"));
    assert!(!details.is_empty(), "{body}");
    details
        .iter()
        .map(|d| {
            assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()), "a message for people: {body}");
            d["path"].as_str().unwrap_or_else(|| panic!("a path: {body}")).to_owned()
        })
        .collect()
}

async fn conversation_count(app: &TestApp) -> usize {
    app.get_json("/api/conversations").await.1.as_array().unwrap().len()
}

#[tokio::test]
async fn malformed_json_is_400_and_creates_nothing() {
    let app = spawn_app().await;
    let (status, body) = raw_post(&app, "/api/conversations", "application/json", "{\"title\": ").await;
    assert_eq!((status, error_code(&body)), (400, "bad_request"), "{body}");
    assert_eq!(conversation_count(&app).await, 0);
}

#[tokio::test]
async fn wrong_types_and_missing_fields_are_422() {
    let app = spawn_app().await;
    let (status, body) = app.post_json("/api/conversations", json!({ "title": 5 })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"));
    assert_eq!(problem_paths(&body), ["/title"]);
    let c = app.create_conversation().await;
    let path = format!("/api/conversations/{c}/messages");
    for bad in [json!({}), json!({ "text": 42 }), json!({ "text": "   " }), json!({ "text": "x".repeat(8001) }), json!({ "txt": "hi" })] {
        let (status, body) = app.post_json(&path, bad.clone()).await;
        assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{bad}");
        problem_paths(&body);
    }
    assert!(app.detail(&c).await.events.is_empty(), "no event was appended");
}

#[tokio::test]
async fn a_missing_content_type_is_415() {
    let app = spawn_app().await;
    let (status, body) = raw_post(&app, "/api/conversations", "text/plain", "{}").await;
    assert_eq!((status, error_code(&body)), (415, "unsupported_media_type"));
}

#[tokio::test]
async fn an_unknown_agent_is_422() {
    let app = spawn_app().await;
    let (status, body) = app.post_json("/api/conversations", json!({ "agent": "nobody" })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"));
    assert!(body["error"]["message"].as_str().unwrap().contains("nobody"));
}

#[tokio::test]
async fn unknown_ids_are_404_everywhere() {
    let app = spawn_app().await;
    for path in ["/api/conversations/nope", "/api/tasks/nope", "/api/orders/9999", "/api/orders/abc", "/api/no-such-route"] {
        let (status, body) = app.get_json(path).await;
        assert_eq!((status, error_code(&body)), (404, "not_found"), "{path}");
    }
    let (status, body) = app.post_json("/api/conversations/nope/messages", json!({ "text": "hi" })).await;
    assert_eq!((status, error_code(&body)), (404, "not_found"));
    let response = app.client.get(app.url("/api/conversations/nope/events")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(error_code(&body), "not_found");
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_and_changes_nothing() {
    let app = spawn_app_with(Options { body_limit: Some(1024), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let big = json!({ "text": "x".repeat(4096) }).to_string();
    let (status, body) = raw_post(&app, &format!("/api/conversations/{c}/messages"), "application/json", big.clone()).await;
    assert_eq!((status, error_code(&body)), (413, "payload_too_large"), "{body}");
    assert_eq!(body["error"]["message"], "the request body is too large: at most 1 KiB (COUNTERSIGN_BODY_LIMIT)");
    assert!(app.detail(&c).await.events.is_empty());
    // The body was left unread: the answer closes the connection, so that a client does not send
    // its next request down it.
    let response = app
        .client
        .post(app.url(&format!("/api/conversations/{c}/messages")))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .expect("the request");
    assert_eq!(response.status(), 413);
    assert_eq!(response.headers().get("connection").and_then(|v| v.to_str().ok()), Some("close"));
}

#[tokio::test]
async fn a_second_message_while_the_task_waits_is_409() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    app.pending_turn(&c, "refund order 1001", 1).await;
    let before = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "hello?" })).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"));
    assert_eq!(app.detail(&c).await.events.len(), before);
}

#[tokio::test]
async fn bad_query_parameters_are_422() {
    let app = spawn_app().await;
    for (path, field) in
        [("/api/approvals?status=maybe", "/status"), ("/api/approvals?limit=0", "/limit"), ("/api/approvals?limit=abc", "/limit")]
    {
        let (status, body) = app.get_json(path).await;
        assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{path}");
        assert_eq!(problem_paths(&body), [field], "{path}");
    }
}

#[tokio::test]
async fn malformed_decision_bodies_are_refused_and_the_approval_stays_pending() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}/approve", approvals[0].id);
    let (status, _) = raw_post(&app, &path, "application/json", "{oops").await;
    assert_eq!(status, 400);
    let (status, _) = app.post_json(&path, json!({ "args": 5 })).await;
    assert_eq!(status, 422);
    let (status, _) = app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({ "reason": ["x"] })).await;
    assert_eq!(status, 422);
    // A grant's numbers may come as whole floats (`2.0`), never as fractions.
    let (status, body) = app.post_json(&path, json!({ "grant": { "max_uses": 2.5 } })).await;
    assert_eq!((status, problem_paths(&body)), (422, vec!["/grant/max_uses".to_owned()]), "{body}");
    assert!(body["error"]["details"][0]["message"].as_str().unwrap().contains("must be a whole number"), "{body}");
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1);
}

#[tokio::test]
async fn nul_characters_are_refused_with_a_clear_error_and_nothing_is_stored() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "refund\u{0}order" })).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("NUL"), "{body}");
    assert!(app.detail(&c).await.events.is_empty(), "nothing was stored");
    let (status, body) = app.post_json("/api/conversations", json!({ "title": "a\u{0}b" })).await;
    assert_eq!(status, 422, "{body}");

    for path in ["/api/conversations/%00", "/api/approvals?tool=%00x"] {
        let (status, body) = app.get_json(path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(error_code(&body), "bad_request");
    }
    // The login form with a NUL in the name is a failed login, not a server error.
    let response = app
        .anonymous()
        .client
        .post(app.url("/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("username=al%00ice&password=x")
        .send()
        .await
        .unwrap();
    assert!(response.status().is_redirection() || response.status() == 200, "{}", response.status());
    assert!(
        response.url().as_str().contains("failed=1")
            || response.headers().get("location").is_some_and(|l| l.to_str().unwrap().contains("failed=1"))
    );
}
