//! A `final_response` gate: the agent's final answer of a turn waits for a reviewer before the
//! user sees it. Approving sends it (edited or not; the decision keeps both), rejecting sends the
//! reason back to the model, which answers again; a grant or an empty answer is refused.

use domain::{EventBody, TaskStatus};
use serde_json::json;

use crate::helpers::{Options, TestApp, assistant_texts, error_code, named, spawn_app_with};

async fn app() -> TestApp {
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\"]\n\
                [[agents.gates]]\nname = \"answers\"\nkind = \"final_response\"\n";
    spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await
}

#[tokio::test]
async fn a_held_answer_is_sent_only_once_approved_and_a_rejection_makes_the_model_answer_again() {
    let app = app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "look up order 1001", 1).await;
    let draft = &approvals[0];
    assert_eq!((draft.tool.as_str(), draft.gate.as_str()), ("final_answer", "answers"));
    let text = draft.args["text"].as_str().unwrap().to_owned();
    assert!(text.contains("1001"), "the draft is the model's answer: {text}");
    assert!(draft.summary.starts_with("Answer the user: “"), "{}", draft.summary);
    assert!(assistant_texts(&app.detail(&c).await.events).is_empty(), "the user sees no answer before approval");

    // Refused decisions change nothing.
    let events_before = app.detail(&c).await.events.len();
    for (body, path) in [(json!({ "grant": {} }), "/grant"), (json!({ "args": { "text": "" } }), "/text")] {
        let (status, answer) = app.post_json(&draft.approve_url, body.clone()).await;
        assert_eq!((status, error_code(&answer)), (422, "unprocessable"), "{body}: {answer}");
        assert!(answer["error"]["details"].to_string().contains(path), "{answer}");
    }
    assert_eq!(app.detail(&c).await.events.len(), events_before, "nothing changed");

    // Rejected with a reason: the model hears it and answers again, held again.
    let (status, _) = app.post_json(&draft.reject_url, json!({ "reason": "say which product it is" })).await;
    assert_eq!(status, 200);
    let second = crate::helpers::eventually("a second draft", || async {
        let pending = app.pending_approvals_of(&task).await;
        pending.into_iter().next()
    })
    .await;
    let revised = second.args["text"].as_str().unwrap();
    assert!(revised.starts_with("Revised after review (\"say which product it is\")"), "{revised}");
    assert!(assistant_texts(&app.detail(&c).await.events).is_empty());

    // Approved with an edit: the edit is what the user reads; the decision records both.
    let edited = "Order 1001 is an espresso machine for alice, still open.";
    let (status, body) = app.post_json(&second.approve_url, json!({ "args": { "text": edited } })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    assert_eq!(assistant_texts(&detail.events), [edited], "exactly the approved text, once");
    let decided = named(&detail.events, "approval-decided");
    let EventBody::ApprovalDecided { original_args, edited_args, .. } = &decided.last().unwrap().body else { unreachable!() };
    assert_eq!(original_args["text"], revised);
    assert_eq!(edited_args.as_ref().unwrap()["text"], edited);
    assert_eq!(detail.view.tasks.last().unwrap().summary.approvals_requested, 2);
}

#[tokio::test]
async fn an_agent_without_the_gate_answers_at_once() {
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"get_order\"]\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "look up order 1001").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    assert_eq!(assistant_texts(&detail.events).len(), 1);
    assert!(detail.view.cards().all(|card| card.tool != "final_answer"));
}
