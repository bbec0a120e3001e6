//! MCP tools through a real MCP server from npm (@modelcontextprotocol/server-filesystem),
//! driven by the OpenAI-compatible provider against the fake model server.

use domain::TaskStatus;
use serde_json::json;

use crate::{
    helpers::{Options, spawn_app_with},
    openai::{Reply, chunk, start_fake, text_stream},
};

pub(crate) fn filesystem_server() -> String {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/node_modules/.bin/mcp-server-filesystem");
    assert!(bin.exists(), "{} is missing: run `./x test` (it installs the end2end npm packages)", bin.display());
    bin.display().to_string()
}

fn write_call(id: &str, path: &str, content: &str) -> Reply {
    let args = json!({ "path": path, "content": content }).to_string();
    Reply::Stream(vec![chunk(
        json!({ "tool_calls": [{ "index": 0, "id": id, "type": "function", "function": { "name": "write_file", "arguments": args } }] }),
    )])
}

#[tokio::test]
async fn an_mcp_write_file_waits_for_approval_and_the_file_appears_only_after_approve() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let approved = root.join("approved.txt").display().to_string();
    let rejected = root.join("rejected.txt").display().to_string();
    let (url, _fake) = start_fake(vec![
        write_call("call_w1", &approved, "hello from countersign"),
        text_stream(&["Written."]),
        write_call("call_w2", &rejected, "should never exist"),
        text_stream(&["Not written."]),
    ])
    .await;
    let toml = format!(
        "[[mcp_servers]]\nname = \"files\"\ncommand = \"{}\"\nargs = [\"{}\"]\n\
         [[agents]]\nname = \"ops\"\n[[agents.mcp]]\nserver = \"files\"\ntools = [\"read_text_file\", \"write_file\"]\nrequire_approval = [\"write_file\"]\n\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake-1\"\nmax_retries = 0\n",
        filesystem_server(),
        root.display()
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), configured_models: true, ..Default::default() }).await;

    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "write the note", 1).await;
    assert_eq!(approvals[0].tool, "write_file");
    assert_eq!(approvals[0].gate, "require_approval");
    assert!(!std::path::Path::new(&approved).exists(), "nothing is written before approval");
    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(std::fs::read_to_string(&approved).unwrap(), "hello from countersign");
    let card = app.detail(&c).await.view.cards().find(|c| c.tool == "write_file").cloned().unwrap();
    assert_eq!(card.status, domain::CardStatus::Succeeded);
    assert!(card.result.unwrap()["message"].as_str().unwrap().contains("Successfully wrote"), "the MCP result shows on the card");

    let c2 = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c2, "write another", 1).await;
    app.post_json(&format!("/api/approvals/{}/reject", approvals[0].id), json!({ "reason": "no" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert!(!std::path::Path::new(&rejected).exists(), "a rejected write never happens");
}

#[tokio::test]
async fn an_mcp_server_that_fails_to_start_stops_start_up_with_its_name() {
    let toml = "[[mcp_servers]]\nname = \"ghost\"\ncommand = \"/nonexistent/mcp-server\"\n[[agents]]\nname = \"a\"\n[[agents.mcp]]\nserver = \"ghost\"\ntools = [\"x\"]\n";
    let stderr = crate::helpers::refused_start_up(toml).await;
    assert!(stderr.contains("\"ghost\""), "{stderr}");
}

/// A real MCP server that hangs: the filesystem server reading a FIFO no one writes to blocks
/// forever. The call fails after the server's `timeout_secs` with a clear message, the turn goes
/// on (the model hears the failure) and the task is not held forever.
#[tokio::test]
async fn a_hung_mcp_call_fails_after_its_timeout_and_the_turn_goes_on() {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let fifo = root.join("never-written");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let args = json!({ "path": fifo.display().to_string() }).to_string();
    let read = Reply::Stream(vec![chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_r1", "type": "function", "function": { "name": "read_text_file", "arguments": args } }] }),
    )]);
    let (url, _fake) = start_fake(vec![read, text_stream(&["The file server did not answer."])]).await;
    let toml = format!(
        "[[mcp_servers]]\nname = \"files\"\ncommand = \"{}\"\nargs = [\"{}\"]\ntimeout_secs = 1.0\n\
         [[agents]]\nname = \"ops\"\n[[agents.mcp]]\nserver = \"files\"\ntools = [\"read_text_file\"]\n\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake-1\"\nmax_retries = 0\n",
        filesystem_server(),
        root.display()
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "read the pipe").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let card = app.detail(&c).await.view.cards().find(|c| c.tool == "read_text_file").cloned().unwrap();
    assert_eq!(card.status, domain::CardStatus::Failed, "{card:?}");
    let error = serde_json::to_string(&card).unwrap();
    assert!(error.contains("did not answer within 1.0 s"), "{error}");
    assert_eq!(crate::helpers::assistant_texts(&app.detail(&c).await.events).last().unwrap(), "The file server did not answer.");
}
