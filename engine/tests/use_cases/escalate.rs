//! Handing a pending approval to the admins (`Decisions::escalate`): from then on only an admin
//! decides it; everyone else, its owner included, is refused and changes nothing.

use domain::{ApprovalState, EventBody, Role, TaskStatus};
use engine::Error;

use crate::harness::{Engine, SUPPORT, actor, approve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_escalated_to_the_admins_is_decided_by_an_admin_only() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    engine.user("bob", Role::User).await;
    engine.user("root", Role::Admin).await;
    let (task, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    let alice = actor("alice", Role::User);
    engine.decisions.may_decide_now(&approval.id, &alice).await.expect("before, its owner may decide it");

    // Only its owner or an admin hands it over.
    let refused = engine.decisions.escalate(&approval.id, &actor("bob", Role::User), None).await;
    assert!(matches!(refused, Err(Error::NotAllowed(_))), "bob is neither, got {refused:?}");
    assert_eq!(engine.approval(&approval.id).await.escalated_at, None);

    engine.decisions.escalate(&approval.id, &alice, None).await.expect("alice hands it to the admins");
    let escalated = engine.approval(&approval.id).await;
    assert_eq!(
        (escalated.state, escalated.escalated_by.as_deref(), escalated.escalated_to.as_deref()),
        (ApprovalState::Pending, Some("alice"), None)
    );
    assert!(escalated.escalated_at.is_some());
    let log = engine.log(&chat).await;
    let handed = log.iter().find_map(|e| match &e.body {
        EventBody::ApprovalEscalated { approval_id, escalated_by, to, .. } if *approval_id == approval.id => {
            Some((escalated_by.clone(), to.clone()))
        }
        _ => None,
    });
    assert_eq!(handed, Some(("alice".to_owned(), None)), "to the admins");

    // Now neither its owner nor another user may decide it, nor hand it over again. Its owner is
    // refused; to another user it does not exist (they never saw it).
    for (by, what) in [("alice", "its owner"), ("bob", "another user")] {
        let refusal = |r: &Result<_, Error>| match by {
            "alice" => matches!(r, Err(Error::NotAllowed(_))),
            _ => matches!(r, Err(Error::Unknown(_))),
        };
        let refused = engine.decide(&approval.id, approve(), by, Role::User).await;
        assert!(refusal(&refused), "{what} is refused, got {refused:?}");
        let refused = engine.decide(&approval.id, engine::orchestrator::Decision::Reject { reason: None }, by, Role::User).await;
        assert!(refusal(&refused), "{what} may not reject either, got {refused:?}");
    }
    let again = engine.decisions.escalate(&approval.id, &alice, None).await;
    assert!(matches!(again, Err(Error::WrongState(_))), "escalated once only, got {again:?}");
    assert_eq!(engine.log(&chat).await.len(), log.len(), "the refusals changed nothing");
    let still = engine.approval(&approval.id).await;
    assert_eq!((still.state, still.decided_by), (ApprovalState::Pending, None));
    assert_eq!(engine.status(&task).await, TaskStatus::InputRequired);
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 0);

    // An admin decides it, and the call runs once.
    engine.decide(&approval.id, approve(), "root", Role::Admin).await.expect("an admin approves");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
    let decided = engine.approval(&approval.id).await;
    assert_eq!((decided.state, decided.decided_by.as_deref()), (ApprovalState::Approved, Some("root")));
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1);
    assert_eq!(engine.order(1002).await.refunded_cents, 500);
}
