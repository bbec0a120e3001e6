//! Signed decision links: `POST /api/approvals/{id}/links` makes an approve and a
//! reject link for one person; following one without a session shows a confirmation page (a GET
//! never decides), its POST decides once (a second use is a 409 page saying who was first), and
//! forged, cut-off, expired and no-longer-allowed links each get a page saying so while nothing
//! changes.

use domain::TaskStatus;
use serde_json::json;

use crate::helpers::{TestApp, error_code, spawn_app};

/// Status and HTML of a link followed without credentials.
async fn follow(app: &TestApp, method: reqwest::Method, url: &str, form: &[(&str, &str)]) -> (u16, String) {
    let anonymous = app.anonymous();
    let mut request = anonymous.client.request(method.clone(), app.url(url));
    if method == reqwest::Method::POST {
        request = request.form(form);
    }
    let response = request.send().await.expect("link");
    (response.status().as_u16(), response.text().await.unwrap_or_default())
}

async fn state_of(app: &TestApp, id: &str) -> String {
    let (_, body) = app.get_json(&format!("/api/approvals/{id}")).await;
    body["state"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_signed_link_shows_the_call_and_decides_it_once_without_a_session() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();

    // Who may get links: not someone who does not see it, not for someone else unless an admin,
    // not for a name without an account, and not for longer than a week.
    let (status, _) = app.as_user("bob").post_json(&format!("/api/approvals/{id}/links"), json!({})).await;
    assert_eq!(status, 404);
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/links"), json!({ "decider": "bob" })).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    let root = app.as_user("root");
    for (request, path) in [
        (json!({ "decider": "nobody" }), "/decider"),
        (json!({ "decider": "bob" }), "/decider"),
        (json!({ "ttl_secs": 0 }), "/ttl_secs"),
        (json!({ "ttl_secs": 700000 }), "/ttl_secs"),
    ] {
        let (status, body) = root.post_json(&format!("/api/approvals/{id}/links"), request.clone()).await;
        assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some(path)), "{request} → {body}");
    }

    let (status, links) = app.post_json(&format!("/api/approvals/{id}/links"), json!({})).await;
    assert_eq!((status, links["decider"].as_str()), (200, Some("alice")), "{links}");
    let (approve, reject) = (links["approve_url"].as_str().unwrap().to_owned(), links["reject_url"].as_str().unwrap().to_owned());
    assert!(approve.starts_with("/decide/") && approve != reject, "{links}");
    assert!(links["expires_at"].as_str().unwrap() <= approvals[0].deadline.as_str(), "never past the deadline: {links}");
    assert_eq!(app.audit_entries("link.issued", 1).await[0]["data"]["decider"], "alice");

    // Following it shows the call; nothing is decided by looking.
    let (status, html) = follow(&app, reqwest::Method::GET, &approve, &[]).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Approve this call?") && html.contains("Refund $249.00") && html.contains("You decide as alice"), "{html}");
    assert_eq!(state_of(&app, &id).await, "pending");

    // A forged, a cut-off and a foreign link each say why and change nothing.
    let (token, signature) = approve.trim_start_matches("/decide/").split_once('.').unwrap();
    let first = if signature.starts_with('0') { '1' } else { '0' };
    let flipped = format!("{first}{}", &signature[1..]);
    for (url, code, says) in [
        (format!("/decide/{token}.{flipped}"), 400, "not made by this server"),
        (approve[..approve.len() - 5].to_owned(), 400, "not a decision link"),
        ("/decide/nonsense".to_owned(), 400, "not a decision link"),
    ] {
        let (status, html) = follow(&app, reqwest::Method::POST, &url, &[]).await;
        assert_eq!(status, code, "{url}: {html}");
        assert!(html.contains(says), "{url}: {html}");
    }
    assert_eq!(state_of(&app, &id).await, "pending");

    // Its button decides, once, audited as made through the link.
    let (status, html) = follow(&app, reqwest::Method::POST, &approve, &[]).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Approved"), "{html}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
    let decided = app.audit_entries("approval.decided", 1).await;
    assert!(decided[0]["data"]["via"].as_str().unwrap().starts_with("link "), "{decided:?}");
    for url in [&approve, &reject] {
        let (status, html) = follow(&app, reqwest::Method::POST, url, &[("reason", "too late")]).await;
        assert_eq!(status, 409, "{html}");
        assert!(html.contains("already approved by alice"), "{html}");
        // When, to the minute, as the page says its deadline: not an RFC 3339 stamp.
        let when = html.split("already approved by alice (").nth(1).and_then(|rest| rest.split(')').next()).unwrap_or_default();
        assert!(when.len() == 20 && when.ends_with(" UTC") && when.get(10..11) == Some(" "), "{when:?} in {html}");
    }
}

#[tokio::test]
async fn a_link_stops_working_when_it_expires_or_its_person_may_no_longer_decide() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    let (_, short) = app.post_json(&format!("/api/approvals/{id}/links"), json!({ "ttl_secs": 1 })).await;
    let (_, long) = app.post_json(&format!("/api/approvals/{id}/links"), json!({})).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, html) = follow(&app, reqwest::Method::GET, short["reject_url"].as_str().unwrap(), &[]).await;
    assert_eq!(status, 410, "{html}");
    assert!(html.contains("expired"), "{html}");

    // Handed to the admins: alice's link no longer decides it.
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({})).await;
    assert_eq!(status, 200);
    let (status, html) = follow(&app, reqwest::Method::POST, long["approve_url"].as_str().unwrap(), &[]).await;
    assert_eq!(status, 403, "{html}");
    assert!(html.contains("with the admins"), "{html}");
    assert_eq!(state_of(&app, &id).await, "pending");

    // An admin's reject link asks for the reason the gate needs, and rejects with it.
    let (_, admin_links) = app.as_user("root").post_json(&format!("/api/approvals/{id}/links"), json!({})).await;
    let reject = admin_links["reject_url"].as_str().unwrap();
    let (status, html) = follow(&app, reqwest::Method::GET, reject, &[]).await;
    assert!(status == 200 && html.contains("Reject this call?") && html.contains("Reason (optional)"), "{html}");
    let (status, html) = follow(&app, reqwest::Method::POST, reject, &[("reason", "not this month")]).await;
    assert_eq!(status, 200, "{html}");
    let (_, body) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(
        (body["state"].as_str(), body["reason"].as_str(), body["decided_by"].as_str()),
        (Some("rejected"), Some("not this month"), Some("root"))
    );
}

#[tokio::test]
async fn nobody_receives_links_that_decide_as_someone_else() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({ "to": "bob" })).await;
    assert_eq!(status, 200);
    // Bob may decide it now, but his links go only to him: this server sends no email, so an
    // admin's request for them is refused, with no link in the answer and none issued.
    let (status, body) = app.as_user("root").post_json(&format!("/api/approvals/{id}/links"), json!({ "decider": "bob" })).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/decider")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("only bob may receive them"), "{body}");
    assert!(!body.to_string().contains("/decide/"), "{body}");
    let (_, audit) = app.as_user("root").get_json("/api/audit?kind=link.issued").await;
    assert_eq!(audit["entries"].as_array().map(Vec::len), Some(0), "{audit}");
    // Bob asks for his own, and can revoke them before they expire; nobody else but an admin can.
    let bob = app.as_user("bob");
    let (status, links) = bob.post_json(&format!("/api/approvals/{id}/links"), json!({})).await;
    assert_eq!((status, links["decider"].as_str()), (200, Some("bob")), "{links}");
    let revoke = format!("/api/links/{}/revoke", links["link_id"].as_str().unwrap());
    let (status, _) = app.post_json(&revoke, json!({})).await;
    assert_eq!(status, 404, "alice cannot revoke bob's links");
    let (status, _) = bob.post_json(&revoke, json!({})).await;
    assert_eq!(status, 204);
    let (status, body) = bob.post_json(&revoke, json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"), "{body}");
    let (status, html) = follow(&app, reqwest::Method::POST, links["approve_url"].as_str().unwrap(), &[]).await;
    assert_eq!(status, 410, "{html}");
    assert!(html.contains("bob revoked it"), "{html}");
    assert_eq!(state_of(&app, &id).await, "pending");
    assert_eq!(app.audit_entries("link.revoked", 1).await[0]["actor"], "bob");
}
