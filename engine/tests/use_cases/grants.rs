//! "Always allow": an approval with a grant lets the later calls its gate stops in the same
//! conversation run without asking; once the grant is revoked they ask again.

use domain::{EventBody, Role, TaskStatus, wire::GrantRequest};
use engine::{Error, orchestrator::Decision, store::grants};

use crate::harness::{Engine, SUPPORT, actor};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_allow_grant_lets_the_next_matching_call_run_unasked_until_it_is_revoked() {
    let engine = Engine::start(SUPPORT).await;
    let chat = engine.conversation("alice", "support").await;
    let (first, approval) = engine.ask(&chat, "refund $5 on order 1002").await;
    let always = Decision::Approve { args: None, grant: Some(GrantRequest::default()) };
    engine.decide(&approval.id, always, "alice", Role::User).await.expect("approved for good");
    assert_eq!(engine.settle(&first).await, TaskStatus::Completed);
    let log = engine.events(&chat, &first).await;
    let granted: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::GrantCreated { grant_id, tool, created_by, .. } => Some((grant_id.clone(), tool.clone(), created_by.clone())),
            _ => None,
        })
        .collect();
    let [(grant_id, tool, by)] = &granted[..] else { panic!("one grant: {granted:#?}") };
    assert_eq!((tool.as_str(), by.as_str()), ("process_refund", "alice"));
    assert_eq!(engine.runs(&chat, &approval.call_id).await, 1);

    // The next refund in the conversation runs under the grant, without asking.
    let second = engine.say(&chat, "refund $5 on order 1001").await;
    assert_eq!(engine.status(&second).await, TaskStatus::Completed, "nobody was asked");
    let log = engine.events(&chat, &second).await;
    assert!(!log.iter().any(|e| matches!(e.body, EventBody::ApprovalRequired { .. })), "{log:#?}");
    let call = log
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolCall { call_id, tool, grant_id: used, .. } if tool == "process_refund" => Some((call_id.clone(), used.clone())),
            _ => None,
        })
        .expect("the refund was proposed");
    assert_eq!(call.1.as_ref(), Some(grant_id), "it ran under the grant");
    assert_eq!(engine.runs(&chat, &call.0).await, 1);
    assert_eq!(engine.order(1001).await.refunded_cents, 500);
    let row = grants::get(engine.store.testing().pool(), grant_id).await.unwrap().expect("the grant");
    assert_eq!((row.uses, row.revoked_at), (1, None));

    // Revoked (by its owner), the grant covers nothing: the next refund asks again.
    engine.decisions.revoke_grant(grant_id, &actor("alice", Role::User)).await.expect("revoked");
    let before = engine.log(&chat).await.len();
    let again = engine.decisions.revoke_grant(grant_id, &actor("alice", Role::User)).await;
    assert!(matches!(again, Err(Error::WrongState(_))), "revoked once only, got {again:?}");
    assert_eq!(engine.log(&chat).await.len(), before, "the second revocation changed nothing");
    let log = engine.log(&chat).await;
    assert!(
        log.iter()
            .any(|e| matches!(&e.body, EventBody::GrantRevoked { grant_id: g, revoked_by, .. } if g == grant_id && revoked_by == "alice"))
    );

    let (third, asked) = engine.ask(&chat, "refund $5 on order 1003").await;
    assert_eq!(asked.tool, "process_refund");
    assert_eq!(engine.status(&third).await, TaskStatus::InputRequired);
    assert_eq!(engine.runs(&chat, &asked.call_id).await, 0, "it waits, unrun");
    assert_eq!(engine.order(1003).await.refunded_cents, 0);
    let row = grants::get(engine.store.testing().pool(), grant_id).await.unwrap().expect("the grant");
    assert_eq!(row.uses, 1, "the revoked grant was not used again");
    assert!(row.revoked_at.is_some());
}
