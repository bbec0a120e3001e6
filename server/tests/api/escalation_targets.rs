//! Escalation to a named user or group: `POST /api/approvals/{id}/escalate {"to": "finance"}`, or
//! a gate's `escalation_target` when its escalation timeout passes. Afterwards only the people it
//! went to (or an admin) see it in their queue and may decide it; the owner may not. Naming no
//! one known is a 422 that changes nothing.

use domain::{ApprovalState, TaskStatus};
use serde_json::json;

use crate::helpers::{Options, TestApp, error_code, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

async fn app_with(gate_extra: &str) -> TestApp {
    let toml = format!(
        "[[groups]]\nname = \"finance\"\nmembers = [\"Bob\", \"nobody-here\"]\n\n[[agents]]\nname = \"support\"\n{TOOLS}\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n{gate_extra}"
    );
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

#[tokio::test]
async fn an_approval_escalated_to_a_group_is_decided_by_its_members_and_not_by_its_owner() {
    let app = app_with("").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = &approvals[0].id;
    let bob = app.as_user("bob");
    let (status, _) = bob.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(status, 404, "not bob's before it is escalated to him");

    // Naming no one known changes nothing.
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({ "to": "nobody" })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "/to");
    let (_, fresh) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!((fresh["escalated_by"].is_null(), fresh["state"].as_str()), (true, Some("pending")), "{fresh}");

    // Bob's queue stream hears of it when it is handed to his group, and when it is decided.
    let bob_stream = bob.sse("/api/approvals/events", None).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({ "to": "finance" })).await;
    assert_eq!(status, 200, "{body}");
    let heard = crate::helpers::take_events(bob_stream, 1).await;
    assert!(heard[0].event == "queue-changed" && heard[0].data.contains(id.as_str()), "{heard:?}");
    // Members are matched to accounts ignoring case; one without an account is left out.
    assert_eq!((body["escalated_to"].as_str(), body["deciders"].clone()), (Some("finance"), json!(["bob"])));
    // The owner may no longer decide; bob sees it in his queue and decides it.
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("only finance or an admin"), "{body}");
    let queue = bob.pending_approvals_of(&task).await;
    assert_eq!(queue.len(), 1, "bob's queue lists what went to his group");
    let (status, body) = bob.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, done) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!((done["state"].as_str(), done["decided_by"].as_str()), (Some(ApprovalState::Approved.as_str()), Some("bob")));
    let card = app.detail(&c).await.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.approval.unwrap().escalated_to.as_deref(), Some("finance"), "the chat's card says who had it");
}

#[tokio::test]
async fn the_gates_escalation_timeout_hands_it_to_the_gates_target_and_an_admin_can_still_decide() {
    let app = app_with("escalation_timeout_secs = 0.2\nescalation_target = \"bob\"\n").await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    let escalated = crate::helpers::eventually("the escalation timeout", || async {
        let (_, body) = app.get_json(&format!("/api/approvals/{id}")).await;
        body["escalated_to"].is_string().then_some(body)
    })
    .await;
    assert_eq!((escalated["escalated_to"].as_str(), escalated["escalated_by"].as_str()), (Some("bob"), Some("system")));
    assert_eq!(escalated["deciders"], json!(["bob"]));
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/reject"), json!({ "reason": "mine" })).await;
    assert_eq!(status, 403, "the owner no longer decides");
    // A queue stream bob opens now still hears when someone else decides what was handed to him.
    let bob_stream = app.as_user("bob").sse("/api/approvals/events", None).await;
    let (status, body) = app.as_user("root").post_json(&format!("/api/approvals/{id}/reject"), json!({ "reason": "no" })).await;
    assert_eq!(status, 200, "an admin still may: {body}");
    let heard = crate::helpers::take_events(bob_stream, 1).await;
    assert!(heard[0].data.contains(id.as_str()), "{heard:?}");
}

#[tokio::test]
async fn a_group_must_have_a_valid_name_and_members() {
    for (toml, expected) in [
        ("[[groups]]\nname = \"finance\"\nmembers = []\n", "needs members"),
        ("[[groups]]\nname = \"fi nance\"\nmembers = [\"bob\"]\n", "a group's name"),
        ("[[groups]]\nname = \"f\"\nmembers = [\"bob\"]\n[[groups]]\nname = \"f\"\nmembers = [\"bob\"]\n", "declared twice"),
    ] {
        let error = crate::helpers::refused_start_up(&format!("{toml}[[agents]]\nname = \"support\"\n{TOOLS}\n")).await;
        assert!(error.contains(expected), "{toml}: {error}");
    }
}
