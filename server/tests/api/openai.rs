//! The OpenAI-compatible provider against a local fake server speaking the real wire format.

use std::sync::{Arc, Mutex};

use axum::{Json, extract::State, http::StatusCode, response::IntoResponse, routing::post};
use domain::{CardStatus, TaskStatus};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::helpers::{Options, assistant_texts, spawn_app_with, start_model, take_events};

/// What the fake answers next: an error status, or an SSE stream of these chunks.
#[derive(Clone)]
pub enum Reply {
    Status(u16),
    Stream(Vec<Value>),
}

#[derive(Clone, Default)]
pub struct Fake {
    replies: Arc<Mutex<Vec<Reply>>>,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

async fn completions(State(fake): State<Fake>, Json(body): Json<Value>) -> axum::response::Response {
    fake.requests.lock().unwrap().push(body);
    let reply = {
        let mut replies = fake.replies.lock().unwrap();
        if replies.is_empty() { Reply::Status(500) } else { replies.remove(0) }
    };
    match reply {
        Reply::Status(code) => {
            (StatusCode::from_u16(code).unwrap(), Json(json!({ "error": { "message": "fake failure" } }))).into_response()
        }
        Reply::Stream(chunks) => {
            // Chunks come a little apart, as from a real model, so streaming is observable.
            let frames = chunks.into_iter().map(|c| format!("data: {c}\n\n")).chain(["data: [DONE]\n\n".to_owned()]);
            let body = futures::stream::iter(frames).then(|frame| async move {
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                Ok::<_, std::convert::Infallible>(frame)
            });
            ([("content-type", "text/event-stream")], axum::body::Body::from_stream(body)).into_response()
        }
    }
}

pub async fn start_fake(replies: Vec<Reply>) -> (String, Fake) {
    let fake = Fake { replies: Arc::new(Mutex::new(replies)), ..Default::default() };
    let url = start_model(post(completions).with_state(fake.clone())).await;
    (url, fake)
}

fn agents(base_url: &str, retries: u32) -> String {
    format!(
        "[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"process_refund\"]\nrequire_approval = [\"process_refund\"]\n\
         [agents.model]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"fake-1\"\nmax_retries = {retries}\ntimeout_secs = 5\n"
    )
}

pub fn chunk(delta: Value) -> Value {
    json!({ "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake-1", "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] })
}

pub fn text_stream(parts: &[&str]) -> Reply {
    Reply::Stream(parts.iter().map(|p| chunk(json!({ "content": p }))).collect())
}

#[tokio::test]
async fn a_streamed_tool_call_split_across_chunks_waits_for_approval_and_its_result_goes_back_to_the_model() {
    let first = Reply::Stream(vec![
        chunk(json!({ "role": "assistant", "content": "" })),
        chunk(
            json!({ "tool_calls": [{ "index": 0, "id": "call_abc", "type": "function", "function": { "name": "process_refund", "arguments": "" } }] }),
        ),
        chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"order_id\": 10" } }] })),
        chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "01, \"amount\": 12.5}" } }] })),
    ]);
    let (url, fake) = start_fake(vec![first, text_stream(&["Refund ", "done."])]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 0)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "please refund 12.50 on order 1001", 1).await;
    let call_id = approvals[0].call_id.clone();
    assert!(call_id.starts_with("call_") && call_id != "call_abc", "the call gets Countersign's own id, not the provider's: {call_id}");
    assert_eq!(approvals[0].args, json!({ "order_id": 1001, "amount": 12.5 }));

    let request = fake.requests.lock().unwrap()[0].clone();
    assert_eq!(request["model"], "fake-1");
    assert_eq!(request["stream"], true);
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(request["messages"][1], json!({ "role": "user", "content": "please refund 12.50 on order 1001" }));
    let tools: Vec<&str> = request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["get_order", "process_refund"]);

    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.refunded, 12.5);
    let second = fake.requests.lock().unwrap()[1].clone();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"][0]["id"], call_id.as_str(), "the model sees the call under Countersign's id");
    let tool_message = &messages[3];
    assert_eq!((tool_message["role"].as_str(), tool_message["tool_call_id"].as_str()), (Some("tool"), Some(call_id.as_str())));
    assert!(tool_message["content"].as_str().unwrap().contains("Refunded $12.50"), "{tool_message}");
    assert_eq!(assistant_texts(&app.detail(&c).await.events).last().unwrap(), "Refund done.");
}

#[tokio::test]
async fn a_5xx_then_a_429_are_retried_with_backoff() {
    let (url, fake) = start_fake(vec![Reply::Status(503), Reply::Status(429), text_stream(&["Hello!"])]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 3)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "hi").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(fake.requests.lock().unwrap().len(), 3);
    assert_eq!(assistant_texts(&app.detail(&c).await.events), ["Hello!"]);
}

#[tokio::test]
async fn an_unreachable_model_fails_the_turn_with_a_readable_message() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 1)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "hi").await;
    app.wait_task(&task, TaskStatus::Failed).await;
    let view = app.detail(&c).await.view;
    let message = view.current_task().unwrap().message.clone().unwrap();
    assert!(message.contains("cannot reach the model"), "{message}");
    // The conversation is usable again.
    assert!(view.cards().all(|c| c.status != CardStatus::PendingApproval));
}

#[tokio::test]
async fn a_tool_call_with_arguments_that_break_the_schema_is_reported_not_run() {
    let bad = Reply::Stream(vec![chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_x", "function": { "name": "get_order", "arguments": "{\"order_id\": \"abc\"}" } }] }),
    )]);
    let (url, _fake) = start_fake(vec![bad, text_stream(&["Sorry."])]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 0)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "look up order abc").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let view = app.detail(&c).await.view;
    let card = view.cards().find(|c| c.tool == "get_order").unwrap();
    assert_eq!(card.status, CardStatus::Failed);
    assert_eq!(card.result.as_ref().unwrap()["error"], "invalid arguments");
}

#[tokio::test]
async fn reply_text_streams_live_as_unstored_deltas_before_the_stored_message() {
    let (url, _fake) = start_fake(vec![text_stream(&["Hel", "lo ", "there!"])]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 0)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let stream = app.sse(&format!("/api/conversations/{c}/events"), None).await;
    app.say(&c, "hi").await;
    // user-message, task-status, three deltas, assistant-message, task-status.
    let events = take_events(stream, 7).await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        ["user-message", "task-status", "assistant-delta", "assistant-delta", "assistant-delta", "assistant-message", "task-status"]
    );
    let deltas: Vec<Value> = events[2..5].iter().map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    // Deltas carry no id: the client's last event id stays that of the last stored event.
    assert!(events[2..5].iter().all(|e| e.id == events[1].id), "deltas never move the resume point");
    let offsets: Vec<u64> = deltas.iter().map(|d| d["offset"].as_u64().unwrap()).collect();
    assert_eq!(offsets, [0, 3, 6]);
    assert!(deltas.iter().all(|d| d["after_seq"] == 2));
    let text: String = deltas.iter().map(|d| d["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Hello there!");
    // Nothing of the deltas is stored: the log has the message once.
    let detail = app.detail(&c).await;
    assert_eq!(assistant_texts(&detail.events), ["Hello there!"]);
    assert_eq!(detail.events.len(), 4);
}

/// Some local servers number tool calls per response (`call_1` in every reply). Each call still
/// gets its own record, and the second turn works like the first.
#[tokio::test]
async fn a_provider_that_reuses_a_tool_call_id_across_turns_gets_a_separate_call_each_time() {
    let refund = |order: u32| {
        Reply::Stream(vec![chunk(json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
            "function": { "name": "get_order", "arguments": format!("{{\"order_id\": {order}}}") } }] }))])
    };
    let (url, fake) = start_fake(vec![refund(1001), text_stream(&["First done."]), refund(1002), text_stream(&["Second done."])]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 0)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let first = app.say(&c, "look up order 1001").await;
    app.wait_task(&first, TaskStatus::Completed).await;
    let second = app.say(&c, "look up order 1002").await;
    app.wait_task(&second, TaskStatus::Completed).await;

    let view = app.detail(&c).await.view;
    let cards: Vec<_> = view.cards().collect();
    assert_eq!(cards.len(), 2, "one card per call");
    assert_ne!(cards[0].call_id, cards[1].call_id);
    assert!(cards.iter().all(|c| c.status == CardStatus::Succeeded));
    assert_eq!(assistant_texts(&app.detail(&c).await.events), ["First done.", "Second done."]);
    // In the last request the model sees both calls, each under its own id.
    let last = fake.requests.lock().unwrap().last().cloned().unwrap();
    let ids: Vec<&str> = last["messages"].as_array().unwrap().iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
}

/// A call the user did not ask for is flagged on the card before anyone decides.
#[tokio::test]
async fn a_call_the_request_did_not_ask_for_is_flagged_on_the_card() {
    let refund = Reply::Stream(vec![chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "function": { "name": "process_refund", "arguments": "{\"order_id\": 1001}" } }] }),
    )]);
    let (url, _fake) = start_fake(vec![refund]).await;
    let app = spawn_app_with(Options { agents_toml: Some(agents(&url, 0)), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    app.pending_turn(&c, "look up order 1001", 1).await;
    let card = app.detail(&c).await.view.cards().next().cloned().unwrap();
    assert_eq!(card.warnings, ["Not asked for: the request “look up order 1001” does not mention a refund"]);
}

#[tokio::test]
async fn the_providers_usage_and_log_probabilities_become_the_steps_usage_and_the_calls_confidence() {
    let lp = 0.5f64.ln();
    let reply = Reply::Stream(vec![
        chunk(
            json!({ "tool_calls": [{ "index": 0, "id": "c1", "type": "function", "function": { "name": "get_order", "arguments": "{\"order_id\": 1001}" } }] }),
        ),
        json!({ "choices": [{ "index": 0, "delta": {}, "logprobs": { "content": [{ "token": "x", "logprob": lp }] } }] }),
        json!({ "choices": [], "usage": { "prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333 } }),
    ]);
    let (url, fake) = start_fake(vec![reply, text_stream(&["Found it."])]).await;
    let toml = format!(
        "[prices]\nfake-1 = {{ input_per_million = 1.0, output_per_million = 4.0 }}\n{}\
         [[agents.gates]]\nname = \"unsure\"\nkind = \"confidence\"\nconfidence_threshold = 0.8\n",
        agents(&url, 0)
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), configured_models: true, ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "look up order 1001", 1).await;
    assert_eq!(approvals[0].assessment.confidence, Some(0.5), "exp(mean log-probability)");
    let request = fake.requests.lock().unwrap()[0].clone();
    assert_eq!((request["logprobs"].as_bool(), request["stream_options"]["include_usage"].as_bool()), (Some(true), Some(true)));
    let events = app.detail(&c).await.events;
    let usage = events.iter().find_map(|e| match &e.body {
        domain::EventBody::ModelUsage { model, usage, .. } => Some((model.clone(), *usage)),
        _ => None,
    });
    let (model, usage) = usage.expect("a model-usage event");
    assert_eq!((model.as_str(), usage.input_tokens, usage.output_tokens), ("fake-1", 321, 12));
    assert!((usage.cost_usd.unwrap() - (321.0 + 48.0) / 1e6).abs() < 1e-12, "{usage:?}");
}
