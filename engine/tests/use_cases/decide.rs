//! A person's decision on a stopped call (`Decisions::decide`): approving runs the exact call
//! once, with the call id it was proposed with; rejecting sends the reason to the model and the
//! call never runs; an approval once decided cannot be decided again.

use domain::{ApprovalOutcome, ApprovalState, CallState, EventBody, Role, TaskStatus};
use engine::{Error, orchestrator::Decision};
use serde_json::json;

use crate::harness::{Engine, Extra, SUPPORT, approve, decisions_of, last_answer, proposed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_runs_exactly_once_with_the_call_id_it_was_proposed_with() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    assert_eq!((approval.tool.as_str(), approval.args()), ("process_refund", json!({ "order_id": 1002, "amount": 5.0 })));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::PendingApproval);
    assert_eq!(engine.order(1002).await.refunded_cents, 0, "nothing ran while the call waited");
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0);

    engine.decide(&approval.id, approve(), "alice", Role::User).await.expect("alice approves");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);

    let decided = engine.approval(&approval.id).await;
    assert_eq!((decided.state, decided.decided_by.as_deref()), (ApprovalState::Approved, Some("alice")));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Succeeded);
    assert_eq!(engine.order(1002).await.refunded_cents, 500, "the refund happened once");
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1, "the approved call ran once");
    let log = engine.log(&chat).await;
    assert_eq!(proposed(&log), [("process_refund", &approval.call_id)], "the call that ran is the one proposed, no other");
    let results: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult { call_id, ok, .. } => Some((call_id, *ok)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [(&approval.call_id, true)]);
    match decisions_of(&log, &approval.id)[..] {
        [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Approved, decided_by, edited_args: None, .. }] => {
            assert_eq!(decided_by, "alice")
        }
        ref other => panic!("one approval decided by alice: {other:#?}"),
    }
    assert_eq!(last_answer(&log), "Refunded $5.00 on order 1002.", "the model answered from the result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_never_runs_and_its_reason_reaches_the_model() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;

    let reject = Decision::Reject { reason: Some("this order was refunded by phone".into()) };
    engine.decide(&approval.id, reject, "alice", Role::User).await.expect("alice rejects");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed, "the turn goes on without the call");

    let decided = engine.approval(&approval.id).await;
    assert_eq!(decided.state, ApprovalState::Rejected);
    assert_eq!(decided.reason.as_deref(), Some("this order was refunded by phone"));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Rejected);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0, "the rejected call never started");
    assert_eq!(engine.order(1002).await.refunded_cents, 0, "nothing was refunded");
    let log = engine.log(&chat).await;
    let told = log.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok: false, output, .. } if *call_id == approval.call_id => Some(output.clone()),
        _ => None,
    });
    assert_eq!(told, Some(json!({ "status": "rejected", "reason": "this order was refunded by phone" })), "the model is told why");
    assert!(matches!(decisions_of(&log, &approval.id)[..], [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Rejected, .. }]));
    assert_eq!(last_answer(&log), "The reviewer rejected process_refund (reason: this order was refunded by phone).");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_decision_on_a_decided_approval_is_refused_and_changes_nothing() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    engine.user("root", Role::Admin).await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    engine.decide(&approval.id, approve(), "alice", Role::User).await.expect("the first decision");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
    let log = engine.log(&chat).await;
    let before = engine.approval(&approval.id).await;

    let again = [
        (Decision::Reject { reason: Some("changed my mind".into()) }, "alice", Role::User),
        (approve(), "alice", Role::User),
        (Decision::Defer { guidance: "wait".into() }, "root", Role::Admin),
    ];
    for (decision, by, role) in again {
        let refused = engine.decide(&approval.id, decision.clone(), by, role).await;
        assert!(matches!(refused, Err(Error::WrongState(_))), "{decision:?} by {by}: refused as decided already, got {refused:?}");
    }

    let after = engine.approval(&approval.id).await;
    assert_eq!((after.state, after.decided_by, after.decided_at), (before.state, before.decided_by, before.decided_at));
    assert_eq!(engine.log(&chat).await.len(), log.len(), "no event was added");
    assert_eq!(engine.status(&task).await, TaskStatus::Completed);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1, "the call ran once, not again");
    assert_eq!(engine.order(1002).await.refunded_cents, 500);
}

/// A person's decision counts against their limit in its own write, a refused one too (on its
/// own, the refused write dropped); over the limit it is refused (`Limited`) and changes nothing,
/// and another person has their own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_decision_limit_a_person_is_refused_and_nothing_changes() {
    let engine = Engine::start_with(SUPPORT, Extra { decisions_per_minute: Some(1), ..Extra::default() }).await;
    let chat = engine.conversation("alice", "support").await;
    engine.user("bob", Role::Admin).await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    let log = engine.log(&chat).await.len();

    let refused = engine.decide(&"no-such-approval".into(), approve(), "alice", Role::User).await;
    assert!(matches!(refused, Err(Error::Unknown(_))), "no such approval, got {refused:?}");
    let limited = engine.decide(&approval.id, approve(), "alice", Role::User).await;
    assert!(
        matches!(&limited, Err(Error::Limited { message, retry_after_secs: 1..=60 }) if message.starts_with("too many decisions")),
        "alice's refused decision used up her one, got {limited:?}"
    );
    assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Pending);
    assert_eq!(engine.log(&chat).await.len(), log, "nothing was written");

    engine.decide(&approval.id, approve(), "bob", Role::Admin).await.expect("bob has his own");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
}
