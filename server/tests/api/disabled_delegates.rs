//! A person whose account is turned off decides nothing through anyone else: the delegations they
//! gave or received end with the account (each audited as a revocation), and a delegation still
//! found for a turned-off account gives its delegate nothing. A refused decision changes nothing:
//! the call does not run.

use countersign::bus::Bus;
use engine::clock;
use engine::store;
use serde_json::json;

use crate::helpers::{Options, TestApp, error_code, spawn_app_with};

const AGENTS: &str = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
    [[agents.gates]]\nname = \"cancels\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\ntimeout_secs = 60\napprovers = [\"user:bob\"]\n";

/// An RFC 3339 time `secs` from now.
fn in_secs(secs: i64) -> String {
    clock::rfc3339(clock::now_ms() + secs * 1000)
}

/// Whom alice decides in place of now, as her session says.
async fn stands_in_for(app: &TestApp) -> Vec<String> {
    let (_, me) = app.get_json("/api/session").await;
    serde_json::from_value(me["stands_in_for"].clone()).unwrap_or_default()
}

/// The approval's state, the number of events of its chat and order 1003's status.
async fn state_of(app: &TestApp, conversation: &str, approval: &str) -> (serde_json::Value, usize, String) {
    let (_, body) = app.as_user("root").get_json(&format!("/api/approvals/{approval}")).await;
    (body["state"].clone(), app.detail(conversation).await.events.len(), app.order(1003).await.status)
}

#[tokio::test]
async fn a_turned_off_persons_delegate_no_longer_decides_for_them_and_their_delegations_end() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENTS.into()), ..Default::default() }).await;
    let (bob, root) = (app.as_user("bob"), app.as_user("root"));
    // bob lets alice decide in his place; root lets bob decide in his.
    let (status, body) = bob.post_json("/api/delegations", json!({ "to": "alice", "ends_at": in_secs(3600) })).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = root.post_json("/api/delegations", json!({ "to": "bob", "ends_at": in_secs(3600) })).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(stands_in_for(&app).await, ["bob"]);
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let id = approvals[0].id.to_string();

    // bob leaves: his token stops working, and both delegations end with the account.
    let (status, body) = root.post_json("/api/users/bob/disable", json!({})).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(bob.get_json("/api/session").await.0, 401);
    let (_, all) = root.get_json("/api/delegations").await;
    let ended: Vec<_> = all.as_array().unwrap().iter().map(|d| (d["active"].as_bool(), d["revoked_by"].as_str())).collect();
    assert_eq!(ended, [(Some(false), Some("root")); 2], "{all}");
    let revoked = app.audit_entries("delegation.revoked", 2).await;
    assert!(revoked.iter().all(|e| e["actor"] == "root" && e["data"]["because"] == "user disabled"), "{revoked:?}");
    assert!(stands_in_for(&app).await.is_empty());

    // alice no longer decides as bob: refused, and the cancellation does not run.
    let before = state_of(&app, &c, &id).await;
    assert_eq!((before.0.as_str(), before.2.as_str()), (Some("pending"), "open"));
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    assert_eq!(state_of(&app, &c, &id).await, before, "nothing changed");

    // A delegation from the turned-off account found in force (written around the change, say)
    // gives alice nothing either: who is on is judged with each decision.
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let other = store::Store::connect(&url, Bus::default()).await.unwrap();
    let mut conn = other.testing().pool().acquire().await.unwrap();
    let now = clock::now_ms();
    store::delegations::insert(&mut conn, "bob", "alice", now - 1000, now + 3_600_000, "bob").await.unwrap();
    assert!(stands_in_for(&app).await.is_empty());
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    assert_eq!(state_of(&app, &c, &id).await, before, "nothing changed");
}

/// An approval that names a person alone (`user:bob`) is resolved again when their account is
/// turned off: it falls to the admins rather than to no one, and the admin's approval runs it.
#[tokio::test]
async fn an_approval_naming_a_turned_off_person_falls_to_the_admins() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENTS.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let id = approvals[0].id.to_string();
    let root = app.as_user("root");
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "only bob, not yet the admins: {body}");
    assert_eq!(root.post_json("/api/users/bob/disable", json!({})).await.0, 204);
    let (_, approval) = root.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!((approval["approvers"]["people"].clone(), approval["approvers"]["admins"].clone()), (json!([]), json!(true)), "{approval}");
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, domain::TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "canceled");
}
