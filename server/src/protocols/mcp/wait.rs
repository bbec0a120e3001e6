//! A gated call's wait, while the client's request stays open: progress notifications every few
//! seconds (clients that reset their timeout on progress then wait as long as the decision
//! takes), a heartbeat row so another replica knows the client still waits, and the call's
//! outcome as MCP's tool result. A request that ends before the outcome stops the call for good
//! (`client_stopped`), so an approval made later does not run the call for no one.

use std::{sync::Arc, time::Duration};

use domain::{ApprovalId, ConversationId, EventBody, TaskId, TaskStatus};
use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
    service::RequestContext,
};
use serde_json::{Value, json};

use super::internal;
use crate::{orchestrator::Actor, state::AppState};

/// How often a waiting call tells its client it still waits.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);
/// How long a call stopped mid-run (its task canceled while the tool ran) may take to record its
/// result before the client is told its effect is unknown.
const RESULT_GRACE: Duration = Duration::from_secs(30);
/// How often it tells the database its client still waits (well within `CLIENT_SILENCE_MS`).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);
/// How often a waiting call looks at its task when no event of its conversation woke it (events
/// from every replica reach the bus; this covers a stream that lagged or a missed notification).
const POLL: Duration = Duration::from_secs(1);

/// How a wait ended.
pub enum Waited {
    /// The task ended: its outcome is the answer.
    Settled,
    /// The call waits for a person who may decide it, and the client may ask them
    /// (`asking`): the approval to ask about.
    Ask(ApprovalId),
}

/// Waits for `task`'s outcome. With `asking`, a call that comes to wait for a decision `asking`
/// may make ends the wait with [`Waited::Ask`] instead (the client then asks its user).
pub async fn wait(
    state: &AppState,
    context: &RequestContext<RoleServer>,
    task: &TaskId,
    conversation: &ConversationId,
    credential: &str,
    progress: Option<ProgressToken>,
    asking: Option<&Actor>,
) -> Result<Waited, McpError> {
    // Subscribed before the first look, so no change of the task (and no revocation of the
    // token that asked) is missed.
    let mut changes = state.reads.bus().subscribe();
    let mut revocations = state.reads.bus().subscribe_revoked();
    let mut waiting = Waiting { state: state.clone(), task: task.clone(), done: false };
    let started = tokio::time::Instant::now();
    let (mut next_progress, mut next_heartbeat) = (started + PROGRESS_EVERY, started + HEARTBEAT_EVERY);
    let (mut ended_at, mut asked) = (None, asking.is_none());
    loop {
        let row = state.reads.task(task).await.map_err(internal)?.ok_or_else(|| internal(anyhow::anyhow!("task gone")))?;
        if row.status().is_final() {
            // A task stopped while its tool ran still gets the tool's result: wait for it a while.
            let ended = *ended_at.get_or_insert_with(tokio::time::Instant::now);
            let running = running(&state.reads.events_of_task(&row.conversation_id, task).await.map_err(internal)?);
            if !running || ended.elapsed() >= RESULT_GRACE {
                waiting.done = true;
                return Ok(Waited::Settled);
            }
        }
        if row.status() == TaskStatus::InputRequired
            && !asked
            && let Some(actor) = asking
        {
            // Asked once: someone the rules do not let decide waits like any client.
            asked = true;
            if let Some(approval) = decidable_by(state, task, actor).await? {
                waiting.done = true;
                return Ok(Waited::Ask(approval));
            }
        }
        tokio::select! {
            () = context.ct.cancelled() => return Err(McpError::invalid_request("the request was canceled", None)),
            // The waiting client is gone with its token: the call will not run for it.
            () = revoked(&mut revocations, credential) => {
                return Err(McpError::invalid_request("the API token that made this call was revoked; the call will not run", None));
            }
            () = changed(&mut changes, conversation) => {}
            () = tokio::time::sleep(POLL) => {}
        }
        let now = tokio::time::Instant::now();
        if now >= next_heartbeat {
            next_heartbeat += HEARTBEAT_EVERY;
            if let Err(err) = state.client_calls.mark(task, false).await {
                tracing::warn!(%task, error = ?err, "recording that the MCP client waits failed");
            }
        }
        if now >= next_progress
            && let Some(token) = progress.clone()
        {
            next_progress += PROGRESS_EVERY;
            let mut note = ProgressNotificationParam::new(token, started.elapsed().as_secs_f64().floor());
            let needs = match row.status() {
                TaskStatus::InputRequired => state.reads.pending_for_task(task).await.map_err(internal)?.first().and_then(|a| a.needs()),
                _ => None,
            };
            note.message = Some(waiting_for(row.status(), needs.as_deref()));
            if context.peer.notify_progress(note).await.is_err() {
                return Err(McpError::invalid_request("the client went away", None));
            }
        }
    }
}

/// The task's pending approval if `actor` may decide it now, as a decision would check it
/// (approvers, escalation, the deadline, and four-eyes for an approval).
async fn decidable_by(state: &AppState, task: &TaskId, actor: &Actor) -> Result<Option<ApprovalId>, McpError> {
    let pending = state.reads.pending_for_task(task).await.map_err(internal)?;
    let [approval] = pending.as_slice() else { return Ok(None) };
    Ok(match state.decisions.may_decide_now(&approval.id, actor).await {
        Ok((row, as_actor)) => crate::orchestrator::four_eyes(&as_actor, &row).is_ok().then(|| approval.id.clone()),
        Err(_) => None,
    })
}

/// Returns once an event of `conversation` was committed (here or on another replica), or the
/// subscription fell behind (then the caller looks anyway).
async fn changed(changes: &mut tokio::sync::broadcast::Receiver<Arc<crate::bus::Published>>, conversation: &ConversationId) {
    loop {
        match changes.recv().await {
            Ok(published) if published.event.conversation_id == *conversation => return,
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// Returns once the credential `key` is revoked (here or on another replica).
async fn revoked(revocations: &mut tokio::sync::broadcast::Receiver<String>, key: &str) {
    loop {
        match revocations.recv().await {
            Ok(revoked) if revoked == key => return,
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// Whether the task's call started and has no result yet.
fn running(history: &[domain::Event]) -> bool {
    let started = history.iter().any(|e| matches!(e.body, EventBody::ToolStarted { .. }));
    started && !history.iter().any(|e| matches!(e.body, EventBody::ToolResult { .. }))
}

/// The progress message: what the call waits for, and the whole requirement when it `needs` more
/// than any one person who may decide.
fn waiting_for(status: TaskStatus, needs: Option<&str>) -> String {
    match status {
        TaskStatus::InputRequired => match needs {
            Some(needs) => format!("waiting for a person to approve or reject the call in Countersign ({})", needs.to_lowercase()),
            None => "waiting for a person to approve or reject the call in Countersign".into(),
        },
        _ => "running".into(),
    }
}

/// Marks the client gone when the request ends before its call's outcome.
struct Waiting {
    state: AppState,
    task: TaskId,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (state, task) = (self.state.clone(), self.task.clone());
        tokio::spawn(async move { client_stopped(&state, &task, Stopped::Ended).await });
    }
}

/// Why no one waits for a call any more.
pub enum Stopped {
    /// The request that made it ended before its outcome.
    Ended,
    /// A client with the token that made it cancelled request `request` (its JSON-RPC id), saying
    /// `reason`. Perhaps not the client that made this call: without sessions, clients sharing a
    /// token cannot be told apart, so the card says who did it.
    Cancelled { request: String, reason: Option<String> },
}

impl Stopped {
    /// Who stopped the call, as its card and the held request's answer name them: `client` is the
    /// call's client.
    fn by(&self, client: &str) -> String {
        match self {
            Self::Ended => format!("{client}, which stopped waiting"),
            Self::Cancelled { request, reason } => {
                let why = reason.as_deref().map(str::trim).filter(|r| !r.is_empty()).map(|r| format!(" ({r})")).unwrap_or_default();
                format!("{client} or another client using its token, which stopped waiting: it cancelled request {request}{why}")
            }
        }
    }
}

/// The client stopped waiting for the call of `task` (`why`): no one wants the call any more, so
/// it is stopped for good — marked gone, and its turn aborted, so its approval is canceled saying
/// so and a later approval runs nothing (docs/mcp-gateway.md, "When the client goes away"). Runs
/// to its end even if the request that brought the news goes away.
pub async fn client_stopped(state: &AppState, task: &TaskId, why: Stopped) {
    let (state, task) = (state.clone(), task.clone());
    let stop = async move {
        if let Err(err) = state.client_calls.mark(&task, true).await {
            // The heartbeat stops too: the call counts as unattended after a short silence.
            tracing::warn!(%task, error = ?err, "recording that the MCP client went away failed");
        }
        let client = match state.reads.client_call(&task).await {
            Ok(Some(call)) => call.client,
            _ => "the MCP client".to_owned(),
        };
        let stopper = Actor { name: why.by(&client), ..Actor::system() };
        match state.decisions.abort(&task, &stopper).await {
            Ok(()) | Err(crate::EngineError::WrongState(_)) => {}
            Err(err) => tracing::warn!(%task, error = ?err, "stopping a call its MCP client stopped waiting for failed"),
        }
    };
    if let Err(err) = tokio::spawn(stop).await {
        tracing::warn!(error = ?err, "stopping a call its MCP client stopped waiting for did not finish");
    }
}

/// The call's outcome as MCP's tool result: the upstream result when it ran, else a tool error
/// saying why not (rejected with the reason, expired, not run). Its `resultType` is 2026-07-28's
/// (rmcp strips it for a client of an older revision).
pub async fn outcome(state: &AppState, conversation: &ConversationId, task: &TaskId) -> anyhow::Result<rmcp::model::CallToolResult> {
    let history = state.reads.events_of_task(conversation, task).await?;
    let result = history.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
        _ => None,
    });
    let decided = history.iter().find_map(|e| match &e.body {
        EventBody::ApprovalDecided { decided_by, .. } => Some(decided_by.clone()),
        _ => None,
    });
    tool_result(result, decided, running(&history))
}

/// One stored `{path, message}` problem as a model reads it (`crate::protocols::problem_said`).
fn detail_said(detail: &Value) -> String {
    let message = detail["message"].as_str().unwrap_or("is not valid");
    crate::protocols::problem_said(detail["path"].as_str().unwrap_or_default(), message)
}

/// The tool result for a call's result (`ok`, its output as stored), who decided it, and whether
/// it was started and has no result.
pub fn tool_result(result: Option<(bool, Value)>, decided: Option<String>, running: bool) -> anyhow::Result<rmcp::model::CallToolResult> {
    let value = match result {
        Some((true, output)) => match output.get("content").filter(|c| c.is_array()) {
            // An upstream MCP tool's own content, passed through.
            Some(content) => json!({ "content": content, "structuredContent": output.get("structured").filter(|s| s.is_object()) }),
            None => json!({
                "content": [{ "type": "text", "text": output.to_string() }],
                "structuredContent": output.is_object().then_some(&output),
            }),
        },
        Some((false, output)) => {
            let text = match output["status"].as_str() {
                // Without a reason, none is said.
                Some("rejected") => format!(
                    "Rejected{} in Countersign{}",
                    decided.map(|by| format!(" by {by}")).unwrap_or_default(),
                    output["reason"].as_str().map(|why| format!(": {why}")).unwrap_or_default()
                ),
                Some("deferred") => format!("Not run yet: {}", output["guidance"].as_str().unwrap_or("the reviewer asked for changes")),
                _ => output["message"].as_str().or(output["error"].as_str()).unwrap_or("the call failed").to_owned(),
            };
            match output["details"].as_array().filter(|d| !d.is_empty()) {
                // What is wrong with the arguments, field by field, in the text a model reads and
                // as structured content, so it can correct its call (docs/mcp-gateway.md, "Errors").
                Some(details) => {
                    let said: Vec<String> = details.iter().map(detail_said).collect();
                    json!({
                        "content": [{ "type": "text", "text": format!("{text}: {}", said.join("; ")) }],
                        "structuredContent": { "error": text, "details": details },
                        "isError": true,
                    })
                }
                None => json!({ "content": [{ "type": "text", "text": text }], "isError": true }),
            }
        }
        None if running => {
            let text = "The call was started, but it was stopped in Countersign before its result came back: its effect is unknown. \
                        Check before you try it again";
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
        None => {
            let text = "The call was not made: the task ended without running it (canceled in Countersign)";
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
    };
    let mut value = value;
    value["resultType"] = "complete".into();
    Ok(serde_json::from_value(value)?)
}
