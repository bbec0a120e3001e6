//! Use cases driven through the engine alone (no HTTP), on SQLite or, with
//! `COUNTERSIGN_TEST_POSTGRES`, on PostgreSQL (`harness.rs`): here, what a stopped call does
//! across a restart of the process; beside it, one file per use case (deciding, editing, grants,
//! plans, escalation, timeouts, an outside client's calls, cancellation). The HTTP suites
//! (`server/tests/api`) cover the doors.

mod cancel;
mod client_calls;
mod client_reads;
mod decide;
mod edit;
mod escalate;
mod grants;
mod harness;
mod plans;
mod time_out;

use domain::{ApprovalState, EventBody, Role, TaskStatus};
use engine::{Error, orchestrator::Decision};
use harness::Engine;
use serde_json::json;

const ASKING_AGENT: &str = r#"
[[agents]]
name = "support"
description = "asks back"
tools = ["get_order", "ask_user"]
"#;

/// The agent asks the user a question; the process restarts; the question is still there, a
/// wrong answer changes nothing, and the right one lets the turn go on from where it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_user_question_survives_a_restart_and_its_answer_goes_on_from_there() {
    let engine = Engine::start(ASKING_AGENT).await;
    let chat = engine.conversation("alice", "support").await;
    let task = engine.say(&chat, "ask me which order to look up").await;
    assert_eq!(engine.status(&task).await, TaskStatus::InputRequired);
    let question = engine.pending(&task).await.pop().expect("the question waits");
    assert_eq!(question.tool, "ask_user");

    let engine = engine.restart().await;
    assert_eq!(engine.settle(&task).await, TaskStatus::InputRequired, "nothing moves without the answer");
    let pending = engine.pending(&task).await;
    assert_eq!(pending.iter().map(|a| &a.id).collect::<Vec<_>>(), [&question.id], "the same question, asked once");

    let mut wrong = question.args();
    wrong["answer"] = json!("9999");
    let refused = engine.decide(&question.id, Decision::Approve { args: Some(wrong), grant: None }, "alice", Role::User).await;
    match refused {
        Err(Error::Invalid { details, .. }) => assert_eq!(details[0].path, "/args/answer"),
        other => panic!("an answer outside the options is refused, got {other:?}"),
    }
    assert_eq!(engine.approval(&question.id).await.state, ApprovalState::Pending, "the refused answer changed nothing");

    let mut answer = question.args();
    answer["answer"] = json!("1003");
    engine.decide(&question.id, Decision::Approve { args: Some(answer), grant: None }, "alice", Role::User).await.unwrap();
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
    let events = engine.events(&chat, &task).await;
    let answered = events.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { call_id, ok: true, output, .. } if *call_id == question.call_id => Some(output.clone()),
        _ => None,
    });
    assert!(answered.expect("the question has its result").to_string().contains("1003"));
    let looked_up = events
        .iter()
        .any(|e| matches!(&e.body, EventBody::ToolCall { tool, args, .. } if tool == "get_order" && args["order_id"] == json!(1003)));
    assert!(looked_up, "the agent went on with the answer: {events:#?}");
}

const TIMING_OUT_GATE: &str = r#"
[defaults]
timeout_secs = 0.5
timeout_action = "approve"

[[agents]]
name = "support"
description = "refunds"
tools = ["get_order", "process_refund"]

[[agents.gates]]
name = "refunds"
kind = "tools"
tools = ["process_refund"]
timeout_action = "default"
"#;

/// A gate whose timeout action is `default` takes `[defaults]`'s (here: approve). The process
/// restarts while the call waits; the deadline is stored, so the next process's sweep applies
/// the action, and the approved call runs exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_timeout_action_applies_after_a_restart_and_the_call_runs_once() {
    let engine = Engine::start(TIMING_OUT_GATE).await;
    let chat = engine.conversation("alice", "support").await;
    let task = engine.say(&chat, "refund $5 on order 1002").await;
    assert_eq!(engine.status(&task).await, TaskStatus::InputRequired);
    let approval = engine.pending(&task).await.pop().expect("the refund waits");
    assert_eq!(approval.tool, "process_refund");

    let engine = engine.restart().await;
    engine.sweep().await;
    // Before its deadline nothing happens (the sweep may run early).
    if engine.approval(&approval.id).await.deadline > engine::clock::now_ms() {
        assert_eq!(engine.approval(&approval.id).await.state, ApprovalState::Pending);
    }
    let wait = approval.deadline - engine::clock::now_ms();
    tokio::time::sleep(std::time::Duration::from_millis(wait.max(0) as u64 + 50)).await;
    engine.sweep().await;
    engine.sweep().await;

    let decided = engine.approval(&approval.id).await;
    assert_eq!(decided.state, ApprovalState::Approved, "the default action (approve) applied");
    assert_eq!(decided.decided_by.as_deref(), Some("system"));
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
    let results = engine
        .events(&chat, &task)
        .await
        .into_iter()
        .filter(|e| matches!(&e.body, EventBody::ToolResult { call_id, ok: true, .. } if *call_id == approval.call_id))
        .count();
    assert_eq!(results, 1, "the approved refund ran exactly once");
}

/// A stored value that is not what it should be fails the read that meets it, naming the
/// approval and the column, instead of deciding with a default (`null` arguments); nothing is
/// decided.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_stored_value_is_an_error_naming_the_row_and_nothing_is_decided() {
    let engine = Engine::start(&TIMING_OUT_GATE.replace("timeout_secs = 0.5", "timeout_secs = 300")).await;
    let chat = engine.conversation("alice", "support").await;
    let task = engine.say(&chat, "refund $5 on order 1002").await;
    let approval = engine.pending(&task).await.pop().expect("the refund waits");
    // Written as text and cast to the column's type (PostgreSQL's `require_reason` is a BIGINT).
    for (column, value, sql_type) in [("args", "{not json", "TEXT"), ("require_reason", "7", "BIGINT")] {
        let restore = sqlx::query_scalar::<_, String>(&format!("SELECT CAST({column} AS TEXT) FROM approvals WHERE id = $1"))
            .bind(&approval.id)
            .fetch_one(engine.store.testing().writer().exec())
            .await
            .unwrap();
        sqlx::query(&format!("UPDATE approvals SET {column} = CAST($1 AS {sql_type}) WHERE id = $2"))
            .bind(value)
            .bind(&approval.id)
            .execute(engine.store.testing().writer().exec())
            .await
            .unwrap();
        let refused = engine.decide(&approval.id, Decision::Approve { args: None, grant: None }, "admin", Role::Admin).await;
        let Err(Error::Internal(err)) = refused else { panic!("{column}: a corrupt row is an error, got {refused:?}") };
        let said = format!("{err:#}");
        assert!(said.contains(approval.id.as_str()) && said.contains(column), "{column}: {said}");
        sqlx::query(&format!("UPDATE approvals SET {column} = CAST($1 AS {sql_type}) WHERE id = $2"))
            .bind(restore)
            .bind(&approval.id)
            .execute(engine.store.testing().writer().exec())
            .await
            .unwrap();
        let state: String = sqlx::query_scalar("SELECT state FROM approvals WHERE id = $1")
            .bind(&approval.id)
            .fetch_one(engine.store.testing().writer().exec())
            .await
            .unwrap();
        assert_eq!(state, "pending", "{column}: nothing was decided");
    }
    // Put back, it decides as usual.
    engine.decide(&approval.id, Decision::Approve { args: None, grant: None }, "admin", Role::Admin).await.unwrap();
    assert_eq!(engine.settle(&task).await, TaskStatus::Completed);
}
