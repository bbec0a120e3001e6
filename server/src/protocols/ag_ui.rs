//! Each Countersign agent over AG-UI (`POST /ag-ui/{agent}`, a run's events as SSE): the run
//! streams `RUN_STARTED`, the agent's `TEXT_MESSAGE_*` and `TOOL_CALL_*` events, and `RUN_FINISHED`;
//! a gated call ends the run with the interrupt outcome (one interrupt per pending approval: its
//! id is the approval's, `toolCallId` the call's, a `responseSchema` for approve / reject / edit,
//! `expiresAt` its deadline). The next run's `resume` entries decide them through the same
//! decision as the API (approve with edited `args`, reject with a `reason`, mixed in one resume);
//! an unknown, decided or expired interrupt is a `RUN_ERROR` and decides nothing, and so is a
//! rejection (`cancelled` too) without a reason when the gate requires one, and an edit that is
//! not an object or breaks the tool's schema (the message names each field). The AG-UI
//! thread is the Countersign conversation. A run on a thread that has a past starts with
//! `MESSAGES_SNAPSHOT` (the thread so far, the run's new message included, the user's messages
//! under the ids the client gave them) and `STATE_SNAPSHOT` (its open interrupts), so a front end
//! that reloaded gets the thread back; such a run with nothing new to say ends with the open
//! interrupts as its outcome, where the client keeps them. See docs/ag-ui.md.

use std::{convert::Infallible, time::Duration};

use axum::{
    Extension, Router,
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Response, Sse, sse::Event},
    routing::post,
};
use domain::{ApprovalId, ConversationId, EventBody, TaskId, TaskStatus, wire::Conversation};
use engine::{
    clock::{now_ms, rfc3339},
    reads::{ApprovalRow, TaskRow},
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{
    EngineError,
    auth::{
        Credential, MaybeUser,
        scopes::{Scope, Scopes},
    },
    channels::neutral,
    error::ApiError,
    orchestrator::{Actor, Decision, IdFrom},
    people::User,
    state::AppState,
};

pub fn router() -> Router<AppState> {
    Router::new().route("/ag-ui/{agent}", post(run))
}

/// How long a run waits for its turn to finish or to need a person before it gives up.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// A run that cannot go on: a `RUN_ERROR` with a code.
struct RunError(&'static str, String);

impl From<anyhow::Error> for RunError {
    fn from(err: anyhow::Error) -> Self {
        tracing::error!(error = ?err, "AG-UI run failed");
        Self("INTERNAL", "the server could not complete the run".into())
    }
}

fn actor(user: &User) -> Actor {
    super::actor(user, "AG-UI", "ag-ui")
}

/// What a resume entry's `payload` may say (the interrupt's `responseSchema`).
fn response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": { "type": "boolean", "description": "true runs the call, false rejects it" },
            "args": { "type": "object", "description": "with approved: run the call with these arguments instead" },
            "reason": { "type": "string", "description": "with a rejection: why (the agent is told)" },
        },
        "required": ["approved"],
    })
}

fn bad_request(message: &str) -> Response {
    ApiError::BadRequest(message.to_owned()).into_response()
}

async fn run(
    State(state): State<AppState>,
    Extension(viewer): Extension<MaybeUser>,
    scopes: Scopes,
    credential: Option<Extension<Credential>>,
    Path(agent): Path<String>,
    body: Bytes,
) -> Response {
    let may_decide = scopes.allows(Scope::Decide);
    let Some(user) = viewer.0 else {
        let message = "send a Countersign API token as Authorization: Bearer <token>";
        return ApiError::Unauthorized(message.to_owned()).into_response();
    };
    if state.task_driver.agents().get(&agent).is_none() {
        return ApiError::NotFound(format!("no agent named {agent:?}")).into_response();
    }
    let Ok(input) = serde_json::from_slice::<Value>(&body) else { return bad_request("the body is not a JSON RunAgentInput") };
    let (Some(thread), Some(run_id)) = (input["threadId"].as_str(), input["runId"].as_str()) else {
        return bad_request("a RunAgentInput names its threadId and runId");
    };
    let valid_id = |id: &str| !id.is_empty() && id.len() <= 100 && id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !valid_id(thread) {
        return bad_request("threadId must be 1 to 100 letters, digits, - _ or .");
    }
    let (thread, run_id) = (thread.to_owned(), run_id.to_owned());
    let (tx, rx) = mpsc::channel::<Value>(64);
    tokio::spawn(async move {
        let _ = tx.send(json!({ "type": "RUN_STARTED", "threadId": thread, "runId": run_id })).await;
        let key = credential.as_ref().map(|Extension(Credential(key))| key.as_str());
        let last = match drive(&state, &user, may_decide, key, &agent, &thread, &input, &tx).await {
            Ok(outcome) => json!({ "type": "RUN_FINISHED", "threadId": thread, "runId": run_id, "outcome": outcome }),
            Err(RunError(code, message)) => json!({ "type": "RUN_ERROR", "code": code, "message": message }),
        };
        let _ = tx.send(last).await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((Ok::<_, Infallible>(Event::default().data(event.to_string())), rx))
    });
    Sse::new(stream).into_response()
}

/// Starts or resumes the thread's turn, streams its events, and says how the run ended.
/// `key`: the credential that asks, kept with a thread it makes (`opened_by`) and with a turn it
/// starts (`started_by`: who may stop it, `scopes::may_stop`).
#[allow(clippy::too_many_arguments)]
async fn drive(
    state: &AppState,
    user: &User,
    may_decide: bool,
    key: Option<&str>,
    agent: &str,
    thread: &str,
    input: &Value,
    tx: &mpsc::Sender<Value>,
) -> Result<Value, RunError> {
    let id = ConversationId::from(thread.to_owned());
    // Someone else's thread, and one of the MCP gateway's ids (which no client may choose), get
    // the same answer, and nothing is written.
    let from = IdFrom::Client;
    let Some(conversation) = state.conversations.open_or_create(&id, from, &title_of(input), agent, user, key).await? else {
        return Err(RunError("THREAD_NOT_FOUND", format!("thread {thread} is not one of yours with agent {agent}")));
    };
    let since = conversation.last_seq;
    let resume = input["resume"].as_array().filter(|r| !r.is_empty());
    let text = if resume.is_none() { last_user_text(input) } else { None };
    let Some(text) = text else {
        send_snapshots(state, &conversation.id, since, since, tx).await?;
        return match resume {
            // A client that only calls (an autonomous agent's token) cannot countersign its own calls.
            Some(_) if !may_decide => Err(RunError(
                "FORBIDDEN",
                "this API token may only call: answering interrupts needs a token with the decide scope (docs/security.md, \"Tokens\")"
                    .into(),
            )),
            Some(entries) => {
                let task = resume_with(state, user, &conversation.id, entries).await?;
                stream_until_settled(state, &conversation.id, &task, since, tx).await
            }
            None => reloaded(state, &conversation.id).await,
        };
    };
    // The new message is stored before the snapshot is taken, so the snapshot has it, under the
    // client's id, before any reply: `@ag-ui/client` keeps only the messages a snapshot names.
    let started = start(state, &conversation, input, &text, key).await;
    let until = match &started {
        Ok(task) => message_seq(state, &conversation.id, task).await?.unwrap_or(since),
        Err(_) => since,
    };
    send_snapshots(state, &conversation.id, since, until, tx).await?;
    stream_until_settled(state, &conversation.id, &started?, until, tx).await
}

/// A run with nothing new to say, from a client that reloaded. `@ag-ui/client` keeps open
/// interrupts (`agent.pendingInterrupts`) only from a `RUN_FINISHED` whose outcome is
/// `interrupt`, never from state: the thread's are said that way (docs/ag-ui.md).
async fn reloaded(state: &AppState, conversation: &ConversationId) -> Result<Value, RunError> {
    if let Some(waiting) = state.reads.pending_in(conversation).await?.first() {
        return Ok(json!({ "type": "interrupt", "interrupts": interrupts(state, &waiting.task_id).await? }));
    }
    Err(RunError("NO_INPUT", "the run has no user message to answer".into()))
}

/// Starts the turn the run's new message asks for, the message stored under the client's id.
async fn start(state: &AppState, conversation: &Conversation, input: &Value, text: &str, key: Option<&str>) -> Result<TaskId, RunError> {
    let client_id = last_user_message(input).and_then(client_message_id);
    match state.task_driver.start_turn_with_message_id(conversation, text, client_id, key).await {
        Ok(task) => Ok(task),
        Err(EngineError::TurnUnfinished(_)) => {
            Err(RunError("INTERRUPTED", "the thread waits for its interrupts: answer them with resume".into()))
        }
        Err(e) => Err(anyhow::Error::from(e).into()),
    }
}

/// Where the task's user message was stored: the run's snapshot ends there, its events follow.
async fn message_seq(state: &AppState, conversation: &ConversationId, task: &TaskId) -> anyhow::Result<Option<i64>> {
    let stored = state.reads.events_of_task(conversation, task).await?;
    Ok(stored.iter().find(|e| matches!(e.body, EventBody::UserMessage { .. })).map(|e| e.seq))
}

/// The thread up to `until` as snapshots, when it had a past before the run (`since`): the
/// client of a new thread has all of it already.
async fn send_snapshots(
    state: &AppState,
    conversation: &ConversationId,
    since: i64,
    until: i64,
    tx: &mpsc::Sender<Value>,
) -> Result<(), RunError> {
    if since == 0 {
        return Ok(());
    }
    for snapshot in snapshots(state, conversation, until).await? {
        if tx.send(snapshot).await.is_err() {
            return Err(RunError("CLIENT_GONE", "the client disconnected".into()));
        }
    }
    Ok(())
}

fn title_of(input: &Value) -> String {
    let text = last_user_text(input).unwrap_or_else(|| domain::naming::DEFAULT_TITLE.into());
    text.chars().take(60).collect()
}

/// The run's last user message.
fn last_user_message(input: &Value) -> Option<&Value> {
    input["messages"].as_array()?.iter().rev().find(|m| m["role"] == "user")
}

/// The id the client gave its message, kept when it is one a client could send back as it is:
/// 1 to 200 characters, none of them a control character.
fn client_message_id(message: &Value) -> Option<String> {
    let id = message["id"].as_str()?;
    (!id.is_empty() && id.chars().count() <= 200 && !id.chars().any(char::is_control)).then(|| id.to_owned())
}

/// The text of the last user message (content as a string, or its text parts).
fn last_user_text(input: &Value) -> Option<String> {
    let message = last_user_message(input)?;
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => return None,
    };
    Some(text).filter(|t| !t.trim().is_empty())
}

/// Checks every resume entry against the thread's open interrupts before deciding any, then
/// decides them all; the task they belong to.
async fn resume_with(state: &AppState, user: &User, conversation: &ConversationId, entries: &[Value]) -> Result<TaskId, RunError> {
    let actor = actor(user);
    let mut decisions: Vec<(ApprovalRow, Decision)> = Vec::new();
    for entry in entries {
        let id =
            entry["interruptId"].as_str().ok_or_else(|| RunError("INVALID_RESUME", "each resume entry names its interruptId".into()))?;
        let approval = state
            .reads
            .approval(&ApprovalId::from(id.to_owned()))
            .await?
            .filter(|a| &a.conversation_id == conversation)
            .ok_or_else(|| RunError("UNKNOWN_INTERRUPT", format!("interrupt {id} is not one of this thread's")))?;
        if approval.state != domain::ApprovalState::Pending {
            return Err(RunError(
                "INTERRUPT_RESOLVED",
                format!("interrupt {id} was already {} by {}", approval.state, approval.decided_by.as_deref().unwrap_or("someone")),
            ));
        }
        if approval.deadline <= now_ms() {
            return Err(RunError("INTERRUPT_EXPIRED", format!("interrupt {id} expired at {}", rfc3339(approval.deadline))));
        }
        let payload = &entry["payload"];
        let reason = payload["reason"].as_str().filter(|r| !r.trim().is_empty()).map(str::to_owned);
        let decision = match (entry["status"].as_str(), payload["approved"].as_bool()) {
            // Edited arguments of any shape go to the checks below (not an object: refused, as
            // the API refuses them); dropped, the call would run unedited.
            (Some("resolved"), Some(true)) => {
                Decision::Approve { args: payload.get("args").filter(|a| !a.is_null()).cloned(), grant: None }
            }
            // A gate that requires a reason gets the client's, never one written for it.
            (Some("resolved"), Some(false)) | (Some("cancelled"), _) if approval.rules().check_rejection(reason.as_deref()).is_err() => {
                return Err(RunError(
                    "INVALID_RESUME",
                    format!(
                        "interrupt {id}: its gate requires a reason to reject it: resolve it with {{\"approved\": false, \"reason\": \"…\"}}"
                    ),
                ));
            }
            (Some("resolved"), Some(false)) => Decision::Reject { reason },
            (Some("cancelled"), _) => Decision::Reject { reason: reason.or_else(|| Some("the client cancelled the interrupt".into())) },
            _ => {
                return Err(RunError(
                    "INVALID_RESUME",
                    format!("interrupt {id}: status \"resolved\" with payload {{\"approved\": true | false}}, or \"cancelled\""),
                ));
            }
        };
        if decisions.iter().any(|(a, _)| a.id == approval.id) {
            return Err(RunError("INVALID_RESUME", format!("interrupt {id} is answered twice")));
        }
        // Whether this person may decide it, and so, before anything is decided.
        state.decisions.may_decide_now(&approval.id, &actor).await.map_err(|e| RunError("FORBIDDEN", e.to_string()))?;
        let rules = approval.rules();
        let breach = match &decision {
            Decision::Approve { args, .. } => {
                // The edit read as the decision will read it (`1001.0` is `1001`, no edit).
                let args = args.clone().map(|a| state.task_driver.tools().exact_args(&approval.tool, a));
                rules
                    .check_approver(&actor.name, approval.owner.as_deref())
                    .err()
                    .or_else(|| rules.check_approval(&approval.args(), args.as_ref()).err().map(|b| b.message.to_owned()))
                    .or_else(|| schema_refusal(state, &approval, args.as_ref()))
            }
            Decision::Reject { reason } => rules.check_rejection(reason.as_deref()).err().map(|b| b.message.to_owned()),
            Decision::Defer { .. } => None,
        };
        if let Some(why) = breach {
            return Err(RunError("DECISION_REFUSED", format!("interrupt {id}: {why}")));
        }
        decisions.push((approval, decision));
    }
    let task = decisions[0].0.task_id.clone();
    let open: Vec<ApprovalId> = state.reads.pending_for_task(&task).await?.into_iter().map(|a| a.id).collect();
    if let Some(missing) = open.iter().find(|id| !decisions.iter().any(|(a, _)| &&a.id == id)) {
        return Err(RunError("INVALID_RESUME", format!("the resume leaves interrupt {missing} unanswered: answer every open interrupt")));
    }
    // One resume is one attempt against the per-user decision limit (the API's), however many
    // interrupts it answers: over it, none is decided.
    let decisions = decisions.into_iter().map(|(approval, decision)| (approval.id, decision)).collect();
    state.decisions.decide_several(decisions, &actor).await.map_err(|e| match e {
        EngineError::Limited { .. } => RunError("TOO_MANY_DECISIONS", "too many decisions in the last minute: wait a moment".into()),
        e => RunError("DECISION_REFUSED", super::said(&e)),
    })?;
    Ok(task)
}

/// Why an edit breaks the tool's schema, each field named (`/order_id: must be an integer`):
/// checked with the rest, so that one bad edit in a resume decides none of its interrupts.
fn schema_refusal(state: &AppState, approval: &ApprovalRow, args: Option<&Value>) -> Option<String> {
    // Unchanged arguments are the call as proposed, which the decision does not check again.
    let edited = args.filter(|a| **a != approval.args())?;
    state.decisions.checked_args(approval, edited.clone()).err().map(|e| super::said(&e))
}

/// Sends the task's events as they are stored, until it finished or waits for a person.
async fn stream_until_settled(
    state: &AppState,
    conversation: &ConversationId,
    task: &TaskId,
    mut since: i64,
    tx: &mpsc::Sender<Value>,
) -> Result<Value, RunError> {
    let deadline = tokio::time::Instant::now() + RUN_LIMIT;
    loop {
        let row: TaskRow = state.reads.task(task).await?.ok_or_else(|| RunError("INTERNAL", "the task vanished".into()))?;
        for event in state.reads.events_after(conversation, since).await? {
            since = event.seq;
            if event.body.task_id() != task {
                continue;
            }
            for out in ag_ui_events(&event.body) {
                if tx.send(out).await.is_err() {
                    // The client went away: the turn goes on, and its outcome stays in Countersign.
                    return Err(RunError("CLIENT_GONE", "the client disconnected".into()));
                }
            }
        }
        let settled = row.status() != TaskStatus::Working;
        if settled {
            return match row.status() {
                TaskStatus::InputRequired => Ok(json!({ "type": "interrupt", "interrupts": interrupts(state, task).await? })),
                TaskStatus::Completed => Ok(json!({ "type": "success" })),
                TaskStatus::Canceled => Ok(json!({ "type": "cancelled" })),
                _ => Err(RunError("TURN_FAILED", "the agent's turn failed (its chat in Countersign says why)".into())),
            };
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(RunError("TIMEOUT", "the turn is still working; run again later to see it".into()));
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// The pending approvals of the task, as interrupts.
async fn interrupts(state: &AppState, task: &TaskId) -> anyhow::Result<Vec<Value>> {
    Ok(state
        .reads
        .pending_for_task(task)
        .await?
        .into_iter()
        .map(|a| {
            let needs = a.needs();
            let needs_text = needs.as_deref().map(|n| format!(". {n}")).unwrap_or_default();
            json!({
                "id": a.id,
                "reason": "tool_approval",
                // Read by a person in the client: the requester's text made inert, and the whole
                // requirement when deciding it takes more than anyone who sees it.
                "message": format!("Approve {}? {} ({} risk){needs_text}", a.tool, neutral::line(&a.summary), a.risk.as_str()),
                "toolCallId": a.call_id,
                "responseSchema": response_schema(),
                "expiresAt": rfc3339(a.deadline),
                "metadata": { "tool": a.tool, "args": a.args(), "risk": a.risk.as_str(), "gate": a.gate, "needs": needs },
            })
        })
        .collect())
}

/// The thread up to `until` as AG-UI messages (ids as the live events name them, and a user's
/// message by the id its client gave it, so a client that has them merges rather than repeats),
/// and its open interrupts as state.
async fn snapshots(state: &AppState, conversation: &ConversationId, until: i64) -> anyhow::Result<[Value; 2]> {
    let history = state.reads.events_about_after(conversation, 0, until).await?;
    let messages: Vec<Value> = history.iter().filter(|e| e.seq <= until).filter_map(|e| message_of(e.seq, &e.body)).collect();
    let open: Vec<Value> = state
        .reads
        .pending_in(conversation)
        .await?
        .into_iter()
        .map(|a| {
            json!({ "id": a.id, "tool": a.tool, "summary": neutral::line(&a.summary), "risk": a.risk.as_str(), "expiresAt": rfc3339(a.deadline), "needs": a.needs() })
        })
        .collect();
    Ok([
        json!({ "type": "MESSAGES_SNAPSHOT", "messages": messages }),
        json!({ "type": "STATE_SNAPSHOT", "snapshot": { "conversationId": conversation, "pendingApprovals": open } }),
    ])
}

/// One stored event as an AG-UI message, if it is one.
fn message_of(seq: i64, body: &EventBody) -> Option<Value> {
    Some(match body {
        EventBody::UserMessage { text, client_id, .. } => {
            let id = client_id.clone().unwrap_or_else(|| format!("user-{seq}"));
            json!({ "id": id, "role": "user", "content": text })
        }
        EventBody::AssistantMessage { text, agent: None, task_id } if !text.is_empty() => {
            json!({ "id": format!("msg-{task_id}-{}", text.len()), "role": "assistant", "content": text })
        }
        EventBody::ToolCall { call_id, tool, args, .. } => json!({
            "id": call_id, "role": "assistant",
            "toolCalls": [{ "id": call_id, "type": "function", "function": { "name": tool, "arguments": args.to_string() } }],
        }),
        EventBody::ToolResult { call_id, output, .. } => {
            json!({ "id": format!("result-{call_id}"), "role": "tool", "toolCallId": call_id, "content": output.to_string() })
        }
        _ => return None,
    })
}

/// The AG-UI events for one stored event of the task (none for what the client already has).
fn ag_ui_events(body: &EventBody) -> Vec<Value> {
    match body {
        EventBody::AssistantMessage { text, agent: None, task_id } if !text.is_empty() => {
            let id = format!("msg-{task_id}-{}", text.len());
            vec![
                json!({ "type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant" }),
                json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text }),
                json!({ "type": "TEXT_MESSAGE_END", "messageId": id }),
            ]
        }
        EventBody::ToolCall { call_id, tool, args, .. } => vec![
            json!({ "type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": tool }),
            json!({ "type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": args.to_string() }),
            json!({ "type": "TOOL_CALL_END", "toolCallId": call_id }),
        ],
        EventBody::ToolResult { call_id, output, .. } => {
            vec![
                json!({ "type": "TOOL_CALL_RESULT", "messageId": format!("result-{call_id}"), "toolCallId": call_id, "content": output.to_string(), "role": "tool" }),
            ]
        }
        _ => Vec::new(),
    }
}
