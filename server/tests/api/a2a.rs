//! The A2A endpoint driven by the official A2A clients at 1.x and 0.3 (a2a-sdk from PyPI, run as
//! `tests/clients/a2a_client.py` and `a2a_client_03.py`), each answered in its own version's
//! shapes: a gated call makes the task input-required with the approval request as a data part,
//! a data part `{"decision_type": ...}` decides it and the task completes;
//! bad JSON-RPC gets the protocol's own error shapes and changes nothing, and so do edited
//! arguments the tool cannot take. Also AG-UI's resume where a gate requires a reason to reject or
//! an edit breaks the tool's schema, the client's message ids in its snapshots, and the open
//! interrupts a reloaded client is given.

use serde_json::{Value, json};

use crate::helpers::{Options, PASSWORD, TestApp, cli, client_with_token, error_code, raw_post, spawn_app_with, test_client};

const AGENT: &str = "[[agents]]\nname = \"support\"\ndescription = \"Refunds and orders\"\n\
    tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
    [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n";

async fn app() -> TestApp {
    spawn_app_with(Options { agents_toml: Some(AGENT.into()), ..Default::default() }).await
}

async fn rpc(app: &TestApp, body: &str) -> (u16, Value) {
    raw_post(app, "/a2a/support", "application/json", body.to_owned()).await
}

#[tokio::test]
async fn the_official_a2a_client_asks_is_answered_with_a_decision_and_sees_the_task_complete() {
    let app = app().await;
    let python = std::env::var("COUNTERSIGN_TEST_PYTHON")
        .expect("set COUNTERSIGN_TEST_PYTHON to a Python with a2a-sdk (scripts/test.sh installs it into the cache's venv)");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/a2a_client.py");
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(90),
        tokio::process::Command::new(python).arg(script).arg(app.url("/a2a/support")).arg(&app.tokens["alice"]).kill_on_drop(true).output(),
    )
    .await
    .expect("the A2A client finishes within 90 s")
    .unwrap();
    let (steps, stdout) = crate::helpers::client_steps("a2a_client.py", &output);

    let asked = &steps["asked"];
    assert_eq!(asked["state"], "TASK_STATE_INPUT_REQUIRED", "{stdout}");
    assert_eq!((asked["approvals"][0]["tool"].as_str(), asked["approvals"][0]["risk"].as_str()), (Some("process_refund"), Some("high")));
    // The A2A task is the turn: the queue and the chat show the same approval.
    let task_id = asked["task_id"].as_str().unwrap();
    let (_, task) = app.get_json(&format!("/api/tasks/{task_id}")).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(steps["approved"]["state"], "TASK_STATE_COMPLETED");
    assert!(!steps["approved"]["answer"].as_str().unwrap().is_empty(), "{stdout}");
    assert_eq!(app.order(1001).await.status, "refunded");
    assert_eq!(steps["got"]["state"], "TASK_STATE_COMPLETED");
    // Edited arguments arrive as protobuf floats (1003.0): the integer the schema asks for, and
    // the refund made.
    assert!(steps["edited"]["sent"].as_str().unwrap().contains("1003.0"), "{stdout}");
    assert_eq!(steps["edited"]["state"], "TASK_STATE_COMPLETED", "{stdout}");
    assert_eq!(app.order(1003).await.refunded, 2.0);
    assert_eq!(
        steps["denied"],
        json!({ "step": "denied", "asked": "TASK_STATE_INPUT_REQUIRED", "state": "TASK_STATE_COMPLETED", "same_context": true })
    );
    assert_eq!(app.order(1002).await.status, "open", "denied: not run");
    assert!(steps["unknown_task"]["error"].as_str().unwrap().contains("does not exist"), "{stdout}");
    assert!(steps["cancel_finished"]["error"].as_str().unwrap().contains("already completed"), "{stdout}");
    assert_eq!(steps["canceled"]["state"], "TASK_STATE_CANCELED");
    // The same over SendStreamingMessage: the stream ends with the task as it settled.
    assert_eq!(steps["stream_asked"]["state"], "TASK_STATE_INPUT_REQUIRED", "{stdout}");
    assert!(steps["stream_asked"]["updates"].as_i64().unwrap() >= 1, "a status update before the end: {stdout}");
    assert_eq!(steps["stream_approved"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(app.order(1005).await.status, "refunded");
    // Decisions made over A2A are the API's decisions, audited as such.
    let decided = app.audit_entries("approval.decided", 5).await; // approved, edited, denied, canceled, approved while streaming
    assert!(decided.iter().all(|e| e["actor"] == "alice" && e["data"]["via"] == "a2a"), "{decided:?}");
    // The 1.x client chose the card's 1.0 interface and spoke 1.x throughout.
    assert_eq!(steps["card"]["interfaces"], json!(["1.0", "0.3"]), "{stdout}");
    assert_eq!(steps["wire"]["methods"], json!(["CancelTask", "GetTask", "SendMessage", "SendStreamingMessage"]), "{stdout}");
    assert_eq!(steps["wire"]["versions"], json!(["1.0"]), "{stdout}");
}

#[tokio::test]
async fn the_official_a2a_0_3_client_is_answered_in_0_3s_shapes_and_decides_as_kagent_does() {
    let app = app().await;
    let python = std::env::var("COUNTERSIGN_TEST_PYTHON_A2A_03").expect(
        "set COUNTERSIGN_TEST_PYTHON_A2A_03 to a Python with a2a-sdk 0.3 (`bash scripts/python-tools.sh --a2a-0.3` installs it into the cache)",
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/a2a_client_03.py");
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(90),
        tokio::process::Command::new(python).arg(script).arg(app.url("/a2a/support")).arg(&app.tokens["alice"]).kill_on_drop(true).output(),
    )
    .await
    .expect("the A2A 0.3 client finishes within 90 s")
    .unwrap();
    let (steps, stdout) = crate::helpers::client_steps("a2a_client_03.py", &output);

    // The card validated as a 0.3 card (its url, version and transport are what 0.3 reads).
    let card = &steps["card"];
    assert_eq!(
        (card["url"].as_str(), card["protocol_version"].as_str()),
        (Some(app.url("/a2a/support").as_str()), Some("0.3")),
        "{stdout}"
    );
    assert_eq!(card["transport"], "JSONRPC");
    let asked = &steps["asked"];
    assert_eq!(asked["state"], "input-required", "{stdout}");
    assert_eq!((asked["approvals"][0]["tool"].as_str(), asked["approvals"][0]["risk"].as_str()), (Some("process_refund"), Some("high")));
    assert_eq!(steps["approved"]["state"], "completed", "{stdout}");
    assert!(!steps["approved"]["answer"].as_str().unwrap().is_empty(), "{stdout}");
    assert_eq!(app.order(1001).await.status, "refunded");
    assert_eq!(steps["got"]["state"], "completed");
    // kagent's reject with `rejection_reason`: the reason is the decision's.
    assert_eq!(steps["rejected"]["state"], "completed", "{stdout}");
    assert_eq!(app.order(1002).await.status, "open", "rejected: not run");
    // approved, rejected, rejected in the batch, canceled, approved while streaming
    let decided = app.audit_entries("approval.decided", 5).await;
    assert!(decided.iter().all(|e| e["data"]["via"] == "a2a"), "{decided:?}");
    let reasons: Vec<&Value> = decided.iter().map(|e| &e["data"]["reason"]).collect();
    assert!(reasons.contains(&&json!("not this one")) && reasons.contains(&&json!("batch says no")), "{reasons:?}");
    // A batch naming no pending call is refused whole; one keyed by the call's id decides it.
    assert!(steps["batch_unknown"]["error"].as_str().unwrap().contains("no pending call"), "{stdout}");
    assert_eq!(
        (steps["batch"]["before"].as_str(), steps["batch"]["state"].as_str()),
        (Some("input-required"), Some("completed")),
        "{stdout}"
    );
    assert_eq!(app.order(1003).await.status, "open", "the batch rejected it");
    assert!(steps["unknown_task"]["error"].as_str().unwrap().contains("does not exist"), "{stdout}");
    assert!(steps["cancel_finished"]["error"].as_str().unwrap().contains("already completed"), "{stdout}");
    assert_eq!(steps["canceled"]["state"], "canceled");
    // Streamed: the stream ends with a status update marked final, in 0.3's event kinds.
    assert_eq!(steps["stream_asked"]["state"], "input-required", "{stdout}");
    assert_eq!(steps["stream_asked"]["final"].as_array().unwrap().last(), Some(&json!(true)), "{stdout}");
    assert_eq!(steps["stream_approved"]["state"], "completed", "{stdout}");
    assert!(steps["stream_approved"]["updates"].as_array().unwrap().contains(&json!("TaskArtifactUpdateEvent")), "{stdout}");
    assert_eq!(app.order(1005).await.status, "refunded");
    assert_eq!(steps["wire"]["methods"], json!(["message/send", "message/stream", "tasks/cancel", "tasks/get"]), "{stdout}");
}

#[tokio::test]
async fn a_version_not_served_is_refused_and_0_3_requests_are_answered_in_0_3s_shapes() {
    let app = app().await;
    let post = |version: &'static str, body: Value| {
        let request = app.client.post(app.url("/a2a/support")).header("a2a-version", version).json(&body);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let send = |method: &str| json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": { "message": { "parts": [{ "text": "refund order 1001" }] } } });
    for version in ["2.0", "0.2"] {
        let reply = post(version, send("SendMessage")).await;
        assert_eq!(reply["error"]["code"], -32009, "{version}: {reply}");
    }
    let (_, conversations) = app.get_json("/api/conversations").await;
    assert_eq!(conversations, json!([]), "nothing was started");
    // A 0.3 request: the task itself, kind-tagged, lower-case state.
    let reply = post(
        "0.3",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": { "message": {
        "kind": "message", "messageId": "m1", "role": "user", "parts": [{ "kind": "text", "text": "refund order 1001" }] } } }),
    )
    .await;
    let task = &reply["result"];
    assert_eq!((task["kind"].as_str(), task["status"]["state"].as_str()), (Some("task"), Some("input-required")), "{reply}");
    assert_eq!(task["status"]["message"]["parts"][1]["kind"], "data");
    // A batch whose choice is neither approve nor reject changes nothing.
    let bad = json!({ "jsonrpc": "2.0", "id": 2, "method": "message/send", "params": { "message": {
        "kind": "message", "messageId": "m2", "role": "user", "taskId": task["id"], "contextId": task["contextId"],
        "parts": [{ "kind": "data", "data": { "decision_type": "batch", "decisions": { "x": "maybe" } } }] } } });
    let reply = post("0.3", bad).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let got = post("0.3", json!({ "jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": { "id": task["id"] } })).await;
    assert_eq!(got["result"]["status"]["state"], "input-required", "{got}");
}

#[tokio::test]
async fn bad_json_rpc_gets_the_protocols_errors_and_changes_nothing() {
    let app = app().await;
    let (status, card) = app.anonymous().get_json("/a2a/support/.well-known/agent-card.json").await;
    assert_eq!((status, card["name"].as_str(), card["capabilities"]["streaming"].as_bool()), (200, Some("support"), Some(true)));
    assert_eq!(card["supportedInterfaces"][0]["url"], app.url("/a2a/support"));
    let (status, _) = app.anonymous().get_json("/a2a/nobody/.well-known/agent-card.json").await;
    assert_eq!(status, 404);

    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": { "message": message } }).to_string();
    for (body, code) in [
        ("{not json".to_owned(), -32700),
        (json!({ "jsonrpc": "2.0", "id": 1 }).to_string(), -32600),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "DeleteEverything" }).to_string(), -32601),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "nope" } }).to_string(), -32001),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {} }).to_string(), -32602),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": { "id": "nope" } }).to_string(), -32001),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {} }).to_string(), -32004),
        (send(json!({ "parts": [{ "data": { "decision_type": "approve" } }] })), -32602),
        (send(json!({ "parts": [{ "text": "   " }] })), -32602),
        (send(json!({ "parts": "refund" })), -32602),
        (send(json!({ "taskId": "nope", "parts": [{ "data": { "decision_type": "approve" } }] })), -32001),
    ] {
        let (status, reply) = rpc(&app, &body).await;
        assert_eq!(
            (status, reply["error"]["code"].as_i64(), reply["jsonrpc"].as_str()),
            (200, Some(code), Some("2.0")),
            "{body} → {reply}"
        );
        assert!(reply["error"]["message"].is_string());
    }
    let (status, reply) = app
        .anonymous()
        .client
        .post(app.url("/a2a/support"))
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "x" } }))
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .unwrap();
    assert_eq!(status, 401);
    assert_eq!(reply.json::<Value>().await.unwrap()["error"]["code"], -32600);
    let (_, conversations) = app.get_json("/api/conversations").await;
    assert_eq!(conversations, json!([]), "nothing was started");

    // A decision of the wrong kind on a waiting task changes nothing either.
    let (_, started) = rpc(&app, &send(json!({ "parts": [{ "text": "refund order 1001" }] }))).await;
    let task = started["result"]["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
    let wrong = json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": { "decision_type": "maybe" } }] });
    let (_, reply) = rpc(&app, &send(wrong)).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let (_, again) =
        rpc(&app, &json!({ "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": { "id": task["id"] } }).to_string()).await;
    assert_eq!(again["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn decisions_over_a2a_count_against_the_same_per_user_limit() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENT.into()), decisions_per_minute: Some(1), ..Default::default() }).await;
    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string();
    let (_, first) = rpc(&app, &send(json!({ "parts": [{ "text": "refund order 1001" }] }))).await;
    let task = &first["result"]["task"];
    let decide = json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": { "decision_type": "approve" } }] });
    // The one decision this minute allows is spent through the API on another chat.
    let c = app.create_conversation().await;
    let (_other, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    let (status, _) = app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({})).await;
    assert_eq!(status, 200);
    let (_, refused) = rpc(&app, &send(decide)).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("too many decisions"), "{refused}");
    let (_, still) =
        rpc(&app, &json!({ "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": { "id": task["id"] } }).to_string()).await;
    assert_eq!(still["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn an_approval_with_edited_args_runs_the_edited_call() {
    let app = app().await;
    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string();
    let (_, first) = rpc(&app, &send(json!({ "parts": [{ "text": "refund order 1001" }] }))).await;
    let task = &first["result"]["task"];
    let edited = json!({ "decision_type": "approve", "args": { "order_id": 1001, "amount": 10 } });
    let (_, done) = rpc(&app, &send(json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": edited }] }))).await;
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(app.order(1001).await.refunded, 10.0, "the edited amount, not the proposed one");
}

/// Edited arguments are checked as the API checks them and refused with each field named (in the
/// message, and as the API's 422 `details` in `data`), and an `approval_id` that is not a string
/// is refused rather than read as none (which would decide every waiting call): nothing decided.
#[tokio::test]
async fn a2a_edits_the_tool_cannot_take_and_ids_that_name_no_approval_are_refused_and_decide_nothing() {
    let app = app().await;
    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string();
    let (_, first) = rpc(&app, &send(json!({ "parts": [{ "text": "refund order 1001 and 1002" }] }))).await;
    let task = first["result"]["task"].clone();
    let approvals = task["status"]["message"]["parts"][1]["data"]["approvals"].as_array().cloned().unwrap_or_default();
    assert_eq!(approvals.len(), 2, "{first}");
    let a1001 = approvals.iter().find(|a| a["args"]["order_id"] == 1001).unwrap()["approval_id"].clone();
    let decide = |data: Value| send(json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": data }] }));
    let task_id = task["id"].as_str().unwrap().to_owned();
    let refunded = || async { (app.order(1001).await.refunded, app.order(1002).await.refunded) };
    let before = refunded().await;

    for (data, said) in [
        (json!({ "decision_type": "approve", "approval_id": a1001, "args": "{\"order_id\": 1001, \"amount\": 2}" }), "must be an object"),
        (json!({ "decision_type": "approve", "approval_id": a1001, "args": [{ "order_id": 1001, "amount": 2 }] }), "must be an object"),
        (json!({ "decision_type": "approve", "approval_id": 12345 }), "approval_id must be a string"),
        (json!({ "decision_type": "reject", "approval_id": 12345 }), "approval_id must be a string"),
    ] {
        let (_, reply) = rpc(&app, &decide(data.clone())).await;
        assert_eq!(reply["error"]["code"], -32602, "{data} → {reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains(said), "{data} → {reply}");
        assert_eq!(app.pending_approvals_of(&task_id).await.len(), 2, "{data}: nothing decided");
        assert_eq!(refunded().await, before, "{data}: nothing refunded");
    }

    // A number the schema does not take: its field and what is wrong with it.
    let (_, reply) =
        rpc(&app, &decide(json!({ "decision_type": "approve", "approval_id": a1001, "args": { "order_id": 1001.5, "amount": 2 } }))).await;
    let error = &reply["error"];
    assert_eq!(error["code"], -32602, "{reply}");
    assert_eq!(error["data"]["details"], json!([{ "path": "/order_id", "message": "must be an integer" }]), "{reply}");
    assert!(error["message"].as_str().unwrap().contains("/order_id: must be an integer"), "{reply}");
    assert_eq!(app.pending_approvals_of(&task_id).await.len(), 2, "nothing decided");
    assert_eq!(refunded().await, before, "nothing refunded");
}

/// An AG-UI resume whose edited arguments the tool cannot take (not an object, or a number its
/// schema refuses) is `DECISION_REFUSED`, its message naming the interrupt and what is wrong, and
/// decides none of the resume's interrupts, not even one answered well.
#[tokio::test]
async fn an_ag_ui_edit_the_tool_cannot_take_is_refused_and_decides_nothing() {
    let app = app().await;
    let asked = json!({ "threadId": "edits", "runId": "ask", "messages": [{ "id": "m1", "role": "user", "content": "refund order 1001 and 1002" }] });
    let asked = ag_ui_post(&app, asked).await;
    let interrupts = asked.last().unwrap()["outcome"]["interrupts"].as_array().cloned().unwrap_or_default();
    assert_eq!(interrupts.len(), 2, "{asked:?}");
    let by_order =
        |order: i64| interrupts.iter().find(|i| i["metadata"]["args"]["order_id"] == order).unwrap()["id"].as_str().unwrap().to_owned();
    let (i1001, i1002) = (by_order(1001), by_order(1002));
    let approve = |id: &str, args: Value| json!({ "interruptId": id, "status": "resolved", "payload": { "approved": true, "args": args } });
    let refunded = || async { (app.order(1001).await.refunded, app.order(1002).await.refunded) };
    let before = refunded().await;

    for (run, args, said) in [
        ("string", json!("{\"order_id\": 1002, \"amount\": 2}"), "must be an object"),
        ("list", json!([{ "order_id": 1002, "amount": 2 }]), "must be an object"),
        ("fraction", json!({ "order_id": 1002.5, "amount": 2 }), "/order_id: must be an integer"),
    ] {
        let resume = json!([approve(&i1001, json!({ "order_id": 1001, "amount": 2 })), approve(&i1002, args)]);
        let events = ag_ui_post(&app, json!({ "threadId": "edits", "runId": run, "resume": resume, "messages": [] })).await;
        let last = events.last().unwrap();
        assert_eq!((last["type"].as_str(), last["code"].as_str()), (Some("RUN_ERROR"), Some("DECISION_REFUSED")), "{run}: {events:?}");
        let message = last["message"].as_str().unwrap();
        assert!(message.contains(&i1002) && message.contains(said), "{run}: {message}");
        for id in [&i1001, &i1002] {
            assert_eq!(app.get_json(&format!("/api/approvals/{id}")).await.1["state"], "pending", "{run}: nothing decided");
        }
        assert_eq!(refunded().await, before, "{run}: nothing refunded");
    }
}

/// The events of an AG-UI run (`POST /ag-ui/support`), as the `data:` lines of its stream.
async fn ag_ui_run(app: &TestApp, run: &str, resume: Value) -> Vec<Value> {
    let messages = json!([{ "id": "1", "role": "user", "content": "refund order 1001" }]);
    ag_ui_post(app, json!({ "threadId": "reasons", "runId": run, "resume": resume, "messages": messages })).await
}

/// The events of an AG-UI run with `input` (a `RunAgentInput` without its empty lists).
async fn ag_ui_post(app: &TestApp, mut input: Value) -> Vec<Value> {
    for (field, empty) in [("tools", json!([])), ("context", json!([])), ("state", json!({}))] {
        input[field] = empty;
    }
    let stream = app.client.post(app.url("/ag-ui/support")).json(&input).send().await.unwrap().text().await.unwrap();
    stream.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| serde_json::from_str(d.trim()).unwrap()).collect()
}

/// The client's own id for its message stays that message's id, in every run: a run that brings
/// a new message has it in its own `MESSAGES_SNAPSHOT`, last and before the agent's answer to it,
/// since `@ag-ui/client`'s merge keeps only the messages a snapshot names (a message left out was
/// dropped, and came back below the answer a run later).
#[tokio::test]
async fn an_ag_ui_snapshot_names_the_users_message_by_the_id_its_client_gave_it() {
    let app = app().await;
    let first = json!({ "id": "m-client-1", "role": "user", "content": "look up order 1001" });
    let events = ag_ui_post(&app, json!({ "threadId": "ids", "runId": "one", "messages": [first] })).await;
    assert_eq!(events.last().unwrap()["outcome"]["type"], "success", "{events:?}");
    let second = json!({ "id": "m-client-2", "role": "user", "content": "look up order 1002" });
    let events = ag_ui_post(&app, json!({ "threadId": "ids", "runId": "two", "messages": [first, second] })).await;
    assert_eq!(events.last().unwrap()["outcome"]["type"], "success", "{events:?}");
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind);
    let snapshot = &events[at("MESSAGES_SNAPSHOT").expect("a snapshot")];
    let messages = snapshot["messages"].as_array().unwrap();
    let users: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users, [&first, &second], "each once, under its client's id: {snapshot}");
    let ids: Vec<&str> = messages.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!((ids.first(), ids.last()), (Some(&"m-client-1"), Some(&"m-client-2")), "the new message last: {snapshot}");
    assert!(ids.len() > 2, "run one's call, result and answer between them: {snapshot}");
    assert!(ids.iter().all(|id| !id.starts_with("user-")), "no id of the server's own: {snapshot}");
    // The answer to the new message follows the snapshot, as this run's live events.
    let (call, answer) = (at("TOOL_CALL_START"), at("TEXT_MESSAGE_START"));
    assert!(call.is_some() && answer.is_some() && at("MESSAGES_SNAPSHOT") < call, "{events:?}");
}

/// A client that reloaded runs with no new message: besides the snapshots, the run's outcome is
/// the thread's open interrupts, the only place `@ag-ui/client` takes `pendingInterrupts` from;
/// with none open, such a run is `NO_INPUT`.
#[tokio::test]
async fn a_reloaded_ag_ui_client_gets_the_open_interrupts_as_its_runs_outcome() {
    let app = app().await;
    let asked = ag_ui_run(&app, "ask", json!([])).await;
    let interrupts = asked.last().unwrap()["outcome"]["interrupts"].clone();
    assert_eq!(interrupts.as_array().map(Vec::len), Some(1), "{asked:?}");
    let events = ag_ui_post(&app, json!({ "threadId": "reasons", "runId": "reload", "messages": [] })).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"], "{events:?}");
    let outcome = &events.last().unwrap()["outcome"];
    assert_eq!((outcome["type"].as_str(), &outcome["interrupts"]), (Some("interrupt"), &interrupts), "{events:?}");
    let id = interrupts[0]["id"].as_str().unwrap();
    assert_eq!(app.get_json(&format!("/api/approvals/{id}")).await.1["state"], "pending", "nothing decided");

    let events = ag_ui_post(&app, json!({ "threadId": "fresh", "runId": "empty", "messages": [] })).await;
    assert_eq!(events.last().unwrap()["code"], "NO_INPUT", "{events:?}");
}

#[tokio::test]
async fn an_ag_ui_rejection_without_a_reason_is_refused_when_the_gate_requires_one() {
    let toml = AGENT.replace("tools = [\"process_refund\"]\n", "tools = [\"process_refund\"]\nrequire_reason = true\n");
    let app = spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await;
    let asked = ag_ui_run(&app, "ask", json!([])).await;
    let interrupt = asked.last().unwrap()["outcome"]["interrupts"][0]["id"].as_str().expect("an interrupt").to_owned();
    let state = || async { app.get_json(&format!("/api/approvals/{interrupt}")).await.1 };

    // Cancelling writes no reason for the client, nor does a rejection that gives none.
    for (run, answer) in [
        ("cancel", json!({ "interruptId": interrupt, "status": "cancelled" })),
        ("blank", json!({ "interruptId": interrupt, "status": "cancelled", "payload": { "reason": "  " } })),
        ("reject", json!({ "interruptId": interrupt, "status": "resolved", "payload": { "approved": false } })),
    ] {
        let events = ag_ui_run(&app, run, json!([answer])).await;
        let last = events.last().unwrap();
        assert_eq!((last["type"].as_str(), last["code"].as_str()), (Some("RUN_ERROR"), Some("INVALID_RESUME")), "{run}: {events:?}");
        let message = last["message"].as_str().unwrap();
        assert!(message.contains(&interrupt) && message.contains("requires a reason"), "{run}: {message}");
        assert_eq!(state().await["state"], "pending", "{run}: nothing decided");
    }
    // A cancellation that says why rejects with its reason.
    let answer = json!({ "interruptId": interrupt, "status": "cancelled", "payload": { "reason": "not today" } });
    let events = ag_ui_run(&app, "why", json!([answer])).await;
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED", "{events:?}");
    let approval = state().await;
    assert_eq!((approval["state"].as_str(), approval["reason"].as_str()), (Some("rejected"), Some("not today")), "{approval}");
}

#[tokio::test]
async fn a_call_only_token_asks_through_a2a_and_ag_ui_but_cannot_decide() {
    let app = app().await;
    let (ok, token, stderr) = cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "agent", "--gateway"], None).await;
    assert!(ok, "{stderr}");
    let agent = TestApp { client: client_with_token(token.trim()), ..app.as_user("alice") };

    // A2A: the task is asked, the decision refused, the task still waits.
    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string();
    let (_, first) = rpc(&agent, &send(json!({ "parts": [{ "text": "refund order 1001" }] }))).await;
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{first}");
    let decide = json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": { "decision_type": "approve" } }] });
    let (_, refused) = rpc(&agent, &send(decide)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("decide scope"), "{refused}");
    let (_, still) =
        rpc(&app, &json!({ "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": { "id": task["id"] } }).to_string()).await;
    assert_eq!(still["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(app.order(1001).await.status, "open");

    // AG-UI: likewise.
    let asked = ag_ui_run(&agent, "ask", json!([])).await;
    let interrupt = asked.last().unwrap()["outcome"]["interrupts"][0]["id"].as_str().expect("an interrupt").to_owned();
    let answer = json!({ "interruptId": interrupt, "status": "resolved", "payload": { "approved": true } });
    let events = ag_ui_run(&agent, "approve", json!([answer])).await;
    let last = events.last().unwrap();
    assert_eq!((last["type"].as_str(), last["code"].as_str()), (Some("RUN_ERROR"), Some("FORBIDDEN")), "{events:?}");
    assert_eq!(app.get_json(&format!("/api/approvals/{interrupt}")).await.1["state"], "pending");

    // Nor can it read the approvals over REST.
    let (status, body) = agent.get_json("/api/approvals?status=pending").await;
    assert_eq!(status, 403, "{body}");
}

/// One rule on every door that stops a task (docs/security.md, "Tokens"): a token that may only
/// call stops the tasks it started, through A2A or REST, and no other task of its person's.
#[tokio::test]
async fn a_call_only_token_stops_the_tasks_it_started_and_no_others() {
    let app = app().await;
    let (ok, token, stderr) = cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "agent", "--gateway"], None).await;
    assert!(ok, "{stderr}");
    let agent = TestApp { client: client_with_token(token.trim()), ..app.as_user("alice") };
    let send = |text: &str| {
        json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": { "parts": [{ "text": text }] } } }).to_string()
    };
    let cancel = |task: &str| json!({ "jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": { "id": task } }).to_string();

    // Its own A2A task: canceled through A2A.
    let (_, first) = rpc(&agent, &send("refund order 1001")).await;
    let own = first["result"]["task"]["id"].as_str().expect("a task").to_owned();
    assert_eq!(first["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{first}");
    let (_, canceled) = rpc(&agent, &cancel(&own)).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");

    // A task of alice's in a chat she opened herself: neither door stops it, and nothing changes.
    let c = app.create_conversation().await;
    let (other, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    let events = app.detail(&c).await.events.len();
    let (status, body) = agent.post_json(&format!("/api/tasks/{other}/abort"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("decide scope"), "{body}");

    let (_, refused) = rpc(&agent, &cancel(&other)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(app.task_status(&other).await, domain::TaskStatus::InputRequired);
    assert_eq!(app.pending_approvals_of(&other).await.len(), 1, "{approvals:?}");
    assert_eq!(app.detail(&c).await.events.len(), events, "nothing changed");

    // Another task of its own: stopped through REST too.
    let (_, second) = rpc(&agent, &send("refund order 1001")).await;
    let own = second["result"]["task"]["id"].as_str().expect("a task").to_owned();
    let (status, body) = agent.post_json(&format!("/api/tasks/{own}/abort"), json!({})).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("canceled")), "{body}");
    assert_eq!(app.order(1001).await.status, "open");

    // alice's own token (it may decide) stops her chat's task.
    let (status, body) = app.post_json(&format!("/api/tasks/{other}/abort"), json!({})).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("canceled")), "{body}");
}

/// A call-only token stops the tasks it started, not the conversation it opened: a turn its
/// person started there in the browser is not the token's to stop, on either door, and the refusal
/// changes nothing (docs/security.md, "Tokens").
#[tokio::test]
async fn a_call_only_token_does_not_stop_its_persons_turn_in_a_conversation_it_opened() {
    use countersign::auth::scopes::MAY_NOT_STOP;
    let app = app().await;
    let (ok, token, stderr) = cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "agent", "--gateway"], None).await;
    assert!(ok, "{stderr}");
    let agent = TestApp { client: client_with_token(token.trim()), ..app.as_user("alice") };
    // alice in the browser: her session cookie, no token.
    let browser = test_client().cookie_store(true).build().unwrap();
    let login = browser.post(app.url("/api/session")).json(&json!({ "username": "alice", "password": PASSWORD })).send().await.unwrap();
    assert_eq!(login.status(), 200);
    let person = TestApp { client: browser, ..app.clone() };
    let send = |text: &str, context: Option<&str>| {
        let message = match context {
            Some(context) => json!({ "contextId": context, "parts": [{ "text": text }] }),
            None => json!({ "parts": [{ "text": text }] }),
        };
        json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string()
    };
    let cancel = |task: &str| json!({ "jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": { "id": task } }).to_string();

    // The token opens a conversation with a turn of its own, and stops it (REST).
    let (_, first) = rpc(&agent, &send("refund order 1001", None)).await;
    assert_eq!(first["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{first}");
    let own = first["result"]["task"]["id"].as_str().expect("a task").to_owned();
    let context = first["result"]["task"]["contextId"].as_str().expect("a context").to_owned();
    let (status, body) = agent.post_json(&format!("/api/tasks/{own}/abort"), json!({})).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("canceled")), "{body}");

    // alice, in the browser, starts the next turn of that conversation: neither door lets the
    // token stop it, and nothing changes.
    let (other, approvals) = person.pending_turn(&context, "refund order 1002", 1).await;
    let events = app.detail(&context).await.events.len();
    let (status, body) = agent.post_json(&format!("/api/tasks/{other}/abort"), json!({})).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    assert_eq!(body["error"]["message"], MAY_NOT_STOP, "{body}");
    let (_, refused) = rpc(&agent, &cancel(&other)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["message"], MAY_NOT_STOP, "{refused}");
    assert_eq!(app.task_status(&other).await, domain::TaskStatus::InputRequired);
    assert_eq!(app.pending_approvals_of(&other).await.len(), 1, "{approvals:?}");
    assert_eq!(app.detail(&context).await.events.len(), events, "nothing changed");

    // alice stops her own turn; the token's next turn there is its own again (A2A).
    let (status, body) = person.post_json(&format!("/api/tasks/{other}/abort"), json!({})).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("canceled")), "{body}");
    let (_, third) = rpc(&agent, &send("refund order 1001", Some(context.as_str()))).await;
    assert_eq!(third["result"]["task"]["contextId"], context.as_str(), "{third}");
    let mine = third["result"]["task"]["id"].as_str().expect("a task").to_owned();
    let (_, canceled) = rpc(&agent, &cancel(&mine)).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    assert_eq!((app.order(1001).await.status, app.order(1002).await.status), ("open".into(), "open".into()));
}

#[tokio::test]
async fn a_batch_decides_every_waiting_call_as_named_in_one_write_or_none_of_them() {
    let app = app().await;
    let send = |message: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } }).to_string();
    let (_, first) = rpc(&app, &send(json!({ "parts": [{ "text": "refund order 1001 and 1002" }] }))).await;
    let task = first["result"]["task"].clone();
    let approvals = task["status"]["message"]["parts"][1]["data"]["approvals"].as_array().unwrap().clone();
    assert_eq!(approvals.len(), 2, "{first}");
    let by_order = |order: i64| approvals.iter().find(|a| a["args"]["order_id"] == order).unwrap().clone();
    let (a1001, a1002) = (by_order(1001), by_order(1002));
    let batch = |data: Value| json!({ "taskId": task["id"], "contextId": task["contextId"], "parts": [{ "data": data }] });
    let states = || async {
        let mut states = Vec::new();
        for a in [&a1001, &a1002] {
            states.push(app.get_json(&format!("/api/approvals/{}", a["approval_id"].as_str().unwrap())).await.1["state"].clone());
        }
        states
    };

    // One of the two left out: refused, and neither is decided.
    let partial = json!({ "decision_type": "batch", "decisions": { a1001["approval_id"].as_str().unwrap(): "approve" } });
    let (_, refused) = rpc(&app, &send(batch(partial))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("has no decision"), "{refused}");
    assert_eq!(states().await, [json!("pending"), json!("pending")]);

    // Both named (one by approval id, one by call id): each decided as named.
    let whole = json!({
        "decision_type": "batch",
        "decisions": { a1001["approval_id"].as_str().unwrap(): "approve", a1002["call_id"].as_str().unwrap(): "reject" },
        "rejection_reasons": { a1002["call_id"].as_str().unwrap(): "not that one" },
    });
    let (_, done) = rpc(&app, &send(batch(whole))).await;
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(states().await, [json!("approved"), json!("rejected")]);
    assert_eq!((app.order(1001).await.status, app.order(1002).await.status), ("refunded".into(), "open".into()));
}

#[tokio::test]
async fn an_abort_refused_to_a_call_only_token_uses_up_nothing_of_its_persons_decisions() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENT.into()), decisions_per_minute: Some(2), ..Default::default() }).await;
    let (ok, token, stderr) = cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "agent", "--gateway"], None).await;
    assert!(ok, "{stderr}");
    let agent = TestApp { client: client_with_token(token.trim()), ..app.as_user("alice") };
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    for _ in 0..4 {
        let (status, _) = agent.post_json("/api/tasks/no-such-task/abort", json!({})).await;
        assert_eq!(status, 404);
        let (status, _) = agent.post_json(&format!("/api/tasks/{task}/abort"), json!({})).await;
        assert_eq!(status, 403);
    }
    // alice's own decision is still within her limit.
    let (status, body) = app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    assert_eq!(status, 200, "{body}");
}
