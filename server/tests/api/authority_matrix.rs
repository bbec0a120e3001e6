//! The authority matrix (docs/security.md, "The authority matrix"): every door that can decide a
//! call — the REST API, Approve / Reject All, a signed link, A2A, AG-UI, the CLI, the chat's
//! yes / no, an MCP 2026-07-28 client's answer to its elicitation — is sent a
//! decision that one rule forbids, for every rule. Each door must refuse it, and the approval must
//! be exactly as before (still pending, nobody counted) with nothing run. A door that cannot
//! express the decision (an edit through a link), or a rule its gate cannot have (approvers on a
//! gate the chat's yes answers), is "n/a". Slack, emailed links and the console go through these
//! same decisions (their own tests: slack.rs, email.rs, console.rs).

use domain::{ApprovalId, ConversationId, TaskId};
use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, cli, client_with_token, spawn_app_with};

/// The doors, as the model-based test (authority_model.rs) drives them too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Door {
    Rest,
    Bulk,
    Link,
    A2a,
    AgUi,
    Cli,
    /// The requester's yes in the chat, for a gate with `confirm = "chat"`.
    Chat,
    /// An MCP 2026-07-28 client's answer to the elicitation its gated call was answered with
    /// (the call is made through the gateway; the answer comes with its `requestState`).
    Mcp,
}

const DOORS: [Door; 8] = [Door::Rest, Door::Bulk, Door::Link, Door::A2a, Door::AgUi, Door::Cli, Door::Chat, Door::Mcp];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    /// The gate names its approvers; the requester is not one.
    Approvers,
    /// `separate_requester`: the requester approves their own call.
    FourEyes,
    /// `quorum = 2`: the person who approved approves again.
    Quorum,
    /// `require_reason`: a rejection without one.
    RequireReason,
    /// `allow_modification = false`: an approval with edited arguments.
    NoEdits,
    /// The deadline passed (before the sweeper applied the timeout action).
    Deadline,
    /// Handed to the admins: the requester approves.
    Escalated,
    /// A standing grant over a gate that asks each call on its own.
    Grant,
    /// The token can only call (an agent's gateway client).
    Scopes,
    /// `reauthenticate = true`: a decision through no recent sign-in (a token, a link).
    FreshSignIn,
}

const RULES: [Rule; 10] = [
    Rule::Approvers,
    Rule::FourEyes,
    Rule::Quorum,
    Rule::RequireReason,
    Rule::NoEdits,
    Rule::Deadline,
    Rule::Escalated,
    Rule::Grant,
    Rule::Scopes,
    Rule::FreshSignIn,
];

/// What is asked of a door.
#[derive(Clone, Debug)]
pub(crate) enum Ask {
    Approve { args: Option<Value>, grant: bool },
    Reject,
}

impl Rule {
    /// The refund gate's extra settings.
    fn gate(self) -> &'static str {
        match self {
            Rule::Approvers => "approvers = [\"user:bob\"]\n",
            Rule::FourEyes => "separate_requester = true\n",
            Rule::Quorum => "quorum = 2\n",
            Rule::RequireReason | Rule::Grant => "require_reason = true\n",
            Rule::NoEdits => "allow_modification = false\n",
            Rule::Deadline => "timeout_secs = 1\n",
            Rule::Escalated | Rule::Scopes => "",
            Rule::FreshSignIn => "reauthenticate = true\n",
        }
    }

    fn ask(self) -> Ask {
        match self {
            Rule::RequireReason => Ask::Reject,
            Rule::NoEdits => Ask::Approve { args: Some(json!({ "order_id": 1001, "amount": 1 })), grant: false },
            Rule::Grant => Ask::Approve { args: None, grant: true },
            _ => Ask::Approve { args: None, grant: false },
        }
    }

    /// Words of the refusal that name this rule (so a door refusing for another reason fails).
    fn because(self) -> &'static [&'static str] {
        match self {
            Rule::Approvers => &["only bob may decide"],
            Rule::FourEyes => &["four-eyes"],
            Rule::Quorum => &["already approved"],
            Rule::RequireReason => &["requires a reason"],
            Rule::NoEdits => &["does not allow editing"],
            Rule::Deadline => &["ran out of time", "expired"],
            Rule::Escalated => &["with the admins"],
            Rule::Grant => &["cannot be allowed for good"],
            Rule::Scopes => &["decide scope"],
            Rule::FreshSignIn => &["fresh sign-in"],
        }
    }

    /// Whether `door` can put the decision at all.
    fn applies(self, door: Door) -> bool {
        if door == Door::Mcp {
            // The elicitation is offered only to a person the rules let decide when the call
            // asks (approvers, four-eyes, a token that may decide); it neither edits nor grants.
            // What changes after it was offered is refused when the answer comes. (A token is no
            // sign-in: a gate that asks for a fresh one is never offered.)
            return matches!(self, Rule::Quorum | Rule::RequireReason | Rule::Deadline | Rule::Escalated);
        }
        if door == Door::Chat {
            // A chat gate has no approvers, quorum or four-eyes (refused at start-up), its "no"
            // is its reason, and a yes neither edits nor grants; a fresh sign-in is asked on cards
            // (refused at start-up with confirm = "chat").
            return matches!(self, Rule::Deadline | Rule::Escalated | Rule::Scopes);
        }
        match self.ask() {
            Ask::Approve { grant: true, .. } => door == Door::Rest,
            Ask::Approve { args: Some(_), .. } => matches!(door, Door::Rest | Door::A2a | Door::AgUi),
            _ => true,
        }
    }
}

/// One pending refund, in a chat of its own.
pub(crate) struct Pending {
    pub(crate) conversation: ConversationId,
    pub(crate) task: TaskId,
    pub(crate) approval: ApprovalId,
    /// For the MCP door: the `requestState` its call was answered with.
    pub(crate) request_state: Option<String>,
}

/// The refund as an MCP 2026-07-28 client calls it (`extra` params: the answer and the state).
pub(crate) fn mcp_call(extra: Value) -> Value {
    let mut params = json!({
        "name": "process_refund", "arguments": { "order_id": 1001 },
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": { "form": {} } },
            "io.modelcontextprotocol/clientInfo": { "name": "matrix", "version": "1" },
        },
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params })
}

/// Sends a 2026-07-28 request to the MCP gateway; its JSON-RPC answer (sent as JSON or as the
/// last message of an SSE stream).
pub(crate) async fn mcp(app: &TestApp, token: &str, body: Value) -> Value {
    let response = client_with_token(token)
        .post(app.url("/mcp/support"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "process_refund")
        .json(&body)
        .send()
        .await
        .expect("MCP request");
    let text = response.text().await.unwrap();
    let last = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty());
    serde_json::from_str(last.unwrap_or(text.trim())).unwrap_or_else(|e| panic!("an MCP answer: {e}: {text}"))
}

async fn pending(app: &TestApp, door: Door, token: &str) -> Pending {
    if door == Door::Mcp {
        return pending_over_mcp(app, token).await;
    }
    let conversation = app.create_conversation().await;
    // The chat's door answers the gate that asks in the chat (cancellations), the others the refunds'.
    let ask = if door == Door::Chat { "cancel order 1003" } else { "refund order 1001" };
    let (task, approvals) = app.pending_turn(&conversation, ask, 1).await;
    Pending { conversation, task, approval: approvals[0].id.clone(), request_state: None }
}

/// The refund called through the MCP gateway as `token`'s client: answered "input required"
/// when its person may decide it; otherwise the request is held (left running) and there is no
/// state to answer with.
async fn pending_over_mcp(app: &TestApp, token: &str) -> Pending {
    let call = {
        let (app, token) = (app.clone(), token.to_owned());
        tokio::spawn(async move { mcp(&app, &token, mcp_call(json!({}))).await })
    };
    let root = app.as_user("root");
    let approval = crate::helpers::eventually("the MCP client's refund to wait", || async {
        let (_, list) = root.get_json("/api/approvals?status=pending").await;
        list.as_array()?.iter().find(|a| a["conversation_title"].as_str().is_some_and(|t| t.starts_with("MCP client"))).cloned()
    })
    .await;
    let answer = tokio::time::timeout(std::time::Duration::from_secs(2), call).await;
    let request_state = match answer {
        Ok(answer) => {
            let answer = answer.unwrap();
            assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
            Some(answer["result"]["requestState"].as_str().unwrap().to_owned())
        }
        Err(_) => None,
    };
    let id = |key: &str| approval[key].as_str().unwrap().to_owned();
    Pending {
        conversation: ConversationId::from(id("conversation_id")),
        task: TaskId::from(id("task_id")),
        approval: ApprovalId::from(id("id")),
        request_state,
    }
}

/// The approval as the admins see it: what must not change when a door refuses.
pub(crate) async fn snapshot(app: &TestApp, id: &ApprovalId) -> (Value, Value, Value) {
    let (_, a) = app.as_user("root").get_json(&format!("/api/approvals/{id}")).await;
    (a["state"].clone(), a["approved_by"].clone(), a["decided_by"].clone())
}

/// Puts `ask` to `door` as the holder of `token`: `Ok` if the door accepted it, `Err` with what
/// it answered if it refused.
pub(crate) async fn knock(app: &TestApp, token: &str, door: Door, p: &Pending, ask: &Ask) -> Result<(), String> {
    let client = client_with_token(token);
    let post = |path: String, body: Value| {
        let client = client.clone();
        async move {
            let response = client.post(app.url(&path)).json(&body).send().await.expect("request");
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            if status < 400 { Ok(text) } else { Err(format!("{status} {text}")) }
        }
    };
    let id = &p.approval;
    match (door, ask) {
        (Door::Rest, Ask::Approve { args, grant }) => {
            let mut body = json!({});
            if let Some(args) = args {
                body["args"] = args.clone();
            }
            if *grant {
                body["grant"] = json!({});
            }
            post(format!("/api/approvals/{id}/approve"), body).await.map(drop)
        }
        (Door::Rest, Ask::Reject) => post(format!("/api/approvals/{id}/reject"), json!({})).await.map(drop),
        (Door::Bulk, Ask::Approve { .. }) => post(format!("/api/tasks/{}/approve-all", p.task), json!({})).await.map(drop),
        (Door::Bulk, Ask::Reject) => post(format!("/api/tasks/{}/reject-all", p.task), json!({})).await.map(drop),
        (Door::Link, ask) => {
            let links: Value = serde_json::from_str(&post(format!("/api/approvals/{id}/links"), json!({})).await?).unwrap();
            let url = match ask {
                Ask::Approve { .. } => links["approve_url"].as_str().unwrap(),
                Ask::Reject => links["reject_url"].as_str().unwrap(),
            };
            let response = reqwest::Client::new().post(app.url(url)).form(&[("reason", "")]).send().await.unwrap();
            match response.status().as_u16() {
                200 => Ok(()),
                status => Err(format!("{status} {}", response.text().await.unwrap_or_default())),
            }
        }
        (Door::A2a, ask) => {
            let data = match ask {
                Ask::Approve { args: Some(args), .. } => json!({ "decision_type": "approve", "args": args }),
                Ask::Approve { .. } => json!({ "decision_type": "approve" }),
                Ask::Reject => json!({ "decision_type": "deny" }),
            };
            let message = json!({ "taskId": p.task, "contextId": p.conversation, "parts": [{ "data": data }] });
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } });
            let answer: Value = serde_json::from_str(&post("/a2a/support".into(), body).await?).unwrap();
            match answer.get("error") {
                Some(error) => Err(error.to_string()),
                None => Ok(()),
            }
        }
        (Door::AgUi, ask) => {
            let payload = match ask {
                Ask::Approve { args: Some(args), .. } => json!({ "approved": true, "args": args }),
                Ask::Approve { .. } => json!({ "approved": true }),
                Ask::Reject => json!({ "approved": false }),
            };
            let input = json!({
                "threadId": p.conversation, "runId": "matrix", "tools": [], "context": [], "state": {},
                "resume": [{ "interruptId": id, "status": "resolved", "payload": payload }],
                "messages": [{ "id": "1", "role": "user", "content": "refund order 1001" }],
            });
            let stream = post("/ag-ui/support".into(), input).await?;
            let last: Value = stream
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .next_back()
                .map(|d| serde_json::from_str(d.trim()).unwrap())
                .unwrap();
            match last["type"].as_str() {
                Some("RUN_ERROR") => Err(last.to_string()),
                _ => Ok(()),
            }
        }
        (Door::Chat, _) => post(format!("/api/conversations/{}/messages", p.conversation), json!({ "text": "yes" })).await.map(drop),
        (Door::Mcp, ask) => {
            let state = p.request_state.as_deref().ok_or("the MCP client was not asked (its call is held)")?;
            let content = match ask {
                Ask::Approve { .. } => json!({ "approve": true }),
                Ask::Reject => json!({ "approve": false }),
            };
            let answer = json!({ "requestState": state, "inputResponses": { "approval": { "action": "accept", "content": content } } });
            let answer = mcp(app, token, mcp_call(answer)).await;
            match answer.get("error") {
                Some(error) => Err(error.to_string()),
                None => Ok(()),
            }
        }
        (Door::Cli, ask) => {
            let verb = match ask {
                Ask::Approve { .. } => "approve",
                Ask::Reject => "reject",
            };
            let (ok, out, err) =
                cli(app.data_dir.path(), &["approvals", verb, id.as_str(), "--server", &app.base_url, "--token", token], None).await;
            if ok { Ok(()) } else { Err(format!("{out}{err}")) }
        }
    }
}

/// One rule against every door.
async fn row(rule: Rule) -> Vec<(Door, &'static str)> {
    let toml = format!(
        "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"cancels\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\nconfirm = \"chat\"\n{}\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n{}",
        if rule.applies(Door::Chat) { rule.gate() } else { "" },
        rule.gate()
    );
    // The sweeper stays away, so a passed deadline is the decision's own check.
    let options = Options {
        agents_toml: Some(toml),
        decisions_per_minute: Some(10_000),
        sweep_ms: (rule == Rule::Deadline).then_some(3_600_000),
        ..Default::default()
    };
    let app = spawn_app_with(options).await;
    let token = match rule {
        Rule::Scopes => {
            let (ok, token, err) =
                cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "agent", "--gateway"], None).await;
            assert!(ok, "{err}");
            token.trim().to_owned()
        }
        _ => app.tokens["alice"].clone(),
    };
    let mut cells = Vec::new();
    for door in DOORS {
        cells.push((door, pending(&app, door, &token).await));
    }
    for (door, p) in &cells {
        if !rule.applies(*door) {
            continue;
        }
        match rule {
            Rule::Quorum => {
                let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", p.approval), json!({})).await;
                assert_eq!((status, body["outcome"].as_str()), (200, Some("pending")), "{body}");
            }
            Rule::Escalated => {
                let (status, body) = app.post_json(&format!("/api/approvals/{}/escalate", p.approval), json!({})).await;
                assert_eq!(status, 200, "{body}");
            }
            _ => {}
        }
    }
    if rule == Rule::Deadline {
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    }
    let mut outcomes = Vec::new();
    for (door, p) in &cells {
        if *door == Door::Mcp && matches!(rule, Rule::Approvers | Rule::FourEyes | Rule::Scopes | Rule::FreshSignIn) {
            // Not asked at all: its call waits held, like any client's whose person may not decide.
            assert!(p.request_state.is_none(), "{rule:?}: the MCP client was asked to decide");
        }
        if !rule.applies(*door) {
            outcomes.push((*door, "n/a"));
            continue;
        }
        let before = snapshot(&app, &p.approval).await;
        let answer = knock(&app, &token, *door, p, &rule.ask()).await;
        assert!(answer.is_err(), "{rule:?} through {door:?} was accepted");
        let said = answer.unwrap_err();
        assert!(rule.because().iter().any(|k| said.contains(k)), "{rule:?} through {door:?} was refused for another reason: {said}");
        assert_eq!(snapshot(&app, &p.approval).await, before, "{rule:?} through {door:?} changed the approval: {said}");
        outcomes.push((*door, "refused"));
    }
    assert_eq!((app.order(1001).await.status, app.order(1003).await.status), ("open".into(), "open".into()), "{rule:?}: nothing ran");
    outcomes
}

/// The control: through every door, a decision no rule forbids is made, so a refusal above is
/// the rule's and not a door that does not work.
#[tokio::test]
async fn every_door_decides_what_no_rule_forbids() {
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"cancels\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\nconfirm = \"chat\"\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Default::default() }).await;
    let token = app.tokens["alice"].clone();
    for door in DOORS {
        let p = pending(&app, door, &token).await;
        let approve = Ask::Approve { args: None, grant: false };
        knock(&app, &token, door, &p, &approve).await.unwrap_or_else(|why| panic!("{door:?} refused a plain approval: {why}"));
        assert_eq!(snapshot(&app, &p.approval).await.0, "approved", "{door:?}");
        if door == Door::Chat {
            continue; // its "no" is tested in confirm.rs
        }
        let p = pending(&app, door, &token).await;
        knock(&app, &token, door, &p, &Ask::Reject).await.unwrap_or_else(|why| panic!("{door:?} refused a plain rejection: {why}"));
        assert_eq!(snapshot(&app, &p.approval).await.0, "rejected", "{door:?}");
    }
}

#[tokio::test]
async fn every_door_refuses_what_every_rule_forbids_and_changes_nothing() {
    let rows = futures::future::join_all(RULES.map(row)).await;
    // The matrix as docs/security.md prints it.
    let mut table = format!("| rule | {} |\n", DOORS.map(|d| format!("{d:?}")).join(" | "));
    for (rule, row) in RULES.iter().zip(&rows) {
        table.push_str(&format!("| {rule:?} | {} |\n", row.iter().map(|(_, o)| *o).collect::<Vec<_>>().join(" | ")));
    }
    println!("{table}");
    let refused = rows.iter().flatten().filter(|(_, o)| *o == "refused").count();
    // n/a: 5 grants and 3 edits a door cannot put, 7 rules a chat gate cannot have, 6 the MCP
    // door is not offered.
    assert_eq!(refused, 10 * 8 - 5 - 3 - 7 - 6, "every cell that applies was tried:\n{table}");
}
