//! A `plan` gate (docs/config.md, "Plans"): the agent proposes the changes it means to make as
//! one approval; approved once, exactly those steps run, each once, without asking again, and
//! any other call is gated as usual.

use domain::{ApprovalState, EventBody, Role, TaskStatus};
use serde_json::json;

use crate::harness::{Engine, approve, proposed};

const PLANNER: &str = r#"
[[agents]]
name = "support"
description = "plans its changes"
tools = ["get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "plans"
kind = "plan"

[[agents.gates]]
name = "changes"
kind = "tools"
tools = ["cancel_order", "process_refund"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_once_lets_exactly_its_steps_run_once_each_and_nothing_else() {
    let engine = Engine::start(PLANNER).await;
    let chat = engine.conversation("alice", "support").await;
    let (task, plan) = engine.ask(&chat, "cancel order 1003 and 1005").await;
    assert_eq!((plan.tool.as_str(), plan.gate.as_str()), ("propose_plan", "plans"));
    let steps = json!({ "steps": [
        { "tool": "cancel_order", "args": { "order_id": 1003 } },
        { "tool": "cancel_order", "args": { "order_id": 1005 } }
    ] });
    assert_eq!(plan.args(), steps);
    assert_eq!((engine.order(1003).await.status.as_str(), engine.order(1005).await.status.as_str()), ("open", "open"));

    engine.decide(&plan.id, approve(), "alice", Role::User).await.expect("the plan is approved");
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed, "no step asked again");
    assert_eq!(engine.approval(&plan.id).await.state, ApprovalState::Approved);

    let log = engine.events(&chat, &task).await;
    let asked = log.iter().filter(|e| matches!(e.body, EventBody::ApprovalRequired { .. })).count();
    assert_eq!(asked, 1, "one approval, for the whole plan");
    let calls = proposed(&log);
    let tools: Vec<&str> = calls.iter().map(|(tool, _)| *tool).collect();
    assert_eq!(tools, ["propose_plan", "cancel_order", "cancel_order"], "the plan, then exactly its steps");
    for (_, call) in &calls {
        assert_eq!(engine.runs(&chat, call).await, 1, "each ran once");
    }
    let stepped: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCall { tool, args, grant_id, .. } if tool == "cancel_order" => Some((args.clone(), grant_id.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(stepped, [(json!({ "order_id": 1003 }), true), (json!({ "order_id": 1005 }), true)], "each under its step's grant");
    let granted: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::GrantCreated { args, max_uses, created_by, .. } => Some((args.clone(), *max_uses, created_by.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        granted,
        [
            (Some(json!({ "order_id": 1003 })), Some(1), "alice".to_owned()),
            (Some(json!({ "order_id": 1005 })), Some(1), "alice".to_owned())
        ],
        "one single-use grant per step, from the plan's approver"
    );
    assert_eq!((engine.order(1003).await.status.as_str(), engine.order(1005).await.status.as_str()), ("canceled", "canceled"));
    for untouched in [1001, 1002, 1004, 1006] {
        assert_eq!(engine.order(untouched).await.status, "open", "order {untouched} was in no step");
    }

    // A call outside the plan (a later turn) is asked as usual, and waits unrun.
    let (next, asked) = engine.ask(&chat, "cancel order 1006").await;
    assert_eq!((asked.tool.as_str(), asked.gate.as_str()), ("cancel_order", "changes"));
    assert_eq!(engine.status(&next).await, TaskStatus::InputRequired);
    assert_eq!(engine.order(1006).await.status, "open");
}
