//! A `plan` gate: an agent proposes the calls it means to make as one approval (`propose_plan`).
//! Approving the plan — as proposed or edited — lets exactly those calls run once each in the
//! task without asking; any other call is gated as usual. A plan of calls the agent cannot make
//! is refused before anyone is asked, and an edit that would add one is a 422.

use domain::{CardStatus, Item, TaskStatus};
use serde_json::json;

use crate::{
    helpers::{Options, TestApp, error_code, spawn_app_with},
    openai::{Reply, chunk, start_fake, text_stream},
};

const GATES: &str = "[[agents.gates]]\nname = \"plans\"\nkind = \"plan\"\n\
                     [[agents.gates]]\nname = \"changes\"\nkind = \"tools\"\ntools = [\"cancel_order\", \"process_refund\"]\n";

async fn scripted() -> TestApp {
    let toml =
        format!("[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n{GATES}");
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

#[tokio::test]
async fn an_approved_plan_edited_to_drop_a_step_runs_exactly_the_steps_left_without_asking_again() {
    let app = scripted().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel all orders of alice", 1).await;
    let plan = &approvals[0];
    assert_eq!((plan.tool.as_str(), plan.gate.as_str()), ("propose_plan", "plans"));
    assert!(plan.summary.starts_with("Plan of 3 steps: Cancel order 1001 · alice"), "{}", plan.summary);
    assert_eq!(plan.args["steps"].as_array().unwrap().len(), 3);

    // Refused before anything changes: a grant, and an edit that adds a call the agent cannot make.
    let events = app.detail(&c).await.events.len();
    let (status, body) = app.post_json(&plan.approve_url, json!({ "grant": {} })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    let sneaky = json!({ "steps": [{ "tool": "delete_everything", "args": {} }, { "tool": "cancel_order", "args": { "order_id": "x" } }] });
    let (status, body) = app.post_json(&plan.approve_url, json!({ "args": sneaky })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    let paths: Vec<&str> = body["error"]["details"].as_array().unwrap().iter().filter_map(|d| d["path"].as_str()).collect();
    assert!(paths.contains(&"/steps/0/tool") && paths.iter().any(|p| p.starts_with("/steps/1/args")), "{paths:?}");
    assert_eq!(app.detail(&c).await.events.len(), events, "nothing changed");

    // Approved without order 1006: the two steps left run, nothing more is asked.
    let edited = json!({ "steps": [
        { "tool": "cancel_order", "args": { "order_id": 1001 } },
        { "tool": "cancel_order", "args": { "order_id": 1002 } }
    ] });
    let (status, body) = app.post_json(&plan.approve_url, json!({ "args": edited })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!((app.order(1001).await.status, app.order(1002).await.status), ("canceled".into(), "canceled".into()));
    assert_eq!(app.order(1006).await.status, "open", "the dropped step never ran");
    let view = app.detail(&c).await.view;
    let cancels: Vec<_> = view.cards().filter(|card| card.tool == "cancel_order").collect();
    assert_eq!(cancels.len(), 2);
    for card in cancels {
        assert_eq!((card.status, card.approval.is_none(), card.planned), (CardStatus::Succeeded, true, true), "{card:?}");
        assert_eq!(card.granted_by.as_deref(), Some("alice"), "the plan's approver lets it through");
    }
    assert_eq!(view.tasks.last().unwrap().summary.approvals_requested, 1, "one approval for the whole plan");
    assert!(view.grants.iter().all(|g| g.uses == 1 && g.args.is_some()), "{:?}", view.grants);
}

#[tokio::test]
async fn a_call_outside_the_approved_plan_is_gated_as_usual_and_a_plan_of_unknown_tools_is_not_asked() {
    let plan_call = |args: serde_json::Value| {
        Reply::Stream(vec![chunk(json!({ "tool_calls": [{ "index": 0, "id": "p", "type": "function",
            "function": { "name": "propose_plan", "arguments": args.to_string() } }] }))])
    };
    let refund = |index: u64, order: u64| {
        chunk(json!({ "tool_calls": [{ "index": index, "id": format!("r{index}"), "type": "function",
            "function": { "name": "process_refund", "arguments": json!({ "order_id": order, "amount": 5.0 }).to_string() } }] }))
    };
    let replies = vec![
        plan_call(json!({ "steps": [{ "tool": "wire_money", "args": {} }] })),
        plan_call(json!({ "steps": [{ "tool": "process_refund", "args": { "order_id": 1001, "amount": 5.0 } }] })),
        // After approval: the planned refund, and one the plan did not contain.
        Reply::Stream(vec![refund(0, 1001), refund(1, 1002)]),
        text_stream(&["Done."]),
    ];
    let (url, _fake) = start_fake(replies).await;
    let toml = format!(
        "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"cancel_order\", \"process_refund\"]\n{GATES}\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake-1\"\nmax_retries = 0\ntimeout_secs = 5\n"
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $5 on order 1001", 1).await;
    // The first plan named a tool the agent does not have: it failed without asking anyone.
    let view = app.detail(&c).await.view;
    let first = view.cards().find(|card| card.tool == "propose_plan").unwrap();
    assert_eq!(first.status, CardStatus::Failed);
    assert!(first.result.as_ref().unwrap().to_string().contains("/steps/0/tool"), "{:?}", first.result);

    app.post_json(&approvals[0].approve_url, json!({})).await;
    let outside = crate::helpers::eventually("the unplanned refund to wait", || async {
        let pending = app.pending_approvals_of(&task).await;
        pending.into_iter().find(|a| a.tool == "process_refund")
    })
    .await;
    assert_eq!((outside.args["order_id"].as_i64(), outside.gate.as_str()), (Some(1002), "changes"));
    // The planned refund runs beside the one that waits: wait for its result, not for the approval.
    let planned = crate::helpers::eventually("the planned refund to run", || async {
        let view = app.detail(&c).await.view;
        view.items.iter().find_map(|i| match i {
            Item::Card(card) if card.tool == "process_refund" && card.args["order_id"] == 1001 && card.result.is_some() => {
                Some(card.clone())
            }
            _ => None,
        })
    })
    .await;
    assert!(planned.planned && planned.approval.is_none(), "{planned:?}");
    assert_eq!(app.order(1001).await.refunded, 5.0);
    assert_eq!(app.order(1002).await.refunded, 0.0, "the unplanned refund waits");
}
