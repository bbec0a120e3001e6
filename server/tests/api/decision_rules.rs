//! Per-gate decision rules and presets: a gate may require a reason to reject
//! (`require_reason = true`) and forbid edited arguments (`allow_modification = false`); a refused
//! decision is a 422 naming the field and changes nothing. `preset = "paranoid"` asks before every
//! call with both rules.

use domain::TaskStatus;
use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, error_code, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

async fn app_with(agent: &str) -> TestApp {
    let toml = format!("[[agents]]\nname = \"support\"\n{TOOLS}\n{agent}");
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

/// The approval's state and the number of events of its chat: what a refused decision must not change.
async fn unchanged(app: &TestApp, conversation: &str, approval: &str) -> (Value, usize) {
    let (_, body) = app.get_json(&format!("/api/approvals/{approval}")).await;
    (body["state"].clone(), app.detail(conversation).await.events.len())
}

#[tokio::test]
async fn a_gate_that_requires_a_reason_and_forbids_edits_refuses_other_decisions_and_changes_nothing() {
    let app = app_with(
        "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
         require_reason = true\nallow_modification = false\n",
    )
    .await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let approval = &approvals[0];
    assert_eq!((approval.rules.require_reason, approval.rules.allow_modification), (true, false));
    assert_eq!(approval.approve_url, format!("/api/approvals/{}/approve", approval.id));
    assert_eq!(approval.reject_url, format!("/api/approvals/{}/reject", approval.id));
    // The chat's card carries the same rules (the card hides Edit and asks for a reason).
    let detail = app.detail(&c).await;
    let card = detail.view.items.iter().find_map(|i| match i {
        domain::Item::Card(card) => card.approval.clone(),
        _ => None,
    });
    assert_eq!(card.map(|a| (a.rules.require_reason, a.rules.allow_modification)), Some((true, false)));

    let before = unchanged(&app, &c, &approval.id).await;
    for body in [json!({}), json!({ "reason": "   " })] {
        let (status, answer) = app.post_json(&approval.reject_url, body.clone()).await;
        assert_eq!((status, error_code(&answer)), (422, "unprocessable"), "{body}: {answer}");
        assert_eq!(answer["error"]["details"][0]["path"], "/reason", "{answer}");
        assert_eq!(unchanged(&app, &c, &approval.id).await, before, "a refused rejection changed nothing");
    }
    let edited = json!({ "args": { "order_id": 1002 } });
    let (status, answer) = app.post_json(&approval.approve_url, edited).await;
    assert_eq!((status, error_code(&answer)), (422, "unprocessable"), "{answer}");
    assert_eq!(answer["error"]["details"][0]["path"], "/args", "{answer}");
    assert_eq!(unchanged(&app, &c, &approval.id).await, before, "a refused edit changed nothing");

    // The arguments as proposed are fine, sent back or not.
    let (status, answer) = app.post_json(&approval.approve_url, json!({ "args": approval.args })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["outcome"], "approved");
}

#[tokio::test]
async fn the_paranoid_preset_asks_before_every_call_and_insists_on_a_reason() {
    let app = app_with("preset = \"paranoid\"\n").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(approvals[0].gate, "preset-paranoid");
    assert_eq!((approvals[0].rules.require_reason, approvals[0].rules.allow_modification), (true, false));
    let before = unchanged(&app, &c, &approvals[0].id).await;
    let (status, answer) = app.post_json(&format!("/api/tasks/{task}/reject-all"), json!({})).await;
    assert_eq!((status, error_code(&answer)), (422, "unprocessable"), "{answer}");
    assert_eq!(unchanged(&app, &c, &approvals[0].id).await, before, "Reject All without a reason changed nothing");
    let (status, answer) = app.post_json(&format!("/api/tasks/{task}/reject-all"), json!({ "reason": "not today" })).await;
    assert_eq!(status, 200, "{answer}");
    app.wait_task(&task, TaskStatus::Completed).await;
}

#[tokio::test]
async fn an_unknown_preset_or_a_misspelled_rule_stops_the_start_up_with_a_clear_error() {
    let bad = crate::helpers::refused_start_up(&format!("[[agents]]\nname = \"support\"\n{TOOLS}\npreset = \"lenient\"\n")).await;
    assert!(bad.contains("unknown preset \"lenient\""), "{bad}");
    let typo = crate::helpers::refused_start_up(&format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\n[[agents.gates]]\nname = \"g\"\nkind = \"all\"\nrequire_reasons = true\n"
    ))
    .await;
    assert!(typo.contains("require_reasons"), "{typo}");
}

/// Four-eyes (`separate_requester = true`): the user whose chat made the call cannot approve it,
/// alone or with Approve All (403, nothing changes), but may reject it; an admin approves it.
#[tokio::test]
async fn a_four_eyes_gate_keeps_the_requester_from_approving_and_lets_someone_else() {
    let app =
        app_with("[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nseparate_requester = true\n").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let approval = &approvals[0];
    assert!(approval.rules.separate_requester, "the approval keeps its gate's rule");
    let before = unchanged(&app, &c, &approval.id).await;
    for (url, body) in [
        (approval.approve_url.clone(), json!({})),
        (approval.approve_url.clone(), json!({ "args": { "order_id": 1001, "amount": 1 } })),
        (approval.approve_url.clone(), json!({ "grant": {} })),
        (format!("/api/tasks/{task}/approve-all"), json!({})),
    ] {
        let (status, answer) = app.post_json(&url, body.clone()).await;
        assert_eq!((status, error_code(&answer)), (403, "forbidden"), "{url} {body}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().starts_with("four-eyes: alice asked for this call"), "{answer}");
        assert_eq!(unchanged(&app, &c, &approval.id).await, before, "{url} {body} changed nothing");
    }
    assert_eq!(app.order(1001).await.status, "open", "nothing was refunded");
    // Someone else (an admin: the only other person who sees alice's chat) approves it.
    let (status, answer) = app.as_user("root").post_json(&approval.approve_url, json!({})).await;
    assert_eq!(status, 200, "{answer}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");

    // The requester may still reject their own call.
    let (task, approvals) = app.pending_turn(&app.create_conversation().await, "refund order 1004", 1).await;
    let (status, answer) = app.post_json(&approvals[0].reject_url, json!({ "reason": "changed my mind" })).await;
    assert_eq!(status, 200, "{answer}");
    app.wait_task(&task, TaskStatus::Completed).await;
}

#[tokio::test]
async fn a_four_eyes_gate_answered_in_the_chat_stops_the_start_up() {
    let toml = format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\n[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
         separate_requester = true\nconfirm = \"chat\"\n"
    );
    let err = crate::helpers::refused_start_up(&toml).await;
    assert!(err.contains("separate_requester needs someone else to approve, so it cannot go with confirm = \"chat\""), "{err}");
}
