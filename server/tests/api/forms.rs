//! The page's decisions as plain HTML forms (server/src/forms.rs), posted as a browser without
//! JavaScript posts them: a session cookie, `Sec-Fetch-Site`, a form body, no redirects
//! followed. They decide under the API's rules and leave the API's audit entry; every refusal
//! changes nothing.

use domain::{ApprovalState, TaskStatus};
use reqwest::{
    Client, StatusCode,
    header::{CONTENT_TYPE, LOCATION},
};
use serde_json::json;

use crate::helpers::{PASSWORD, TestApp, spawn_app, test_client};

/// A browser logged in as `user`: its session cookie, no redirects followed.
async fn browser(app: &TestApp, user: &str) -> Client {
    let client = test_client().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let login = client.post(app.url("/api/session")).json(&json!({ "username": user, "password": PASSWORD })).send().await.unwrap();
    assert_eq!(login.status(), 200);
    client
}

/// Posts `form` to `path` as a page of this site does; the status and where it sends the browser.
async fn post(app: &TestApp, client: &Client, path: &str, form: &[(&str, &str)]) -> (StatusCode, String, String) {
    let response = client.post(app.url(path)).header("sec-fetch-site", "same-origin").form(form).send().await.unwrap();
    let status = response.status();
    let location = response.headers().get(LOCATION).map(|l| l.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, location, response.text().await.unwrap())
}

async fn state_of(app: &TestApp, id: &str) -> (ApprovalState, serde_json::Value) {
    let (status, approval) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(status, 200, "{approval}");
    (serde_json::from_value(approval["state"].clone()).unwrap(), approval)
}

#[tokio::test]
async fn a_browser_without_javascript_decides_with_forms_under_the_same_rules() {
    let app = spawn_app().await;
    let (alice, bob) = (browser(&app, "alice").await, browser(&app, "bob").await);
    let c = app.create_conversation().await;
    let back = format!("/c/{c}");
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let form = format!("/forms/approvals/{}", approvals[0].id);
    let approve = [("decision", "approve"), ("back", back.as_str())];

    // Refused, each changing nothing: another site's form, someone who may not see the chat, a
    // token that may only call, and no one logged in (sent to log in, then back).
    let cross = alice.post(app.url(&form)).header("sec-fetch-site", "cross-site").form(&approve).send().await.unwrap();
    assert_eq!(cross.status(), 403);
    assert!(cross.headers()[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"), "a browser's refusal is a page");
    let page = cross.text().await.unwrap();
    assert!(page.contains("cross-site requests are refused") && page.contains("<a href=\"/\">Back</a>"), "{page}");
    assert!(page.contains("sent from another site") && !page.contains("Not yours to decide"), "{page}");
    let (status, _, page) = post(&app, &bob, &form, &approve).await;
    assert_eq!(status, 404, "{page}");
    assert!(page.contains("<a href=\"/c/"), "the refusal leads back: {page}");
    let token = alice.post(app.url("/api/tokens")).json(&json!({ "name": "caller", "scopes": ["call"] })).send().await.unwrap();
    assert_eq!(token.status(), 201);
    let token: serde_json::Value = token.json().await.unwrap();
    let caller = crate::helpers::client_with_token(token["token"].as_str().unwrap());
    assert_eq!(caller.post(app.url(&form)).form(&approve).send().await.unwrap().status(), 403);
    let anonymous = test_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = anonymous.post(app.url(&form)).header("sec-fetch-site", "same-origin").form(&approve).send().await.unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()[LOCATION], format!("/login?next=/c/{c}").as_str());
    assert_eq!(state_of(&app, approvals[0].id.as_ref()).await.0, ApprovalState::Pending);
    assert_eq!(app.order(1001).await.refunded, 0.0);

    // Approve: back to the chat (never to another site), the call runs, audited as from the API.
    let (status, location, _) = post(&app, &alice, &form, &[("decision", "approve"), ("back", "//evil.example")]).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/"));
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.refunded, 249.0);
    let decided = app.audit_entries("approval.decided", 1).await;
    assert_eq!(decided[0]["actor"], "alice", "{decided:?}");
    // Again: already decided, said on a page, nothing changes.
    let (status, _, page) = post(&app, &alice, &form, &approve).await;
    assert_eq!(status, 409, "{page}");

    // Reject from the card: first the page to write the reason, then the rejection with it.
    let (task, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    let form = format!("/forms/approvals/{}", approvals[0].id);
    let (status, location, _) = post(&app, &alice, &form, &[("decision", "reject"), ("back", back.as_str())]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location, format!("{form}?decision=reject&back=/c/{c}"));
    let page = alice.get(app.url(&location)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Reason (optional, the agent sees it)") && page.contains("Confirm reject"), "{page}");
    assert_eq!(state_of(&app, approvals[0].id.as_ref()).await.0, ApprovalState::Pending, "asking for the reason decides nothing");
    let (status, location, _) =
        post(&app, &alice, &form, &[("decision", "reject"), ("reason", " not now "), ("back", back.as_str())]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, back.clone()));
    app.wait_task(&task, TaskStatus::Completed).await;
    let (state, approval) = state_of(&app, approvals[0].id.as_ref()).await;
    assert_eq!((state, approval["reason"].as_str()), (ApprovalState::Rejected, Some("not now")));
    assert_eq!(app.order(1002).await.refunded, 0.0);
}

#[tokio::test]
async fn a_question_and_a_whole_turn_are_decided_with_forms() {
    let app = spawn_app().await;
    let alice = browser(&app, "alice").await;
    let c = app.create_conversation().await;
    let back = format!("/c/{c}");

    // The agent's question, answered with the form's text box.
    let (asked, questions) = app.pending_turn(&c, "refund an order", 1).await;
    let form = format!("/forms/approvals/{}", questions[0].id);
    let (status, _, page) = post(&app, &alice, &form, &[("answer", "  "), ("back", back.as_str())]).await;
    assert_eq!(status, 422, "an empty answer is refused: {page}");
    let (status, location, _) = post(&app, &alice, &form, &[("answer", "1002"), ("back", back.as_str())]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, back.clone()));
    let (state, approval) = state_of(&app, questions[0].id.as_ref()).await;
    assert_eq!(state, ApprovalState::Approved);
    assert_eq!(approval["edited_args"]["answer"], "1002", "{approval}");
    // The answer carries the turn on to the refund it names, declined with the form's button.
    let refund = crate::helpers::eventually("the refund the answer asked for", || async {
        app.pending_approvals_of(&asked).await.into_iter().next()
    })
    .await;
    let form = format!("/forms/approvals/{}", refund.id);
    let (status, location, _) = post(&app, &alice, &form, &[("decision", "reject"), ("reason", ""), ("back", back.as_str())]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, back.clone()));
    app.wait_task(&asked, TaskStatus::Completed).await;
    assert_eq!(state_of(&app, refund.id.as_ref()).await.0, ApprovalState::Rejected);

    // Approve All: every call of the turn.
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1003", 2).await;
    let all = format!("/forms/tasks/{task}");
    let (status, _, page) = post(&app, &alice, &all, &[("decision", "maybe"), ("back", back.as_str())]).await;
    assert_eq!(status, 422, "{page}");
    assert_eq!(state_of(&app, approvals[0].id.as_ref()).await.0, ApprovalState::Pending);
    let (status, location, _) = post(&app, &alice, &all, &[("decision", "approve"), ("back", back.as_str())]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, back.clone()));
    for approval in &approvals {
        assert_eq!(state_of(&app, approval.id.as_ref()).await.0, ApprovalState::Approved);
    }
}

#[tokio::test]
async fn a_form_answers_only_a_question_and_comes_back_only_to_a_page_of_decisions() {
    let app = spawn_app().await;
    let alice = browser(&app, "alice").await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let form = format!("/forms/approvals/{}", approvals[0].id);

    // An "answer" to a call that is no question: refused, the call still waits as proposed.
    let (status, _, page) = post(&app, &alice, &form, &[("answer", "1002"), ("back", "/audit?kind=secret")]).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("<a href=\"/\">Back</a>") && !page.contains("secret"), "only a page of decisions is linked back: {page}");
    let (state, approval) = state_of(&app, approvals[0].id.as_ref()).await;
    assert_eq!((state, approval["edited_args"].clone()), (ApprovalState::Pending, serde_json::Value::Null));

    // A chat's path with a query another site chose: back to the chats, the query not repeated.
    let reject = [("decision", "reject"), ("back", &format!("/c/{c}?q=guess") as &str)];
    let (status, location, _) = post(&app, &alice, &form, &reject).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, format!("{form}?decision=reject&back=/").as_str()));
}
