//! Approving with edited arguments: the call runs with the edit, not with what was proposed; an
//! edit its tool's schema refuses decides nothing.

use domain::{ApprovalOutcome, ApprovalState, CallState, EventBody, Role, TaskStatus};
use engine::{Error, orchestrator::Decision};
use serde_json::json;

use crate::harness::{Engine, SUPPORT, decisions_of};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_approved_with_edited_arguments_runs_the_edited_arguments_once() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;

    // An edit the schema refuses is refused whole, naming the field: nothing is decided.
    let before = engine.log(&chat).await.len();
    let wrong = Decision::Approve { args: Some(json!({ "order_id": 1002, "amount": "three" })), grant: None };
    let refused = engine.decide(&approval.id, wrong, "alice", Role::User).await;
    match refused {
        Err(Error::Invalid { details, .. }) => assert!(details.iter().any(|d| d.path.starts_with("/amount")), "{details:?}"),
        other => panic!("an edit against the schema is refused, got {other:?}"),
    }
    assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Pending);
    assert_eq!(engine.log(&chat).await.len(), before, "the refused edit changed nothing");

    let edited = json!({ "order_id": 1002, "amount": 3.0 });
    engine
        .decide(&approval.id, Decision::Approve { args: Some(edited.clone()), grant: None }, "alice", Role::User)
        .await
        .expect("approved");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);

    assert_eq!(engine.order(1002).await.refunded_cents, 300, "$3 refunded, as edited, not the $5 proposed");
    let call = engine.call(&approval.call_id).await;
    assert_eq!((call.state, call.args()), (CallState::Succeeded, edited.clone()), "the same call, with the edited arguments");
    let decided = engine.approval(&approval.id).await;
    assert_eq!((decided.state, decided.edited_args.as_ref()), (ApprovalState::Approved, Some(&edited)));
    assert_eq!(decided.args(), json!({ "order_id": 1002, "amount": 5.0 }), "what was proposed is kept beside the edit");
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1);
    let log = engine.log(&chat).await;
    match decisions_of(&log, &approval.id)[..] {
        [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Approved, original_args, edited_args: Some(args), .. }] => {
            assert_eq!((original_args, args), (&json!({ "order_id": 1002, "amount": 5.0 }), &edited))
        }
        ref other => panic!("one approval with the edit: {other:#?}"),
    }
    let result = log.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok: true, output, .. } if *call_id == approval.call_id => Some(output["message"].clone()),
        _ => None,
    });
    assert_eq!(result, Some(json!("Refunded $3.00 on order 1002")));
}
