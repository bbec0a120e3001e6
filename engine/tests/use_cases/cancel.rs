//! Stopping a turn (`Decisions::abort`): its pending approvals are canceled in the same write,
//! a later decision on them is refused, and nothing of the turn runs.

use domain::{ApprovalOutcome, ApprovalState, CallState, EventBody, Role, TaskStatus};
use engine::Error;

use crate::harness::{Engine, SUPPORT, actor, approve, decisions_of};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborting_a_waiting_task_cancels_its_approval_and_a_later_approval_is_refused_with_nothing_run() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;

    engine.decisions.abort(&task, &actor("alice", Role::User)).await.expect("alice stops her turn");
    assert_eq!(engine.settle(&task).await, TaskStatus::Canceled);
    let canceled = engine.approval(&approval.id).await;
    assert_eq!((canceled.state, canceled.decided_by.as_deref()), (ApprovalState::Canceled, Some("alice")));
    assert_eq!(canceled.reason.as_deref(), Some("task aborted by alice"));
    assert_eq!(engine.call(&approval.call_id).await.state, CallState::Canceled);
    let log = engine.log(&chat).await;
    assert!(matches!(decisions_of(&log, &approval.id)[..], [EventBody::ApprovalDecided { outcome: ApprovalOutcome::Canceled, .. }]));

    // Too late: approving, by its owner or an admin, is refused and changes nothing.
    for (by, role) in [("alice", Role::User), ("root", Role::Admin)] {
        let refused = engine.decide(&approval.id, approve(), by, role).await;
        assert!(matches!(refused, Err(Error::WrongState(_))), "{by}: a canceled approval is decided already, got {refused:?}");
    }
    let again = engine.decisions.abort(&task, &actor("alice", Role::User)).await;
    assert!(matches!(again, Err(Error::WrongState(_))), "a canceled task is not stopped twice, got {again:?}");
    assert_eq!(engine.log(&chat).await.len(), log.len(), "the refusals changed nothing");
    assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Canceled);
    assert_eq!(engine.status(&task).await, TaskStatus::Canceled);

    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0, "the call never started");
    assert_eq!(engine.order(1002).await.refunded_cents, 0, "nothing was refunded");
}
