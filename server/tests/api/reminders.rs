//! Waiting approvals remind their deciders and escalate on time: `reminder_interval_secs` /
//! `max_reminders` send `approval-reminder` events (audited), `escalation_timeout_secs` hands the
//! approval to the admins before its deadline (which stays). Both are stored times, so a restart
//! misses none.

use std::{sync::Arc, time::Duration};

use domain::EventBody;

use crate::helpers::{BinaryServer, Options, TestApp, eventually, named, refused_start_up, spawn_app_with};

fn agents(reminder_secs: f64, max: u32, escalate_secs: f64) -> String {
    format!(
        "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n\
         reminder_interval_secs = {reminder_secs}\nmax_reminders = {max}\nescalation_timeout_secs = {escalate_secs}\n"
    )
}

/// `(reminders as (number, of), who escalated it and to which deadline)` from the chat's events.
async fn waiting_events(app: &TestApp, conversation: &str) -> (Vec<(u32, u32)>, Vec<(String, String)>) {
    let events = app.detail(conversation).await.events;
    let reminders = named(&events, "approval-reminder")
        .iter()
        .map(|e| match &e.body {
            EventBody::ApprovalReminder { reminder, of, .. } => (*reminder, *of),
            _ => unreachable!(),
        })
        .collect();
    let escalations = named(&events, "approval-escalated")
        .iter()
        .map(|e| match &e.body {
            EventBody::ApprovalEscalated { escalated_by, deadline, .. } => (escalated_by.clone(), deadline.clone()),
            _ => unreachable!(),
        })
        .collect();
    (reminders, escalations)
}

#[tokio::test]
async fn reminders_come_at_their_interval_up_to_the_limit_and_the_escalation_timeout_hands_it_to_the_admins() {
    let app = spawn_app_with(Options { agents_toml: Some(agents(0.3, 2, 1.0)), ..Default::default() }).await;
    let alice = app.as_user("alice");
    let c = alice.create_conversation().await;
    let (_task, approvals) = alice.pending_turn(&c, "refund order 1001", 1).await;
    let approval = &approvals[0];
    // The owner's queue hears each reminder (its rows and tab title say so) and the escalation.
    let queue = alice.sse("/api/approvals/events", None).await;
    let heard = crate::helpers::take_events(queue, 3).await;
    assert!(heard.iter().all(|e| e.event == "queue-changed" && e.data.contains(approval.id.as_str())), "{heard:?}");
    let (reminders, escalations) = eventually("two reminders and the escalation", || async {
        let seen = waiting_events(&alice, &c).await;
        (seen.0.len() == 2 && seen.1.len() == 1).then_some(seen)
    })
    .await;
    assert_eq!(reminders, vec![(1, 2), (2, 2)]);
    assert_eq!(escalations, vec![("system".to_owned(), approval.deadline.clone())], "escalated by the server; the deadline stays");
    // No third reminder, however long it waits.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(waiting_events(&alice, &c).await.0.len(), 2);
    let (_, now) = alice.get_json(&format!("/api/approvals/{}", approval.id)).await;
    assert_eq!((now["reminders_sent"].as_u64(), now["escalated_by"].as_str()), (Some(2), Some("system")), "{now}");
    // With the admins now: the owner may not decide it, an admin may.
    let (status, body) = alice.post_json(&approval.approve_url, serde_json::json!({})).await;
    assert_eq!(status, 403, "{body}");
    app.audit_entries("approval.reminded", 2).await;
    let (status, body) = app.as_user("root").post_json(&approval.approve_url, serde_json::json!({})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn reminders_and_the_escalation_due_while_the_server_was_down_come_after_the_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let toml = agents(0.5, 2, 1.2);
    let first = BinaryServer::start(dir.clone(), Some(&toml)).await;
    let c = first.app.create_conversation().await;
    first.app.pending_turn(&c, "refund order 1001", 1).await;
    let dir = first.kill().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let second = BinaryServer::start(dir, Some(&toml)).await;
    let (reminders, escalations) = eventually("the missed reminders and the escalation", || async {
        let seen = waiting_events(&second.app, &c).await;
        (seen.0.len() == 2 && seen.1.len() == 1).then_some(seen)
    })
    .await;
    assert_eq!(reminders, vec![(1, 2), (2, 2)], "each once, none lost to the restart");
    assert_eq!(escalations[0].0, "system");
}

#[tokio::test]
async fn an_escalation_after_the_deadline_or_an_unknown_webhook_event_stops_the_start_up() {
    let toml = agents(1.0, 2, 90.0);
    let err = refused_start_up(&toml).await;
    assert!(err.contains("escalation_timeout_secs (90) must be shorter than the gate's timeout (60 s)"), "{err}");
    let err = refused_start_up(&agents(1.0, 0, 5.0)).await;
    assert!(err.contains("max_reminders must be at least 1"), "{err}");
    let hook = format!(
        "{}\n[[webhooks]]\nurl = \"http://127.0.0.1:9/\"\nsecret_env = \"HOOK_SECRET\"\nevents = [\"approval-reminders\"]\n",
        agents(1.0, 2, 5.0)
    );
    let err = refused_start_up(&hook).await;
    assert!(err.contains("unknown event \"approval-reminders\""), "{err}");
}

#[tokio::test]
async fn the_retry_timeout_action_asks_again_with_a_fresh_deadline_then_rejects_as_timed_out() {
    let toml = "[defaults]\ntimeout_action = \"reject\"\n[[agents]]\nname = \"support\"\ntools = [\"process_refund\"]\n\
                [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 0.4\n\
                timeout_action = \"retry\"\nmax_retries = 2\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    app.wait_task(&task, domain::TaskStatus::Completed).await;
    let events = app.detail(&c).await.events;
    let asked: Vec<(u32, String)> = named(&events, "approval-required")
        .iter()
        .map(|e| match &e.body {
            EventBody::ApprovalRequired { resent, deadline, approval_id, .. } => {
                assert_eq!(approval_id, &approvals[0].id, "the same approval, asked again");
                (*resent, deadline.clone())
            }
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(asked.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(asked.windows(2).all(|w| w[0].1 < w[1].1), "each time a later deadline: {asked:?}");
    let decided = named(&events, "approval-decided");
    let EventBody::ApprovalDecided { outcome, reason, .. } = &decided[0].body else { unreachable!() };
    assert_eq!((*outcome, reason.as_deref()), (domain::ApprovalOutcome::Expired, Some("timed out (asked 3 times)")));
    assert_eq!(app.order(1001).await.status, "open", "never approved, never run");
    // The chat counted one request, not three.
    let view = app.detail(&c).await.view;
    let summary = &view.tasks.iter().find(|t| t.task_id == task).unwrap().summary;
    assert_eq!((summary.approvals_requested, summary.expired), (1, 1));
}

#[tokio::test]
async fn a_retry_due_while_the_server_was_down_asks_again_after_the_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"process_refund\"]\n\
                [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 0.6\n\
                timeout_action = \"retry\"\nmax_retries = 1\n";
    let first = BinaryServer::start(dir.clone(), Some(toml)).await;
    let c = first.app.create_conversation().await;
    let (task, approvals) = first.app.pending_turn(&c, "refund order 1001", 1).await;
    let dir = first.kill().await;
    tokio::time::sleep(Duration::from_millis(900)).await;

    let second = BinaryServer::start(dir, Some(toml)).await;
    second.app.wait_task(&task, domain::TaskStatus::Completed).await;
    let events = second.app.detail(&c).await.events;
    let resent: Vec<u32> = named(&events, "approval-required")
        .iter()
        .map(|e| match &e.body {
            EventBody::ApprovalRequired { resent, approval_id, .. } if approval_id == &approvals[0].id => *resent,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(resent, vec![0, 1], "asked again once after the restart, then it timed out for good");
    let decided = named(&events, "approval-decided");
    let EventBody::ApprovalDecided { reason, .. } = &decided[0].body else { unreachable!() };
    assert_eq!(reason.as_deref(), Some("timed out (asked 2 times)"));
}

#[tokio::test]
async fn timeout_action_default_is_the_defaults_and_a_wrong_one_is_named() {
    let gate = |action: &str, extra: &str| {
        format!(
            "[defaults]\ntimeout_action = \"approve\"\n[[agents]]\nname = \"support\"\ntools = [\"process_refund\"]\n\
             [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_action = \"{action}\"\n{extra}"
        )
    };
    let app = spawn_app_with(Options { agents_toml: Some(gate("default", "timeout_secs = 0.3\n")), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, _) = app.pending_turn(&c, "refund order 1001", 1).await;
    app.wait_task(&task, domain::TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded", "\"default\" is the [defaults] action: approve");
    let err = refused_start_up(&gate("later", "")).await;
    assert!(err.contains("timeout_action must be reject, approve, skip, abort, escalate, retry or default, got \"later\""), "{err}");
    let err = refused_start_up(&gate("reject", "max_retries = 3\n")).await;
    assert!(err.contains("max_retries goes with timeout_action = \"retry\""), "{err}");
}
