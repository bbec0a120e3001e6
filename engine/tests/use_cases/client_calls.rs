//! A call an outside client proposes (`ClientCalls::propose_call`, the MCP gateway's way in):
//! one a gate stops waits for a person like a model's call, and runs once when approved, while
//! its client still waits for the outcome.

use domain::{ApprovalState, CallState, EventBody, Role, TaskStatus};
use engine::{orchestrator::ClientCalls, store::client_calls};
use serde_json::json;

use crate::harness::{Engine, SUPPORT, approve, proposed};

const CLIENT: &str = "MCP client \u{201c}test\u{201d}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_call_from_an_outside_client_waits_and_runs_once_when_approved() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let calls = ClientCalls::new(&engine.task_driver);
    let args = json!({ "order_id": 1002, "amount": 5.0 });
    assert!(!calls.runs_unasked(&chat, "process_refund", &args), "the refunds gate stops it");

    let task = calls.propose_call(&chat, CLIENT, "process_refund", &args, Some("request-1"), None).await.expect("proposed");
    assert_eq!(engine.settle(&task).await, TaskStatus::InputRequired, "it waits for a person");
    let pending = engine.pending(&task).await;
    let [approval] = &pending[..] else { panic!("one approval: {pending:#?}") };
    assert_eq!((approval.tool.as_str(), approval.args()), ("process_refund", args.clone()));
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0);
    assert_eq!(engine.order(1002).await.refunded_cents, 0, "nothing ran while it waited");
    let log = engine.events(&chat, &task).await;
    let said = log.iter().find_map(|e| match &e.body {
        EventBody::UserMessage { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(said.as_deref(), Some("MCP client \u{201c}test\u{201d} asks to run process_refund"), "the chat says who asked");

    // The client still waits (the gateway's heartbeat), and a person approves.
    client_calls::mark(&engine.store, &task, false).await.expect("a heartbeat");
    engine.decide(&approval.id, approve(), "alice", Role::User).await.expect("alice approves");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);

    assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Approved);
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Succeeded);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1, "the approved call ran once");
    assert_eq!(engine.order(1002).await.refunded_cents, 500);
    let log = engine.events(&chat, &task).await;
    assert_eq!(proposed(&log), [("process_refund", &approval.call_id)], "the client's call, and no other");
    let results =
        log.iter().filter(|e| matches!(&e.body, EventBody::ToolResult { call_id, ok: true, .. } if *call_id == approval.call_id)).count();
    assert_eq!(results, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_client_call_whose_client_has_gone_is_recorded_as_not_run() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let calls = ClientCalls::new(&engine.task_driver);
    let args = json!({ "order_id": 1002, "amount": 5.0 });
    let task = calls.propose_call(&chat, CLIENT, "process_refund", &args, None, None).await.expect("proposed");
    assert_eq!(engine.settle(&task).await, TaskStatus::InputRequired);
    let approval = engine.pending(&task).await.pop().expect("the call waits");

    client_calls::mark(&engine.store, &task, true).await.expect("the client went away");
    engine.decide(&approval.id, approve(), "alice", Role::User).await.expect("approved all the same");
    engine.settle(&task).await;

    assert_eq!(engine.order(1002).await.refunded_cents, 0, "no one waits for it: it did not run");
    let log = engine.events(&chat, &task).await;
    let result = log.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok, output, .. } if *call_id == approval.call_id => Some((*ok, output.clone())),
        _ => None,
    });
    let (ok, output) = result.expect("the call has its result");
    assert!(!ok && output.to_string().contains("Not run"), "{output}");
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Failed);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0, "never started");
}
