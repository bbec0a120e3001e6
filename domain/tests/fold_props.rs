//! Property tests for the one fold (docs/architecture.md, decision 1): whatever the events, folding never
//! panics, and a server render of a prefix followed by live events from any earlier point (the
//! reload / reconnect path) gives exactly the view of folding everything at once.

use domain::{ApprovalOutcome, CallId, Event, EventBody, Risk, TaskId, TaskStatus, fold, rules::DecisionRules};
use proptest::prelude::*;
use serde_json::json;

fn task() -> impl Strategy<Value = TaskId> {
    prop_oneof![Just(TaskId::new("t1")), Just(TaskId::new("t2"))]
}

fn call() -> impl Strategy<Value = CallId> {
    (1..5u8).prop_map(|n| CallId::new(format!("k{n}")))
}

fn outcome() -> impl Strategy<Value = ApprovalOutcome> {
    prop_oneof![
        Just(ApprovalOutcome::Approved),
        Just(ApprovalOutcome::Rejected),
        Just(ApprovalOutcome::Expired),
        Just(ApprovalOutcome::Canceled),
        Just(ApprovalOutcome::Deferred),
    ]
}

fn status() -> impl Strategy<Value = TaskStatus> {
    prop_oneof![
        Just(TaskStatus::Working),
        Just(TaskStatus::InputRequired),
        Just(TaskStatus::Completed),
        Just(TaskStatus::Failed),
        Just(TaskStatus::Canceled),
    ]
}

fn body() -> impl Strategy<Value = EventBody> {
    prop_oneof![
        (task(), "[a-z <>&\"]{0,12}").prop_map(|(task_id, text)| EventBody::UserMessage { task_id, text, reply_to: None, client_id: None }),
        (task(), ".{0,12}", any::<bool>()).prop_map(|(task_id, text, worker)| EventBody::AssistantMessage {
            task_id,
            text,
            agent: worker.then(|| "support".to_owned())
        }),
        (task(), call(), any::<bool>()).prop_map(|(task_id, call_id, granted)| EventBody::ToolCall {
            task_id,
            call_id,
            tool: "process_refund".into(),
            agent: "support".into(),
            args: json!({ "order_id": 1001 }),
            summary: "Refund".into(),
            risk: Risk::High,
            grant_id: granted.then(|| "g1".into()),
            warnings: if granted { Vec::new() } else { vec!["more than is left".to_owned()] },
            shadow_gate: (!granted).then(|| "try-refunds".to_owned()),
            why: granted.then(|| "Not asked: alice allowed process_refund here".to_owned()),
        }),
        (task(), call(), any::<bool>(), any::<bool>(), 0..3u32).prop_map(|(task_id, call_id, in_chat, strict, resent)| {
            EventBody::ApprovalRequired {
                task_id,
                approval_id: format!("a-{call_id}").into(),
                call_id,
                tool: "process_refund".into(),
                args: json!({ "order_id": 1001, "amount": 5 }),
                gate: "refunds".into(),
                summary: "Refund $5".into(),
                risk: Risk::High,
                deadline: "2026-11-22T10:00:00Z".into(),
                in_chat,
                rules: DecisionRules {
                    require_reason: strict,
                    allow_modification: !strict,
                    separate_requester: strict,
                    quorum: 1 + u32::from(strict),
                    grantable: !strict,
                    reauthenticate_secs: strict.then_some(300),
                },
                assessment: strict.then(|| domain::wire::RiskAssessment { factors: vec!["moves money".into()], ..Default::default() }),
                resent,
                spend: strict.then(|| domain::wire::Spend { token_threshold: Some(100), per: "task".into(), ..Default::default() }),
                suggestion: strict
                    .then(|| Box::new(domain::wire::GrantSuggestion { by: "alice".into(), count: 3, grant: Default::default() })),
                approvers: strict.then(|| {
                    Box::new(domain::rules::Approvers {
                        names: vec!["group:finance".into()],
                        people: vec!["dora".into()],
                        admins: false,
                        each: Vec::new(),
                    })
                }),
            }
        }),
        (task(), call()).prop_map(|(task_id, call_id)| EventBody::ApprovalCounted {
            task_id,
            approval_id: format!("a-{call_id}").into(),
            call_id,
            by: "dora".into(),
            approved_by: vec!["dora".into()],
            quorum: 2,
        }),
        (task(), 0..500u64, any::<bool>()).prop_map(|(task_id, tokens, priced)| EventBody::ModelUsage {
            task_id,
            model: "scripted".into(),
            usage: domain::wire::Usage { input_tokens: tokens, output_tokens: tokens / 2, cost_usd: priced.then_some(0.25) },
        }),
        (task(), call(), outcome(), any::<bool>()).prop_map(|(task_id, call_id, outcome, edited)| EventBody::ApprovalDecided {
            task_id,
            approval_id: format!("a-{call_id}").into(),
            call_id,
            outcome,
            decided_by: "ada".into(),
            reason: None,
            original_args: json!({ "order_id": 1001 }),
            edited_args: edited.then(|| json!({ "order_id": 1001, "amount": 1 })),
            summary: edited.then(|| "Refund $1.00 (edited from: Refund)".to_owned()),
        }),
        (task(), call(), any::<bool>()).prop_map(|(task_id, call_id, to_group)| EventBody::ApprovalEscalated {
            task_id,
            approval_id: format!("a-{call_id}").into(),
            call_id,
            escalated_by: "bob".into(),
            deadline: "2026-11-22T11:00:00Z".into(),
            to: to_group.then(|| "finance".into()),
            deciders: if to_group { vec!["dora".into()] } else { Vec::new() },
        }),
        (task(), call()).prop_map(|(task_id, call_id)| EventBody::ConfirmationAsked {
            task_id,
            approval_id: format!("a-{call_id}").into(),
            call_id,
            question: "Shall I?".into()
        }),
        (task(), call()).prop_map(|(task_id, call_id)| EventBody::ToolStarted { task_id, call_id }),
        (task(), call(), any::<bool>()).prop_map(|(task_id, call_id, ok)| EventBody::ToolResult {
            task_id,
            call_id,
            ok,
            output: if ok { json!({ "message": "done" }) } else { json!({ "status": "rejected", "reason": "no" }) },
        }),
        (task(), status(), any::<bool>()).prop_map(|(task_id, status, worker)| EventBody::TaskStatus {
            task_id,
            status,
            message: None,
            parent_call_id: worker.then(|| "k1".into()),
        }),
        (task(), any::<bool>()).prop_map(|(task_id, planned)| EventBody::GrantCreated {
            task_id,
            grant_id: "g1".into(),
            tool: "process_refund".into(),
            created_by: "ada".into(),
            expires_at: None,
            max_uses: Some(if planned { 1 } else { 2 }),
            args: planned.then(|| json!({ "order_id": 1001 })),
            policy_version: planned.then(|| "0123456789ab".to_owned()),
            gate: (!planned).then(|| "refunds".to_owned()),
            bounds: None,
        }),
        task().prop_map(|task_id| EventBody::GrantRevoked { task_id, grant_id: "g1".into(), revoked_by: "ada".into() }),
        (task(), call(), 1..4u32).prop_map(|(task_id, call_id, reminder)| EventBody::ApprovalReminder {
            task_id,
            approval_id: format!("a-{call_id}").into(),
            call_id,
            reminder,
            of: 3,
        }),
    ]
}

fn log() -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(body(), 0..40).prop_map(|bodies| {
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| Event { seq: i as i64 + 1, conversation_id: "c".into(), at: "2026-11-22T10:00:00Z".into(), body })
            .collect()
    })
}

/// A log as the engine writes it: each call is made once and its result is the last of it, and a
/// turn that ended says nothing more (its final status is terminal: domain/src/states.rs).
fn well_formed(events: Vec<Event>) -> Vec<Event> {
    let (mut calls, mut answered, mut ended) =
        (std::collections::HashSet::new(), std::collections::HashSet::new(), std::collections::HashSet::new());
    events
        .into_iter()
        .filter(|event| {
            let task = event.body.task_id().clone();
            let call = match &event.body {
                EventBody::ApprovalRequired { call_id, .. }
                | EventBody::ApprovalDecided { call_id, .. }
                | EventBody::ApprovalReminder { call_id, .. }
                | EventBody::ApprovalCounted { call_id, .. }
                | EventBody::ApprovalEscalated { call_id, .. }
                | EventBody::ConfirmationAsked { call_id, .. }
                | EventBody::ToolStarted { call_id, .. }
                | EventBody::ToolResult { call_id, .. } => Some(call_id.clone()),
                _ => None,
            };
            if ended.contains(&task) || call.as_ref().is_some_and(|c| answered.contains(c)) {
                return false;
            }
            if let (EventBody::ToolResult { .. }, Some(call)) = (&event.body, call) {
                answered.insert(call);
            }
            if let EventBody::TaskStatus { status, .. } = &event.body
                && status.is_final()
            {
                ended.insert(task);
            }
            match &event.body {
                EventBody::ToolCall { call_id, .. } => calls.insert(call_id.clone()),
                _ => true,
            }
        })
        .collect()
}

proptest! {
    /// What store/src/snapshots.rs relies on to keep only a page: the page of a prefix, with
    /// the tail applied, pages to exactly the page of everything; and the earlier items of the
    /// whole view, put before the page, give the whole chat back.
    #[test]
    fn the_page_of_a_prefix_plus_the_tail_is_the_page_of_the_whole_fold(
        events in log().prop_map(well_formed),
        split in any::<prop::sample::Index>(),
        size in 1..6usize,
    ) {
        let whole = fold(&events);
        let k = split.index(events.len() + 1);
        let stored = serde_json::to_string(&fold(&events[..k]).page(size)).unwrap();
        let mut page: domain::ConversationView = serde_json::from_str(&stored).unwrap();
        for event in &events[k..] {
            page.apply(event);
        }
        let page = page.page(size);
        prop_assert_eq!(&page, &whole.page(size));
        prop_assert!(page.items.len() <= size + whole.cards().filter(|c| c.result.is_none()).count());
        prop_assert_eq!(page.pending_count(), whole.pending_count(), "every waiting card is on the page");

        // "Show earlier" until there is nothing before: the whole chat, in order.
        let mut shown = page;
        while let Some(before) = shown.earlier {
            shown.prepend(whole.earlier_items(before, size));
        }
        prop_assert_eq!(&shown.items, &whole.items);
        prop_assert!(shown.tasks.iter().all(|t| whole.task(&t.task_id) == Some(t)));
    }


    #[test]
    fn a_render_of_a_prefix_plus_live_events_from_any_earlier_point_equals_the_whole_fold(
        events in log(),
        split in any::<prop::sample::Index>(),
        overlap in any::<prop::sample::Index>(),
    ) {
        let whole = fold(&events);
        let k = split.index(events.len() + 1);
        // Server render up to k, then the SSE stream resumes from some earlier point j ≤ k.
        let j = overlap.index(k + 1);
        let mut view = fold(&events[..k]);
        for event in &events[j..] {
            view.apply(event);
        }
        prop_assert_eq!(&view, &whole);
        prop_assert_eq!(whole.cards().count(), events.iter().filter(|e| e.body.name() == "tool-call").count());
        prop_assert_eq!(whole.last_seq, events.last().map_or(0, |e| e.seq));
    }

    #[test]
    fn a_stored_snapshot_of_any_prefix_plus_the_tail_equals_the_whole_fold(events in log(), split in any::<prop::sample::Index>()) {
        // What store/src/snapshots.rs does: the view of a prefix goes through its JSON,
        // and the events after it are applied.
        let k = split.index(events.len() + 1);
        let stored = serde_json::to_string(&fold(&events[..k])).unwrap();
        let mut view: domain::ConversationView = serde_json::from_str(&stored).unwrap();
        let after = view.last_seq;
        for event in events.iter().filter(|e| e.seq > after) {
            view.apply(event);
        }
        prop_assert_eq!(view, fold(&events));
    }

    /// The browser decodes events by hand (domain/src/event/decode.rs): it reads every event as
    /// the derive does, and the same event with one field left out or null the same way too.
    #[test]
    fn the_browsers_decoder_reads_every_event_as_the_derive_does(
        events in log(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 40),
    ) {
        for (event, (pick, nulled)) in events.iter().zip(picks) {
            let value = serde_json::to_value(event).unwrap();
            prop_assert_eq!(&domain::event::event_from_value(value.clone()).unwrap(), event);
            let mut changed = value;
            let fields = changed.as_object_mut().unwrap();
            let key = fields.keys().nth(pick.index(fields.len())).unwrap().clone();
            if nulled {
                fields.insert(key.clone(), serde_json::Value::Null);
            } else {
                fields.remove(&key);
            }
            let by_hand = domain::event::event_from_value(changed.clone());
            let derived = serde_json::from_value::<Event>(changed);
            prop_assert_eq!(by_hand.as_ref().ok(), derived.as_ref().ok(), "{} {}: {:?} / {:?}", key, nulled, by_hand, derived);
        }
    }

    #[test]
    fn events_and_views_survive_the_json_the_browser_receives(events in log()) {
        let view = fold(&events);
        let text = serde_json::to_string(&view).unwrap();
        prop_assert_eq!(serde_json::from_str::<domain::ConversationView>(&text).unwrap(), view);
        for event in &events {
            let text = serde_json::to_string(event).unwrap();
            prop_assert_eq!(&serde_json::from_str::<Event>(&text).unwrap(), event);
        }
    }
}
