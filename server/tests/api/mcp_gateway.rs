//! The MCP approval gateway driven by the official Python MCP SDK (`mcp` from PyPI, run
//! as `tests/clients/mcp_client.py` and `mcp_client_asks.py`) with a real npm MCP server upstream,
//! in both protocol eras: an ungated call answers at once; a gated call keeps the request open with
//! progress notifications until a person decides (here with edited arguments), then answers with
//! the upstream result; a tool outside the agent's allow-list is MCP's invalid-params error. The
//! held client holds a `call`-only token (`token create --gateway`): with it, the agent cannot read
//! or decide its own approvals over REST. A 2026-07-28 client that can ask its user is answered
//! "input required" instead, and resumes on any replica. A call whose arguments break the tool's
//! schema is a tool error naming each problem, as `mcp_client_bad_args.py` reads it in both eras.
//! A cancellation stops every call of its token that its request id still holds, never an
//! earlier, finished call of the same token with the same id.
//! The TypeScript SDK's tests are in end2end/tests/mcp-gateway.spec.ts.

use std::time::Duration;

use serde_json::json;

use crate::helpers::{Options, TestApp, cli, client_with_token, eventually, spawn_app_with};

fn agents(root: &std::path::Path) -> String {
    format!(
        "[[mcp_servers]]\nname = \"files\"\ncommand = \"{}\"\nargs = [\"{}\"]\n\
         [[agents]]\nname = \"files\"\ntools = [\"get_order\"]\n\
         [[agents.mcp]]\nserver = \"files\"\ntools = [\"read_text_file\", \"write_file\"]\nrequire_approval = [\"write_file\"]\n",
        crate::mcp::filesystem_server(),
        root.display()
    )
}

#[tokio::test]
async fn the_official_python_mcp_client_waits_for_a_decision_and_gets_the_edited_write() {
    held_write("legacy", "2025-11-25").await;
}

#[tokio::test]
async fn a_2026_07_28_client_that_cannot_ask_its_user_waits_in_the_held_request_too() {
    held_write("2026-07-28", "2026-07-28").await;
}

async fn held_write(era: &str, version: &str) {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let target = root.join("from-python.txt").display().to_string();
    let app = spawn_app_with(Options { agents_toml: Some(agents(&root)), ..Default::default() }).await;
    let python = std::env::var("COUNTERSIGN_TEST_PYTHON")
        .expect("set COUNTERSIGN_TEST_PYTHON to a Python with mcp (scripts/test.sh installs it into the cache's venv)");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/mcp_client.py");
    let (ok, gateway_token, stderr) =
        cli(app.data_dir.path(), &["token", "create", "--user", "alice", "--name", "ide", "--gateway"], None).await;
    assert!(ok && stderr.contains("it may call"), "{stderr}");
    let gateway_token = gateway_token.trim().to_owned();
    let mut client = tokio::process::Command::new(python)
        .arg(script)
        .arg(app.url("/mcp/files"))
        .arg(&gateway_token)
        .arg(&target)
        .arg(era)
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // The gated write waits in alice's queue; she approves it with other content after a few
    // seconds, so the client hears progress meanwhile.
    let approval = eventually("the MCP client's write to wait for approval", || async {
        let (_, list) = app.get_json("/api/approvals?status=pending").await;
        list.as_array().and_then(|l| l.first().cloned())
    });
    // A client that gives up early fails the test with what it printed, not with a bare timeout.
    let approval = tokio::select! {
        approval = approval => approval,
        _ = client.wait() => {
            let (mut out, mut err) = (String::new(), String::new());
            use tokio::io::AsyncReadExt;
            client.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
            client.stderr.take().unwrap().read_to_string(&mut err).await.unwrap();
            panic!("mcp_client.py ended before its write waited:\n{out}\n{err}");
        }
    };
    assert_eq!(approval["tool"], "write_file", "{approval}");
    assert_eq!(approval["gate"], "require_approval", "{approval}");
    // The agent's own token can neither see the approval nor decide it, nor grant itself anything.
    let agent = client_with_token(&gateway_token);
    let approve = app.url(&format!("/api/approvals/{}/approve", approval["id"].as_str().unwrap()));
    for body in [json!({}), json!({ "grant": {} })] {
        let refused = agent.post(&approve).json(&body).send().await.unwrap();
        assert_eq!(refused.status(), 403);
        let refused: serde_json::Value = refused.json().await.unwrap();
        assert!(refused["error"]["message"].as_str().unwrap().contains("needs a token with the decide scope"), "{refused}");
    }
    assert_eq!(agent.get(app.url("/api/approvals?status=pending")).send().await.unwrap().status(), 403);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!std::path::Path::new(&target).exists(), "nothing is written before the decision");
    let (_, still) = app.get_json(&format!("/api/approvals/{}", approval["id"].as_str().unwrap())).await;
    assert_eq!(still["state"], "pending", "the refused requests changed nothing");
    let edited = json!({ "path": target, "content": "edited by alice" });
    let (status, body) =
        app.post_json(&format!("/api/approvals/{}/approve", approval["id"].as_str().unwrap()), json!({ "args": edited })).await;
    assert_eq!(status, 200, "{body}");

    let output = tokio::time::timeout(Duration::from_secs(90), client.wait_with_output()).await.expect("the MCP client finishes").unwrap();
    let (steps, stdout) = crate::helpers::client_steps("mcp_client.py", &output);
    assert_eq!(steps["era"]["version"], version, "{stdout}");
    assert_eq!(steps["tools"]["names"], json!(["get_order", "read_text_file", "write_file"]), "{stdout}");
    assert_eq!(steps["ungated"]["is_error"], false, "{stdout}");
    assert!(steps["ungated"]["text"].as_str().unwrap().contains("1001"), "{stdout}");
    let gated = &steps["gated"];
    assert_eq!(gated["is_error"], false, "{stdout}");
    assert!(gated["text"].as_str().unwrap().contains("Successfully wrote"), "{stdout}");
    assert!(gated["progress"].as_array().unwrap().len() >= 2, "progress while waiting: {stdout}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "edited by alice", "the edited arguments ran");
    let refused = steps["outside_allow_list"]["error"].as_str().unwrap_or_default();
    assert!(refused.contains("no tool \"move_file\" here"), "{stdout}");

    // Countersign's own record: the client's conversation holds both calls, audited like an agent's.
    let conversation = approval["conversation_id"].as_str().unwrap();
    let detail = app.detail(conversation).await;
    let cards: Vec<_> = detail.view.cards().map(|c| (c.tool.clone(), c.status)).collect();
    assert_eq!(cards, [("get_order".to_owned(), domain::CardStatus::Succeeded), ("write_file".to_owned(), domain::CardStatus::Succeeded)]);
    let (_, tasks) = app.get_json(&format!("/api/conversations/{conversation}")).await;
    // Named after the client's own name (clientInfo) and the token it came with.
    assert_eq!(tasks["conversation"]["title"], "MCP client \u{201c}python-probe\u{201d} (token \u{201c}ide\u{201d}) · files", "{tasks}");
    let decided = app.audit_entries("approval.decided", 1).await;
    assert_eq!(decided[0]["data"]["edited_args"]["content"], "edited by alice", "{decided:?}");
}

fn python() -> String {
    std::env::var("COUNTERSIGN_TEST_PYTHON")
        .expect("set COUNTERSIGN_TEST_PYTHON to a Python with mcp (scripts/test.sh installs it into the cache's venv)")
}

const ASKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/mcp_client_asks.py");

#[tokio::test]
async fn a_2026_07_28_client_asks_its_user_and_their_yes_runs_the_write_once() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let target = root.join("asked.txt");
    let app = spawn_app_with(Options { agents_toml: Some(agents(&root)), ..Default::default() }).await;
    // Alice's own token (it may decide): her client asks her.
    let output = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(python())
            .args([ASKS, "ask", &app.url("/mcp/files"), &app.tokens["alice"], &target.display().to_string()])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the client finishes within 90 s")
    .unwrap();
    let (steps, stdout) = crate::helpers::client_steps("mcp_client_asks.py", &output);
    let message = steps["elicited"]["message"].as_str().unwrap();
    assert!(message.starts_with("Approve: ") && message.contains("asked.txt"), "{stdout}");
    assert_eq!(steps["elicited"]["schema"]["required"], json!(["approve"]), "{stdout}");
    assert_eq!((steps["asked"]["is_error"].as_bool(), steps["asked"]["version"].as_str()), (Some(false), Some("2026-07-28")), "{stdout}");
    assert!(steps["asked"]["text"].as_str().unwrap().contains("Successfully wrote"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "asked");
    // Her yes is a decision like any other: audited, through the MCP door, by her.
    let decided = app.audit_entries("approval.decided", 1).await;
    assert_eq!((decided[0]["actor"].as_str(), decided[0]["data"]["via"].as_str()), (Some("alice"), Some("mcp")), "{decided:?}");
    let ran = app.audit_entries("tool.outcome", 1).await;
    assert_eq!(ran[0]["data"]["tool"], "write_file", "the write ran once: {ran:?}");
}

const CANCELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/mcp_client_cancels.py");

/// The official Python client gives up on its own request timeout and sends
/// `notifications/cancelled`: the call is stopped for good (its approval canceled, saying the
/// client stopped waiting), so a later approval is refused and nothing is written.
#[tokio::test]
async fn a_call_the_official_client_cancels_never_runs_even_if_approved_later() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let target = root.join("cancelled.txt");
    let app = spawn_app_with(Options { agents_toml: Some(agents(&root)), ..Default::default() }).await;
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(python())
            .args([CANCELS, &app.url("/mcp/files"), &app.tokens["alice"], &target.display().to_string()])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the client finishes within 60 s")
    .unwrap();
    let (steps, stdout) = crate::helpers::client_steps("mcp_client_cancels.py", &output);
    assert!(steps["gave_up"]["error"].is_string(), "the SDK timed out: {stdout}");
    let approval = eventually("the cancelled call's approval to be canceled", || async {
        let (_, list) = app.get_json("/api/approvals?status=canceled").await;
        list.as_array().and_then(|l| l.first().cloned())
    })
    .await;
    assert_eq!(approval["tool"], "write_file", "{approval}");
    let reason = approval["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("MCP client") && reason.contains("which stopped waiting"), "{approval}");
    let (status, body) =
        app.as_user("root").post_json(&format!("/api/approvals/{}/approve", approval["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(status, 409, "{body}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!target.exists(), "nothing was written");
}

#[tokio::test]
async fn an_input_required_call_decided_in_the_queue_is_resumed_on_another_replica_and_runs_once() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let target = root.join("resumed.txt");
    let toml = agents(&root);
    // Two replicas on PostgreSQL; on SQLite (one process per database) the same server twice.
    let data = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let (a, b) = match crate::helpers::postgres() {
        Some(_) => {
            let a = crate::helpers::BinaryServer::start(data.clone(), Some(&toml)).await;
            let b = crate::helpers::BinaryServer::start(data.clone(), Some(&toml)).await;
            (a, Some(b))
        }
        None => (crate::helpers::BinaryServer::start(data.clone(), Some(&toml)).await, None),
    };
    let other = b.as_ref().unwrap_or(&a);
    let token = a.app.tokens["alice"].clone();
    let mut client = tokio::process::Command::new(python())
        .args([ASKS, "resume", &a.app.url("/mcp/files"), &other.app.url("/mcp/files"), &token, &target.display().to_string()])
        .kill_on_drop(true)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let mut stdout = String::new();
    let first = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stdout.push_str(&line);
            stdout.push('\n');
            if line.contains("\"input_required\"") {
                return serde_json::from_str::<serde_json::Value>(&line).unwrap();
            }
        }
        let mut err = String::new();
        tokio::io::AsyncReadExt::read_to_string(client.stderr.as_mut().unwrap(), &mut err).await.unwrap();
        panic!("the client ended before input was required:\n{stdout}\n{err}");
    })
    .await
    .expect("input required within 60 s");
    assert_eq!((first["kind"].as_str(), first["has_state"].as_bool()), (Some("InputRequiredResult"), Some(true)), "{first}");
    assert_eq!(first["keys"], json!(["approval"]));
    assert!(!target.exists(), "nothing written before the decision");

    // Decided in the queue (on replica A) while no request of the client is open.
    let approval = eventually("the pending write", || async {
        let (_, list) = a.app.get_json("/api/approvals?status=pending").await;
        list.as_array().and_then(|l| l.first().cloned())
    })
    .await;
    let (status, body) = a.app.post_json(&format!("/api/approvals/{}/approve", approval["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(status, 200, "{body}");
    client.stdin.as_mut().unwrap().write_all(b"decided\n").await.unwrap();
    let rest = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stdout.push_str(&line);
            stdout.push('\n');
        }
        client.wait().await.unwrap()
    })
    .await
    .expect("the client finishes within 60 s");
    assert!(rest.success(), "{stdout}");
    let steps: std::collections::HashMap<String, serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| (v["step"].as_str().unwrap_or_default().to_owned(), v))
        .collect();
    // A replay with other arguments or a changed state is refused, and runs nothing.
    assert!(steps["other_args"]["error"].as_str().unwrap().contains("another call"), "{stdout}");
    assert!(steps["changed_state"]["error"].as_str().unwrap().contains("not issued by this server"), "{stdout}");
    let resumed = &steps["resumed"];
    assert_eq!((resumed["kind"].as_str(), resumed["is_error"].as_bool()), (Some("CallToolResult"), Some(false)), "{stdout}");
    assert!(resumed["text"].as_str().unwrap().contains("Successfully wrote"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "resumed");
    let detail = a.app.detail(approval["conversation_id"].as_str().unwrap()).await;
    let runs = detail.events.iter().filter(|e| matches!(e.body, domain::EventBody::ToolStarted { .. })).count();
    assert_eq!(runs, 1, "the write ran once");
}

#[tokio::test]
async fn ungated_calls_of_one_client_run_at_once_side_by_side_and_each_is_recorded_once() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "milk, eggs").unwrap();
    let app = spawn_app_with(Options { agents_toml: Some(agents(&root)), ..Default::default() }).await;
    let call = |tool: &'static str, arguments: serde_json::Value| modern_call(&app, tool, arguments);
    // Twelve at once: built-in reads (one write each) and an upstream server's reads (run first).
    let notes = root.join("notes.txt").display().to_string();
    let answers = futures::future::join_all((0..12).map(|i| match i % 2 {
        0 => futures::future::Either::Left(call("get_order", json!({ "order_id": 1001 }))),
        _ => futures::future::Either::Right(call("read_text_file", json!({ "path": notes }))),
    }))
    .await;
    for (i, answer) in answers.iter().enumerate() {
        let result = &answer["result"];
        assert_eq!((result["resultType"].as_str(), result["isError"].as_bool()), (Some("complete"), None), "{i}: {answer}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(if i % 2 == 0 { text.contains("1001") } else { text == "milk, eggs" }, "{i}: {text}");
    }
    // A read that fails upstream is the call's failure, recorded like any other.
    let missing = call("read_text_file", json!({ "path": root.join("missing.txt").display().to_string() })).await;
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    // Each call is a finished task with its card and one outcome in the audit trail.
    let (_, conversations) = app.get_json("/api/conversations").await;
    let id = conversations[0]["id"].as_str().unwrap().to_owned();
    let detail = app.detail(&id).await;
    let cards: Vec<_> = detail.view.cards().map(|c| c.status).collect();
    assert_eq!(cards.len(), 13, "{cards:?}");
    assert_eq!(cards.iter().filter(|s| **s == domain::CardStatus::Succeeded).count(), 12, "{cards:?}");
    let outcomes = app.audit_entries("tool.outcome", 13).await;
    assert_eq!(outcomes.iter().filter(|e| e["data"]["ok"] == false).count(), 1);
    let ended = detail
        .events
        .iter()
        .filter(|e| matches!(e.body, domain::EventBody::TaskStatus { status: domain::TaskStatus::Completed, .. }))
        .count();
    assert_eq!(ended, 13, "every call's task ended");
    // Reads that waited for the writer together were recorded in one write: each task's events
    // are still its own record, in the driven way's order, and the audit chain holds.
    let mut by_task: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for event in &detail.events {
        by_task.entry(event.body.task_id().to_string()).or_default().push(event.body.name());
    }
    assert_eq!(by_task.len(), 13);
    for (task, kinds) in &by_task {
        assert_eq!(kinds, &["user-message", "task-status", "tool-call", "tool-started", "tool-result", "task-status"], "{task}");
    }
    let (status, verified) = app.as_user("root").get_json("/api/audit/verify").await;
    assert_eq!((status, verified["ok"].as_bool()), (200, Some(true)), "{verified}");
    let (_, pending) = app.get_json("/api/approvals?status=pending").await;
    assert_eq!(pending, json!([]), "no one was asked");
}

#[tokio::test]
async fn a_client_that_introduces_itself_again_with_a_new_name_is_shown_by_it_at_once() {
    let files = tempfile::tempdir().unwrap();
    let app = spawn_app_with(Options { agents_toml: Some(agents(&files.path().canonicalize().unwrap())), ..Default::default() }).await;
    // 2025-11-25: the name comes with `initialize` only; later requests carry the token alone.
    let rpc = |method: &'static str, params: serde_json::Value| {
        let request = gateway_request(&app, "2025-11-25").json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        answer(request)
    };
    let introduce = |name: &'static str| {
        rpc("initialize", json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": name, "version": "1" } }))
    };
    let read = || rpc("tools/call", json!({ "name": "get_order", "arguments": { "order_id": 1001 } }));
    for name in ["first", "second"] {
        let introduced = introduce(name).await;
        assert_eq!(introduced["result"]["protocolVersion"], "2025-11-25", "{introduced}");
        let answer = read().await;
        assert_eq!(answer["result"]["isError"], json!(null), "{answer}");
    }
    let (_, conversations) = app.get_json("/api/conversations").await;
    let detail = app.detail(conversations[0]["id"].as_str().unwrap()).await;
    let asked: Vec<&str> = detail
        .events
        .iter()
        .filter_map(|e| match &e.body {
            domain::EventBody::UserMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        ["MCP client \u{201c}first\u{201d} asks to run get_order", "MCP client \u{201c}second\u{201d} asks to run get_order"],
        "the name given to this server shows at once, not after the name is read again"
    );
}

#[tokio::test]
async fn a_read_whose_recording_fails_fails_alone_and_the_reads_recorded_with_it_still_answer() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "milk, eggs").unwrap();
    std::fs::write(root.join("poison.txt"), "never recorded").unwrap();
    // The store fails one read's recording, every time: alone and in a write with others.
    let hook: countersign::orchestrator::BeforeCommitHook = std::sync::Arc::new(|point: &str| match point.contains("poison") {
        true => anyhow::bail!("injected failure recording a read"),
        false => Ok(()),
    });
    let options = Options { agents_toml: Some(agents(&root)), before_commit: Some(hook), ..Default::default() };
    let app = spawn_app_with(options).await;
    let path = |name: &str| json!({ "path": root.join(name).display().to_string() });
    // Twelve reads at once: the failed recording is one read's error, whichever write it was in
    // (engine/tests/use_cases/client_reads.rs makes them share one).
    let answers = futures::future::join_all(
        (0..12).map(|i| modern_call(&app, "read_text_file", path(if i == 5 { "poison.txt" } else { "notes.txt" }))),
    )
    .await;
    for (i, answer) in answers.iter().enumerate() {
        match i {
            5 => assert!(answer["error"]["message"].is_string() && answer.get("result").is_none(), "{answer}"),
            _ => assert_eq!(answer["result"]["content"][0]["text"], "milk, eggs", "{i}: {answer}"),
        }
    }
    // The eleven are recorded, each once and whole; nothing of the failed one is.
    let outcomes = app.audit_entries("tool.outcome", 11).await;
    assert!(outcomes.iter().all(|e| e["data"]["ok"] == true), "{outcomes:?}");
    let (_, conversations) = app.get_json("/api/conversations").await;
    let detail = app.detail(conversations[0]["id"].as_str().unwrap()).await;
    assert_eq!(detail.events.len(), 11 * 6, "six events for each recorded read");
    assert!(!serde_json::to_string(&detail.events).unwrap().contains("poison"));
    let (status, verified) = app.as_user("root").get_json("/api/audit/verify").await;
    assert_eq!((status, verified["ok"].as_bool()), (200, Some(true)), "{verified}");
}

/// A call with bad arguments is told what is wrong field by field, in the text a model reads and
/// as structured content; a whole number sent as a float for an `integer` field is that integer
/// (as a protobuf-carried or a model's `1001.0`), and the call runs.
#[tokio::test]
async fn bad_arguments_are_said_field_by_field_and_a_whole_float_is_the_integer_it_is() {
    let files = tempfile::tempdir().unwrap();
    let app = spawn_app_with(Options { agents_toml: Some(agents(&files.path().canonicalize().unwrap())), ..Default::default() }).await;
    let bad = modern_call(&app, "get_order", json!({ "order_id": 1001.5, "note": "x" })).await;
    let result = &bad["result"];
    assert_eq!(result["isError"], true, "{bad}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("invalid arguments: "), "{text}");
    assert!(text.contains("/order_id: must be an integer") && text.contains("unknown argument: note"), "{text}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["error"], "invalid arguments", "{bad}");
    let details = structured["details"].as_array().expect("the details");
    assert_eq!(details.len(), 2, "{bad}");
    assert!(details.contains(&json!({ "path": "/order_id", "message": "must be an integer" })), "{bad}");
    assert!(details.contains(&json!({ "path": "", "message": "unknown argument: note" })), "{bad}");

    let whole = modern_call(&app, "get_order", json!({ "order_id": 1001.0 })).await;
    assert_eq!(whole["result"]["isError"], json!(null), "{whole}");
    assert!(whole["result"]["content"][0]["text"].as_str().unwrap().contains("Espresso machine"), "{whole}");
}

const BAD_ARGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/mcp_client_bad_args.py");

/// An agent whose refunds wait for a person, and nothing upstream (its gateway is `/mcp/support`).
const REFUNDS: &str = "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"process_refund\"]\n\
    [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n";

/// The official Python client, in both eras, calls a gated tool with arguments that break its
/// schema: the SDK hands it a tool error (`is_error`) whose text names each problem and whose
/// `structured_content` carries them as `{path, message}`, at once: no one is asked, nothing runs.
/// The gateway's tools declare no `outputSchema`, so the SDK checks the error's structured content
/// against none.
#[tokio::test]
async fn the_official_python_client_is_told_each_bad_argument_in_the_text_and_the_structured_content() {
    let app = spawn_app_with(Options { agents_toml: Some(REFUNDS.to_owned()), ..Default::default() }).await;
    for (era, version) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let output = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::process::Command::new(python())
                .args([BAD_ARGS, &app.url("/mcp/support"), &app.tokens["alice"], era])
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the client finishes within 60 s")
        .unwrap();
        let (steps, stdout) = crate::helpers::client_steps("mcp_client_bad_args.py", &output);
        assert_eq!(steps["era"]["version"], version, "{stdout}");
        assert_eq!(steps["tools"]["output_schemas"], json!({ "get_order": null, "process_refund": null }), "{era}: {stdout}");
        let wrong = &steps["wrong_type"];
        assert_eq!(wrong["is_error"], true, "{era}: {stdout}");
        assert_eq!(wrong["text"], "invalid arguments: /order_id: must be an integer", "{era}: {stdout}");
        assert_eq!(
            wrong["structured"],
            json!({ "error": "invalid arguments", "details": [{ "path": "/order_id", "message": "must be an integer" }] }),
            "{era}: {stdout}"
        );
        let missing = &steps["missing"];
        assert_eq!(missing["is_error"], true, "{era}: {stdout}");
        // A problem with the arguments as a whole has no path, and is said without one.
        assert_eq!(missing["text"], "invalid arguments: order_id is required", "{era}: {stdout}");
        assert_eq!(
            missing["structured"],
            json!({ "error": "invalid arguments", "details": [{ "path": "", "message": "order_id is required" }] }),
            "{era}: {stdout}"
        );
    }
    // Refused before any gate: no one was asked, and each call is a failed card in the client's chat.
    let (_, pending) = app.get_json("/api/approvals?status=pending").await;
    assert_eq!(pending, json!([]), "no one was asked");
    let (_, conversations) = app.get_json("/api/conversations").await;
    let mut cards = Vec::new();
    for conversation in conversations.as_array().unwrap() {
        let detail = app.detail(conversation["id"].as_str().unwrap()).await;
        cards.extend(detail.view.cards().map(|c| (c.tool.clone(), c.status)));
    }
    assert_eq!(cards, vec![("process_refund".to_owned(), domain::CardStatus::Failed); 4], "two calls in each era");
}

/// MCP clients number their requests from 0 in every session, so a client that connects again
/// with the same token repeats a request id. Its `notifications/cancelled` stops the call that
/// request still waits for, which a later approval then cannot run, and leaves an earlier,
/// finished call with the same id as it was.
#[tokio::test]
async fn a_cancellation_stops_the_waiting_call_of_its_request_id_and_not_a_finished_one_with_the_same_id() {
    let app = spawn_app_with(Options { agents_toml: Some(REFUNDS.to_owned()), ..Default::default() }).await;
    let refund = |amount: u32| {
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "process_refund", "arguments": { "order_id": 1004, "amount": amount },
        } });
        tokio::spawn(answer(support_request(&app, call)))
    };
    let waiting = || async {
        let (_, list) = app.get_json("/api/approvals?status=pending").await;
        list.as_array().and_then(|l| l.first().cloned())
    };
    let before = app.order(1004).await.refunded;

    // The first call with id 1: approved, run, answered.
    let first = refund(1);
    let approved = eventually("the first refund to wait", waiting).await;
    let approved_path = format!("/api/approvals/{}", approved["id"].as_str().unwrap());
    let (status, body) = app.post_json(&format!("{approved_path}/approve"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let first = tokio::time::timeout(Duration::from_secs(30), first).await.expect("the first call is answered").unwrap();
    assert_eq!(first["result"]["isError"], json!(null), "{first}");
    assert_eq!(app.order(1004).await.refunded, before + 1.0);
    let conversation = approved["conversation_id"].as_str().unwrap().to_owned();
    let first_task = approved["task_id"].as_str().unwrap().to_owned();
    let of_first = |events: Vec<domain::Event>| events.into_iter().filter(|e| e.body.task_id().as_str() == first_task).collect::<Vec<_>>();
    let recorded = of_first(app.detail(&conversation).await.events);

    // The second call with id 1 waits; the client cancels request 1.
    let second = refund(2);
    let held = eventually("the second refund to wait", waiting).await;
    assert_ne!(held["id"], approved["id"]);
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1, "reason": "stopped" } });
    let cancelled = support_request(&app, cancel).send().await.unwrap();
    assert_eq!(cancelled.status(), 202, "a notification is accepted");
    let held_path = format!("/api/approvals/{}", held["id"].as_str().unwrap());
    let stopped = eventually("the waiting call to be stopped", || async {
        let (_, approval) = app.get_json(&held_path).await;
        (approval["state"] == "canceled").then_some(approval)
    })
    .await;
    let reason = stopped["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("which stopped waiting") && reason.contains("cancelled request 1 (stopped)"), "{stopped}");
    let (status, body) = app.post_json(&format!("{held_path}/approve"), json!({})).await;
    assert_eq!(status, 409, "{body}");
    let second = tokio::time::timeout(Duration::from_secs(30), second).await.expect("the held call is answered").unwrap();
    assert_eq!(second["result"]["isError"], true, "{second}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.order(1004).await.refunded, before + 1.0, "the cancelled refund did not run");

    let detail = app.detail(&conversation).await;
    let cards: Vec<_> = detail.view.cards().map(|c| c.status).collect();
    assert_eq!(cards, [domain::CardStatus::Succeeded, domain::CardStatus::Canceled]);
    assert_eq!(of_first(detail.events), recorded, "the first call's record is as it was");
    assert_eq!(app.get_json(&approved_path).await.1["state"], "approved");
}

/// Two clients sharing one token number their requests alike, and the gateway has no sessions to
/// tell them apart: a cancellation of request 7 stops every held call with that id, each saying
/// that its client or another using its token cancelled request 7, so the call its client gave up on
/// never runs when approved, and the other client is told why its call stopped.
#[tokio::test]
async fn a_cancellation_stops_every_held_call_of_its_request_id_when_clients_share_a_token() {
    let app = spawn_app_with(Options { agents_toml: Some(REFUNDS.to_owned()), ..Default::default() }).await;
    let refund = |order: i64| {
        let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "process_refund", "arguments": { "order_id": order, "amount": 1 },
        } });
        tokio::spawn(answer(support_request(&app, call)))
    };
    let refunded = || async { (app.order(1003).await.refunded, app.order(1005).await.refunded) };
    let before = refunded().await;
    let calls = [refund(1003), refund(1005)];
    let held = eventually("both refunds to wait", || async {
        let (_, list) = app.get_json("/api/approvals?status=pending").await;
        list.as_array().filter(|l| l.len() == 2).cloned()
    })
    .await;

    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7, "reason": "timed out" } });
    assert_eq!(support_request(&app, cancel).send().await.unwrap().status(), 202, "a notification is accepted");
    for approval in &held {
        let path = format!("/api/approvals/{}", approval["id"].as_str().unwrap());
        let stopped = eventually("each held call to be stopped", || async {
            let (_, approval) = app.get_json(&path).await;
            (approval["state"] == "canceled").then_some(approval)
        })
        .await;
        let reason = stopped["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("or another client using its token") && reason.contains("cancelled request 7 (timed out)"), "{stopped}");
        let (status, body) = app.post_json(&format!("{path}/approve"), json!({})).await;
        assert_eq!(status, 409, "{body}");
    }
    for call in calls {
        let answered = tokio::time::timeout(Duration::from_secs(30), call).await.expect("each held call is answered").unwrap();
        assert_eq!(answered["result"]["isError"], true, "{answered}");
        let text = answered["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("or another client using its token") && text.contains("cancelled request 7"), "{answered}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(refunded().await, before, "nothing was refunded");
}

/// A 2025-11-25 JSON-RPC message to alice's gateway of the agent `support` ([`REFUNDS`]).
fn support_request(app: &TestApp, message: serde_json::Value) -> reqwest::RequestBuilder {
    app.client
        .post(app.url("/mcp/support"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&message)
}

/// A 2026-07-28 `tools/call` to alice's gateway; its JSON-RPC answer.
async fn modern_call(app: &TestApp, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    let request = gateway_request(app, "2026-07-28").header("mcp-method", "tools/call").header("mcp-name", tool).json(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "side-by-side", "version": "1" },
            },
        } }),
    );
    answer(request).await
}

/// A request to alice's gateway at `/mcp/files` in protocol revision `version`.
fn gateway_request(app: &TestApp, version: &str) -> reqwest::RequestBuilder {
    app.client.post(app.url("/mcp/files")).header("accept", "application/json, text/event-stream").header("mcp-protocol-version", version)
}

/// The JSON-RPC answer to a gateway request: its JSON body, or the last message of its event stream.
async fn answer(request: reqwest::RequestBuilder) -> serde_json::Value {
    let text = request.send().await.unwrap().text().await.unwrap();
    let last = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty());
    serde_json::from_str(last.unwrap_or(text.trim())).unwrap()
}
