//! Deadlines (`Decisions::time_out`, through the sweeper): when an approval's deadline has
//! passed, its gate's timeout action applies once, as the server's own decision; a person is
//! refused from then on.

use domain::{ApprovalOutcome, ApprovalState, CallState, EventBody, Role, TaskStatus};
use engine::{Error, orchestrator::Decision};
use serde_json::json;

use crate::harness::{Engine, SUPPORT, approve, decisions_of};

/// The support agent whose refunds gate gives a person a minute, then applies `action`.
fn timing_out(action: &str) -> String {
    format!("{SUPPORT}timeout_secs = 60\ntimeout_action = \"{action}\"\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reject_timeout_expires_the_approval_once_and_the_call_never_runs() {
    let engine = Engine::start(&timing_out("reject")).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    assert_eq!(approval.timeout_action.as_str(), "reject");
    engine.run_out_of_time(&approval.id).await;

    // Out of time, it is the timeout action's: a person is refused before the sweeper came.
    let before = engine.log(&chat).await.len();
    let late = engine.decide(&approval.id, approve(), "alice", Role::User).await;
    assert!(matches!(late, Err(Error::WrongState(_))), "a decision after the deadline is refused, got {late:?}");
    assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Pending);
    assert_eq!(engine.log(&chat).await.len(), before, "the late decision changed nothing");

    engine.sweep().await;
    engine.sweep().await;
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);

    let expired = engine.approval(&approval.id).await;
    assert_eq!((expired.state, expired.decided_by.as_deref()), (ApprovalState::Expired, Some("system")));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Expired);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0, "the call never started");
    assert_eq!(engine.order(1002).await.refunded_cents, 0);
    let log = engine.log(&chat).await;
    assert!(
        matches!(decisions_of(&log, &approval.id)[..], [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Expired, .. }]),
        "decided once, by the timeout"
    );
    let told = log.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok: false, output, .. } if *call_id == approval.call_id => Some(output.clone()),
        _ => None,
    });
    assert_eq!(told, Some(json!({ "status": "rejected", "reason": "timed out" })), "the model is told it timed out");

    let after = engine.decide(&approval.id, Decision::Reject { reason: None }, "alice", Role::User).await;
    assert!(matches!(after, Err(Error::WrongState(_))), "decided already, got {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approve_timeout_runs_the_call_exactly_once_however_often_the_sweeper_comes() {
    let engine = Engine::start(&timing_out("approve")).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    engine.run_out_of_time(&approval.id).await;

    engine.sweep().await;
    engine.sweep().await;
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
    engine.sweep().await;

    let approved = engine.approval(&approval.id).await;
    assert_eq!((approved.state, approved.decided_by.as_deref()), (ApprovalState::Approved, Some("system")));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Succeeded);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1, "the approved call ran once");
    assert_eq!(engine.order(1002).await.refunded_cents, 500, "refunded once");
    let log = engine.log(&chat).await;
    assert!(
        matches!(decisions_of(&log, &approval.id)[..], [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Approved, .. }]),
        "decided once, by the timeout"
    );
}
