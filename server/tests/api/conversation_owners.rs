//! A conversation belongs to one person on every door. The MCP gateway's conversation of a
//! client has an id no client may choose: AG-UI answers such a thread as it answers someone
//! else's, and makes nothing. The gateway never adopts a conversation with its client's id that
//! someone else made: the call is refused and does not run. REST and A2A treat another person's
//! conversation (an admin's too, for writing) as one that does not exist. Refusals change nothing.

use countersign::{auth::tokens, bus::Bus};
use domain::UserId;
use engine::store::{self, conversations};
use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, error_code, spawn_app_with};

const AGENTS: &str = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
    [[agents.gates]]\nname = \"changes\"\nkind = \"tools\"\ntools = [\"cancel_order\", \"process_refund\"]\ntimeout_secs = 60\n";

/// A 2026-07-28 `tools/call` of `get_order` to `/mcp/support` with `client`'s token; its JSON-RPC answer.
async fn mcp_read(app: &TestApp, client: &reqwest::Client) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_order", "arguments": { "order_id": 1001 },
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "probe", "version": "1" },
        },
    } });
    let request = client
        .post(app.url("/mcp/support"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "get_order")
        .json(&body);
    let text = request.send().await.unwrap().text().await.unwrap();
    let last = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty());
    serde_json::from_str(last.unwrap_or(text.trim())).unwrap()
}

/// The last event of an AG-UI run on `thread` (`POST /ag-ui/support`).
async fn ag_ui_run(app: &TestApp, thread: &str) -> Value {
    let input = json!({
        "threadId": thread, "runId": "r1", "tools": [], "context": [], "state": {},
        "messages": [{ "id": "1", "role": "user", "content": "look up order 1001" }],
    });
    let stream = app.client.post(app.url("/ag-ui/support")).json(&input).send().await.unwrap().text().await.unwrap();
    stream.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| serde_json::from_str::<Value>(d.trim()).unwrap()).next_back().unwrap()
}

/// The user's id, from their session.
async fn id_of(app: &TestApp) -> UserId {
    UserId::from(app.get_json("/api/session").await.1["id"].as_str().unwrap())
}

/// The conversation as an admin reads it: its owner and how many events it has (`None`: none such).
async fn seen(app: &TestApp, id: &str) -> Option<(Value, i64)> {
    let (status, body) = app.as_user("root").get_json(&format!("/api/conversations/{id}")).await;
    (status == 200).then(|| (body["conversation"]["owner"].clone(), body["conversation"]["last_seq"].as_i64().unwrap()))
}

#[tokio::test]
async fn no_door_uses_someone_elses_conversation_and_no_client_takes_a_gateway_clients_id() {
    let app = spawn_app_with(Options { agents_toml: Some(AGENTS.into()), ..Default::default() }).await;
    let (bob, root) = (app.as_user("bob"), app.as_user("root"));
    let (_, bobs_tokens) = bob.get_json("/api/tokens").await;
    let key = format!("token:{}", bobs_tokens[0]["id"].as_str().unwrap());
    let bobs_id = id_of(&bob).await;
    let gateway = conversations::gateway_id(&bobs_id, &key, "support").to_string();

    // alice (who learnt bob's ids) tries to make bob's gateway conversation first, over AG-UI:
    // answered as someone else's thread is, and nothing is made.
    let bobs_thread = ag_ui_run(&bob, "bobs-thread").await;
    assert_eq!(bobs_thread["type"], "RUN_FINISHED", "{bobs_thread}");
    let others = ag_ui_run(&app, "bobs-thread").await;
    let squat = ag_ui_run(&app, &gateway).await;
    for refused in [&others, &squat] {
        assert_eq!((refused["type"].as_str(), refused["code"].as_str()), (Some("RUN_ERROR"), Some("THREAD_NOT_FOUND")), "{refused}");
    }
    assert_eq!(seen(&app, &gateway).await, None, "nothing made");

    // bob's client's call goes to a conversation of bob's, with the derived id.
    let answer = mcp_read(&app, &bob.client).await;
    assert!(answer["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("1001")), "{answer}");
    let (owner, events) = seen(&app, &gateway).await.expect("bob's gateway conversation");
    assert_eq!(owner, "bob");

    // Once it exists, no one else uses it on any door, and the answer is the unknown one's.
    assert_eq!(ag_ui_run(&app, &gateway).await["message"], squat["message"], "the same answer as before it existed");
    let say = json!({ "text": "look up order 1001" });
    let (status, nope) = app.post_json("/api/conversations/nope/messages", say.clone()).await;
    assert_eq!((status, error_code(&nope)), (404, "not_found"), "{nope}");
    for who in [&app, &root] {
        let (status, body) = who.post_json(&format!("/api/conversations/{gateway}/messages"), say.clone()).await;
        assert_eq!((status, error_code(&body)), (404, "not_found"), "{body}");
    }
    let a2a = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": {
        "contextId": gateway, "parts": [{ "text": "look up order 1001" }],
    } } });
    let sent: Value = app.client.post(app.url("/a2a/support")).json(&a2a).send().await.unwrap().json().await.unwrap();
    let context = sent["result"]["task"]["contextId"].as_str().expect("a new context");
    assert_ne!(context, gateway, "a context of alice's own: {sent}");
    assert_eq!(seen(&app, &gateway).await, Some((json!("bob"), events)), "bob's conversation unchanged");

    // A conversation with a client's id that someone else made (say, before ids were kept apart)
    // is never adopted: the client's call is refused and runs nowhere.
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let other = store::Store::connect(&url, Bus::default()).await.unwrap();
    let pool = other.testing().pool();
    let token = tokens::generate();
    let second = store::users::insert_token(pool, &bobs_id, "second", &tokens::digest(&token), "read decide call").await.unwrap();
    let taken = conversations::gateway_id(&bobs_id, &format!("token:{second}"), "support");
    let alice = store::users::get(pool, &id_of(&app).await).await.unwrap().unwrap();
    let made =
        conversations::open_or_create(pool, &taken, conversations::IdFrom::Gateway, "squatted", "support", &alice, None).await.unwrap();
    assert!(made.is_some());
    let refused = mcp_read(&app, &crate::helpers::client_with_token(&token)).await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("made by someone else") && refused.get("result").is_none(), "{refused}");
    assert_eq!(seen(&app, &taken).await, Some((json!("alice"), 0)), "the call ran nowhere");
    let (_, pending) = root.get_json("/api/approvals?status=pending").await;
    assert_eq!(pending, json!([]));
}
