//! Conversations: create, list, read (a page of the folded view, from its snapshot; earlier items
//! on request), post a message, stream events.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use domain::{ApprovalId, ConversationId, TaskId};
use serde::{Deserialize, Serialize};
use std::{collections::VecDeque, sync::Arc};
use utoipa_axum::{router::OpenApiRouter, routes};

use axum::{
    Extension, Json,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use domain::{
    Event, fold,
    page::EarlierItems,
    wire::{AssistantDelta, Conversation, ConversationDetail, NewConversation, NewMessage},
};
use tokio::sync::broadcast;

use super::{
    access, event_stream,
    extract::{ApiJson, ApiQuery},
    resume::{ResumeQuery, resume_point},
};
use crate::{
    auth::{
        Credential, CurrentUser,
        scopes::{Scope, Scopes},
    },
    bus::{self, Published},
    orchestrator::ChatAnswer,
    state::AppState,
};
use engine::reads::Reads;

const MAX_MESSAGE_CHARS: usize = 8_000;
const MAX_TITLE_CHARS: usize = 200;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read))
        .routes(routes!(earlier))
        .routes(routes!(post_message))
        .routes(routes!(stream))
}

#[utoipa::path(
    post,
    path = "/api/conversations",
    operation_id = "createConversation",
    tag = "conversations",
    summary = "Create a conversation",
    request_body = NewConversation,
    responses(
        (status = 201, description = "Created", body = Conversation),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, credential, body))]
async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    credential: Option<Extension<Credential>>,
    ApiJson(body): ApiJson<NewConversation>,
) -> Result<(StatusCode, Json<Conversation>), ApiError> {
    let agents = state.task_driver.agents();
    let agent = match body.agent.as_deref() {
        None => agents.default_agent(),
        Some(name) => agents.get(name).ok_or_else(|| ApiError::invalid("agent", format!("unknown agent {name:?}")))?,
    };
    let title = body.title.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).unwrap_or_else(|| domain::naming::DEFAULT_TITLE.into());
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(ApiError::invalid("title", format!("the title is longer than {MAX_TITLE_CHARS} characters")));
    }
    // Who opened it, kept with the conversation. (Who may stop a turn is who started it, kept
    // with the turn: docs/security.md, "Tokens".)
    let opened_by = credential.as_ref().map(|Extension(Credential(key))| key.as_str());
    let conversation = state.conversations.create(&title, &agent.name, &user.user, opened_by).await?;
    Ok((StatusCode::CREATED, Json(conversation)))
}

#[utoipa::path(
    get,
    path = "/api/conversations",
    operation_id = "listConversations",
    tag = "conversations",
    summary = "List conversations, newest first",
    responses(
        (status = 200, description = "OK", body = Vec<Conversation>),
        ReadErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn list(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<Conversation>>, ApiError> {
    Ok(Json(state.reads.conversations(user.owner_filter(), 200).await?))
}

#[utoipa::path(
    get,
    path = "/api/conversations/{id}",
    operation_id = "getConversation",
    tag = "conversations",
    summary = "A conversation and its folded view: by default a page (its last items, every waiting card; `view.earlier` says where the left-out items end), the whole view with `items=all`, and every event too with `events=all`",
    params(("id" = ConversationId, Path), ReadQuery),
    responses(
        (status = 200, description = "OK", body = ConversationDetail),
        ReadErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn read(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ConversationId>,
    ApiQuery(query): ApiQuery<ReadQuery>,
) -> Result<Json<ConversationDetail>, ApiError> {
    let whole = match query.items.as_deref() {
        None | Some("page") => false,
        Some("all") => true,
        Some(other) => return Err(ApiError::invalid("items", format!("unknown items {other:?}; expected page or all"))),
    };
    let conversation = access::visible_conversation(&state.reads, &user, &id).await?;
    match query.events.as_deref() {
        // The whole log, and the view folded from exactly it.
        Some("all") => {
            let events = state.reads.events_after(&id, 0).await?;
            let view = fold(&events);
            Ok(Json(ConversationDetail { conversation, events, view, policy_version: state.task_driver.agents().version.clone() }))
        }
        // The view (or its page) from its snapshot and the events after it: a reload reads what changed lately.
        None | Some("none") => {
            let view = if whole { state.reads.view(&id).await? } else { state.reads.view_page(&id, state.config.page_items).await? };
            Ok(Json(ConversationDetail {
                conversation,
                events: Vec::new(),
                view,
                policy_version: state.task_driver.agents().version.clone(),
            }))
        }
        Some(other) => Err(ApiError::invalid("events", format!("unknown events {other:?}; expected all or none"))),
    }
}

#[utoipa::path(
    get,
    path = "/api/conversations/{id}/items",
    operation_id = "getEarlierItems",
    tag = "conversations",
    summary = "The chat's items before a sequence number (\"Show earlier\"), with the turns they belong to",
    params(("id" = ConversationId, Path), EarlierQuery),
    responses(
        (status = 200, description = "OK", body = EarlierItems),
        ReadErrors,
    ),
)]
#[tracing::instrument(skip(state, user))]
async fn earlier(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<ConversationId>,
    ApiQuery(query): ApiQuery<EarlierQuery>,
) -> Result<Json<EarlierItems>, ApiError> {
    if query.before < 1 {
        return Err(ApiError::invalid("before", "before must be a sequence number of 1 or more"));
    }
    let limit = query.limit.unwrap_or(state.config.page_items as i64);
    if !(1..=MAX_EARLIER_ITEMS).contains(&limit) {
        return Err(ApiError::invalid("limit", format!("limit must be between 1 and {MAX_EARLIER_ITEMS}")));
    }
    access::visible_conversation(&state.reads, &user, &id).await?;
    // Rare and reading backwards: from the whole view (its snapshot and tail), not a page.
    let view = state.reads.view(&id).await?;
    Ok(Json(view.earlier_items(query.before, limit as usize)))
}

const MAX_EARLIER_ITEMS: i64 = 500;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct EarlierQuery {
    /// Items whose sequence number is below this (a page's `view.earlier`).
    #[param(minimum = 1)]
    before: i64,
    /// How many (the latest of them); default the server's page size, at most 500.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    /// `all`: include every event of the conversation (its whole log); `none` (default): only the view.
    #[param(pattern = "^(all|none)$")]
    events: Option<String>,
    /// `page` (default): the last items and every waiting card; `all`: the whole view.
    #[param(pattern = "^(page|all)$")]
    items: Option<String>,
}

/// What posting a message started: a new turn (its task), or, when the chat waited for a yes or
/// no, the answer to that question.
#[derive(Serialize, utoipa::ToSchema)]
struct MessageAccepted {
    task_id: TaskId,
    /// The approval the message answered (a yes/no asked in the chat).
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_id: Option<ApprovalId>,
    /// `approved`, `rejected`, `counted` (a yes that counted toward the approvals the call needs;
    /// it still waits for more) or `asked_again` (the answer was neither yes nor no).
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmation: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/conversations/{id}/messages",
    operation_id = "postMessage",
    tag = "conversations",
    summary = "Post a user message (its owner only: anyone else, an admin too, is told it does not exist); starts a task",
    params(("id" = ConversationId, Path)),
    request_body = NewMessage,
    responses(
        (status = 202, description = "Accepted", body = MessageAccepted),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, credential, body))]
async fn post_message(
    State(state): State<AppState>,
    user: CurrentUser,
    scopes: Scopes,
    credential: Option<Extension<Credential>>,
    Path(id): Path<ConversationId>,
    ApiJson(body): ApiJson<NewMessage>,
) -> Result<(StatusCode, Json<MessageAccepted>), ApiError> {
    // Only its owner writes in a chat (an admin reads it, and decides its calls on their cards).
    let conversation = access::own_conversation(&state.reads, &user, &id).await?;
    let text = body.text.trim();
    if text.is_empty() {
        return Err(ApiError::invalid("text", "the message is empty"));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::invalid("text", format!("the message is longer than {MAX_MESSAGE_CHARS} characters")));
    }
    // A conversation waiting for a yes/no in the chat takes the message as the answer, which is
    // a decision like any other: it counts against the user's decision rate limit. Without one,
    // no write transaction is opened to look again (a confirmation asked meanwhile makes the
    // turn below a conflict, as it would a moment later).
    if state.reads.pending_in_chat(&conversation.id).await?.is_some() {
        // The answer decides a call: a token that may only call (an agent's own) cannot give it.
        if !scopes.allows(Scope::Decide) {
            return Err(ApiError::Forbidden(
                "this chat waits for a yes or no, which decides a call: that needs a token with the decide scope".into(),
            ));
        }
        if let Some(reply) = state.decisions.answer_in_chat(&conversation.id, text, &access::actor(&user)).await? {
            let answer = match reply.answer {
                ChatAnswer::Yes if reply.counted => "counted",
                ChatAnswer::Yes => "approved",
                ChatAnswer::No => "rejected",
                ChatAnswer::Unclear => "asked_again",
            };
            return Ok((
                StatusCode::ACCEPTED,
                Json(MessageAccepted { task_id: reply.task_id, approval_id: Some(reply.approval_id), confirmation: Some(answer.into()) }),
            ));
        }
    }
    // Who started it: a token that may only call stops the turns it started and no others
    // (docs/security.md, "Tokens").
    let started_by = credential.as_ref().map(|Extension(Credential(key))| key.as_str());
    match state.task_driver.start_turn(&conversation, text, started_by).await {
        Ok(task_id) => Ok((StatusCode::ACCEPTED, Json(MessageAccepted { task_id, approval_id: None, confirmation: None }))),
        Err(err) => Err(err.into()),
    }
}

/// The conversation's event log as SSE: stored events after the resume point, then live ones.
/// A live event is sent straight from the bus when it is the next in sequence; any gap is read
/// from the store, so nothing is missed or sent twice.
#[utoipa::path(
    get,
    path = "/api/conversations/{id}/events",
    operation_id = "streamEvents",
    tag = "conversations",
    summary = "SSE stream of the conversation's events; id is the sequence number. Resumes after Last-Event-ID or ?after=N. Also carries unstored assistant-delta events (no id) while a model streams its reply.",
    params(("id" = ConversationId, Path), ("Last-Event-ID" = Option<i64>, Header, description = ""), ResumeQuery),
    responses(
        (status = 200, description = "text/event-stream of Event", body = String, content_type = "text/event-stream"),
        WriteErrors,
    ),
)]
#[tracing::instrument(skip(state, user, credential, headers))]
async fn stream(
    State(state): State<AppState>,
    user: CurrentUser,
    credential: Option<Extension<Credential>>,
    Path(id): Path<ConversationId>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ResumeQuery>,
) -> Result<Response, ApiError> {
    let conversation = access::visible_conversation(&state.reads, &user, &id).await?;
    let after = resume_point(&headers, &query);
    // Subscribe before reading the backlog so nothing committed in between is missed.
    let wake = state.reads.bus().subscribe();
    let deltas = state.reads.bus().subscribe_deltas();
    let client = state.task_driver.metrics().sse_client();
    let cursor = Cursor {
        reads: state.reads.clone(),
        conversation_id: id,
        last: after,
        // What the first read should return, as the conversation was read just now.
        behind: conversation.last_seq - after,
        backlog: VecDeque::new(),
        caught_up: false,
        wake,
        deltas,
        client,
    };
    let stream = futures::stream::unfold(cursor, |mut cursor| async move {
        let frame = match cursor.next().await? {
            Live::Event(event) => bus::event_frame(&event),
            Live::Published(published) => {
                cursor.client.sent(&published);
                published.sse_frame()
            }
            // An unstored piece of the reply being written: no `id:`, so it never moves the resume point.
            Live::Delta(delta) => bus::sse_frame("assistant-delta", None, &serde_json::to_string(&delta).expect("BUG: deltas serialize")),
        };
        Some((frame, cursor))
    });
    let stream = state.streams.bound(state.reads.bus(), &user, credential.map(|c| c.0), stream)?;
    Ok(event_stream::response(stream))
}

enum Live {
    // Boxed: an event (an approval with its assessment) is much larger than a delta.
    Event(Box<Event>),
    /// Sent as published, shared with every other stream.
    Published(Arc<Published>),
    Delta(AssistantDelta),
}

struct Cursor {
    reads: Reads,
    conversation_id: ConversationId,
    last: i64,
    /// About how many events a read of the store returns next (it picks the reader by it).
    behind: i64,
    backlog: VecDeque<Event>,
    /// The store held nothing after `last` when last read, and every event since came from the bus
    /// in order: the next one can only come from the bus, so the store is not read again until a
    /// gap (5,000 streams of one chat would otherwise make 5,000 reads per event).
    caught_up: bool,
    wake: broadcast::Receiver<Arc<Published>>,
    deltas: broadcast::Receiver<AssistantDelta>,
    /// Counts this stream in `countersign_sse_clients` while it is open, and times its live sends.
    client: crate::metrics::SseClient,
}

impl Cursor {
    /// The next event after `last`, or a delta once caught up; waits for one. `None` ends the
    /// stream (server shutting down or the database failing — the client reconnects with
    /// Last-Event-ID).
    async fn next(&mut self) -> Option<Live> {
        loop {
            if let Some(event) = self.backlog.pop_front() {
                self.last = event.seq;
                return Some(Live::Event(Box::new(event)));
            }
            if !self.caught_up {
                self.client.reads_store();
                let behind = std::mem::take(&mut self.behind);
                match self.reads.events_about_after(&self.conversation_id, self.last, behind).await {
                    Ok(events) if !events.is_empty() => {
                        self.backlog.extend(events);
                        continue;
                    }
                    Ok(_) => self.caught_up = true,
                    Err(err) => {
                        tracing::error!(error = ?err, "SSE backlog read failed");
                        return None;
                    }
                }
            }
            loop {
                let woken = tokio::select! {
                    // Stored events first, so a delta is only judged once the cursor caught up.
                    biased;
                    woken = self.wake.recv() => woken,
                    delta = self.deltas.recv() => match delta {
                        Ok(delta) if delta.conversation_id == self.conversation_id && delta.after_seq == self.last => return Some(Live::Delta(delta)),
                        // Missed deltas are fine: the stored reply replaces the draft.
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return None,
                    },
                };
                match woken {
                    // The next event in order: send it as published, no database read.
                    Ok(p) if p.event.conversation_id == self.conversation_id && p.event.seq == self.last + 1 => {
                        self.last = p.event.seq;
                        return Some(Live::Published(p));
                    }
                    // A gap (missed or out-of-order publication): read what is missing from the store.
                    Ok(p) if p.event.conversation_id == self.conversation_id && p.event.seq > self.last => {
                        self.caught_up = false;
                        self.behind = p.event.seq - self.last;
                        break;
                    }
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.caught_up = false;
                        // How much this conversation missed is not known: the reader for long reads.
                        self.behind = i64::MAX;
                        break;
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    }
}
