//! Each Countersign agent as an A2A agent (JSON-RPC binding, A2A 1.0 method names with the 0.3
//! ones as aliases): the agent card at `/a2a/{agent}/.well-known/agent-card.json`, and
//! `POST /a2a/{agent}` for `SendMessage`, `GetTask` and `CancelTask`. A message starts a turn in a
//! conversation of the token's user (the A2A `contextId` is the conversation, the task id the
//! turn); a gated call makes the task `TASK_STATE_INPUT_REQUIRED` with the approval request as a
//! data part; a message on that task with a data part `{ "decision_type": "approve" | "deny",
//! "reason"? }` (the shape ADK-based approval UIs send) decides it through the same decision as the API, and the task
//! goes on. Decisions made in the queue or the chat reach the A2A client the same way (`GetTask`).
//! See docs/a2a.md.

use std::time::Duration;

use axum::{
    Extension, Json, Router,
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use domain::{ApprovalId, ConversationId, EventBody, TaskId, TaskStatus, wire::Approval};
use serde_json::{Value, json};

use crate::{
    EngineError,
    auth::{
        Viewer,
        scopes::{Scope, Scopes},
    },
    orchestrator::{Actor, Decision},
    state::AppState,
    store::{
        approvals, conversations, events,
        tasks::{self, TaskRow},
        time::{now_ms, rfc3339},
        users::User,
    },
};

pub fn router() -> Router<AppState> {
    Router::new().route("/a2a/{agent}/.well-known/agent-card.json", get(card)).route("/a2a/{agent}", post(rpc))
}

/// How long `SendMessage` waits for the turn to settle (finish, or wait for a human) before it
/// answers with the task still working (the client then polls `GetTask`).
const SETTLE: Duration = Duration::from_secs(25);

/// JSON-RPC and A2A error codes.
mod code {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const UNSUPPORTED: i64 = -32004;
}

/// A JSON-RPC error for the response.
struct RpcError(i64, String);

fn rpc_error(id: &Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error.0, "message": error.1 } })
}

impl From<anyhow::Error> for RpcError {
    fn from(err: anyhow::Error) -> Self {
        tracing::error!(error = ?err, "A2A request failed");
        Self(code::INTERNAL, "the server could not complete the request".into())
    }
}

impl From<EngineError> for RpcError {
    fn from(err: EngineError) -> Self {
        match err {
            EngineError::Unknown(m) => Self(code::TASK_NOT_FOUND, m),
            EngineError::Internal(e) => e.into(),
            other => Self(code::INVALID_PARAMS, other.to_string()),
        }
    }
}

async fn card(State(state): State<AppState>, Path(agent): Path<String>) -> Response {
    let Some(agent) = state.orchestrator.agents().get(&agent) else {
        return (StatusCode::NOT_FOUND, Json(json!({ "error": { "code": "not_found", "message": format!("no agent named {agent:?}") } })))
            .into_response();
    };
    let description = if agent.description.is_empty() {
        "A Countersign agent: its risky calls wait for a person's approval".to_owned()
    } else {
        agent.description.clone()
    };
    Json(json!({
        "name": agent.name,
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{ "url": format!("{}/a2a/{}", state.base_url, agent.name), "protocolBinding": "JSONRPC", "protocolVersion": "1.0" }],
        "capabilities": { "streaming": true, "pushNotifications": false },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "chat",
            "name": agent.name,
            "description": format!("{description}. Send a text part; answer an approval request with a data part {{\"decision_type\": \"approve\" | \"deny\", \"reason\"?}}."),
            "tags": ["countersign", "human-in-the-loop"],
        }],
    }))
    .into_response()
}

async fn rpc(
    State(state): State<AppState>,
    Extension(viewer): Extension<Viewer>,
    scopes: Scopes,
    Path(agent): Path<String>,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return Json(rpc_error(&Value::Null, RpcError(code::PARSE, "the body is not JSON".into()))).into_response();
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let (Some("2.0"), Some(method)) = (request["jsonrpc"].as_str(), request["method"].as_str()) else {
        return Json(rpc_error(&id, RpcError(code::INVALID_REQUEST, "expected a JSON-RPC 2.0 request with a method".into())))
            .into_response();
    };
    let Some(user) = viewer.0 else {
        let error = RpcError(code::INVALID_REQUEST, "send a Countersign API token as Authorization: Bearer <token>".into());
        return (StatusCode::UNAUTHORIZED, Json(rpc_error(&id, error))).into_response();
    };
    if state.orchestrator.agents().get(&agent).is_none() {
        return Json(rpc_error(&id, RpcError(code::INVALID_REQUEST, format!("no agent named {agent:?}")))).into_response();
    }
    let params = &request["params"];
    if matches!(method, "SendStreamingMessage" | "message/stream") {
        return stream_message(state, user, scopes, agent, params.clone(), id).await;
    }
    let outcome = match method {
        "SendMessage" | "message/send" => send_message(&state, &user, scopes, &agent, params).await,
        "GetTask" | "tasks/get" => get_task(&state, &user, params).await,
        "CancelTask" | "tasks/cancel" => cancel(&state, &user, params).await,
        "SubscribeToTask" | "tasks/resubscribe" => Err(RpcError(code::UNSUPPORTED, format!("{method} is not offered: poll with GetTask"))),
        other => Err(RpcError(code::METHOD_NOT_FOUND, format!("no method {other:?}"))),
    };
    // GetTask and CancelTask answer the task itself; SendMessage a response holding it.
    let outcome = match method {
        "SendMessage" | "message/send" => outcome.map(|task| json!({ "task": task })),
        _ => outcome,
    };
    Json(match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => rpc_error(&id, error),
    })
    .into_response()
}

fn actor(user: &User) -> Actor {
    Actor {
        name: user.username.clone(),
        role: Some(user.role),
        ip: None,
        user_agent: Some("A2A".into()),
        on_behalf_of: None,
        via: Some("a2a".into()),
    }
}

/// The task if it exists and is in a conversation the user sees.
async fn visible_task(state: &AppState, user: &User, id: &str) -> Result<TaskRow, RpcError> {
    let not_found = || RpcError(code::TASK_NOT_FOUND, format!("task {id} does not exist"));
    let task = tasks::get(&state.store, &TaskId::from(id.to_owned())).await?.ok_or_else(not_found)?;
    let conversation = conversations::get(&state.store, &task.conversation_id).await?.ok_or_else(not_found)?;
    if !(user.is_admin() || conversation.owner_id.as_ref() == Some(&user.id)) {
        return Err(not_found());
    }
    Ok(task)
}

/// `SendStreamingMessage`: the same as `SendMessage`, answered as SSE — the task as it starts,
/// a status update when it settles (finished, or waiting for a person), and the task as it is
/// then. Errors before anything started are a single JSON-RPC error event.
async fn stream_message(state: AppState, user: User, scopes: Scopes, agent: String, params: Value, id: Value) -> Response {
    use axum::response::sse::{Event, Sse};
    let frame = |result: Value| Event::default().data(json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string());
    let started = match begin(&state, &user, scopes, &agent, &params).await {
        Ok(task) => task,
        Err(error) => {
            let event = Event::default().data(rpc_error(&id, error).to_string());
            return Sse::new(futures::stream::iter([Ok::<_, std::convert::Infallible>(event)])).into_response();
        }
    };
    let mut frames = Vec::new();
    let first = match tasks::get(&state.store, &started).await {
        Ok(Some(task)) => task_json(&state, &task).await.ok(),
        _ => None,
    };
    frames.extend(first.map(|task| frame(json!({ "task": task }))));
    let last = match settled(&state, &started).await {
        Ok(task) => task_json(&state, &task).await,
        Err(error) => Err(error),
    };
    match last {
        Ok(task) => {
            let update = json!({ "statusUpdate": { "taskId": task["id"], "contextId": task["contextId"], "status": task["status"] } });
            frames.push(frame(update));
            frames.push(frame(json!({ "task": task })));
        }
        Err(error) => frames.push(Event::default().data(rpc_error(&id, error).to_string())),
    }
    Sse::new(futures::stream::iter(frames.into_iter().map(Ok::<_, std::convert::Infallible>))).into_response()
}

async fn get_task(state: &AppState, user: &User, params: &Value) -> Result<Value, RpcError> {
    let id = params["id"].as_str().ok_or_else(|| RpcError(code::INVALID_PARAMS, "params.id names the task".into()))?;
    let task = visible_task(state, user, id).await?;
    task_json(state, &task).await
}

/// A new turn, or a decision on the task the message names.
async fn send_message(state: &AppState, user: &User, scopes: Scopes, agent: &str, params: &Value) -> Result<Value, RpcError> {
    let task = begin(state, user, scopes, agent, params).await?;
    let task = settled(state, &task).await?;
    task_json(state, &task).await
}

/// What a message does: starts a turn, or decides the task it names; the task.
async fn begin(state: &AppState, user: &User, scopes: Scopes, agent: &str, params: &Value) -> Result<TaskId, RpcError> {
    let message = &params["message"];
    let parts = message["parts"].as_array().ok_or_else(|| RpcError(code::INVALID_PARAMS, "params.message.parts must be a list".into()))?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    let decision = parts.iter().find_map(|p| p["data"].get("decision_type").map(|_| &p["data"]));
    let task = match (message["taskId"].as_str(), decision) {
        // A client that only calls (an autonomous agent's token) cannot countersign its own calls.
        (Some(_), Some(_)) if !scopes.allows(Scope::Decide) => {
            return Err(RpcError(
                code::INVALID_REQUEST,
                "this API token may only call: deciding needs a token with the decide scope (docs/security.md, \"Tokens\")".into(),
            ));
        }
        (Some(task_id), Some(decision)) => decide(state, user, task_id, decision).await?,
        (Some(task_id), None) => {
            let task = visible_task(state, user, task_id).await?;
            return Err(RpcError(
                code::INVALID_PARAMS,
                match task.status() {
                    TaskStatus::InputRequired => {
                        "this task waits for a decision: send a data part {\"decision_type\": \"approve\" | \"deny\", \"reason\"?}".into()
                    }
                    other => format!("task {task_id} is {}; start a new task without taskId", other.as_str()),
                },
            ));
        }
        (None, Some(_)) => return Err(RpcError(code::INVALID_PARAMS, "a decision names the task it decides (message.taskId)".into())),
        (None, None) => start(state, user, agent, message["contextId"].as_str(), &text.join("\n")).await?,
    };
    Ok(task)
}

async fn start(state: &AppState, user: &User, agent: &str, context: Option<&str>, text: &str) -> Result<TaskId, RpcError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(RpcError(code::INVALID_PARAMS, "the message needs a text part".into()));
    }
    let existing = match context {
        Some(id) => conversations::get(&state.store, &ConversationId::from(id.to_owned()))
            .await?
            .filter(|c| c.owner_id.as_ref() == Some(&user.id) && c.agent == agent),
        None => None,
    };
    let conversation = match existing {
        Some(conversation) => conversation,
        None => {
            let title: String = text.chars().take(60).collect();
            conversations::create(&state.store, &title, agent, user).await?
        }
    };
    match state.orchestrator.start_turn(&conversation, text).await {
        Ok(task) => Ok(task),
        Err(EngineError::TurnUnfinished(open)) => {
            Err(RpcError(code::INVALID_PARAMS, format!("this context's task {open} has not finished")))
        }
        Err(e) => Err(e.into()),
    }
}

/// Decides the task's pending approvals (or the one `approval_id` names) as the message says.
async fn decide(state: &AppState, user: &User, task_id: &str, data: &Value) -> Result<TaskId, RpcError> {
    let task = visible_task(state, user, task_id).await?;
    // The same per-user decision limit as the API's.
    if state.limits.decision(&state.store, &user.id).await.is_err() {
        return Err(RpcError(code::INVALID_REQUEST, "too many decisions in the last minute: wait a moment".into()));
    }
    let reason = data["reason"].as_str().map(str::to_owned).filter(|r| !r.trim().is_empty());
    let decision = match data["decision_type"].as_str() {
        Some("approve") => Decision::Approve { args: data.get("args").cloned().filter(|a| a.is_object()), grant: None },
        Some("deny" | "reject") => Decision::Reject { reason },
        _ => return Err(RpcError(code::INVALID_PARAMS, "decision_type must be \"approve\" or \"deny\"".into())),
    };
    let actor = actor(user);
    match data["approval_id"].as_str() {
        Some(approval) => {
            let approval = ApprovalId::from(approval.to_owned());
            let row = approvals::get(&state.store, &approval).await?;
            if row.is_none_or(|a| a.task_id != task.id) {
                return Err(RpcError(code::INVALID_PARAMS, format!("approval {approval} is not one of task {task_id}'s")));
            }
            state.orchestrator.decide(&approval, decision, &actor).await?;
        }
        None => {
            let pending = approvals::pending_for_task(&state.store, &task.id).await?;
            match (&decision, pending.as_slice()) {
                // Edited arguments belong to one call: decide that one.
                (Decision::Approve { args: Some(_), .. }, [only]) => {
                    state.orchestrator.decide(&only.id, decision, &actor).await?;
                }
                (Decision::Approve { args: Some(_), .. }, _) => {
                    return Err(RpcError(
                        code::INVALID_PARAMS,
                        "several calls wait: name the one the edited args are for (approval_id)".into(),
                    ));
                }
                _ => {
                    state.orchestrator.decide_all(&task.id, decision, &actor).await?;
                }
            }
        }
    }
    Ok(task.id)
}

async fn cancel(state: &AppState, user: &User, params: &Value) -> Result<Value, RpcError> {
    let id = params["id"].as_str().ok_or_else(|| RpcError(code::INVALID_PARAMS, "params.id names the task".into()))?;
    let task = visible_task(state, user, id).await?;
    if task.status().is_final() {
        return Err(RpcError(code::TASK_NOT_CANCELABLE, format!("task {id} is already {}", task.status().as_str())));
    }
    match state.orchestrator.abort(&task.id, &actor(user)).await {
        Ok(()) | Err(EngineError::WrongState(_)) => {}
        Err(other) => return Err(other.into()),
    }
    let task = tasks::get(&state.store, &task.id).await?.unwrap_or(task);
    task_json(state, &task).await
}

/// The task once it finished or waits for a person (or as it is after [`SETTLE`]).
async fn settled(state: &AppState, id: &TaskId) -> Result<TaskRow, RpcError> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let task =
            tasks::get(&state.store, id).await?.ok_or_else(|| RpcError(code::TASK_NOT_FOUND, format!("task {id} does not exist")))?;
        if task.status() != TaskStatus::Working || tokio::time::Instant::now() >= deadline {
            return Ok(task);
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// An A2A `Task` (protobuf JSON): its state, and while it waits the approval request as a data part.
async fn task_json(state: &AppState, task: &TaskRow) -> Result<Value, RpcError> {
    let (task_id, context_id) = (task.id.to_string(), task.conversation_id.to_string());
    let agent_message = |parts: Vec<Value>| json!({ "messageId": format!("{task_id}-{}", now_ms()), "role": "ROLE_AGENT", "taskId": task_id, "contextId": context_id, "parts": parts });
    let state_name = match task.status() {
        TaskStatus::Working => "TASK_STATE_WORKING",
        TaskStatus::InputRequired => "TASK_STATE_INPUT_REQUIRED",
        TaskStatus::Completed => "TASK_STATE_COMPLETED",
        TaskStatus::Failed => "TASK_STATE_FAILED",
        TaskStatus::Canceled => "TASK_STATE_CANCELED",
    };
    let mut value = json!({ "id": task_id, "contextId": context_id, "status": { "state": state_name, "timestamp": rfc3339(now_ms()) } });
    match task.status() {
        TaskStatus::InputRequired => {
            let pending = approvals::pending_for_task(&state.store, &task.id).await?;
            let now = now_ms();
            let requests: Vec<Approval> = pending.iter().map(|a| a.to_wire(now)).collect();
            let lines: Vec<String> =
                requests.iter().map(|a| format!("Approval needed: {} ({} risk)", a.summary, a.risk.as_str())).collect();
            let data = json!({
                "type": "approval_request",
                "approvals": requests.iter().map(|a| json!({
                    "approval_id": a.id, "tool": a.tool, "args": a.args, "summary": a.summary, "risk": a.risk.as_str(),
                    "deadline": a.deadline, "gate": a.gate,
                })).collect::<Vec<_>>(),
                "respond_with": { "decision_type": "approve | deny", "reason": "optional", "approval_id": "optional: one of them" },
            });
            value["status"]["message"] = agent_message(vec![json!({ "text": lines.join("\n") }), json!({ "data": data })]);
        }
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Canceled => {
            let answer = answer_of(state, task).await?;
            if let Some(text) = answer {
                value["status"]["message"] = agent_message(vec![json!({ "text": text })]);
                if task.status() == TaskStatus::Completed {
                    value["artifacts"] =
                        json!([{ "artifactId": format!("{task_id}-answer"), "name": "answer", "parts": [{ "text": text }] }]);
                }
            }
        }
        TaskStatus::Working => {}
    }
    Ok(value)
}

/// The agent's last message in the task, if it wrote one.
async fn answer_of(state: &AppState, task: &TaskRow) -> anyhow::Result<Option<String>> {
    let events = events::after(&state.store, &task.conversation_id, 0).await?;
    Ok(events.into_iter().rev().find_map(|e| match e.body {
        EventBody::AssistantMessage { task_id, text, agent: None } if task_id == task.id => Some(text),
        _ => None,
    }))
}
