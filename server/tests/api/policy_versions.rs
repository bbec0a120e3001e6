//! Policy versions: every approval, decision and grant records the version of the
//! agent configuration that produced it; a server started with another configuration checks what
//! the earlier one left: a call it can still make stays pending, one whose tool is gone is
//! canceled with the reason (and the turn goes on), and with `grants_lapse_on_policy_change`
//! standing grants made under the earlier configuration end. Across a real restart.

use std::sync::Arc;

use domain::TaskStatus;
use serde_json::json;

use crate::helpers::{BinaryServer, PASSWORD, TestApp, cli, client_with_token};

/// The support agent with `tools`, asking before each of `gated`.
fn config(tools: &str, gated: &str, extra: &str) -> String {
    format!(
        "{extra}[[agents]]\nname = \"support\"\ntools = [{tools}]\n[[agents.gates]]\nname = \"money\"\nkind = \"tools\"\ntools = [{gated}]\n"
    )
}

#[tokio::test]
async fn a_restart_with_a_new_configuration_keeps_what_still_fits_and_cancels_what_does_not() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = config("\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"", "\"process_refund\", \"cancel_order\"", "");
    let first = BinaryServer::start(dir.clone(), Some(&before)).await;
    let app = &first.app;
    let refund_chat = app.create_conversation().await;
    let (refund_task, refund) = app.pending_turn(&refund_chat, "refund order 1001", 1).await;
    let cancel_chat = app.create_conversation().await;
    let (cancel_task, cancel) = app.pending_turn(&cancel_chat, "cancel order 1003", 1).await;
    assert_eq!(cancel[0].tool, "cancel_order");
    let granted_chat = app.create_conversation().await;
    let (granted_task, granted) = app.pending_turn(&granted_chat, "refund order 1004", 1).await;
    let (status, _) = app.post_json(&format!("/api/approvals/{}/approve", granted[0].id), json!({ "grant": {} })).await;
    assert_eq!(status, 200);
    app.wait_task(&granted_task, TaskStatus::Completed).await;
    let old = refund[0].policy_version.clone().expect("an approval records its configuration's version");
    assert_eq!(old.len(), 12);
    let (_, decided) = app.get_json(&format!("/api/approvals/{}", granted[0].id)).await;
    assert_eq!(decided["decided_policy_version"].as_str(), Some(old.as_str()), "so does a decision");
    assert!(first.terminate().await);

    // cancel_order is no longer the agent's, and grants from before lapse.
    let after = config(
        "\"list_orders\", \"get_order\", \"process_refund\"",
        "\"process_refund\"",
        "[defaults]\ngrants_lapse_on_policy_change = true\n",
    );
    let second = BinaryServer::start(dir.clone(), Some(&after)).await;
    let app = &second.app;

    // The refund still fits: pending, now checked against the new version, and decided under it.
    let (_, kept) = app.get_json(&format!("/api/approvals/{}", refund[0].id)).await;
    let new = kept["policy_version"].as_str().unwrap().to_owned();
    assert_eq!(kept["state"], "pending");
    assert_ne!(new, old, "another configuration, another version");
    // The cancellation does not: canceled with the reason, and its turn went on (the model was told).
    app.wait_task(&cancel_task, TaskStatus::Completed).await;
    let (_, canceled) = app.get_json(&format!("/api/approvals/{}", cancel[0].id)).await;
    assert_eq!(canceled["state"], "canceled");
    assert!(canceled["reason"].as_str().unwrap().contains("cancel_order is no longer one of support's tools"), "{canceled}");
    assert_eq!(app.order(1003).await.status, "open", "the canceled call never ran");
    // The grant made before ended; its chat's list says by whom.
    let detail = app.detail(&granted_chat).await;
    assert_eq!(detail.view.grants[0].revoked_by.as_deref(), Some("system (the configuration changed)"));
    assert_eq!(detail.view.grants[0].policy_version.as_deref(), Some(old.as_str()));
    assert_eq!(detail.policy_version, new, "the chat's list compares the grant's version with this one");

    let (status, _) = app.post_json(&format!("/api/approvals/{}/approve", refund[0].id), json!({})).await;
    assert_eq!(status, 200);
    app.wait_task(&refund_task, TaskStatus::Completed).await;
    let (_, decided) = app.get_json(&format!("/api/approvals/{}", refund[0].id)).await;
    assert_eq!((decided["policy_version"].as_str(), decided["decided_policy_version"].as_str()), (Some(new.as_str()), Some(new.as_str())));

    // The audit trail has each step.
    let _ = cli(dir.path(), &["user", "add", "root", "--admin"], Some(&format!("{PASSWORD}\n"))).await;
    let (ok, token, stderr) = cli(dir.path(), &["token", "create", "--user", "root", "--name", "audit"], None).await;
    assert!(ok, "{stderr}");
    let root = client_with_token(token.trim());
    let entries: serde_json::Value = root.get(app.url("/api/audit?kind=policy.reclassified")).send().await.unwrap().json().await.unwrap();
    let outcomes: Vec<&str> = entries["entries"].as_array().unwrap().iter().filter_map(|e| e["data"]["outcome"].as_str()).collect();
    for outcome in ["kept", "canceled", "grant ended"] {
        assert!(outcomes.contains(&outcome), "{outcome}: {entries}");
    }
    assert!(second.terminate().await);
}

#[tokio::test]
async fn a_restart_with_changed_groups_in_the_file_re_resolves_who_decides_what_waits() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut tokens = std::collections::HashMap::new();
    for person in ["bob", "carol"] {
        let _ = cli(dir.path(), &["user", "add", person], Some(&format!("{PASSWORD}\n"))).await;
        let (ok, token, stderr) = cli(dir.path(), &["token", "create", "--user", person, "--name", "tests"], None).await;
        assert!(ok, "{stderr}");
        tokens.insert(person, client_with_token(token.trim()));
    }
    let with_finance = |members: &str| {
        config(
            "\"list_orders\", \"get_order\", \"process_refund\"",
            "\"process_refund\"",
            &format!("[[groups]]\nname = \"finance\"\nmembers = [{members}]\n"),
        )
        .replace("tools = [\"process_refund\"]\n", "tools = [\"process_refund\"]\napprovers = [\"group:finance\"]\n")
    };
    let first = BinaryServer::start(dir.clone(), Some(&with_finance("\"bob\""))).await;
    let chat = first.app.create_conversation().await;
    let (_task, asked) = first.app.pending_turn(&chat, "refund order 1001", 1).await;
    assert_eq!(asked[0].approvers.as_ref().unwrap().people, ["bob"]);
    assert!(first.terminate().await);

    // The file now says finance is carol: bob no longer decides what waits (nor sees it: 404),
    // carol does.
    let second = BinaryServer::start(dir.clone(), Some(&with_finance("\"carol\""))).await;
    let approve = second.app.url(&format!("/api/approvals/{}/approve", asked[0].id));
    let refused = tokens["bob"].post(&approve).json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(refused.status(), 404);
    assert_eq!(second.app.order(1001).await.status, "open");
    let approved = tokens["carol"].post(&approve).json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(approved.status(), 200);
    assert!(second.terminate().await);
}

/// A timeout that approves is judged when it falls due, under the configuration in force then
/// (docs/security.md, "Released without a fresh decision"): a refund asked while its gate approved
/// on time-out, whose deadline passes after a restart under a file whose gate rejects on time-out,
/// is rejected and never runs; a cancellation whose gate still approves on time-out runs (the
/// control).
#[tokio::test]
async fn a_timeout_that_approved_when_asked_runs_nothing_the_configuration_in_force_does_not_approve() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let with_refunds = |action: &str| {
        format!(
            "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
             [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 5\ntimeout_action = \"{action}\"\n\
             [[agents.gates]]\nname = \"cancels\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\ntimeout_secs = 5\ntimeout_action = \"approve\"\n"
        )
    };
    // Both are asked and the server stopped well before their 5 s deadlines.
    let first = BinaryServer::start(dir.clone(), Some(&with_refunds("approve"))).await;
    let refund_chat = first.app.create_conversation().await;
    let (refund_task, refund) = first.app.pending_turn(&refund_chat, "refund order 1001", 1).await;
    let cancel_chat = first.app.create_conversation().await;
    let (cancel_task, cancel) = first.app.pending_turn(&cancel_chat, "cancel order 1003", 1).await;
    assert_eq!((refund[0].gate.as_str(), cancel[0].gate.as_str()), ("refunds", "cancels"));
    let dir = first.kill().await;

    // The file now says a refund nobody decides is rejected.
    let second = BinaryServer::start(dir.clone(), Some(&with_refunds("reject"))).await;
    let app = &second.app;
    let refused = decided(app, &refund[0].id).await;
    assert_eq!((refused["state"].as_str(), refused["decided_by"].as_str()), (Some("expired"), Some("system")), "{refused}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(reason.contains("under the configuration in force now, gate \"refunds\" does not approve on time-out (reject)"), "{reason}");
    app.wait_task(&refund_task, TaskStatus::Completed).await;
    let order = app.order(1001).await;
    assert_eq!((order.status.as_str(), order.refunded), ("open", 0.0), "the refund never ran");
    let results = app.detail(&refund_chat).await.events;
    let ran = results.iter().any(|e| matches!(&e.body, domain::EventBody::ToolResult { ok: true, .. }));
    assert!(!ran, "no tool ran in the refund's chat");

    // The cancellation's gate still approves on time-out: it runs.
    let approved = decided(app, &cancel[0].id).await;
    assert_eq!((approved["state"].as_str(), approved["decided_by"].as_str()), (Some("approved"), Some("system")), "{approved}");
    app.wait_task(&cancel_task, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "canceled");

    // The audit trail says why the refund's timeout did not approve.
    let _ = cli(dir.path(), &["user", "add", "root", "--admin"], Some(&format!("{PASSWORD}\n"))).await;
    let (ok, token, stderr) = cli(dir.path(), &["token", "create", "--user", "root", "--name", "audit"], None).await;
    assert!(ok, "{stderr}");
    let root = client_with_token(token.trim());
    let entries: serde_json::Value = root.get(app.url("/api/audit?kind=policy.reclassified")).send().await.unwrap().json().await.unwrap();
    let entry = entries["entries"].as_array().unwrap().iter().find(|e| e["data"]["outcome"] == "timeout does not approve").cloned();
    let entry = entry.unwrap_or_else(|| panic!("no entry for the refund's timeout: {entries}"));
    assert_eq!((entry["data"]["approval_id"].as_str(), entry["data"]["action"].as_str()), (Some(refund[0].id.as_str()), Some("reject")));
    assert!(second.terminate().await);
}

/// The approval once it is no longer pending (its deadline passed and its timeout action
/// applied), waiting at most 30 s.
async fn decided(app: &TestApp, id: &str) -> serde_json::Value {
    let wait = async {
        loop {
            let (_, approval) = app.get_json(&format!("/api/approvals/{id}")).await;
            if approval["state"] != "pending" {
                return approval;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("approval {id} still pending after 30 s"))
}
