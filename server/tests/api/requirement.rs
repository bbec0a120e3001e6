//! A call's requirement is every gate that matches it (docs/security.md, "A call's
//! requirement"): the order of the gates changes nothing, each gate that names approvers needs
//! its share, a grant under one gate does not open a call another also stops, and a plan's
//! approval lets through only the steps its approver could have approved alone. Every refusal is
//! checked to change nothing.

use domain::TaskStatus;
use serde_json::json;

use crate::helpers::{Options, TestApp, error_code, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

async fn app_with(groups: &str, gates: &[&str]) -> TestApp {
    let gates: String = gates.concat();
    let toml = format!("{groups}[[agents]]\nname = \"support\"\n{TOOLS}\n{gates}");
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

const REFUNDS: &str = "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n";
const BIG_REFUNDS: &str = "[[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\n\
                           approvers = [\"user:bob\"]\ntimeout_secs = 60\n";

#[tokio::test]
async fn a_stricter_gate_applies_whichever_gate_is_listed_first_and_a_grant_under_the_other_does_not_open_it() {
    for gates in [[REFUNDS, BIG_REFUNDS], [BIG_REFUNDS, REFUNDS]] {
        let app = app_with("", &gates).await;
        let c = app.create_conversation().await;
        // A small refund is asked under `refunds` alone; alice allows such refunds for good.
        let (task, approvals) = app.pending_turn(&c, "refund $5 on order 1002", 1).await;
        assert_eq!(approvals[0].gate, "refunds");
        let (status, body) = app.post_json(&approvals[0].approve_url, json!({ "grant": {} })).await;
        assert_eq!(status, 200, "{body}");
        app.wait_task(&task, TaskStatus::Completed).await;

        // A big one is asked under both, whatever their order: only bob decides it.
        let (task, approvals) = app.pending_turn(&c, "refund $150 on order 1001", 1).await;
        let big = &approvals[0];
        assert_eq!(big.gate, "big-refunds + refunds", "the grant under refunds does not cover it");
        assert_eq!(big.approvers.as_ref().map(|a| a.people.clone()), Some(vec!["bob".to_owned()]));
        let events = app.detail(&c).await.events.len();
        let (status, body) = app.post_json(&big.approve_url, json!({})).await;
        assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("only bob may decide"), "{body}");
        assert_eq!(app.detail(&c).await.events.len(), events, "the refusal changed nothing");
        assert_eq!(app.order(1001).await.refunded, 0.0);
        let (status, body) = app.as_user("bob").post_json(&big.approve_url, json!({})).await;
        assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
        app.wait_task(&task, TaskStatus::Completed).await;
        assert_eq!(app.order(1001).await.refunded, 150.0);
    }
}

#[tokio::test]
async fn two_gates_naming_different_approvers_each_need_theirs() {
    let bob = "[[agents.gates]]\nname = \"bobs\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:bob\"]\n";
    let admins = "[[agents.gates]]\nname = \"admins\"\nkind = \"destructive\"\napprovers = [\"role:admin\"]\n";
    let app = app_with("", &[bob, admins]).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $5 on order 1002", 1).await;
    let approval = &approvals[0];
    assert_eq!(approval.gate, "admins + bobs");
    let approvers = approval.approvers.clone().unwrap();
    assert_eq!(approvers.label(), "an admin and bob", "the card and the queue say the whole requirement");

    // The owner is neither; refused, nothing changes.
    let (status, body) = app.post_json(&approval.approve_url, json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    // bob's signed link page says the whole requirement too.
    let (status, links) = app.as_user("bob").post_json(&format!("/api/approvals/{}/links", approval.id), json!({})).await;
    assert_eq!(status, 200, "{links}");
    let page = app.anonymous().client.get(app.url(links["approve_url"].as_str().unwrap())).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Needs: an admin and bob."), "{page}");
    // Bob's approval counts; the call waits for an admin.
    let (status, body) = app.as_user("bob").post_json(&approval.approve_url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("pending")), "{body}");
    assert_eq!(app.order(1002).await.refunded, 0.0);
    let (status, body) = app.as_user("bob").post_json(&approval.approve_url, json!({})).await;
    assert_eq!(status, 409, "bob counts once: {body}");
    // An admin meets the other share: the call runs.
    let (status, body) = app.as_user("root").post_json(&approval.approve_url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1002).await.refunded, 5.0);
}

#[tokio::test]
async fn a_requesters_own_plan_approval_runs_no_step_that_needs_finance_and_four_eyes() {
    let plans = "[[agents.gates]]\nname = \"plans\"\nkind = \"plan\"\n";
    let guarded = "[[agents.gates]]\nname = \"guarded\"\nkind = \"tools\"\ntools = [\"cancel_order\", \"process_refund\"]\n\
                   approvers = [\"group:finance\"]\nseparate_requester = true\ngrantable = true\n";
    let app = app_with("[[groups]]\nname = \"finance\"\nmembers = [\"bob\"]\n\n", &[plans, guarded]).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "cancel order 1003 and 1005", 1).await;
    assert_eq!(approvals[0].gate, "plans");
    let (status, body) = app.post_json(&approvals[0].approve_url, json!({})).await;
    assert_eq!(status, 200, "alice may approve her plan: {body}");

    // Each step is asked on its own: alice is not in finance and asked for it.
    let steps = crate::helpers::eventually("the plan's steps asked on their own", || async {
        let pending = app.pending_approvals_of(&task).await;
        (pending.len() == 2).then_some(pending)
    })
    .await;
    assert!(steps.iter().all(|a| a.tool == "cancel_order" && a.gate == "guarded"), "{steps:?}");
    assert_eq!((app.order(1003).await.status, app.order(1005).await.status), ("open".into(), "open".into()));
    let card = app.detail(&c).await.view.cards().find(|card| card.tool == "cancel_order").cloned().unwrap();
    let why = card.why.unwrap_or_default();
    assert!(why.contains("does not cover it: four-eyes: alice asked for this call"), "{why}");
    // Bob, in finance, approves them: they run.
    let bob = app.as_user("bob");
    for step in &steps {
        let (status, body) = bob.post_json(&step.approve_url, json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!((app.order(1003).await.status, app.order(1005).await.status), ("canceled".into(), "canceled".into()));
}

/// Authority is judged when the call is released: an approval counted toward a quorum stops
/// counting once its person leaves the group, so the call waits for another one.
#[tokio::test]
async fn an_approval_counted_before_its_person_left_the_group_no_longer_counts() {
    let ops = "[[agents.gates]]\nname = \"ops\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"group:ops\"]\nquorum = 2\n";
    let app = app_with("", &[ops]).await;
    let root = app.as_user("root");
    let (status, body) = root.post_json("/api/groups", json!({ "name": "ops", "members": ["bob", "root"] })).await;
    assert_eq!(status, 201, "{body}");
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund $5 on order 1002", 1).await;
    let url = &approvals[0].approve_url;
    let (status, body) = app.as_user("bob").post_json(url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("pending")), "{body}");

    // bob leaves ops: his approval no longer counts, so root's is the first of two.
    let put = root.client.put(app.url("/api/groups/ops")).json(&json!({ "members": ["root", "alice"] })).send().await.unwrap();
    assert_eq!(put.status(), 200);
    let (status, body) = root.post_json(url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("pending")), "{body}");
    assert_eq!(app.order(1002).await.refunded, 0.0, "not run on bob's approval");
    let (status, body) = app.post_json(url, json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1002).await.refunded, 5.0);
}

/// The last JSON value of an answer that may come as an event stream.
fn last_json(text: &str) -> serde_json::Value {
    let last = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty());
    serde_json::from_str(last.unwrap_or(text.trim())).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn every_gateway_says_what_a_call_of_two_gates_needs() {
    let bob = "[[agents.gates]]\nname = \"bobs\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:bob\"]\n";
    let admins = "[[agents.gates]]\nname = \"admins\"\nkind = \"destructive\"\napprovers = [\"role:admin\"]\n";
    let app = app_with("", &[bob, admins]).await;
    let needs = "Needs: an admin and bob";

    // A2A: the waiting task's status message says it, and its data part carries it.
    let send = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{ "text": "refund $5 on order 1002" }] } } });
    let a2a = app.client.post(app.url("/a2a/support")).json(&send).send().await.unwrap().json::<serde_json::Value>().await.unwrap();
    let status = &a2a["result"]["task"]["status"];
    assert_eq!(status["state"], "TASK_STATE_INPUT_REQUIRED", "{a2a}");
    let text = status["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(text.ends_with(&format!(". {needs}")), "{a2a}");
    assert_eq!(status["message"]["parts"][1]["data"]["approvals"][0]["needs"], needs, "{a2a}");

    // AG-UI: the run's interrupt says it to the person, and the state snapshot carries it.
    let input = json!({
        "threadId": "t-needs", "runId": "r1", "tools": [], "context": [], "state": {},
        "messages": [{ "id": "u1", "role": "user", "content": "refund $5 on order 1003" }],
    });
    let stream = app.client.post(app.url("/ag-ui/support")).json(&input).send().await.unwrap().text().await.unwrap();
    let events: Vec<serde_json::Value> =
        stream.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| serde_json::from_str(d.trim()).unwrap()).collect();
    let finished = events.iter().rfind(|e| e["type"] == "RUN_FINISHED").unwrap_or_else(|| panic!("{stream}"));
    let interrupt = &finished["outcome"]["interrupts"][0];
    assert!(interrupt["message"].as_str().unwrap_or_default().ends_with(needs), "{finished}");
    assert_eq!(interrupt["metadata"]["needs"], needs, "{finished}");

    // MCP (2026-07-28): bob may decide his share, so his client asks him, saying what else it needs.
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "process_refund", "arguments": { "order_id": 1001, "amount": 5 },
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": { "form": {} } },
            "io.modelcontextprotocol/clientInfo": { "name": "probe", "version": "1" },
        },
    } });
    let answer = app
        .as_user("bob")
        .client
        .post(app.url("/mcp/support"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "process_refund")
        .json(&call)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answer = last_json(&answer);
    let asked = &answer["result"]["inputRequests"];
    let message = asked.as_object().and_then(|o| o.values().next()).map(|r| r["params"]["message"].clone());
    assert!(message.as_ref().and_then(|m| m.as_str()).is_some_and(|m| m.ends_with(needs)), "{answer}");
    for order in [1001, 1002, 1003] {
        assert_eq!(app.order(order).await.refunded, 0.0, "nothing ran");
    }
}
