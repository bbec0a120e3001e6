//! The MCP approval gateway: each Countersign agent is an MCP server at `/mcp/{agent}`
//! (streamable HTTP, served by the official `rmcp` SDK) offering the agent's tools — built-in and
//! those of its upstream MCP servers, under its allow-list and gates. A client's `tools/call` is
//! proposed to the engine as a call of a conversation of the token's user (one per client and
//! agent, `engine/src/orchestrator/client_calls.rs`): an ungated call runs at once. A gated one
//! waits for a decision while the request stays open (wait.rs), in every protocol revision; a
//! client of revision 2026-07-28 that can show an elicitation, whose user may decide the call, is
//! asked instead and answers in a second request, to any replica (input_required.rs). Approved,
//! the call runs once (with the edited args if edited) and the upstream result is the answer;
//! rejected, the answer is a tool error with the reason. A client that cancels or stops waiting
//! stops the call for good (wait.rs `client_stopped`); a cancellation, every held call of its
//! token with that request id (clients sharing a token cannot be told apart). Stateless: any
//! replica serves any request. See docs/mcp-gateway.md.

mod input_required;
mod wait;

use std::{collections::HashMap, sync::Arc};

use axum::{
    Router,
    extract::Request,
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use domain::{ApprovalId, ConversationId, TaskId, wire::Conversation};
use input_required::{InputAnswer, RequestState};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelledNotificationParam, Implementation, InitializeRequestParams, InitializeResult,
        InputRequiredResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager},
};
use serde_json::{Value, json};

use wait::Waited;

use crate::{
    EngineError,
    auth::{
        ByToken, Credential, MaybeUser,
        scopes::{Scope, Scopes, may_stop},
    },
    orchestrator::{self, Actor},
    people::User,
    state::AppState,
    tools::{answer, ask, plan},
};

/// `/mcp/{agent}` for every configured agent; only requests with a Countersign API token get in.
pub fn router(state: &AppState) -> Router<AppState> {
    let mut router = Router::new();
    let known = Known::default();
    for agent in &state.task_driver.agents().agents {
        let gateway = Gateway { state: state.clone(), agent: agent.name.clone(), known: known.clone() };
        // Hosts are not checked by rmcp here: a request gets in only with a bearer token, which
        // a page on a rebinding domain does not have.
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).disable_allowed_hosts();
        let service = StreamableHttpService::new(move || Ok(gateway.clone()), Arc::new(LocalSessionManager::default()), config);
        router = router.nest_service(&format!("/mcp/{}", agent.name), service);
    }
    // Layers run outside in: the token first, then the body's shape.
    router.layer(middleware::from_fn_with_state(state.clone(), json_rpc_only)).layer(middleware::from_fn(tokens_only))
}

/// rmcp answers a body it cannot read with a plain-text 415; clients expect JSON-RPC's own errors:
/// -32700 for text that is not JSON, -32600 for JSON that is no JSON-RPC message. A cancellation
/// stops the held calls its request's name made ([`cancel_request`]). Nothing else is touched
/// (the body is passed on as read). The app's body limit (`DefaultBodyLimit`) applies: it is
/// only a marker that body readers honour, and this reader reads through it.
async fn json_rpc_only(axum::extract::State(state): axum::extract::State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = axum::RequestExt::with_limited_body(req).into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(err) => return json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &format!("the request body could not be read: {err}")),
    };
    // One parse on the way in; only a body that fails it is read again, to tell which error it is.
    match serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes) {
        Err(err) => {
            if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
                return json_rpc_error(StatusCode::BAD_REQUEST, -32700, &format!("parse error: the body is not JSON ({err})"));
            }
            return json_rpc_error(StatusCode::BAD_REQUEST, -32600, &format!("invalid request: not an MCP JSON-RPC message ({err})"));
        }
        Ok(rmcp::model::ClientJsonRpcMessage::Notification(n)) => {
            if let rmcp::model::ClientNotification::CancelledNotification(cancelled) = n.notification
                && let Some(credential) = parts.extensions.get::<Credential>()
                && let Some(MaybeUser(Some(_))) = parts.extensions.get::<MaybeUser>()
                && let Some(agent) = parts.uri.path().strip_prefix("/mcp/").map(|a| a.trim_end_matches('/'))
            {
                let scopes = parts.extensions.get::<Scopes>().copied().unwrap_or(Scopes::NONE);
                cancel_request(&state, credential, scopes, agent, cancelled.params).await;
            }
        }
        Ok(_) => {}
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
    let user = req.extensions().get::<MaybeUser>().and_then(|v| v.0.as_ref()).is_some();
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
    known: Known,
}

/// Tools a model uses to talk to its user or its workers: not offered to outside clients.
fn offered(state: &AppState, name: &str) -> bool {
    ![answer::NAME, ask::NAME, plan::NAME].contains(&name) && state.task_driver.tools().get(name).is_some_and(|t| t.delegate().is_none())
}

/// The request's user and a key for the client (its token).
fn caller(context: &RequestContext<RoleServer>) -> Result<(User, String), McpError> {
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let user = parts.and_then(|p| p.extensions.get::<MaybeUser>()).and_then(|v| v.0.clone());
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
        let name = clean_name(&request.client_info.name);
        if !name.is_empty() {
            self.state.client_calls.name_client(&user.id, &key, &name).await.map_err(internal)?;
            self.known.name(&user.id, &key, Some(name));
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
        let agent = self.state.task_driver.agents().get(&self.agent).ok_or_else(|| internal(anyhow::anyhow!("agent gone")))?;
        let tools: Vec<Value> = agent
            .tools
            .iter()
            .filter(|name| offered(&self.state, name))
            .filter_map(|name| self.state.task_driver.tools().get(name))
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
        // `resultType` is 2026-07-28's (rmcp strips it for a client of an older revision).
        serde_json::from_value(json!({ "resultType": "complete", "tools": tools })).map_err(|e| internal(e.into()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        let (user, key) = caller(&context)?;
        let state = &self.state;
        let agent = state.task_driver.agents().get(&self.agent).ok_or_else(|| internal(anyhow::anyhow!("agent gone")))?;
        let tool = request.name.as_ref();
        if !(agent.tools.iter().any(|t| t == tool) && offered(state, tool)) {
            let names: Vec<&str> = agent.tools.iter().map(String::as_str).filter(|t| offered(state, t)).collect();
            return Err(McpError::invalid_params(format!("no tool {tool:?} here: agent {} offers {}", agent.name, names.join(", ")), None));
        }
        // Numbers as the tool's schema types them, for the short way and the asked way alike
        // (`Registry::exact_args`), and for the sealed state a resumed call is compared with.
        let args = state.task_driver.tools().exact_args(tool, Value::Object(request.arguments.clone().unwrap_or_default()));
        let progress = context.meta.get_progress_token().or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        if let Some(sealed) = request.request_state.as_deref() {
            return self.answered(&context, &user, &key, tool, &args, sealed, request.input_responses.as_ref(), progress).await;
        }
        let modern = context.protocol_version().is_some_and(|v| !v.has_initialize());
        // A 2026-07-28 client names itself with each request; an older one did in `initialize`.
        let given = context.client_info().filter(|_| modern).map(|c| c.name);
        let Some((conversation, client)) =
            client_conversation(state, &self.known, &user, &key, &self.agent, given).await.map_err(internal)?
        else {
            let message = "this client's conversation was made by someone else: Countersign will not record your calls in it";
            return Err(McpError::invalid_request(message, None));
        };
        // A call no one is asked about runs at once, the short way (no queue entry to flood).
        if state.client_calls.runs_unasked(&conversation, tool, &args) {
            let ran =
                state.client_calls.run_unasked(&conversation, &client, tool, &args, Some(&key)).await.map_err(|e| internal(e.into()))?;
            // As the call's result is stored (`record_result`).
            let result = match ran.outcome {
                Ok(output) => (true, output),
                Err(error) => (false, json!({ "error": error, "message": error })),
            };
            return wait::tool_result(Some(result), None, false).map(Into::into).map_err(internal);
        }
        // The same per-user limit as decisions: a runaway client cannot flood the queue.
        if state.limits.decision(&user.id).await.is_err() {
            return Err(McpError::invalid_request("too many calls in the last minute: wait a moment", None));
        }
        let request = request_key(&key, &self.agent, &context.id.to_string());
        let task = match state.client_calls.propose_call(&conversation, &client, tool, &args, Some(&request), Some(&key)).await {
            Ok(task) => task,
            Err(e) => return Err(internal(e.into())),
        };
        // A 2026-07-28 client that can show an elicitation is asked, when its token may decide.
        let elicits = context.client_capabilities().is_some_and(|c| c.elicitation.is_some());
        let actor = actor(&user);
        let asking = (modern && elicits && scopes(&context).allows(Scope::Decide)).then_some(&actor);
        match wait::wait(state, &context, &task, &conversation.id, &key, progress, asking).await? {
            Waited::Settled => wait::outcome(state, &conversation.id, &task).await.map(Into::into).map_err(internal),
            Waited::Ask(approval) => {
                let row =
                    state.reads.approval(&approval).await.map_err(internal)?.ok_or_else(|| internal(anyhow::anyhow!("approval gone")))?;
                // The client comes back with its answer: it counts as waiting until the deadline.
                state.client_calls.expect_back(&task, row.deadline).await.map_err(internal)?;
                let sealed = RequestState::new(&approval, &task, &key, tool, &args, row.deadline).seal(&state.links);
                let result = input_required::result(&row.summary, row.risk.as_str(), row.needs().as_deref(), sealed);
                let result: InputRequiredResult = serde_json::from_value(result).map_err(|e| internal(e.into()))?;
                Ok(result.into())
            }
        }
    }
}

/// The name of a client's request — its credential, the agent it asked and its JSON-RPC id — as
/// its cancellation names it too. Not unique: clients number their requests from 0 in every
/// session and the gateway has none, so two clients sharing a token use the same names at once
/// (`client_calls::by_request`).
fn request_key(key: &str, agent: &str, id: &str) -> String {
    format!("{key} {agent} {id}")
}

/// The client's `notifications/cancelled` (the official SDKs send it when their user stops a call
/// and when their own request times out), which any replica may receive: every held call of that
/// request's name is stopped for good — its turn is aborted, so a later approval runs nothing, the
/// card says that client or another using its token cancelled the request, and the held request ends with
/// that (docs/mcp-gateway.md). Every one, not a guess at which: two clients sharing a token cannot
/// be told apart, and a call left running that its client gave up on would run for no one. A
/// finished call is never touched. rmcp drops notifications in stateless mode, so this runs
/// before it, on the parsed body.
async fn cancel_request(state: &AppState, credential: &Credential, scopes: Scopes, agent: &str, params: CancelledNotificationParam) {
    let Some(id) = params.request_id else { return };
    let id = id.to_string();
    let tasks = match stoppable(state, credential, scopes, &request_key(&credential.0, agent, &id)).await {
        Ok(tasks) => tasks,
        Err(err) => {
            tracing::warn!(error = ?err, "looking up a cancelled MCP request failed");
            return;
        }
    };
    // Named as the card shows it: the id is the client's, of any length.
    let request = clean_name(&id);
    for task in tasks {
        let why = wait::Stopped::Cancelled { request: request.clone(), reason: params.reason.clone() };
        wait::client_stopped(state, &task, why).await;
    }
}

/// The held tasks the credential's request `request` made that it may stop. A request of its own
/// started each (`started_by`), so the rule of every door that stops a task (`scopes::may_stop`)
/// lets it stop those.
async fn stoppable(state: &AppState, credential: &Credential, scopes: Scopes, request: &str) -> anyhow::Result<Vec<TaskId>> {
    let mut stoppable = Vec::new();
    for task in state.reads.client_calls_by_request(request).await? {
        if let Some(row) = state.reads.task(&task).await?
            && may_stop(Some(credential), scopes, &row)
        {
            stoppable.push(task);
        }
    }
    Ok(stoppable)
}

impl Gateway {
    /// A call sent again with the `requestState` of its `InputRequiredResult` and, perhaps, the
    /// person's answer: the answer decided (the authority rules apply), then the wait as usual.
    #[allow(clippy::too_many_arguments)]
    async fn answered(
        &self,
        context: &RequestContext<RoleServer>,
        user: &User,
        key: &str,
        tool: &str,
        args: &Value,
        sealed: &str,
        responses: Option<&std::collections::BTreeMap<String, Value>>,
        progress: Option<rmcp::model::ProgressToken>,
    ) -> Result<CallToolResponse, McpError> {
        let state = &self.state;
        let now = engine::clock::now_ms();
        let request = RequestState::open(&state.links, sealed, now, key, tool, args).map_err(|e| McpError::invalid_params(e, None))?;
        let answer = input_required::answer(responses).map_err(|e| McpError::invalid_params(e, None))?;
        let (approval, task) = (ApprovalId::from(request.approval), TaskId::from(request.task));
        if let InputAnswer::Decide(decision) = answer {
            if !scopes(context).allows(Scope::Decide) {
                return Err(McpError::invalid_request("this API token may only call: deciding needs a token with the decide scope", None));
            }
            if let Err(refused) = state.decisions.decide(&approval, decision, &actor(user)).await {
                // Decided by someone else meanwhile: that decision stands, and its outcome is the answer.
                let still_pending =
                    state.reads.approval(&approval).await.map_err(internal)?.is_some_and(|a| a.state == domain::ApprovalState::Pending);
                if still_pending {
                    return Err(match refused {
                        EngineError::Internal(e) => internal(e),
                        other => McpError::invalid_request(format!("your answer was not recorded: {other}; the call still waits"), None),
                    });
                }
            }
        }
        let row = state
            .reads
            .task(&task)
            .await
            .map_err(internal)?
            .ok_or_else(|| McpError::invalid_params("the call's task no longer exists", None))?;
        state.client_calls.mark(&task, false).await.map_err(internal)?;
        wait::wait(state, context, &task, &row.conversation_id, key, progress, None).await?;
        wait::outcome(state, &row.conversation_id, &task).await.map(Into::into).map_err(internal)
    }
}

/// A client's name as shown: no control characters, at most 80 characters.
fn clean_name(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(80).collect::<String>().trim().to_owned()
}

fn actor(user: &User) -> Actor {
    super::actor(user, "MCP", "mcp")
}

/// What the request's credential may do.
fn scopes(context: &RequestContext<RoleServer>) -> Scopes {
    context.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Scopes>()).copied().unwrap_or(Scopes::NONE)
}

/// The clients this process has seen: each one's conversation and its token's name, so a call
/// reads neither again (neither changes once made), and the name each client gave itself in
/// `initialize`, read again after [`NAME_KEPT`] (another replica may have been told a new one).
#[derive(Clone, Default)]
struct Known(Arc<std::sync::Mutex<KnownClients>>);

#[derive(Default)]
struct KnownClients {
    conversations: HashMap<ConversationId, (Conversation, String)>,
    /// By user and credential: the name (if any) and when it was read or given here.
    names: HashMap<(domain::UserId, String), (Option<String>, std::time::Instant)>,
}

/// How many clients [`Known`] keeps before it starts over.
const KNOWN_MAX: usize = 10_000;

/// How long a client's name is taken from memory: a new name given to another replica shows in
/// this one's chat after at most this long; one given to this replica, at once.
const NAME_KEPT: std::time::Duration = std::time::Duration::from_secs(5);

impl Known {
    fn lock(&self) -> std::sync::MutexGuard<'_, KnownClients> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, id: &ConversationId) -> Option<(Conversation, String)> {
        self.lock().conversations.get(id).cloned()
    }

    fn put(&self, id: ConversationId, known: (Conversation, String)) {
        let mut clients = self.lock();
        if clients.conversations.len() >= KNOWN_MAX {
            clients.conversations.clear();
        }
        clients.conversations.insert(id, known);
    }

    /// The name a client gave, when it was kept here less than [`NAME_KEPT`] ago.
    fn name_of(&self, user: &domain::UserId, key: &str) -> Option<Option<String>> {
        let clients = self.lock();
        let (name, at) = clients.names.get(&(user.clone(), key.to_owned()))?;
        (at.elapsed() < NAME_KEPT).then(|| name.clone())
    }

    fn name(&self, user: &domain::UserId, key: &str, name: Option<String>) {
        let mut clients = self.lock();
        if clients.names.len() >= KNOWN_MAX {
            clients.names.clear();
        }
        clients.names.insert((user.clone(), key.to_owned()), (name, std::time::Instant::now()));
    }
}

/// The conversation this client's calls to `agent` go to (made on its first call, titled after the
/// client and its token), and the client's name as the chat shows it: the name it gives with the
/// request (`clientInfo` in 2026-07-28's envelope), else the one it gave in `initialize`, else
/// its token's. `None` when a conversation with the client's id exists and is not the user's:
/// it is never used (the calls would be recorded as its owner's).
async fn client_conversation(
    state: &AppState,
    known: &Known,
    user: &User,
    key: &str,
    agent: &str,
    given: Option<String>,
) -> anyhow::Result<Option<(Conversation, String)>> {
    let label = |name: &str| format!("MCP client \u{201c}{name}\u{201d}");
    let given = match given.map(|n| clean_name(&n)).filter(|n| !n.is_empty()) {
        Some(name) => Some(name),
        None => match known.name_of(&user.id, key) {
            Some(kept) => kept,
            None => {
                let name = state.reads.client_name(&user.id, key).await?;
                known.name(&user.id, key, name.clone());
                name
            }
        },
    };
    // The id is derived from who asks, so two first calls at once (on any replicas) make one
    // conversation; its prefix is one no client may choose (an AG-UI threadId).
    let id = orchestrator::gateway_id(&user.id, key, agent);
    if let Some((conversation, token_name)) = known.get(&id) {
        return Ok(Some((conversation, label(given.as_deref().unwrap_or(&token_name)))));
    }
    let token_name = match key.strip_prefix("token:") {
        Some(id) => state.reads.token_name(&user.id, id).await?,
        None => None,
    };
    let token_name = token_name.unwrap_or_else(|| "unnamed".into());
    let client = label(given.as_deref().unwrap_or(&token_name));
    let title = match given {
        Some(_) => format!("{client} (token \u{201c}{token_name}\u{201d}) · {agent}"),
        None => format!("{client} · {agent}"),
    };
    // Adopted only when it is the caller's own: a conversation with this id that someone else
    // made is never where this client's calls go (nor whose owner they are recorded as).
    let from = orchestrator::IdFrom::Gateway;
    let Some(conversation) = state.conversations.open_or_create(&id, from, &title, agent, user, Some(key)).await? else {
        tracing::warn!(conversation = %id, user = %user.username, "an MCP client's conversation id is someone else's conversation");
        return Ok(None);
    };
    known.put(id, (conversation.clone(), token_name));
    Ok(Some((conversation, client)))
}
