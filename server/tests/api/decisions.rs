//! The approval state machine in SQL: one winner, 409 for the rest, 404 for unknown ids.

use domain::{EventBody, TaskStatus};
use serde_json::json;

use crate::helpers::{error_code, named, spawn_app};

#[tokio::test]
async fn a_second_decision_on_the_same_approval_gets_409_and_changes_nothing() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}", approvals[0].id);
    assert_eq!(app.post_json(&format!("{path}/approve"), json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    let before = app.detail(&c).await.events;

    let (status, body) = app.post_json(&format!("{path}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"));
    let (status, _) = app.post_json(&format!("{path}/reject"), json!({ "reason": "late" })).await;
    assert_eq!(status, 409);

    assert_eq!(app.detail(&c).await.events, before, "nothing was appended");
    assert_eq!(app.order(1001).await.refunded, 249.0, "refunded once");
    let (_, approval) = app.get_json(&path).await;
    assert_eq!(approval["state"], "approved");
}

#[tokio::test]
async fn twenty_concurrent_decisions_have_exactly_one_winner_and_one_effect() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $20 on order 1004", 1).await;
    let id = approvals[0].id.clone();
    let requests = (0..20).map(|i| {
        let app = &app;
        let path = format!("/api/approvals/{id}/{}", if i % 2 == 0 { "approve" } else { "reject" });
        async move { app.post_json(&path, json!({})).await.0 }
    });
    let statuses = futures::future::join_all(requests).await;
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 19, "{statuses:?}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    assert_eq!(named(&detail.events, "approval-decided").len(), 1);
    assert_eq!(named(&detail.events, "tool-result").len(), 1);
    let refunded = app.order(1004).await.refunded;
    assert!(refunded == 20.0 || refunded == 0.0, "at most one refund: {refunded}");
}

#[tokio::test]
async fn an_unknown_approval_is_404() {
    let app = spawn_app().await;
    for path in ["/api/approvals/nope", "/api/approvals/nope/approve", "/api/approvals/nope/reject"] {
        let response = if path.ends_with("nope") { app.get_json(path).await } else { app.post_json(path, json!({})).await };
        assert_eq!((response.0, error_code(&response.1)), (404, "not_found"), "{path}");
    }
    for path in ["/api/tasks/nope/approve-all", "/api/tasks/nope/reject-all", "/api/tasks/nope/abort"] {
        assert_eq!(app.post_json(path, json!({})).await.0, 404, "{path}");
    }
}

#[tokio::test]
async fn a_decision_on_a_task_that_is_not_waiting_for_input_is_409() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    assert_eq!(app.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await.0, 200);
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("canceled"), "{body}");
    assert_eq!(app.post_json(&format!("/api/tasks/{task}/approve-all"), json!({})).await.0, 409);
    assert_eq!(app.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await.0, 409);
    assert_eq!(app.order(1003).await.status, "open");
}

#[tokio::test]
async fn invalid_edited_args_get_422_with_the_schema_errors_and_the_approval_stays_pending() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}/approve", approvals[0].id);
    let events_before = app.detail(&c).await.events;
    for bad in [
        json!({ "order_id": "1001" }),
        json!({ "order_id": 1001, "amount": -5 }),
        json!({ "amount": 5 }),
        json!({ "order_id": 1001, "extra": true }),
    ] {
        let (status, body) = app.post_json(&path, json!({ "args": bad })).await;
        assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{bad}: {body}");
        let details = body["error"]["details"].as_array().expect("schema errors listed");
        assert!(!details.is_empty() && details[0]["message"].is_string(), "{body}");
    }
    assert_eq!(app.detail(&c).await.events, events_before, "nothing changed");
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1);
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);
}

/// Edited arguments are read as the tool's schema types them before anything is decided: a whole
/// number sent as a float (`1003.0`, as protobuf-carried JSON sends it) for an `integer` field is
/// that integer, stored and run as one; one with a fraction is a 422 on its field and decides
/// nothing, so the approval is not used up by arguments the tool would refuse.
#[tokio::test]
async fn an_edited_whole_float_is_the_integer_the_schema_says_and_a_fraction_is_refused_on_its_field() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}", approvals[0].id);
    let before = app.detail(&c).await.events;

    let (status, body) = app.post_json(&format!("{path}/approve"), json!({ "args": { "order_id": 1003.5, "amount": 1 } })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    assert_eq!(body["error"]["details"], json!([{ "path": "/order_id", "message": "must be an integer" }]), "{body}");
    assert_eq!(app.detail(&c).await.events, before, "nothing changed");
    assert_eq!(app.get_json(&path).await.1["state"], "pending");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);

    let (status, body) = app.post_json(&format!("{path}/approve"), json!({ "args": { "order_id": 1003.0, "amount": 1 } })).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.refunded, 1.0, "the refund ran on order 1003");
    assert_eq!(app.order(1001).await.refunded, 0.0, "not on the proposed one");
    let detail = app.detail(&c).await;
    let EventBody::ApprovalDecided { edited_args: Some(edited), .. } = &named(&detail.events, "approval-decided")[0].body else {
        panic!("the approval was decided with edited arguments: {:?}", detail.events)
    };
    // `Value`'s equality tells `1003` from `1003.0`, and the stored text kept which it was.
    assert_eq!(edited, &json!({ "order_id": 1003, "amount": 1 }));
    assert!(edited["order_id"].is_u64(), "stored as an integer: {edited}");
    let (_, approval) = app.get_json(&path).await;
    assert_eq!(approval["state"], "approved", "{approval}");
    assert!(approval["edited_args"]["order_id"].is_u64() && approval["edited_args"] == *edited, "{approval}");
}

/// A whole number too large for the integer a tool reads (`1e20`, or one past `i64::MAX` written
/// as an integer) is refused on its field like a fraction, before anything is decided: the schema
/// check counts it as an integer, the tool would not.
#[tokio::test]
async fn an_edited_integer_too_large_for_the_tool_is_refused_on_its_field_and_decides_nothing() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}", approvals[0].id);
    let before = app.detail(&c).await.events;
    let refused = json!([{ "path": "/order_id", "message": "must be an integer from -9223372036854775808 to 9223372036854775807" }]);
    for order_id in [json!(1e20), json!(9_223_372_036_854_775_808_u64)] {
        let args = json!({ "order_id": order_id, "amount": 1 });
        for door in ["approve", "preview"] {
            let (status, body) = app.post_json(&format!("{path}/{door}"), json!({ "args": args })).await;
            assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{door} {args}: {body}");
            assert_eq!(body["error"]["details"], refused, "{door} {args}: {body}");
        }
    }
    assert_eq!(app.detail(&c).await.events, before, "nothing changed");
    assert_eq!(app.get_json(&path).await.1["state"], "pending");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);
    assert_eq!(app.order(1001).await.refunded, 0.0);
}

/// Attack: approve after the deadline passed but before the sweeper applied the timeout action
/// (with `escalate` that would skip the admins). The decision checks the deadline itself.
#[tokio::test]
async fn an_approval_past_its_deadline_cannot_be_decided_even_before_the_sweeper_ran() {
    let options = crate::helpers::Options {
        agents_toml: Some(crate::helpers::agents_with_timeout(0.3)),
        sweep_ms: Some(600_000),
        ..Default::default()
    };
    let app = crate::helpers::spawn_app_with(options).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let path = format!("/api/approvals/{}", approvals[0].id);
    let (status, body) = app.post_json(&format!("{path}/approve"), json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("ran out of time"), "{body}");
    let (_, approval) = app.get_json(&path).await;
    assert_eq!(approval["state"], "pending", "nothing changed: the timeout action still applies");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired);
    assert_eq!(app.order(1001).await.refunded, 0.0);
}

/// Attack: the owner stops a turn whose approval the admins hold, canceling it past them.
#[tokio::test]
async fn a_user_cannot_abort_a_turn_whose_approval_the_admins_hold() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{}/escalate", approvals[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = app.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("with the admins"), "{body}");
    assert_eq!(app.task_status(&task).await, TaskStatus::InputRequired, "nothing changed");
    let (_, approval) = app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!(approval["state"], "pending");
    let (status, body) = app.as_user("root").post_json(&format!("/api/tasks/{task}/abort"), json!({})).await;
    assert_eq!(status, 200, "an admin may: {body}");
}

#[tokio::test]
async fn one_approval_carries_its_tools_schema_for_the_edit_form_and_lists_do_not() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let (status, approval) = app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!(status, 200);
    let schema = &approval["args_schema"];
    assert_eq!(schema["properties"]["order_id"]["type"], "integer");
    assert_eq!(schema["properties"]["amount"]["type"], "number");
    assert_eq!(schema["required"], json!(["order_id"]));
    let (_, list) = app.get_json("/api/approvals").await;
    assert!(list[0].get("args_schema").is_none(), "lists stay small: {}", list[0]);
}

#[tokio::test]
async fn the_audit_trail_reads_newest_first_for_the_audit_page_and_refuses_a_mixed_cursor() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    let root = app.as_user("root");
    let (_, oldest) = root.get_json("/api/audit?limit=1000").await;
    let ids: Vec<i64> = oldest["entries"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.len() >= 3, "{oldest}");
    let (status, newest) = root.get_json("/api/audit?order=newest&limit=2").await;
    assert_eq!(status, 200);
    let newest: Vec<i64> = newest["entries"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(newest, [ids[ids.len() - 1], ids[ids.len() - 2]], "the newest two, newest first");
    let (status, body) = root.get_json("/api/audit?order=newest&after=1").await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"));
    let (status, body) = root.get_json("/api/audit?order=sideways").await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"));
}

/// The edit form's preview: what the edited call would do, read against the data now; bad
/// arguments said for people; someone else's approval not found; nothing decided either way.
#[tokio::test]
async fn a_preview_of_edited_arguments_says_what_would_happen_and_decides_nothing() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}/preview", approvals[0].id);
    let before = app.detail(&c).await.events;

    let (status, body) = app.post_json(&path, json!({ "args": { "order_id": 1001, "amount": 5000 } })).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["summary"].as_str().unwrap().starts_with("Refund $5,000.00 of $249.00 left on order 1001"), "{body}");
    assert_eq!(body["warnings"], json!(["$5,000.00 is more than the $249.00 left to refund: the call will fail"]));

    let (status, body) = app.post_json(&path, json!({ "args": { "order_id": 1001, "amount": -5 } })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    assert_eq!(body["error"]["details"][0], json!({ "path": "/amount", "message": "must be more than 0" }));
    assert_eq!(app.post_json(&path, json!({})).await.0, 422, "no arguments");
    assert_eq!(app.post_json("/api/approvals/nope/preview", json!({ "args": {} })).await.0, 404);
    assert_eq!(app.as_user("bob").post_json(&path, json!({ "args": { "order_id": 1001 } })).await.0, 404, "not bob's");
    assert_eq!(app.detail(&c).await.events, before, "nothing was appended");
    assert_eq!(app.order(1001).await.refunded, 0.0);

    assert_eq!(app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await.0, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.post_json(&path, json!({ "args": { "order_id": 1001 } })).await.0, 409, "decided already");
}
