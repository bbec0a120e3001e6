//! Asking the user (`ask_user`): the agent's question waits like an approval; the answer (given by
//! approving with `answer` in the arguments) is the tool's result and the turn goes on with it;
//! declining ends it; an answer that is missing or not among the options is refused.

use domain::{EventBody, TaskStatus};
use serde_json::json;

use crate::helpers::{Options, assistant_texts, error_code, named, spawn_app, spawn_app_with};

#[tokio::test]
async fn the_answer_to_the_agents_question_is_its_result_and_the_turn_goes_on_with_it() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, asked) = app.pending_turn(&c, "refund an order", 1).await;
    let question = &asked[0];
    assert_eq!((question.tool.as_str(), question.gate.as_str()), ("ask_user", "ask-a-human"));
    assert_eq!(question.args, json!({ "question": "Which order should I refund? Give its number." }));

    // No answer, an empty one, or a standing permission: refused, nothing changes.
    for body in [json!({}), json!({ "args": { "question": question.args["question"], "answer": " " } })] {
        let (status, answer) = app.post_json(&question.approve_url, body).await;
        assert_eq!((status, error_code(&answer)), (422, "unprocessable"), "{answer}");
        assert_eq!(answer["error"]["details"][0]["path"], "/args/answer");
    }
    let with_grant = json!({ "args": { "question": question.args["question"], "answer": "1002" }, "grant": {} });
    assert_eq!(app.post_json(&question.approve_url, with_grant).await.0, 422);
    let (status, body) = app.post_json(&format!("/api/tasks/{task}/approve-all"), json!({})).await;
    assert_eq!(status, 422, "Approve All does not answer a question: {body}");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);

    let answered = json!({ "args": { "question": question.args["question"], "answer": "1002" } });
    let (status, body) = app.post_json(&question.approve_url, answered).await;
    assert_eq!(status, 200, "{body}");
    // The answer completes the request: a refund of order 1002, which waits for approval as usual.
    let refund = crate::helpers::eventually("the refund the answer asked for", || async {
        app.pending_approvals_of(&task).await.into_iter().find(|a| a.tool == "process_refund")
    })
    .await;
    assert_eq!(refund.args, json!({ "order_id": 1002 }));
    let events = app.detail(&c).await.events;
    let result = named(&events, "tool-result").into_iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok, output, .. } if *call_id == question.call_id => Some((*ok, output.clone())),
        _ => None,
    });
    assert_eq!(result, Some((true, json!({ "answer": "1002" }))));
}

#[tokio::test]
async fn a_declined_question_ends_the_turn_and_a_choice_must_be_one_of_the_options() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, asked) = app.pending_turn(&c, "ask me which order to look up", 1).await;
    let question = &asked[0];
    let not_an_option = json!({ "args": { "question": question.args["question"], "options": question.args["options"], "answer": "9999" } });
    let (status, body) = app.post_json(&question.approve_url, not_an_option).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("not one of the options"), "{body}");

    let (status, _) = app.post_json(&question.reject_url, json!({ "reason": "declined to answer" })).await;
    assert_eq!(status, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(assistant_texts(&app.detail(&c).await.events).pop().as_deref(), Some("All right, I will leave it then."));
}

#[tokio::test]
async fn a_question_waits_for_its_answer_even_when_the_agents_gates_are_off() {
    let toml =
        "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"ask_user\"]\n[[agents.gates]]\nname = \"off\"\nkind = \"disabled\"\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (_task, asked) = app.pending_turn(&c, "ask me which order to look up", 1).await;
    assert_eq!(asked[0].gate, "ask-a-human");
}
