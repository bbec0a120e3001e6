//! Grant suggestions: once a person approved the same tool with the same shape of
//! arguments `suggest_grant_after` times in a conversation, the next such card offers them
//! "always allow" with the scope filled in (this tool, this chat, a day); accepting creates the
//! ordinary grant, and the next call runs without asking.

use domain::{TaskStatus, wire::GrantSuggestion};
use serde_json::json;

use crate::helpers::{Options, TestApp, spawn_app_with};

async fn suggestion(app: &TestApp, conversation: &str) -> Option<GrantSuggestion> {
    let detail = app.detail(conversation).await;
    let card = detail.view.cards().filter(|c| c.tool == "process_refund").last().cloned().unwrap();
    card.approval.unwrap().suggestion
}

async fn approve(app: &TestApp, conversation: &str, text: &str, body: serde_json::Value) -> Option<GrantSuggestion> {
    let (task, approvals) = app.pending_turn(conversation, text, 1).await;
    let offered = suggestion(app, conversation).await;
    let (status, reply) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), body).await;
    assert_eq!(status, 200, "{reply}");
    app.wait_task(&task, TaskStatus::Completed).await;
    offered
}

#[tokio::test]
async fn approving_the_same_kind_of_call_again_and_again_offers_to_allow_it_here() {
    let toml = "[defaults]\nsuggest_grant_after = 2\n[[agents]]\nname = \"support\"\n\
                tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
                [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    assert_eq!(approve(&app, &c, "refund order 1001", json!({})).await, None);
    assert_eq!(approve(&app, &c, "refund order 1002", json!({})).await, None, "once is not yet a habit");
    // Another shape of arguments (an amount) is another kind of call.
    assert_eq!(approve(&app, &c, "refund $5 on order 1003", json!({})).await, None);

    let (task, approvals) = app.pending_turn(&c, "refund order 1004", 1).await;
    let offered = suggestion(&app, &c).await.expect("offered after two approvals like it");
    assert_eq!((offered.by.as_str(), offered.count, offered.grant.ttl_secs), ("alice", 2, Some(86_400)));
    // Someone else looking is not offered alice's habit (the card checks `by`); accepting is an
    // approval with the offered grant.
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({ "grant": offered.grant })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let grant = app.audit_entries("grant.created", 1).await;
    assert_eq!(grant[0]["actor"], "alice");

    // The next refund runs without asking.
    let task = app.say(&c, "refund order 1006").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1006).await.status, "refunded");
    assert!(app.pending_approvals_of(&task).await.is_empty());
    // Its card says why it was not asked: whose permission, and what would have asked otherwise.
    let card = app.detail(&c).await.view.cards().filter(|c| c.tool == "process_refund").last().cloned().unwrap();
    let why = card.why.unwrap_or_default();
    assert!(why.starts_with("Not asked: alice allowed process_refund here (grant "), "{why}");
    assert!(why.ends_with("without it, gate \"refunds\" matched: it lists process_refund"), "{why}");
}
