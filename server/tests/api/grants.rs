//! Grants are bound to what granted them (docs/security.md, "Grants"): a standing grant covers
//! only calls that the same gate, for the same agent, under the same configuration would stop,
//! within the bounds it was given with; a gate that asks each call on its own cannot be granted.
//! Every refused request is checked to change nothing.

use domain::{TaskStatus, fold::Card};
use serde_json::json;

use crate::helpers::{Options, TestApp, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

/// Two gates on refunds: big ones are bob's to decide (first), the rest anyone's.
async fn two_gates() -> TestApp {
    let toml = format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\n\
         [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n\
         approvers = [\"user:bob\"]\ntimeout_secs = 60\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n"
    );
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

/// The card of the turn's refund.
async fn refund_card(app: &TestApp, conversation: &str, task: &str) -> Card {
    let detail = app.detail(conversation).await;
    detail.view.cards().filter(|c| c.tool == "process_refund" && c.task_id == task).last().cloned().expect("a refund card")
}

#[tokio::test]
async fn a_grant_under_one_gate_opens_no_other_gate() {
    let app = two_gates().await;
    let c = app.create_conversation().await;
    let (task, small) = app.pending_turn(&c, "refund $5 on order 1002", 1).await;
    assert_eq!(small[0].gate, "refunds");
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", small[0].id), json!({ "grant": {} })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;

    // A small refund runs under the grant; a big one is asked of bob, and the card says why the
    // grant did not cover it.
    let task = app.say(&c, "refund $4 on order 1003").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(refund_card(&app, &c, &task).await.granted_by.as_deref(), Some("alice"));
    let (task, big) = app.pending_turn(&c, "refund $150 on order 1001", 1).await;
    assert_eq!(big[0].gate, "big-refunds + refunds", "both gates apply");
    let why = refund_card(&app, &c, &task).await.why.unwrap_or_default();
    assert!(why.contains("does not cover it: this gate asks each call on its own"), "{why}");
    assert_eq!(app.order(1001).await.status, "open");

    // Bob decides the big one, but cannot make it a standing grant: its gate names its approvers.
    let bob = app.as_user("bob");
    let before = app.detail(&c).await.events.len();
    let (status, body) = bob.post_json(&format!("/api/approvals/{}/approve", big[0].id), json!({ "grant": {} })).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/grant")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("approvers"), "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing was recorded");
    let (status, body) = bob.post_json(&format!("/api/approvals/{}/approve", big[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
}

#[tokio::test]
async fn a_grant_bounded_to_the_approved_amount_covers_no_more() {
    let app = two_gates().await;
    let c = app.create_conversation().await;
    let (task, first) = app.pending_turn(&c, "refund $5 on order 1002", 1).await;
    let approve = format!("/api/approvals/{}/approve", first[0].id);
    // Bounds that are not one of the kinds: refused, nothing decided.
    let (status, body) = app.post_json(&approve, json!({ "grant": { "args": "sideways" } })).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1);
    let (status, body) = app.post_json(&approve, json!({ "grant": { "args": "at_most" } })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let grant = app.detail(&c).await.view.grants[0].clone();
    let cap = grant.bounds.as_ref().and_then(|b| b["at_most"]["amount"].as_f64());
    assert_eq!((grant.gate.as_deref(), cap), (Some("refunds"), Some(5.0)), "{grant:?}");

    let task = app.say(&c, "refund $4 on order 1003").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(refund_card(&app, &c, &task).await.granted_by.as_deref(), Some("alice"));
    let (task, more) = app.pending_turn(&c, "refund $6 on order 1004", 1).await;
    assert_eq!(more[0].gate, "refunds");
    let why = refund_card(&app, &c, &task).await.why.unwrap_or_default();
    assert!(why.contains("amount 6 is above the 5 approved"), "{why}");
}
