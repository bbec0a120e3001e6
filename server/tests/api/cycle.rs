//! The human-in-the-loop cycle over HTTP with the scripted model.

use std::time::Duration;

use domain::{ApprovalOutcome, CardStatus, EventBody, TaskStatus};
use serde_json::json;

use crate::helpers::{assistant_texts, named, spawn_app};

#[tokio::test]
async fn a_call_no_gate_matches_runs_at_once_and_the_task_completes() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "look up order 1001").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    let card = detail.view.cards().next().expect("a card");
    assert_eq!((card.tool.as_str(), card.status), ("get_order", CardStatus::Succeeded));
    assert!(named(&detail.events, "approval-required").is_empty());
    assert!(assistant_texts(&detail.events).last().unwrap().contains("Espresso machine"));
}

#[tokio::test]
async fn a_gated_call_stops_as_a_pending_approval_and_the_task_waits_for_input() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let approval = &approvals[0];
    assert_eq!(approval.tool, "process_refund");
    assert_eq!(approval.args, json!({ "order_id": 1001 }));
    assert_eq!(approval.gate, "refunds-and-cancellations");
    assert_eq!(approval.conversation_id, c);
    assert_eq!(approval.summary, "Refund $249.00 (everything left) on order 1001 · alice · Espresso machine");

    let detail = app.detail(&c).await;
    let required = named(&detail.events, "approval-required");
    assert_eq!(required.len(), 1);
    match &required[0].body {
        EventBody::ApprovalRequired {
            approval_id, call_id, tool, args, gate, summary, risk, deadline, task_id, in_chat, rules, ..
        } => {
            assert_eq!((approval_id, call_id, task_id), (&approval.id, &approval.call_id, &task));
            assert_eq!(
                (tool.as_str(), gate.as_str(), summary.as_str()),
                ("process_refund", "refunds-and-cancellations", approval.summary.as_str())
            );
            assert_eq!(args, &json!({ "order_id": 1001 }));
            assert_eq!(risk.as_str(), "high");
            assert!(deadline.ends_with('Z'), "{deadline}");
            assert!(!in_chat, "a card gate is answered with buttons");
            assert!(rules.is_default(), "the demo gate asks for nothing more: {rules:?}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(detail.view.pending_count(), 1);
    assert_eq!(app.order(1001).await.status, "open", "the tool did not run");
}

#[tokio::test]
async fn while_an_approval_is_pending_the_model_is_not_called_and_the_tool_never_runs() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(app.model.calls(), 1);
    let events_before = app.detail(&c).await.events.len();
    // Many sweeper ticks (20 ms each) and resume passes go by.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(app.model.calls(), 1, "the model was called while an approval was pending");
    assert_eq!(app.order(1001).await.refunded, 0.0);
    assert_eq!(app.detail(&c).await.events.len(), events_before);
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);
}

#[tokio::test]
async fn approving_runs_the_same_call_before_the_model_is_asked_again() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["outcome"], "approved");
    app.wait_task(&task, TaskStatus::Completed).await;

    let detail = app.detail(&c).await;
    let result = named(&detail.events, "tool-result");
    assert_eq!(result.len(), 1);
    let EventBody::ToolResult { call_id, ok, .. } = &result[0].body else { unreachable!() };
    assert_eq!(call_id, &approvals[0].call_id, "the same call id ran");
    assert!(ok);
    // One model call proposed the refund, one more turned its result into the answer.
    assert_eq!(app.model.calls(), 2);
    let answer = detail.events.iter().rev().find(|e| e.body.name() == "assistant-message").unwrap();
    assert!(result[0].seq < answer.seq, "the tool ran before the model answered");
    assert!(assistant_texts(&detail.events).last().unwrap().contains("Refunded $249.00 on order 1001"));
    let order = app.order(1001).await;
    assert_eq!((order.status.as_str(), order.refunded), ("refunded", 249.0));
    assert_eq!(detail.view.card(call_id).unwrap().status, CardStatus::Succeeded);
}

#[tokio::test]
async fn rejecting_sends_the_reason_to_the_model_and_the_tool_never_runs() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let (status, body) =
        app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({ "reason": "customer changed their mind" })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    let EventBody::ToolResult { ok, output, .. } = &named(&detail.events, "tool-result")[0].body else { unreachable!() };
    assert!(!ok);
    assert_eq!(output, &json!({ "status": "rejected", "reason": "customer changed their mind" }));
    assert!(assistant_texts(&detail.events).last().unwrap().contains("customer changed their mind"));
    assert_eq!(app.order(1003).await.status, "open");
    assert_eq!(detail.view.cards().next().unwrap().status, CardStatus::Rejected);
}

#[tokio::test]
async fn each_approved_call_runs_when_decided_and_the_model_waits_for_the_last_decision() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003 and 1005", 2).await;
    let first = approvals.iter().find(|a| a.args["order_id"] == 1003).unwrap();
    let second = approvals.iter().find(|a| a.args["order_id"] == 1005).unwrap();

    app.post_json(&format!("/api/approvals/{}/approve", first.id), json!({})).await;
    crate::helpers::eventually("order 1003 canceled", || async { (app.order(1003).await.status == "canceled").then_some(()) }).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(app.model.calls(), 1, "the model waits while order 1005 is pending");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);

    app.post_json(&format!("/api/approvals/{}/reject", second.id), json!({ "reason": "keep it" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.model.calls(), 2);
    assert_eq!(app.order(1005).await.status, "open");
    let answer = assistant_texts(&app.detail(&c).await.events).pop().unwrap();
    assert!(answer.contains("Canceled order 1003") && answer.contains("keep it"), "{answer}");

    // The turn's summary: what it asked of people and how long they took, in the task and the chat.
    let (_, body) = app.get_json(&format!("/api/tasks/{task}")).await;
    let summary = &body["summary"];
    assert_eq!(
        (summary["approvals_requested"].as_u64(), summary["approved"].as_u64(), summary["rejected"].as_u64()),
        (Some(2), Some(1), Some(1)),
        "{body}"
    );
    assert_eq!(summary["edited"], 0);
    assert!(summary["waiting_ms"].as_i64().is_some_and(|ms| ms >= 200), "the second decision came after the 200 ms wait: {body}");
    assert!(summary["started_at"].is_string() && summary["finished_at"].is_string(), "{body}");
    let view = app.detail(&c).await.view;
    let folded = &view.tasks.iter().find(|t| t.task_id == task).unwrap().summary;
    assert_eq!(serde_json::to_value(folded).unwrap(), *summary, "the chat folds the same summary");
}

#[tokio::test]
async fn approve_all_runs_every_pending_call_of_the_task() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let (status, body) = app.post_json(&format!("/api/tasks/{task}/approve-all"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().unwrap().len(), 2);
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
    assert_eq!(app.order(1002).await.status, "refunded");
    let view = app.detail(&c).await.view;
    assert!(view.cards().all(|c| c.status == CardStatus::Succeeded));
}

#[tokio::test]
async fn reject_all_rejects_every_pending_call_with_the_reason() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let (status, _) = app.post_json(&format!("/api/tasks/{task}/reject-all"), json!({ "reason": "fraud check" })).await;
    assert_eq!(status, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "open");
    let detail = app.detail(&c).await;
    assert!(detail.view.cards().all(|c| c.status == CardStatus::Rejected));
    assert!(assistant_texts(&detail.events).last().unwrap().contains("fraud check"));
}

#[tokio::test]
async fn a_two_step_plan_lists_first_then_asks_for_each_cancellation() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel all orders of alice", 3).await;
    let ids: Vec<i64> = approvals.iter().map(|a| a.args["order_id"].as_i64().unwrap()).collect();
    assert!(ids.contains(&1001) && ids.contains(&1002) && ids.contains(&1006), "{ids:?}");
    app.post_json(&format!("/api/tasks/{task}/approve-all"), json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1006).await.status, "canceled");
}

#[tokio::test]
async fn editing_the_args_runs_the_edited_call_and_tells_the_model() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let edited = json!({ "order_id": 1001, "amount": 10 });
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({ "args": edited })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.refunded, 10.0);
    let detail = app.detail(&c).await;
    let EventBody::ApprovalDecided { original_args, edited_args, outcome, .. } = &named(&detail.events, "approval-decided")[0].body else {
        unreachable!()
    };
    assert_eq!((original_args, edited_args.as_ref(), *outcome), (&json!({ "order_id": 1001 }), Some(&edited), ApprovalOutcome::Approved));
    assert_eq!(detail.view.cards().next().unwrap().args, edited);
    // The card and the queue's Decided list say what ran, and what was proposed.
    let ran = "Refund $10.00 of $249.00 left on order 1001 · alice · Espresso machine \
               (edited from: Refund $249.00 (everything left) on order 1001 · alice · Espresso machine)";
    assert_eq!(detail.view.cards().next().unwrap().summary, ran);
    let (_, decided) = app.get_json("/api/approvals?status=decided").await;
    assert_eq!(decided[0]["summary"], ran);
    assert!(assistant_texts(&detail.events).last().unwrap().contains("edited the arguments"));
}

#[tokio::test]
async fn aborting_cancels_pending_approvals_and_frees_the_conversation() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let (status, body) = app.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("canceled")));
    let (_, approval) = app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!(approval["state"], "canceled");
    assert_eq!(app.detail(&c).await.view.cards().next().unwrap().status, CardStatus::Canceled);
    assert_eq!(app.order(1001).await.refunded, 0.0);
    // The next message starts a new task.
    let next = app.say(&c, "look up order 1002").await;
    app.wait_task(&next, TaskStatus::Completed).await;
}

#[tokio::test]
async fn the_approval_list_is_newest_first_with_age_and_deadline() {
    let app = spawn_app().await;
    let a = app.create_conversation().await;
    let b = app.create_conversation().await;
    app.pending_turn(&a, "cancel order 1003", 1).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    app.pending_turn(&b, "cancel order 1005", 1).await;
    let (_, list) = app.get_json("/api/approvals?status=pending").await;
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["conversation_id"], b.as_str());
    assert_eq!(list[1]["conversation_id"], a.as_str());
    assert!(list[0]["age_seconds"].is_i64() && list[0]["deadline"].is_string() && list[0]["args"].is_object());
}

#[tokio::test]
async fn proposing_a_rejected_call_again_is_refused_without_a_new_approval_and_the_model_is_told() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({ "reason": "duplicate" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;

    // The scripted model proposes the identical call again, several times over.
    for _ in 0..3 {
        let again = app.say(&c, "refund order 1001").await;
        app.wait_task(&again, TaskStatus::Completed).await;
        assert!(app.pending_approvals_of(&again).await.is_empty(), "no new approval request");
    }
    let (_, all) = app.get_json("/api/approvals?status=all").await;
    assert_eq!(all.as_array().unwrap().len(), 1, "only the first call ever asked a human");
    assert_eq!(app.order(1001).await.refunded, 0.0);
    let detail = app.detail(&c).await;
    let last = assistant_texts(&detail.events).pop().unwrap();
    assert!(last.contains("already rejected"), "{last}");
    assert!(detail.view.cards().all(|card| card.status == CardStatus::Rejected));
    // A different call (other arguments) still asks.
    app.pending_turn(&c, "refund $10 on order 1001", 1).await;
}

#[tokio::test]
async fn a_rule_gate_asks_only_for_large_refunds() {
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"process_refund\", \"get_order\"]\n\
                [[agents.gates]]\nname = \"large-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n";
    let app = crate::helpers::spawn_app_with(crate::helpers::Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let small = app.say(&c, "refund $20 on order 1004").await;
    app.wait_task(&small, TaskStatus::Completed).await;
    assert_eq!(app.order(1004).await.refunded, 20.0, "a small refund ran at once");
    let (_, approvals) = app.pending_turn(&c, "refund $500 on order 1004", 1).await;
    assert_eq!(approvals[0].gate, "large-refunds");
    assert_eq!(app.order(1004).await.refunded, 20.0);
}

#[tokio::test]
async fn deferring_sends_the_guidance_to_the_model_and_the_tool_never_runs() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let path = format!("/api/approvals/{}/defer", approvals[0].id);
    let (code, body) = app.post_json(&path, json!({ "guidance": "   " })).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1);
    let (code, body) = app.post_json(&path, json!({ "guidance": "ask the customer first" })).await;
    assert_eq!((code, body["outcome"].as_str()), (200, Some("deferred")));
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "open");
    let detail = app.detail(&c).await;
    let EventBody::ToolResult { output, .. } = &named(&detail.events, "tool-result")[0].body else { unreachable!() };
    assert_eq!(output, &json!({ "status": "deferred", "guidance": "ask the customer first" }));
    assert!(assistant_texts(&detail.events).last().unwrap().contains("ask the customer first"));
    assert_eq!(detail.view.cards().next().unwrap().status, CardStatus::Deferred);
}

#[tokio::test]
async fn a_grant_lets_later_calls_of_its_tool_through_until_it_is_used_up_or_revoked() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $1 on order 1004", 1).await;
    let (code, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({ "grant": { "max_uses": 2 } })).await;
    assert_eq!(code, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let grant = app.detail(&c).await.view.grants[0].clone();
    assert_eq!((grant.tool.as_str(), grant.max_uses, grant.uses), ("process_refund", Some(2), 0));

    // Two more refunds run without asking; the third asks again.
    for amount in [2, 3] {
        let t = app.say(&c, &format!("refund ${amount} on order 1004")).await;
        app.wait_task(&t, TaskStatus::Completed).await;
    }
    assert_eq!(app.order(1004).await.refunded, 6.0);
    let view = app.detail(&c).await.view;
    assert_eq!(view.grants[0].uses, 2);
    assert_eq!(view.cards().filter(|c| c.granted_by.as_deref() == Some("alice")).count(), 2);
    let (t, more) = app.pending_turn(&c, "refund $4 on order 1004", 1).await;
    app.post_json(&format!("/api/approvals/{}/approve", more[0].id), json!({ "grant": {} })).await;
    app.wait_task(&t, TaskStatus::Completed).await;

    // An unlimited grant works until revoked; bob cannot revoke it.
    let unlimited = app.detail(&c).await.view.grants[1].grant_id.clone();
    let t = app.say(&c, "refund $5 on order 1004").await;
    app.wait_task(&t, TaskStatus::Completed).await;
    assert_eq!(app.as_user("bob").post_json(&format!("/api/grants/{unlimited}/revoke"), json!({})).await.0, 404);
    assert_eq!(app.post_json(&format!("/api/grants/{unlimited}/revoke"), json!({})).await.0, 204);
    assert_eq!(app.post_json(&format!("/api/grants/{unlimited}/revoke"), json!({})).await.0, 409);
    app.pending_turn(&c, "refund $6 on order 1004", 1).await;
    app.audit_entries("grant.used", 3).await; // every call a grant let through is audited
}

#[tokio::test]
async fn a_grant_with_a_ttl_expires() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $1 on order 1004", 1).await;
    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({ "grant": { "ttl_secs": 1 } })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    app.pending_turn(&c, "refund $2 on order 1004", 1).await;
}

#[tokio::test]
async fn a_rule_that_cannot_be_checked_fails_closed_by_default_and_open_when_configured() {
    let toml = |fail_open: bool| {
        format!(
            "[[agents]]\nname = \"support\"\nfail_open = {fail_open}\ntools = [\"process_refund\"]\n\
             [[agents.gates]]\nname = \"large\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\n"
        )
    };
    // "refund order 1001" has no amount: the rule cannot be evaluated.
    let closed = crate::helpers::spawn_app_with(crate::helpers::Options { agents_toml: Some(toml(false)), ..Default::default() }).await;
    let c = closed.create_conversation().await;
    let (_, approvals) = closed.pending_turn(&c, "refund order 1001", 1).await;
    assert!(approvals[0].summary.contains("could not be checked"), "{}", approvals[0].summary);
    closed.audit_entries("policy.fail_closed", 1).await;

    let open = crate::helpers::spawn_app_with(crate::helpers::Options { agents_toml: Some(toml(true)), ..Default::default() }).await;
    let c = open.create_conversation().await;
    let task = open.say(&c, "refund order 1001").await;
    open.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(open.order(1001).await.status, "refunded", "fail-open ran the call");
    let entries = open.audit_entries("policy.fail_open", 1).await;
    assert!(entries[0]["data"]["rule_errors"][0].as_str().unwrap().starts_with("args.amount > 100"));
}

/// The card names the money and the person, and flags a call that would do more than is left.
#[tokio::test]
async fn a_card_names_the_amount_and_the_customer_and_flags_more_than_is_left() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund $10 on order 1004 and cancel order 1006", 2).await;
    let summaries: Vec<&str> = approvals.iter().map(|a| a.summary.as_str()).collect();
    assert!(summaries.contains(&"Refund $10.00 of $1,200.00 left on order 1004 · bob · Barista course"), "{summaries:?}");
    assert!(summaries.contains(&"Cancel order 1006 · alice · Travel mug ($25.00)"), "{summaries:?}");
    let view = app.detail(&c).await.view;
    assert!(view.cards().all(|card| card.warnings.is_empty()), "nothing to flag: both were asked for and fit");

    let c2 = app.create_conversation().await;
    app.pending_turn(&c2, "refund $300 on order 1001", 1).await;
    let card = app.detail(&c2).await.view.cards().next().cloned().unwrap();
    assert_eq!(card.summary, "Refund $300.00 of $249.00 left on order 1001 · alice · Espresso machine");
    assert_eq!(card.warnings, ["$300.00 is more than the $249.00 left to refund: the call will fail"]);

    // Everything refunded already: refunding "the rest" again is flagged, and so is its queue row.
    let c3 = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c3, "refund order 1002", 1).await;
    assert_eq!(app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, again) = app.pending_turn(&c3, "refund order 1002", 1).await;
    let nothing_left = "Nothing is left to refund on order 1002: the call will fail";
    let card = app.detail(&c3).await.view.cards().last().cloned().unwrap();
    assert_eq!(card.warnings, [nothing_left]);
    assert_eq!(again[0].assessment.warnings, [nothing_left]);
}

#[tokio::test]
async fn an_approval_says_what_led_to_it_the_request_the_agents_reasoning_and_the_steps_done() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "cancel all orders of alice").await;
    app.wait_task(&task, TaskStatus::InputRequired).await;
    let approvals = app.pending_approvals_of(&task).await;
    assert!(!approvals.is_empty());
    for approval in &approvals {
        let (_, body) = app.get_json(&format!("/api/approvals/{}", approval.id)).await;
        let context = &body["context"];
        assert_eq!(context["request"], "cancel all orders of alice", "{body}");
        assert!(context["reasoning"].as_str().is_some_and(|r| r.contains("I will cancel each once approved")), "{body}");
        assert_eq!(context["done"], json!(["List the orders of alice"]), "the list ran before: {body}");
        // And why it is risky.
        let assessment = &body["assessment"];
        assert_eq!(assessment["reversibility"], "irreversible", "{body}");
        assert_eq!(assessment["factors"][0], "stops a customer's order", "{body}");
        assert!(assessment["consequences"].as_str().is_some_and(|c| c.contains("cannot be reopened")), "{body}");
    }
    // A first step has nothing done yet and no other request.
    let c2 = app.create_conversation().await;
    let (_, first) = app.pending_turn(&c2, "refund order 1001", 1).await;
    assert_eq!((first[0].context.request.as_str(), first[0].context.done.len()), ("refund order 1001", 0));
}
