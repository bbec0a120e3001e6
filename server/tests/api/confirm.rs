//! Conversational confirmation: a gate with `confirm = "chat"` is answered
//! by the user's yes/no reply, stored and audited as the same decision, bound to one call.

use domain::{EventBody, TaskStatus};
use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, assistant_texts, database_url, named, spawn_app_with};

const AGENTS: &str = "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"process_refund\"]\n\
[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nconfirm = \"chat\"\n";

async fn app() -> TestApp {
    spawn_app_with(Options { agents_toml: Some(AGENTS.into()), ..Default::default() }).await
}

async fn reply(app: &TestApp, conversation: &str, text: &str) -> Value {
    let (status, body) = app.post_json(&format!("/api/conversations/{conversation}/messages"), json!({ "text": text })).await;
    assert_eq!(status, 202, "{body}");
    body
}

async fn approval_state(app: &TestApp, id: &str) -> Value {
    let (status, body) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn the_agent_asks_in_the_chat_an_unclear_answer_asks_again_and_yes_runs_the_call_once() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let detail = app.detail(&c).await;
    let required = named(&detail.events, "approval-required");
    assert!(matches!(&required[0].body, EventBody::ApprovalRequired { in_chat: true, .. }));
    let asked = named(&detail.events, "confirmation-asked");
    assert_eq!(asked.len(), 1);
    let card = detail.view.card(&approvals[0].call_id).unwrap();
    assert!(card.approval.as_ref().unwrap().in_chat, "the card shows no buttons");

    for unclear in ["maybe later", "yes, but only half"] {
        let body = reply(&app, &c, unclear).await;
        assert_eq!(body["confirmation"], "asked_again", "{unclear}");
        assert_eq!(body["task_id"], task.as_str());
    }
    assert_eq!(approval_state(&app, &approvals[0].id).await["state"], "pending");
    assert_eq!(app.order(1001).await.status, "open", "nothing ran on an unclear answer");
    assert_eq!(named(&app.detail(&c).await.events, "confirmation-asked").len(), 3, "asked again after each unclear answer");

    let body = reply(&app, &c, "Yes!").await;
    assert_eq!(body["confirmation"], "approved");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
    let approval = approval_state(&app, &approvals[0].id).await;
    assert_eq!((approval["state"].as_str(), approval["decided_by"].as_str()), (Some("approved"), Some("alice")));

    let detail = app.detail(&c).await;
    let decided = named(&detail.events, "approval-decided");
    assert_eq!(decided.len(), 1, "one decision event, as from the card");
    let replies: Vec<_> = detail.events.iter().filter(|e| matches!(&e.body, EventBody::UserMessage { reply_to: Some(_), .. })).collect();
    assert_eq!(replies.len(), 3, "the answers are shown in the chat, bound to the approval");
    assert_eq!(named(&detail.events, "tool-result").len(), 1);

    // Audited the same way as a button press.
    let (_, page) = app.as_user("root").get_json("/api/audit?kind=approval.decided").await;
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{page}");
    assert_eq!((entries[0]["actor"].as_str(), entries[0]["data"]["outcome"].as_str()), (Some("alice"), Some("approved")));

    // With nothing waiting, the next message starts a new turn.
    let body = reply(&app, &c, "yes").await;
    assert!(body.get("confirmation").is_none(), "{body}");
    assert_ne!(body["task_id"], task.as_str());
}

#[tokio::test]
async fn no_rejects_the_call_and_the_model_hears_the_reason() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    assert_eq!(reply(&app, &c, "nope").await["confirmation"], "rejected");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1002).await.status, "open", "a no never runs the call");
    let approval = approval_state(&app, &approvals[0].id).await;
    assert_eq!(approval["state"], "rejected");
    assert!(approval["reason"].as_str().unwrap().contains("nope"), "{approval}");
    let texts = assistant_texts(&app.detail(&c).await.events);
    assert!(texts.last().unwrap().contains("rejected"), "{texts:?}");
}

#[tokio::test]
async fn each_answer_decides_exactly_one_call_the_oldest_waiting() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let first = reply(&app, &c, "yes").await;
    let decided_first = first["approval_id"].as_str().unwrap().to_owned();
    let other = approvals.iter().find(|a| a.id != decided_first).unwrap();
    assert_eq!(approval_state(&app, &decided_first).await["state"], "approved");
    assert_eq!(approval_state(&app, &other.id).await["state"], "pending", "one answer, one call");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);

    let second = reply(&app, &c, "no").await;
    assert_eq!(second["approval_id"], other.id.as_str());
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(approval_state(&app, &other.id).await["state"], "rejected");
}

#[tokio::test]
async fn another_user_cannot_answer_and_nothing_changes() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let before = app.detail(&c).await.events.len();
    let (status, body) = app.as_user("bob").post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes" })).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before);
    assert_eq!(approval_state(&app, &approvals[0].id).await["state"], "pending");
}

#[tokio::test]
async fn a_confirm_mode_other_than_card_or_chat_stops_start_up_naming_the_gate() {
    let message = crate::helpers::refused_start_up(&AGENTS.replace("confirm = \"chat\"", "confirm = \"email\"")).await;
    assert!(message.contains("gate \"refunds\"") && message.contains("confirm must be \"card\" or \"chat\""), "{message}");
}

#[tokio::test]
async fn chat_answers_count_against_the_decision_rate_limit_and_a_refused_one_changes_nothing() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENTS.into()), decisions_per_minute: Some(2), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    for _ in 0..2 {
        assert_eq!(reply(&app, &c, "maybe").await["confirmation"], "asked_again");
    }
    let before = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes" })).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing stored");
    assert_eq!(approval_state(&app, &approvals[0].id).await["state"], "pending");
}

#[tokio::test]
async fn once_handed_to_the_admins_a_chat_answer_from_the_user_is_refused_and_changes_nothing() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{}/escalate", approvals[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let before = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes" })).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("with the admins"), "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing stored");
    assert_eq!(approval_state(&app, &approvals[0].id).await["state"], "pending");
}

/// A gate that asks in the chat has no four-eyes, quorum or approvers (refused at start-up), and
/// beside a gate that has one the call is asked on the card: the requester's "yes" in the chat
/// then decides nothing (the turn still waits: 409), and the card's rules stand.
#[tokio::test]
async fn beside_a_four_eyes_gate_the_call_is_asked_on_the_card_and_the_requesters_yes_runs_nothing() {
    let four_eyes = "[[agents.gates]]\nname = \"four-eyes\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nseparate_requester = true\n";
    let app = spawn_app_with(Options { agents_toml: Some(format!("{AGENTS}{four_eyes}")), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(approvals[0].gate, "four-eyes + refunds");
    let detail = app.detail(&c).await;
    assert!(matches!(&named(&detail.events, "approval-required")[0].body, EventBody::ApprovalRequired { in_chat: false, .. }));
    assert!(named(&detail.events, "confirmation-asked").is_empty(), "nothing is asked in the chat");

    let before = detail.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes" })).await;
    assert_eq!(status, 409, "the turn waits for a decision on its card: {body}");
    let (status, body) = app.post_json(&approvals[0].approve_url, json!({})).await;
    assert_eq!(status, 403, "four-eyes: {body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing stored");
    assert_eq!(approval_state(&app, &approvals[0].id).await["state"], "pending");
    assert_eq!(app.order(1001).await.status, "open", "nothing ran");

    let (status, body) = app.as_user("root").post_json(&approvals[0].approve_url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
}

/// A yes in the chat is the card's Approve, judged by the same rules in the same write, whatever
/// the approval carries. The configuration cannot give a chat approval four-eyes or a quorum, so
/// they are written into its row here (as an approval kept from elsewhere would carry them):
/// four-eyes refuses the requester's yes (409, nothing stored, nothing run); under a quorum of 2
/// the yes counts once, the call waits, a second yes is refused, and another person's approval
/// runs it once.
#[tokio::test]
async fn a_yes_in_the_chat_meets_four_eyes_and_counts_once_toward_a_quorum() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.to_string();
    sqlx::any::install_default_drivers();
    let db = sqlx::AnyPool::connect(&database_url(app.data_dir.path()).await).await.unwrap();
    let set = |sql: &'static str| {
        let (db, id) = (db.clone(), id.clone());
        async move {
            sqlx::query(sql).bind(id).execute(&db).await.unwrap();
        }
    };

    set("UPDATE approvals SET separate_requester = 1 WHERE id = $1").await;
    let before = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes" })).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("four-eyes"), "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing stored, not even the reply");
    let approval = approval_state(&app, &id).await;
    assert_eq!((approval["state"].as_str(), approval["approved_by"].as_array().map(Vec::len)), (Some("pending"), Some(0)));
    assert_eq!(app.order(1001).await.status, "open");

    set("UPDATE approvals SET separate_requester = 0, quorum = 2 WHERE id = $1").await;
    let body = reply(&app, &c, "yes").await;
    assert_eq!(body["confirmation"], "counted", "{body}");
    let approval = approval_state(&app, &id).await;
    assert_eq!((approval["state"].as_str(), approval["approved_by"].clone()), (Some("pending"), json!(["alice"])));
    assert_eq!(named(&app.detail(&c).await.events, "approval-counted").len(), 1);
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired, "the call waits for a second person");
    assert_eq!(app.order(1001).await.status, "open", "one yes does not run it");

    let before = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": "yes please" })).await;
    assert_eq!(status, 409, "alice counts once: {body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("already approved"), "{body}");
    assert_eq!(app.detail(&c).await.events.len(), before, "nothing stored");
    assert_eq!(approval_state(&app, &id).await["approved_by"], json!(["alice"]));
    assert_eq!(app.order(1001).await.status, "open");
    db.close().await;

    let (status, body) = app.as_user("root").post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
    let results = named(&app.detail(&c).await.events, "tool-result").len();
    assert_eq!(results, 1, "the call ran once");
}
