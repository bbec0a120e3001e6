//! Shadow gates (`mode = "shadow"`): a gate being tried out records the calls it would have
//! stopped — on the call's event and card, in the audit trail and in `/metrics` — and stops none.
//! A whole draft (`COUNTERSIGN_AGENTS_DRAFT`) is tried out the same way: every call is also put to
//! it, and where it would do otherwise a shadow hit named `draft:…` says so.

use domain::{EventBody, TaskStatus};

use crate::helpers::{Options, named, refused_start_up, refused_start_up_with, spawn_app_with};

const AGENT: &str = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n";

#[tokio::test]
async fn a_shadow_gate_lets_the_call_run_and_records_that_it_would_have_asked() {
    let gates = "[[agents.gates]]\nname = \"big-refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nmode = \"shadow\"\n";
    let app = spawn_app_with(Options { agents_toml: Some(format!("{AGENT}{gates}")), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "refund order 1001").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded", "nobody was asked: the call ran");
    let detail = app.detail(&c).await;
    assert!(named(&detail.events, "approval-required").is_empty(), "no approval");
    let shadowed: Vec<_> = named(&detail.events, "tool-call")
        .iter()
        .map(|e| match &e.body {
            EventBody::ToolCall { tool, shadow_gate, .. } => (tool.clone(), shadow_gate.clone()),
            _ => unreachable!(),
        })
        .collect();
    assert!(shadowed.contains(&("process_refund".to_owned(), Some("big-refunds".to_owned()))), "{shadowed:?}");
    assert!(shadowed.iter().filter(|(tool, _)| tool != "process_refund").all(|(_, gate)| gate.is_none()), "only what the gate names");
    let card = detail.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.shadow_gate.as_deref(), Some("big-refunds"), "the card carries the badge's gate");
    assert_eq!(
        card.why.as_deref(),
        Some("Not asked: no enforcing gate covers it; shadow gate \"big-refunds\" matched: it lists process_refund")
    );
    let entries = app.audit_entries("policy.shadow_hit", 1).await;
    assert_eq!((entries[0]["data"]["gate"].as_str(), entries[0]["data"]["tool"].as_str()), (Some("big-refunds"), Some("process_refund")));
    let metrics = app.anonymous().client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("countersign_shadow_hits_total{gate=\"big-refunds\"} 1"), "{metrics}");
    // Listed for the queue's Decided tab: to the chat's owner and the admins, no one else.
    let (status, hits) = app.get_json("/api/shadow-hits").await;
    assert_eq!((status, hits.as_array().map(Vec::len)), (200, Some(1)), "{hits}");
    assert_eq!(
        (hits[0]["gate"].as_str(), hits[0]["tool"].as_str(), hits[0]["owner"].as_str()),
        (Some("big-refunds"), Some("process_refund"), Some("alice"))
    );
    assert_eq!(app.as_user("root").get_json("/api/shadow-hits").await.1.as_array().map(Vec::len), Some(1));
    assert_eq!(app.as_user("bob").get_json("/api/shadow-hits").await.1, serde_json::json!([]));
    let (status, body) = app.get_json("/api/shadow-hits?limit=0").await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/limit")), "{body}");

    // An enforcing gate after it still asks; then nothing is recorded as a shadow hit.
    let both = format!("{gates}[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n");
    let app = spawn_app_with(Options { agents_toml: Some(format!("{AGENT}{both}")), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    assert_eq!(approvals[0].gate, "refunds");
    let card = app.detail(&c).await.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.shadow_gate, None);
    // Why it was asked: the gate and what its rule looked at, on the card and in the audit trail.
    assert_eq!(card.why.as_deref(), Some("Asked because gate \"refunds\" matched: it lists process_refund"));
    let requested = app.audit_entries("approval.requested", 1).await;
    assert_eq!(requested[0]["data"]["why"].as_str(), card.why.as_deref());
}

#[tokio::test]
async fn every_shadow_gate_that_matches_records_its_hit_whatever_their_order() {
    let refunds = "[[agents.gates]]\nname = \"try-refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nmode = \"shadow\"\n";
    let writes = "[[agents.gates]]\nname = \"try-writes\"\nkind = \"writes\"\nmode = \"shadow\"\n";
    for gates in [format!("{writes}{refunds}"), format!("{refunds}{writes}")] {
        let app = spawn_app_with(Options { agents_toml: Some(format!("{AGENT}{gates}")), ..Default::default() }).await;
        let c = app.create_conversation().await;
        let task = app.say(&c, "refund order 1001").await;
        app.wait_task(&task, TaskStatus::Completed).await;
        let (_, hits) = app.get_json("/api/shadow-hits").await;
        let mut hit: Vec<&str> =
            hits.as_array().unwrap().iter().filter(|h| h["tool"] == "process_refund").filter_map(|h| h["gate"].as_str()).collect();
        hit.sort();
        assert_eq!(hit, ["try-refunds", "try-writes"], "{gates}: {hits}");
        let card = app.detail(&c).await.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
        assert_eq!(card.shadow_gate.as_deref(), Some("try-refunds + try-writes"), "the badge names both");
    }
}

#[tokio::test]
async fn an_unknown_mode_or_a_shadow_plan_gate_stops_the_start_up() {
    let err = refused_start_up(&format!("{AGENT}[[agents.gates]]\nname = \"g\"\nkind = \"all\"\nmode = \"dry-run\"\n")).await;
    assert!(err.contains("mode must be \"enforce\" or \"shadow\", got \"dry-run\""), "{err}");
    let err = refused_start_up(&format!("{AGENT}[[agents.gates]]\nname = \"p\"\nkind = \"plan\"\nmode = \"shadow\"\n")).await;
    assert!(err.contains("a plan gate cannot be a shadow gate"), "{err}");
}

#[tokio::test]
async fn a_draft_policy_records_where_it_would_differ_and_changes_no_call() {
    // Live: cancellations are asked, refunds are not. Draft: big refunds are asked, cancellations are not.
    let live = format!("{AGENT}[[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n");
    let draft = format!(
        "{AGENT}[[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n"
    );
    let app = spawn_app_with(Options { agents_toml: Some(live), agents_draft_toml: Some(draft.clone()), ..Default::default() }).await;
    let root = app.as_user("root");
    let in_shadow = || async { root.get_json("/api/policy").await.1["draft_in_shadow"].clone() };

    // A big refund runs unasked, as the live policy says; the draft would have asked.
    let c = app.create_conversation().await;
    let task = app.say(&c, "refund $150 on order 1004").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let detail = app.detail(&c).await;
    assert!(named(&detail.events, "approval-required").is_empty(), "no approval: the draft decides nothing");
    let card = detail.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.shadow_gate, None, "no shadow gate's badge on the card");
    let (status, hits) = root.get_json("/api/shadow-hits?draft=true").await;
    assert_eq!((status, hits.as_array().map(Vec::len)), (200, Some(1)), "{hits}");
    assert_eq!(
        (hits[0]["gate"].as_str(), hits[0]["tool"].as_str(), hits[0]["draft"].as_bool(), hits[0]["owner"].as_str()),
        (Some("draft:big-refunds"), Some("process_refund"), Some(true), Some("alice"))
    );
    let version = countersign::agents::policy_version(&draft);
    assert_eq!(hits[0]["draft_version"], version.as_str(), "which draft saw it");
    let summary = hits[0]["summary"].as_str().unwrap();
    assert!(summary.ends_with(" — draft would ask: big-refunds (deciders: anyone); live lets it run unasked"), "{summary}");
    let metrics = app.anonymous().client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("countersign_shadow_hits_total{gate=\"draft:big-refunds\"} 1"), "{metrics}");
    // The Policy page's answer (admins): the draft in shadow, and its hits by gate since the start.
    let shadow = in_shadow().await;
    assert_eq!(shadow["version"], version, "{shadow}");
    assert_eq!(shadow["text"], draft.as_str());
    assert!(shadow["path"].as_str().is_some_and(|p| p.ends_with("agents.draft.toml")), "{shadow}");
    assert!(shadow["since"].is_string(), "{shadow}");
    assert_eq!((shadow["hits"].as_u64(), shadow["by_gate"].clone()), (Some(1), serde_json::json!({ "draft:big-refunds": 1 })));

    // A small refund: both let it run, nothing is recorded.
    let c = app.create_conversation().await;
    let task = app.say(&c, "refund $5 on order 1001").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(root.get_json("/api/shadow-hits?draft=true").await.1.as_array().map(Vec::len), Some(1), "no hit for the small refund");

    // A cancellation the live policy asks about and the draft would let run: still asked.
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    assert_eq!(approvals[0].gate, "cancellations");
    let (_, hits) = root.get_json("/api/shadow-hits?draft=true").await;
    assert_eq!(hits.as_array().map(Vec::len), Some(2), "{hits}");
    assert_eq!((hits[0]["gate"].as_str(), hits[0]["tool"].as_str()), (Some("draft:none"), Some("cancel_order")), "newest first");
    let summary = hits[0]["summary"].as_str().unwrap();
    assert!(summary.ends_with(" — draft would run it unasked; live requires cancellations (deciders: anyone)"), "{summary}");
    let entries = app.audit_entries("policy.shadow_hit", 2).await;
    let gates: Vec<_> = entries.iter().filter_map(|e| e["data"]["gate"].as_str()).collect();
    assert!(gates.contains(&"draft:big-refunds") && gates.contains(&"draft:none"), "{gates:?}");
    let shadow = in_shadow().await;
    assert_eq!(
        (shadow["hits"].as_u64(), shadow["by_gate"].clone()),
        (Some(2), serde_json::json!({ "draft:big-refunds": 1, "draft:none": 1 })),
        "{shadow}"
    );
    // The Policy page shows them, rendered by the server: the draft, its hits by gate, the button.
    let html = root.client.get(root.url("/policy")).send().await.unwrap().text().await.unwrap();
    for text in ["The draft in shadow", shadow["version"].as_str().unwrap(), "Its shadow hits by gate", "Replay this draft"] {
        assert!(html.contains(text), "{text} in {html}");
    }

    // The draft's hits are the admins' to read; the shadow gates' are listed apart.
    assert_eq!(root.get_json("/api/shadow-hits").await.1.as_array().map(Vec::len), Some(2));
    assert_eq!(root.get_json("/api/shadow-hits?draft=false").await.1, serde_json::json!([]));
    assert_eq!(app.get_json("/api/shadow-hits").await.1, serde_json::json!([]), "the chat's owner is no admin");
    assert_eq!(app.get_json("/api/shadow-hits?draft=true").await.0, 403);
    assert_eq!(app.get_json("/api/policy").await.0, 403);
}

#[tokio::test]
async fn an_invalid_draft_stops_the_start_up_naming_its_file() {
    let draft = format!("{AGENT}[[agents.gates]]\nname = \"g\"\nkind = \"all\"\nmode = \"dry-run\"\n");
    let (err, path) = refused_start_up_with(AGENT, Some(draft.as_str())).await;
    assert!(err.contains(&format!("COUNTERSIGN_AGENTS_DRAFT={path}")), "{err}");
    assert!(err.contains("mode must be \"enforce\" or \"shadow\", got \"dry-run\""), "{err}");
    // A gate's name may not pass for a draft's hit.
    let err = refused_start_up(&format!("{AGENT}[[agents.gates]]\nname = \"draft:big\"\nkind = \"all\"\n")).await;
    assert!(err.contains("may not start with \"draft:\""), "{err}");
}
