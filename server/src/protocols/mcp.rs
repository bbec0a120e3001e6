//! The MCP approval gateway: each Countersign agent is an MCP server at `/mcp/{agent}`
//! (streamable HTTP, served by the official `rmcp` SDK) offering the agent's tools — built-in and
//! those of its upstream MCP servers, under its allow-list and gates. A client's `tools/call` is
//! proposed to the engine as a call of a conversation of the token's user (one per client and
//! agent, `engine/src/orchestrator/client_calls.rs`): an ungated call runs at once; a gated one
//! waits for a decision while the request stays open, with progress notifications so clients
//! that reset their timeout on progress keep waiting. Approved, it runs once (with the edited args
//! if edited) and the upstream result is the answer; rejected, the answer is a tool error with the
//! reason. A client that went away leaves a decidable approval whose approved call is not run.
//! Stateless mode: any replica serves any request, and a dropped request is noticed at once.
//! See docs/mcp-gateway.md.

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    extract::Request,
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use domain::{ConversationId, EventBody, TaskId, TaskStatus, wire::Conversation};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeRequestParams, InitializeResult,
        ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager},
};
use serde_json::{Value, json};

use crate::{
    auth::{ByToken, Credential, Viewer},
    state::AppState,
    store::{client_calls, conversations, events, tasks, users::User},
    tools::{answer, ask, plan},
};

/// How often a waiting call tells its client it still waits (clients that reset their request
/// timeout on progress then wait as long as the decision takes).
const PROGRESS_EVERY: Duration = Duration::from_secs(2);
/// How long a call stopped mid-run (its task canceled while the tool ran) may take to record its
/// result before the client is told its effect is unknown.
const RESULT_GRACE: Duration = Duration::from_secs(30);
/// How often it tells the database its client still waits (well within `CLIENT_SILENCE_MS`).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);
/// How often a waiting call looks at its task when no event of its conversation woke it (events
/// from every replica reach the bus; this covers a stream that lagged or a missed notification).
const POLL: Duration = Duration::from_secs(1);

/// `/mcp/{agent}` for every configured agent; only requests with a Countersign API token get in.
pub fn router(state: &AppState) -> Router<AppState> {
    let mut router = Router::new();
    for agent in &state.orchestrator.agents().agents {
        let gateway = Gateway { state: state.clone(), agent: agent.name.clone() };
        // Hosts are not checked by rmcp here: a request gets in only with a bearer token, which
        // a page on a rebinding domain does not have.
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).disable_allowed_hosts();
        let service = StreamableHttpService::new(move || Ok(gateway.clone()), Arc::new(LocalSessionManager::default()), config);
        router = router.nest_service(&format!("/mcp/{}", agent.name), service);
    }
    // Layers run outside in: the token first, then the body's shape.
    router.layer(middleware::from_fn(json_rpc_only)).layer(middleware::from_fn(tokens_only))
}

/// rmcp answers a body it cannot read with a plain-text 415; clients expect JSON-RPC's own errors:
/// -32700 for text that is not JSON, -32600 for JSON that is no JSON-RPC message. Nothing else is
/// touched (the body is passed on as read). The app's body limit (`DefaultBodyLimit`) applies: it is
/// only a marker that body readers honour, and this reader reads through it.
async fn json_rpc_only(req: Request, next: Next) -> Response {
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = axum::RequestExt::with_limited_body(req).into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(err) => return json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &format!("the request body could not be read: {err}")),
    };
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return json_rpc_error(StatusCode::BAD_REQUEST, -32700, &format!("parse error: the body is not JSON ({err})"));
    }
    if let Err(err) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes) {
        return json_rpc_error(StatusCode::BAD_REQUEST, -32600, &format!("invalid request: not an MCP JSON-RPC message ({err})"));
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

fn json_rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    (status, axum::Json(body)).into_response()
}

/// The gateway speaks to programs: a bearer token is its only credential (no cookies, so no
/// cross-site requests). Anything else is a 401 in JSON-RPC's shape.
async fn tokens_only(req: Request, next: Next) -> Response {
    let user = req.extensions().get::<Viewer>().and_then(|v| v.0.as_ref()).is_some();
    if user && req.extensions().get::<ByToken>().is_some() {
        return next.run(req).await;
    }
    let message =
        "send a Countersign API token as Authorization: Bearer <token> (make one with `countersign token create` or on the account page)";
    let mut refused = json_rpc_error(StatusCode::UNAUTHORIZED, -32600, message);
    refused.headers_mut().insert(header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
    refused
}

#[derive(Clone)]
struct Gateway {
    state: AppState,
    agent: String,
}

/// Tools a model uses to talk to its user or its workers: not offered to outside clients.
fn offered(state: &AppState, name: &str) -> bool {
    ![answer::NAME, ask::NAME, plan::NAME].contains(&name) && state.orchestrator.tools().get(name).is_some_and(|t| t.delegate().is_none())
}

/// The request's user and a key for the client (its token).
fn caller(context: &RequestContext<RoleServer>) -> Result<(User, String), McpError> {
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let user = parts.and_then(|p| p.extensions.get::<Viewer>()).and_then(|v| v.0.clone());
    let key = parts.and_then(|p| p.extensions.get::<Credential>()).map(|c| c.0.clone());
    match (user, key) {
        (Some(user), Some(key)) => Ok((user, key)),
        _ => Err(McpError::invalid_request("send a Countersign API token as Authorization: Bearer <token>", None)),
    }
}

fn internal(err: anyhow::Error) -> McpError {
    tracing::error!(error = ?err, "MCP gateway request failed");
    McpError::internal_error("the server could not complete the request", None)
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(format!("countersign-{}", self.agent), env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Countersign: some of these tools wait for a person's approval before they run. A call that waits keeps the request \
                 open and sends progress notifications; a rejected call answers with a tool error giving the reason.",
            )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        // Stateless: later requests carry only the token, so the client's name is kept with it and
        // names the conversation its calls go to.
        let (user, key) = caller(&context)?;
        let name: String = request.client_info.name.chars().filter(|c| !c.is_control()).take(80).collect();
        if !name.trim().is_empty() {
            client_calls::name_client(&self.state.store, &user.id, &key, name.trim()).await.map_err(internal)?;
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        caller(&context)?;
        let agent = self.state.orchestrator.agents().get(&self.agent).ok_or_else(|| internal(anyhow::anyhow!("agent gone")))?;
        let tools: Vec<Value> = agent
            .tools
            .iter()
            .filter(|name| offered(&self.state, name))
            .filter_map(|name| self.state.orchestrator.tools().get(name))
            .map(|tool| {
                let spec = tool.spec();
                json!({
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": spec.input_schema,
                    "annotations": { "readOnlyHint": spec.read_only, "destructiveHint": spec.destructive },
                })
            })
            .collect();
        serde_json::from_value(json!({ "tools": tools })).map_err(|e| internal(e.into()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        let (user, key) = caller(&context)?;
        let state = &self.state;
        let agent = state.orchestrator.agents().get(&self.agent).ok_or_else(|| internal(anyhow::anyhow!("agent gone")))?;
        let tool = request.name.as_ref();
        if !(agent.tools.iter().any(|t| t == tool) && offered(state, tool)) {
            let names: Vec<&str> = agent.tools.iter().map(String::as_str).filter(|t| offered(state, t)).collect();
            return Err(McpError::invalid_params(format!("no tool {tool:?} here: agent {} offers {}", agent.name, names.join(", ")), None));
        }
        // The same per-user limit as decisions: a runaway client cannot flood the queue.
        if state.limits.decision(&state.store, &user.id).await.is_err() {
            return Err(McpError::invalid_request("too many calls in the last minute: wait a moment", None));
        }
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let (conversation, client) = client_conversation(state, &user, &key, &self.agent).await.map_err(internal)?;
        // Subscribed before the call is proposed, so no change of it (and no revocation of the
        // token that asked) is missed.
        let mut changes = state.store.bus().subscribe();
        let mut revocations = state.store.bus().subscribe_revoked();
        let task = match state.orchestrator.propose_call(&conversation, &client, tool, &args).await {
            Ok(task) => task,
            Err(e) => return Err(internal(e.into())),
        };
        // From here on, a request that ends before the outcome (the client went away, or this
        // replica stops) marks the client gone, so an approval made later does not run the call.
        let mut waiting = Waiting { state: state.clone(), task: task.clone(), done: false };
        let progress = context.meta.get_progress_token().or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        let started = tokio::time::Instant::now();
        let (mut next_progress, mut next_heartbeat) = (started + PROGRESS_EVERY, started + HEARTBEAT_EVERY);
        let mut ended_at = None;
        let row = loop {
            let row = tasks::get(&state.store, &task).await.map_err(internal)?.ok_or_else(|| internal(anyhow::anyhow!("task gone")))?;
            if row.status().is_final() {
                // A task stopped while its tool ran still gets the tool's result: wait for it a while.
                let ended = *ended_at.get_or_insert_with(tokio::time::Instant::now);
                let running = running(&events::of_task(&state.store, &row.conversation_id, &task).await.map_err(internal)?);
                if !running || ended.elapsed() >= RESULT_GRACE {
                    break row;
                }
            }
            tokio::select! {
                () = context.ct.cancelled() => return Err(McpError::invalid_request("the request was canceled", None)),
                // The waiting client is gone with its token: the call will not run for it.
                () = revoked(&mut revocations, &key) => {
                    return Err(McpError::invalid_request("the API token that made this call was revoked; the call will not run", None));
                }
                () = changed(&mut changes, &conversation.id) => {}
                () = tokio::time::sleep(POLL) => {}
            }
            let now = tokio::time::Instant::now();
            if now >= next_heartbeat {
                next_heartbeat += HEARTBEAT_EVERY;
                if let Err(err) = client_calls::mark(&state.store, &task, false).await {
                    tracing::warn!(%task, error = ?err, "recording that the MCP client waits failed");
                }
            }
            if now >= next_progress
                && let Some(token) = progress.clone()
            {
                next_progress += PROGRESS_EVERY;
                let mut note = ProgressNotificationParam::new(token, started.elapsed().as_secs_f64().floor());
                note.message = Some(waiting_for(row.status()));
                if context.peer.notify_progress(note).await.is_err() {
                    return Err(McpError::invalid_request("the client went away", None));
                }
            }
        };
        waiting.done = true;
        outcome(state, &row.conversation_id, &task).await.map(Into::into).map_err(internal)
    }
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

fn waiting_for(status: TaskStatus) -> String {
    match status {
        TaskStatus::InputRequired => "waiting for a person to approve or reject the call in Countersign".into(),
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
        let (store, task) = (self.state.store.clone(), self.task.clone());
        tokio::spawn(async move {
            if let Err(err) = client_calls::mark(&store, &task, true).await {
                // The heartbeat stops too: the call counts as unattended after a short silence.
                tracing::warn!(%task, error = ?err, "recording that the MCP client went away failed");
            }
        });
    }
}

/// The conversation this client's calls to `agent` go to (made on its first call, titled after the
/// client and its token), and the client's name as the chat shows it: the name it gave in
/// `initialize`, else its token's.
async fn client_conversation(state: &AppState, user: &User, key: &str, agent: &str) -> anyhow::Result<(Conversation, String)> {
    let pool = &state.store;
    let token_name = match key.strip_prefix("token:") {
        Some(id) => crate::store::users::tokens_of(pool, &user.id).await?.into_iter().find(|t| t.id == id).map(|t| t.name),
        None => None,
    };
    let token_name = token_name.unwrap_or_else(|| "unnamed".into());
    let given = client_calls::client_name(pool, &user.id, key).await?;
    let client = format!("MCP client \u{201c}{}\u{201d}", given.as_deref().unwrap_or(&token_name));
    // The id is derived from who asks, so two first calls at once (on any replicas) make one
    // conversation: the second insert fails and reads the first's.
    let id = client_conversation_id(&user.id, key, agent);
    if let Some(conversation) = conversations::get(pool, &id).await? {
        return Ok((conversation, client));
    }
    let title = match given {
        Some(_) => format!("{client} (token \u{201c}{token_name}\u{201d}) · {agent}"),
        None => format!("{client} · {agent}"),
    };
    match conversations::create_with_id(&state.store, &id, &title, agent, user).await {
        Ok(made) => Ok((made, client)),
        Err(err) => match conversations::get(pool, &id).await? {
            Some(conversation) => Ok((conversation, client)),
            None => Err(err),
        },
    }
}

/// The conversation id of a client (its user and credential) and agent: a digest, shaped as a UUID.
fn client_conversation_id(user: &domain::UserId, key: &str, agent: &str) -> ConversationId {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("mcp\u{0}{}\u{0}{key}\u{0}{agent}", &**user));
    let bytes: [u8; 16] = digest[..16].try_into().expect("a SHA-256 digest has 32 bytes");
    ConversationId::from(uuid::Uuid::from_bytes(bytes).to_string())
}

/// The call's outcome as MCP's tool result: the upstream result when it ran, else a tool error
/// saying why not (rejected with the reason, expired, not run).
async fn outcome(state: &AppState, conversation: &ConversationId, task: &TaskId) -> anyhow::Result<CallToolResult> {
    let history = events::of_task(&state.store, conversation, task).await?;
    let result = history.iter().find_map(|e| match &e.body {
        EventBody::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
        _ => None,
    });
    let decided = history.iter().find_map(|e| match &e.body {
        EventBody::ApprovalDecided { decided_by, .. } => Some(decided_by.clone()),
        _ => None,
    });
    let value = match result {
        Some((true, output)) => match output.get("content").filter(|c| c.is_array()) {
            // An upstream MCP tool's own content, passed through.
            Some(content) => json!({ "content": content, "structuredContent": output.get("structured").filter(|s| s.is_object()) }),
            None => {
                json!({ "content": [{ "type": "text", "text": output.to_string() }], "structuredContent": output.is_object().then_some(&output) })
            }
        },
        Some((false, output)) => {
            let text = match output["status"].as_str() {
                Some("rejected") => format!(
                    "Rejected{} in Countersign: {}",
                    decided.map(|by| format!(" by {by}")).unwrap_or_default(),
                    output["reason"].as_str().unwrap_or("no reason given")
                ),
                Some("deferred") => format!("Not run yet: {}", output["guidance"].as_str().unwrap_or("the reviewer asked for changes")),
                _ => output["message"].as_str().or(output["error"].as_str()).unwrap_or("the call failed").to_owned(),
            };
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
        None if running(&history) => {
            let text = "The call was started, but it was stopped in Countersign before its result came back: its effect is unknown. \
                        Check before you try it again";
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
        None => {
            let text = "The call was not made: the task ended without running it (canceled in Countersign)";
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
    };
    Ok(serde_json::from_value(value)?)
}
