//! Each Countersign agent as an A2A agent (JSON-RPC binding), in A2A 0.3 and 1.x, each in its own
//! shapes (wire.rs): the agent card at `/a2a/{agent}/.well-known/agent-card.json` (card.rs), and
//! `POST /a2a/{agent}` for sending a message (also streamed), getting and canceling a task. A
//! message starts a turn in a conversation of the token's user (the A2A `contextId` is the
//! conversation, the task id the turn); a gated call makes the task input-required with the
//! approval request as a data part; a message on that task with a data part
//! `{ "decision_type": "approve" | "reject" | "batch", … }` (the shape kagent's approval UI sends)
//! decides it through the same decision as the API, and the task goes on. Decisions made in the
//! queue or the chat reach the A2A client the same way (get the task). See docs/a2a.md.

mod card;
mod wire;

use std::{collections::HashMap, time::Duration};

use axum::{
    Extension, Json, Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use domain::{ApprovalId, ConversationId, EventBody, TaskId, TaskStatus};
use engine::{
    clock::{now_ms, rfc3339},
    reads::TaskRow,
};
use serde_json::{Value, json};
use wire::{Method, TaskView, Version, code};

use crate::{
    EngineError,
    auth::{
        Credential, MaybeUser,
        scopes::{MAY_NOT_STOP, Scope, Scopes, may_stop},
    },
    orchestrator::{Actor, Decision},
    people::User,
    state::AppState,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/a2a/{agent}/.well-known/agent-card.json", get(card::card))
        // Where A2A 0.2 looked for it.
        .route("/a2a/{agent}/.well-known/agent.json", get(card::card))
        .route("/a2a/{agent}", post(rpc))
}

/// How long sending a message waits for the turn to settle (finish, or wait for a human) before
/// it answers with the task still working (the client then polls for the task).
const SETTLE: Duration = Duration::from_secs(25);

/// A JSON-RPC error for the response, with `data` when there is more to say than its message.
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: String) -> Self {
        Self { code, message, data: None }
    }
}

fn rpc_error(id: &Value, error: RpcError) -> Value {
    let mut body = json!({ "code": error.code, "message": error.message });
    if let Some(data) = error.data {
        body["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": body })
}

impl From<anyhow::Error> for RpcError {
    fn from(err: anyhow::Error) -> Self {
        tracing::error!(error = ?err, "A2A request failed");
        Self::new(code::INTERNAL, "the server could not complete the request".into())
    }
}

impl From<EngineError> for RpcError {
    fn from(err: EngineError) -> Self {
        match err {
            EngineError::Unknown(m) => Self::new(code::TASK_NOT_FOUND, m),
            EngineError::Internal(e) => e.into(),
            // The same per-user decision limit as the API's (counted by the engine).
            EngineError::Limited { .. } => Self::new(code::INVALID_REQUEST, "too many decisions in the last minute: wait a moment".into()),
            // Each field's problem, as the API's 422 lists them, so a client can fix what it sent.
            EngineError::Invalid { message, details } => Self {
                code: code::INVALID_PARAMS,
                message: super::with_details(&message, &details),
                data: Some(json!({ "details": details })),
            },
            other => Self::new(code::INVALID_PARAMS, other.to_string()),
        }
    }
}

async fn rpc(
    State(state): State<AppState>,
    Extension(viewer): Extension<MaybeUser>,
    scopes: Scopes,
    credential: Option<Extension<Credential>>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return Json(rpc_error(&Value::Null, RpcError::new(code::PARSE, "the body is not JSON".into()))).into_response();
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let (Some("2.0"), Some(name)) = (request["jsonrpc"].as_str(), request["method"].as_str()) else {
        return Json(rpc_error(&id, RpcError::new(code::INVALID_REQUEST, "expected a JSON-RPC 2.0 request with a method".into())))
            .into_response();
    };
    let Some(user) = viewer.0 else {
        let error = RpcError::new(code::INVALID_REQUEST, "send a Countersign API token as Authorization: Bearer <token>".into());
        return (StatusCode::UNAUTHORIZED, Json(rpc_error(&id, error))).into_response();
    };
    let header = headers.get("a2a-version").and_then(|v| v.to_str().ok());
    let (method, version) = match wire::method(name, header) {
        Ok(chosen) => chosen,
        Err((code, message)) => return Json(rpc_error(&id, RpcError::new(code, message))).into_response(),
    };
    if state.task_driver.agents().get(&agent).is_none() {
        return Json(rpc_error(&id, RpcError::new(code::INVALID_REQUEST, format!("no agent named {agent:?}")))).into_response();
    }
    let params = &request["params"];
    let credential = credential.map(|Extension(c)| c);
    let outcome = match method {
        Method::Stream => return stream_message(state, user, scopes, credential, agent, params.clone(), id, version).await,
        Method::Send => send_message(&state, &user, scopes, credential.as_ref(), &agent, params).await.map(|task| version.sent(&task)),
        Method::Get => get_task(&state, &user, params).await.map(|task| version.task(&task)),
        Method::Cancel => cancel(&state, &user, scopes, credential.as_ref(), params).await.map(|task| version.task(&task)),
        Method::Unsupported(code) => Err(RpcError::new(code, format!("{name} is not offered: poll the task instead"))),
    };
    Json(match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => rpc_error(&id, error),
    })
    .into_response()
}

fn actor(user: &User) -> Actor {
    super::actor(user, "A2A", "a2a")
}

/// The task if it exists and is in a conversation the user sees.
async fn visible_task(state: &AppState, user: &User, id: &str) -> Result<TaskRow, RpcError> {
    let not_found = || RpcError::new(code::TASK_NOT_FOUND, format!("task {id} does not exist"));
    let task = state.reads.task(&TaskId::from(id.to_owned())).await?.ok_or_else(not_found)?;
    let conversation = state.reads.conversation(&task.conversation_id).await?.ok_or_else(not_found)?;
    if !(user.is_admin() || conversation.owner_id.as_ref() == Some(&user.id)) {
        return Err(not_found());
    }
    Ok(task)
}

/// A streamed message: the same as sending it, answered as SSE — the task as it starts, then
/// when it settles (finished, or waiting for a person) the version's closing events
/// ([`Version::settled_stream`]). Errors before anything started are a single JSON-RPC error event.
#[allow(clippy::too_many_arguments)]
async fn stream_message(
    state: AppState,
    user: User,
    scopes: Scopes,
    credential: Option<Credential>,
    agent: String,
    params: Value,
    id: Value,
    version: Version,
) -> Response {
    use axum::response::sse::{Event, Sse};
    let frame = |result: Value| Event::default().data(json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string());
    let started = match begin(&state, &user, scopes, credential.as_ref(), &agent, &params).await {
        Ok(task) => task,
        Err(error) => {
            let event = Event::default().data(rpc_error(&id, error).to_string());
            return Sse::new(futures::stream::iter([Ok::<_, std::convert::Infallible>(event)])).into_response();
        }
    };
    let mut frames = Vec::new();
    let first = match state.reads.task(&started).await {
        Ok(Some(task)) => task_view(&state, &task).await.ok(),
        _ => None,
    };
    frames.extend(first.map(|task| frame(version.started_stream(&task))));
    let last = match settled(&state, &started).await {
        Ok(task) => task_view(&state, &task).await,
        Err(error) => Err(error),
    };
    match last {
        Ok(task) => frames.extend(version.settled_stream(&task).into_iter().map(frame)),
        Err(error) => frames.push(Event::default().data(rpc_error(&id, error).to_string())),
    }
    Sse::new(futures::stream::iter(frames.into_iter().map(Ok::<_, std::convert::Infallible>))).into_response()
}

async fn get_task(state: &AppState, user: &User, params: &Value) -> Result<TaskView, RpcError> {
    let id = params["id"].as_str().ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "params.id names the task".into()))?;
    let task = visible_task(state, user, id).await?;
    task_view(state, &task).await
}

/// A new turn, or a decision on the task the message names.
async fn send_message(
    state: &AppState,
    user: &User,
    scopes: Scopes,
    credential: Option<&Credential>,
    agent: &str,
    params: &Value,
) -> Result<TaskView, RpcError> {
    let task = begin(state, user, scopes, credential, agent, params).await?;
    let task = settled(state, &task).await?;
    task_view(state, &task).await
}

/// What a message does: starts a turn, or decides the task it names; the task.
async fn begin(
    state: &AppState,
    user: &User,
    scopes: Scopes,
    credential: Option<&Credential>,
    agent: &str,
    params: &Value,
) -> Result<TaskId, RpcError> {
    let message = &params["message"];
    let parts = wire::parts(message).ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "params.message.parts must be a list".into()))?;
    let decision = parts.data.iter().copied().find(|d| d.get("decision_type").is_some());
    let task = match (message["taskId"].as_str().filter(|t| !t.is_empty()), decision) {
        // A client that only calls (an autonomous agent's token) cannot countersign its own calls.
        (Some(_), Some(_)) if !scopes.allows(Scope::Decide) => {
            return Err(RpcError::new(
                code::INVALID_REQUEST,
                "this API token may only call: deciding needs a token with the decide scope (docs/security.md, \"Tokens\")".into(),
            ));
        }
        (Some(task_id), Some(decision)) => decide(state, user, task_id, decision).await?,
        (Some(task_id), None) => {
            let task = visible_task(state, user, task_id).await?;
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                match task.status() {
                    TaskStatus::InputRequired => {
                        "this task waits for a decision: send a data part {\"decision_type\": \"approve\" | \"reject\", \"reason\"?}".into()
                    }
                    other => format!("task {task_id} is {}; start a new task without taskId", other.as_str()),
                },
            ));
        }
        (None, Some(_)) => return Err(RpcError::new(code::INVALID_PARAMS, "a decision names the task it decides (message.taskId)".into())),
        (None, None) => {
            let context = message["contextId"].as_str().filter(|c| !c.is_empty());
            start(state, user, credential, agent, context, &parts.text.join("\n")).await?
        }
    };
    Ok(task)
}

async fn start(
    state: &AppState,
    user: &User,
    credential: Option<&Credential>,
    agent: &str,
    context: Option<&str>,
    text: &str,
) -> Result<TaskId, RpcError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(RpcError::new(code::INVALID_PARAMS, "the message needs a text part".into()));
    }
    // A contextId that is not the caller's own with this agent (someone else's, or none) starts a
    // new context, as an unknown one does: another person's conversation is never used.
    let existing = match context {
        Some(id) => state.reads.owned_conversation(&ConversationId::from(id.to_owned()), &user.id, Some(agent)).await?,
        None => None,
    };
    let key = credential.map(|Credential(key)| key.as_str());
    let conversation = match existing {
        Some(conversation) => conversation,
        None => {
            let title: String = text.chars().take(60).collect();
            state.conversations.create(&title, agent, user, key).await?
        }
    };
    match state.task_driver.start_turn(&conversation, text, key).await {
        Ok(task) => Ok(task),
        Err(EngineError::TurnUnfinished(open)) => {
            Err(RpcError::new(code::INVALID_PARAMS, format!("this context's task {open} has not finished")))
        }
        Err(e) => Err(e.into()),
    }
}

/// What a decision message asks: one decision (for every pending call of the task, or the one
/// `approval_id` names), or a batch deciding each call on its own.
enum ApprovalAnswer {
    One {
        approval: Option<ApprovalId>,
        decision: Decision,
    },
    /// By approval id or call id (kagent's UI keys a batch by the call's id).
    Batch(HashMap<String, Decision>),
}

/// The decision a data part carries: `{"decision_type": "approve", "args"?, "approval_id"?}`,
/// `{"decision_type": "reject" | "deny", "reason" | "rejection_reason"?}`, or
/// `{"decision_type": "batch", "decisions": {id: "approve" | "reject"}, "rejection_reasons"?: {id: reason}}`.
fn answer(data: &Value) -> Result<ApprovalAnswer, RpcError> {
    let invalid = |message: &str| RpcError::new(code::INVALID_PARAMS, message.to_owned());
    let text = |v: &Value| v.as_str().map(str::to_owned).filter(|r| !r.trim().is_empty());
    let reason = text(&data["reason"]).or_else(|| text(&data["rejection_reason"]));
    // An id that cannot name an approval is refused: left out, the decision would be every call's.
    let approval = match data.get("approval_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(ApprovalId::from(id.clone())),
        Some(_) => return Err(invalid("approval_id must be a string: the id of the approval the decision is for")),
    };
    // Edited arguments of any shape go to the decision, which checks them against the tool's
    // schema as the API does (not an object: refused); dropped, the call would run unedited.
    let args = data.get("args").filter(|a| !a.is_null()).cloned();
    match data["decision_type"].as_str() {
        Some("approve") => Ok(ApprovalAnswer::One { approval, decision: Decision::Approve { args, grant: None } }),
        Some("reject" | "deny") => Ok(ApprovalAnswer::One { approval, decision: Decision::Reject { reason } }),
        Some("batch") => {
            let decisions = data["decisions"].as_object().filter(|d| !d.is_empty());
            let decisions =
                decisions.ok_or_else(|| invalid("a batch decision needs decisions: {approval_id or call_id: \"approve\" | \"reject\"}"))?;
            let mut batch = HashMap::new();
            for (id, choice) in decisions {
                let decision = match choice.as_str() {
                    Some("approve") => Decision::Approve { args: None, grant: None },
                    Some("reject" | "deny") => Decision::Reject { reason: text(&data["rejection_reasons"][id]) },
                    _ => return Err(invalid(&format!("decisions.{id} must be \"approve\" or \"reject\""))),
                };
                batch.insert(id.clone(), decision);
            }
            Ok(ApprovalAnswer::Batch(batch))
        }
        _ => Err(invalid("decision_type must be \"approve\", \"reject\" or \"batch\"")),
    }
}

/// Decides the task's pending approvals as the message says.
async fn decide(state: &AppState, user: &User, task_id: &str, data: &Value) -> Result<TaskId, RpcError> {
    let task = visible_task(state, user, task_id).await?;
    let answer = answer(data)?;
    let actor = actor(user);
    match answer {
        ApprovalAnswer::One { approval: Some(approval), decision } => {
            let row = state.reads.approval(&approval).await?;
            if row.is_none_or(|a| a.task_id != task.id) {
                return Err(RpcError::new(code::INVALID_PARAMS, format!("approval {approval} is not one of task {task_id}'s")));
            }
            state.decisions.decide(&approval, decision, &actor).await?;
        }
        ApprovalAnswer::One { approval: None, decision } => {
            let pending = state.reads.pending_for_task(&task.id).await?;
            match (&decision, pending.as_slice()) {
                // Edited arguments belong to one call: decide that one.
                (Decision::Approve { args: Some(_), .. }, [only]) => {
                    state.decisions.decide(&only.id, decision, &actor).await?;
                }
                (Decision::Approve { args: Some(_), .. }, _) => {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        "several calls wait: name the one the edited args are for (approval_id)".into(),
                    ));
                }
                _ => {
                    state.decisions.decide_all(&task.id, decision, &actor).await?;
                }
            }
        }
        ApprovalAnswer::Batch(batch) => {
            // Each id names a pending call of this task, by approval id or call id; the engine then
            // decides all of them in one write, or none.
            let pending = state.reads.pending_for_task(&task.id).await?;
            let mut by_approval = HashMap::new();
            for (id, decision) in batch {
                let Some(approval) = pending.iter().find(|a| *a.id == id || *a.call_id == id) else {
                    return Err(RpcError::new(code::INVALID_PARAMS, format!("no pending call {id:?} in task {task_id}")));
                };
                by_approval.insert(approval.id.clone(), decision);
            }
            state.decisions.decide_each(&task.id, &actor, |a| by_approval.get(&a.id).cloned()).await?;
        }
    }
    Ok(task.id)
}

/// Stops the task, as the REST abort does and by the same rule: a token that may only call stops
/// only the tasks it started (`scopes::may_stop`).
async fn cancel(
    state: &AppState,
    user: &User,
    scopes: Scopes,
    credential: Option<&Credential>,
    params: &Value,
) -> Result<TaskView, RpcError> {
    let id = params["id"].as_str().ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "params.id names the task".into()))?;
    let task = visible_task(state, user, id).await?;
    if !may_stop(credential, scopes, &task) {
        return Err(RpcError::new(code::INVALID_REQUEST, MAY_NOT_STOP.into()));
    }
    if task.status().is_final() {
        return Err(RpcError::new(code::TASK_NOT_CANCELABLE, format!("task {id} is already {}", task.status().as_str())));
    }
    match state.decisions.abort(&task.id, &actor(user)).await {
        Ok(()) | Err(EngineError::WrongState(_)) => {}
        Err(other) => return Err(other.into()),
    }
    let task = state.reads.task(&task.id).await?.unwrap_or(task);
    task_view(state, &task).await
}

/// The task once it finished or waits for a person (or as it is after [`SETTLE`]).
async fn settled(state: &AppState, id: &TaskId) -> Result<TaskRow, RpcError> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let task = state.reads.task(id).await?.ok_or_else(|| RpcError::new(code::TASK_NOT_FOUND, format!("task {id} does not exist")))?;
        if task.status() != TaskStatus::Working || tokio::time::Instant::now() >= deadline {
            return Ok(task);
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// What the task shows a client: its state, while it waits the approval requests, once it ended
/// the agent's answer.
async fn task_view(state: &AppState, task: &TaskRow) -> Result<TaskView, RpcError> {
    let now = now_ms();
    let approvals = match task.status() {
        TaskStatus::InputRequired => state
            .reads
            .pending_for_task(&task.id)
            .await?
            .iter()
            .map(|a| {
                let needs = a.needs();
                let a = a.to_wire(now);
                json!({
                    "approval_id": a.id, "call_id": a.call_id, "tool": a.tool, "args": a.args, "summary": a.summary,
                    "risk": a.risk.as_str(), "deadline": a.deadline, "gate": a.gate, "needs": needs,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let answer = match task.status() {
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Canceled => answer_of(state, task).await?,
        _ => None,
    };
    Ok(TaskView {
        id: task.id.to_string(),
        context_id: task.conversation_id.to_string(),
        status: task.status(),
        timestamp: rfc3339(now),
        message_id: format!("{}-{now}", task.id),
        approvals,
        answer,
    })
}

/// The agent's last message in the task, if it wrote one.
async fn answer_of(state: &AppState, task: &TaskRow) -> anyhow::Result<Option<String>> {
    let events = state.reads.events_after(&task.conversation_id, 0).await?;
    Ok(events.into_iter().rev().find_map(|e| match e.body {
        EventBody::AssistantMessage { task_id, text, agent: None } if task_id == task.id => Some(text),
        _ => None,
    }))
}
