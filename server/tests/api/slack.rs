//! The Slack-compatible channel against a local stub of Slack's Web API: a gate with
//! `notify = ["slack"]` posts its approval as a message with buttons (bot token sent); a click
//! signed exactly as Slack signs (`v0:` + timestamp + body, HMAC-SHA256) decides as the linked
//! Countersign user, and the message is then updated; forged, stale and unsigned clicks are 401s,
//! and clicks by unlinked or not-allowed people decide nothing, nor does a reject of a call whose
//! gate requires a reason; a requester's title makes no mention, link or line.

use std::sync::{Arc, Mutex};

use axum::{Json, Router, extract::Path, http::HeaderMap, routing::post};
use domain::TaskStatus;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::helpers::{Options, TestApp, eventually, spawn_app_with};

type Calls = Arc<Mutex<Vec<(String, String, Value)>>>;

/// A stand-in for Slack's Web API: records each call (method, Authorization, body) and answers ok.
async fn stub() -> (String, Calls) {
    let calls: Calls = Arc::default();
    let recorded = calls.clone();
    let app = Router::new().route(
        "/api/{method}",
        post(move |Path(method): Path<String>, headers: HeaderMap, Json(body): Json<Value>| {
            let recorded = recorded.clone();
            async move {
                let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                recorded.lock().unwrap().push((method, auth, body));
                Json(json!({ "ok": true, "channel": "C123", "ts": "1700000000.000100" }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, calls)
}

const SECRET: &str = "slack-signing-secret-for-tests";

/// A button click as Slack sends it: a form with a JSON payload, signed with `secret` at `ts`.
async fn click(app: &TestApp, user: &str, action: &str, approval: &str, secret: &str, ts: i64) -> (u16, Value) {
    let payload = json!({ "type": "block_actions", "user": { "id": user }, "actions": [{ "action_id": action, "value": approval }] });
    let body = serde_urlencoded::to_string([("payload", payload.to_string())]).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{ts}:{body}").as_bytes());
    let signature = format!("v0={}", hex::encode(mac.finalize().into_bytes()));
    let response = app
        .anonymous()
        .client
        .post(app.url("/slack/interactions"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", ts.to_string())
        .header("x-slack-signature", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn an_approval_posted_to_slack_is_decided_by_a_signed_click_and_its_message_updated() {
    let (api, calls) = stub().await;
    // SAFETY: set once, read at start-up; names no other test uses.
    unsafe {
        std::env::set_var("CS_TEST_SLACK_TOKEN", "xoxb-test");
        std::env::set_var("CS_TEST_SLACK_SECRET", SECRET);
    }
    let toml = format!(
        "[[groups]]\nname = \"finance\"\nmembers = [\"bob\"]\n\n\
         [slack]\napi_base_url = \"{api}\"\nbot_token_env = \"CS_TEST_SLACK_TOKEN\"\nsigning_secret_env = \"CS_TEST_SLACK_SECRET\"\nchannel = \"C123\"\n\
         [slack.users]\nU_BOB = \"bob@example.com\"\nU_ALICE = \"alice\"\nU_GONE = \"gone@example.com\"\n\n\
         [[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"group:finance\"]\nnotify = [\"slack\"]\n\
         [[agents.gates]]\nname = \"cancels\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\napprovers = [\"group:finance\"]\nnotify = [\"slack\"]\nrequire_reason = true\n"
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await;
    // bob is linked by his email address (as an identity provider's email claim sets it).
    let store = engine::store::Store::connect(&crate::helpers::database_url(app.data_dir.path()).await, countersign::bus::Bus::default())
        .await
        .unwrap();
    engine::store::users::set_email(store.testing().pool(), "bob", Some("Bob@example.com")).await.unwrap();
    // The requester names the chat: its title must ping, mention, link or add a line to nothing.
    let title = "<!channel> <@U123> <http://evil|click> & ```\nRisk: *low*";
    let (status, body) = app.post_json("/api/conversations", json!({ "title": title })).await;
    assert_eq!(status, 201, "{body}");
    let c = body["id"].as_str().unwrap().to_owned();
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.to_string();

    let posted = eventually("the post", || async { calls.lock().unwrap().first().cloned() }).await;
    assert_eq!(
        (posted.0.as_str(), posted.1.as_str(), posted.2["channel"].as_str()),
        ("chat.postMessage", "Bearer xoxb-test", Some("C123"))
    );
    assert!(posted.2["text"].as_str().unwrap().contains("Refund $249.00"), "{posted:?}");
    let section = posted.2["blocks"][0]["text"].clone();
    let shown = section["text"].as_str().unwrap();
    assert!(shown.contains("chat “&lt;!channel&gt; &lt;@U123&gt; &lt;http://evil|click&gt; &amp; ''' Risk: *low*”"), "{shown}");
    assert!(!shown.contains(['<', '>']) && !shown.lines().any(|l| l.starts_with("Risk: *low*")), "{shown}");
    assert_eq!((section["type"].as_str(), section["verbatim"].as_bool()), (Some("mrkdwn"), Some(true)));
    let buttons = &posted.2["blocks"][2]["elements"];
    assert_eq!((buttons[0]["action_id"].as_str(), buttons[0]["value"].as_str()), (Some("approve"), Some(id.as_str())), "{posted:?}");

    // Refused before anything is read: another secret, a stale timestamp, no signature.
    let state = || async { app.get_json(&format!("/api/approvals/{id}")).await.1["state"].clone() };
    for (secret, ts) in [("not-the-secret", now()), (SECRET, now() - 600)] {
        let (status, body) = click(&app, "U_BOB", "approve", &id, secret, ts).await;
        assert_eq!(status, 401, "{body}");
    }
    let unsigned = app.anonymous().client.post(app.url("/slack/interactions")).body("payload=%7B%7D").send().await.unwrap();
    assert_eq!(unsigned.status(), 401);
    // Signed, but by someone unlinked, or linked and not among the approvers: nothing decided.
    let (status, body) = click(&app, "U_NOBODY", "approve", &id, SECRET, now()).await;
    assert!(status == 200 && body["text"].as_str().unwrap().contains("not linked"), "{body}");
    let (status, body) = click(&app, "U_ALICE", "approve", &id, SECRET, now()).await;
    assert!(status == 200 && body["text"].as_str().unwrap().contains("only finance may decide"), "{body}");
    let (status, body) = click(&app, "U_GONE", "approve", &id, SECRET, now()).await;
    assert!(status == 200 && body["text"].as_str().unwrap().contains("No one Countersign account has the address"), "{body}");
    assert_eq!(state().await, "pending");

    let (status, body) = click(&app, "U_BOB", "approve", &id, SECRET, now()).await;
    assert_eq!((status, body["text"].as_str().map(|t| t.starts_with("approved"))), (200, Some(true)), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, approval) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(approval["decided_by"], "bob");
    let decided = app.audit_entries("approval.decided", 1).await;
    assert_eq!(decided[0]["data"]["via"], "slack U_BOB");

    // The posted message now says how it ended, and has no buttons.
    let update = eventually("the update", || async { calls.lock().unwrap().iter().find(|c| c.0 == "chat.update").cloned() }).await;
    assert_eq!(update.2["ts"], "1700000000.000100");
    assert!(update.2["text"].as_str().unwrap().contains("approved by bob"), "{update:?}");
    assert!(update.2["blocks"].as_array().unwrap().iter().all(|b| b["type"] != "actions"), "{update:?}");
    let sent = app.audit_entries("notification.sent", 2).await;
    assert!(sent.iter().all(|e| e["data"]["channel"] == "slack"), "{sent:?}");
    // A second click on the old buttons decides nothing.
    let (_, body) = click(&app, "U_BOB", "reject", &id, SECRET, now()).await;
    assert!(body["text"].as_str().unwrap().contains("Not decided"), "{body}");

    // A gate that requires a reason to reject: a button has none, so Slack sends the decider to
    // Countersign and decides nothing.
    let (_task, cancels) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let cancel = cancels[0].id.to_string();
    let (status, body) = click(&app, "U_BOB", "reject", &cancel, SECRET, now()).await;
    let text = body["text"].as_str().unwrap();
    assert!(status == 200 && text.contains("needs a reason to reject") && text.contains(&format!("{}/approvals", app.base_url)), "{body}");
    let (_, approval) = app.get_json(&format!("/api/approvals/{cancel}")).await;
    assert_eq!((approval["state"].as_str(), approval["reason"].as_str()), (Some("pending"), None), "{approval}");
}
