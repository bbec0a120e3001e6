use crate::domain::{CallId, TaskId, wording};
use std::time::Duration;

use leptos::{prelude::*, task::spawn_local};
use leptos_meta::Title;

use super::{
    alert::ErrorLine,
    batch_bar::BatchBar,
    card_draft::{CardDraft, Resync},
    composer::Composer,
    grant_list::GrantList,
    tool_card::ToolCard,
};
use crate::{
    api,
    client::ApiFailure,
    data::ChatData,
    domain::{
        Card, CardStatus, ConversationView, Item, TaskStatus, naming,
        rules::{Offer, Place, Viewer, offer},
    },
    focus,
    live::{self, LinkState},
    time::now_ms,
};

/// One row of the thread; cards are keyed by call id so a decision re-renders only its card.
#[derive(Clone, PartialEq)]
enum Row {
    User(i64, String),
    /// With the worker's name when a sub-agent wrote it.
    Assistant(i64, String, Option<String>),
    Card(CallId),
    /// Under a finished turn that asked people: what they decided and how long it took.
    Summary(TaskId, String),
}

impl Row {
    fn key(&self) -> String {
        match self {
            Row::User(seq, _) | Row::Assistant(seq, _, _) => format!("m{seq}"),
            Row::Card(call_id) => call_id.to_string(),
            Row::Summary(task_id, _) => format!("s{task_id}"),
        }
    }
}

fn rows(view: &ConversationView) -> Vec<Row> {
    let task_of = |item: &Item| match item {
        Item::User { task_id, .. } | Item::Assistant { task_id, .. } => task_id.clone(),
        Item::Card(card) => card.task_id.clone(),
    };
    // Each finished turn's summary goes right after its last item.
    let mut last = std::collections::HashMap::new();
    for (i, item) in view.items.iter().enumerate() {
        last.insert(task_of(item), i);
    }
    let mut rows = Vec::with_capacity(view.items.len());
    for (i, item) in view.items.iter().enumerate() {
        rows.push(match item {
            Item::User { seq, text, .. } => Row::User(*seq, text.clone()),
            Item::Assistant { seq, text, agent, .. } => Row::Assistant(*seq, text.clone(), agent.clone()),
            Item::Card(card) => Row::Card(card.call_id.clone()),
        });
        let task_id = task_of(item);
        if last.get(&task_id) == Some(&i)
            && let Some(task) = view.tasks.iter().find(|t| t.task_id == task_id && t.status.is_final())
            && let Some(line) = wording::turn_summary(&task.summary)
        {
            rows.push(Row::Summary(task_id, line));
        }
    }
    rows
}

/// `(task, pending)` when this card is the first of two or more pending calls of its turn.
/// Before the first of two or more calls of a turn that wait and that this viewer may all
/// decide: the turn, how many, and whether they may approve them all (four-eyes or a quorum
/// they already approved leaves them Reject All only, as the server would).
fn batch_before(view: &ConversationView, call_id: &str, viewer: &Viewer, requested: bool) -> Option<(TaskId, usize, bool)> {
    let card = view.card(call_id).filter(|c| c.status == CardStatus::PendingApproval)?;
    let pending: Vec<&Card> = view.cards().filter(|c| c.task_id == card.task_id && c.status == CardStatus::PendingApproval).collect();
    if pending.len() < 2 || pending[0].call_id.as_str() != call_id {
        return None;
    }
    let offers: Vec<Offer> = pending
        .iter()
        .map(|c| c.approval.as_ref().map(|a| offer(viewer, requested, a, Place::Chat, false)).unwrap_or_else(Offer::nothing))
        .collect();
    offers.iter().all(|o| o.decide).then(|| (card.task_id.clone(), pending.len(), offers.iter().all(|o| o.approve)))
}

/// The open chat: the thread folded from the event log, kept live over SSE, and the composer.
#[component]
pub fn ChatView(
    data: ChatData,
    #[prop(into)] on_sent: Callback<()>,
    /// Called when the number of calls waiting here changes (the sidebar shows it).
    #[prop(into)]
    on_pending_changed: Callback<()>,
) -> impl IntoView {
    let conversation = data.conversation.clone();
    let (viewer_is_admin, viewer_is_owner) = (data.viewer_is_admin, data.viewer_is_owner);
    let viewer_name = data.viewer_name.clone();
    let stands_in_for = data.stands_in_for.clone();
    let composer_viewer = Viewer { name: viewer_name.clone(), is_admin: viewer_is_admin, stands_in_for: stands_in_for.clone() };
    let data_policy_version = data.policy_version.clone();
    let view = RwSignal::new(data.view);
    let link = RwSignal::new(LinkState::Connecting);
    // A stream refused for want of a session is not "reconnecting": the top bar says why.
    let session_ended = crate::session::ended();
    // Cards clear a "cannot reach the server" error when the live stream is back.
    provide_context(link);
    // A card whose decision is refused because someone decided first folds in what the live
    // stream missed (card_draft.rs).
    provide_context(Resync(view));
    let now = RwSignal::new(now_ms());
    live::follow(conversation.id.clone(), view, link);
    #[cfg(feature = "hydrate")]
    if let Ok(handle) = set_interval_with_handle(move || now.set(now_ms()), Duration::from_secs(1)) {
        on_cleanup(move || handle.clear());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = Duration::from_secs(1);

    // A new item brings the latest row into view; earlier items put in front ("Show earlier") do not.
    let newest = Memo::new(move |_| view.with(|v| v.items.last().map(Item::seq)));
    Effect::new(move |before: Option<Option<i64>>| {
        let now = newest.get();
        if before != Some(now) {
            focus::latest_row();
        }
        now
    });

    // A new chat is named after its first message (the server does the same when it stores it).
    let stored_title = conversation.title.clone();
    let chat_title = move || {
        view.with(|v| {
            let first = match v.items.first() {
                Some(Item::User { text, .. }) => Some(text.as_str()),
                _ => None,
            };
            naming::shown_title(&stored_title, first)
        })
    };
    // Calls that arrive while the chat is open are brought into view (and take focus when nobody
    // is typing elsewhere); a new, empty chat puts the cursor in the composer.
    let pending_ids = Memo::new(move |_| {
        view.with(|v| v.cards().filter(|c| c.status == CardStatus::PendingApproval).map(|c| c.call_id.clone()).collect::<Vec<_>>())
    });
    Effect::new(move |before: Option<Vec<CallId>>| {
        let now = pending_ids.get();
        match &before {
            None if view.with_untracked(|v| v.items.is_empty()) => focus::composer(),
            Some(before) if now.iter().any(|id| !before.contains(id)) => focus::first_pending_card(false),
            _ => {}
        }
        now
    });
    // The page title is formatted after the body has rendered (leptos_meta); on a multi-threaded
    // server this view's signals may be disposed by then, even while the title reads these memos,
    // so they and the title fall back to the counts the page was rendered with instead of
    // panicking (which cut the page off mid-stream).
    let rendered_pending = view.with_untracked(ConversationView::pending_count);
    let rendered_reminded = view.with_untracked(ConversationView::reminded_count);
    let pending = count_of(view, ConversationView::pending_count);
    Effect::new(move |before: Option<usize>| {
        let now = pending.get();
        if before.is_some_and(|b| b != now) {
            on_pending_changed.run(());
        }
        now
    });
    let reminded = count_of(view, ConversationView::reminded_count);
    let title =
        move || wording::tab_title(pending.try_get().unwrap_or(rendered_pending), reminded.try_get().unwrap_or(rendered_reminded), None);
    let task_note = move || {
        view.with(|v| {
            let task = v.current_task()?;
            let text = match task.status {
                TaskStatus::Failed => format!("This turn failed: {}", task.message.clone().unwrap_or_default()),
                TaskStatus::Canceled => format!("This turn was stopped ({}).", task.message.clone().unwrap_or_else(|| "aborted".into())),
                _ => return None,
            };
            Some(view! { <p class="task-note" role="status">{text}</p> })
        })
    };
    let open_task = Memo::new(move |_| {
        view.with(|v| {
            v.current_task().filter(|t| matches!(t.status, TaskStatus::Working | TaskStatus::InputRequired)).map(|t| t.task_id.clone())
        })
    });
    let abort_error = RwSignal::new(None::<ApiFailure>);
    let abort = move |_| {
        let Some(task_id) = open_task.get_untracked() else { return };
        spawn_local(async move {
            if let Err(e) = api::abort(&task_id).await {
                abort_error.set(Some(e));
            }
        });
    };

    view! {
        <Title text=title />
        <header class="chat-header">
            <h1>{chat_title}</h1>
            <span class="agent-name">"Agent: " {conversation.agent.clone()}</span>
            <span class="link-state" data-state=move || format!("{:?}", link.get()).to_ascii_lowercase() role="status">
                {move || (link.get() == LinkState::Reconnecting && !session_ended.get()).then_some("Reconnecting…")}
            </span>
        </header>
        <GrantList view policy_version=data_policy_version.clone() />
        <div class="thread" role="log" aria-label="Conversation">
            <ShowEarlier conversation_id=conversation.id.clone() view />
            {move || view.with(|v| v.items.is_empty()).then(|| view! {
                <p class="muted empty-thread">"Ask the agent something, e.g. “refund order 1001” or “cancel all orders of alice”."</p>
            })}
            <For each=move || view.with(rows) key=Row::key let:row>
                {match row {
                    Row::User(_, text) => view! { <div class="bubble bubble-user">{text}</div> }.into_any(),
                    Row::Assistant(_, text, None) => view! { <div class="bubble bubble-assistant">{text}</div> }.into_any(),
                    Row::Assistant(_, text, Some(worker)) => view! {
                        <div class="bubble bubble-assistant bubble-worker">
                            <span class="worker-name">{format!("{worker} (sub-agent)")}</span>
                            {text}
                        </div>
                    }.into_any(),
                    Row::Card(call_id) => view! { <CardRow call_id view now viewer_is_admin viewer_is_owner viewer_name=viewer_name.clone() stands_in_for=stands_in_for.clone() /> }.into_any(),
                    Row::Summary(_, line) => view! { <p class="turn-summary">{line}</p> }.into_any(),
                }}
            </For>
            {move || view.with(|v| v.draft.as_ref().map(|d| d.text.clone())).map(|text| view! {
                <div class="bubble bubble-assistant bubble-draft" aria-busy="true">{text}</div>
            })}
            {task_note}
        </div>
        // Stuck to the bottom together, so "Stop this turn" is never under the composer.
        <div class="chat-footer">
        <Show when=move || open_task.get().is_some()>
            <button class="btn btn-link abort" on:click=abort>"Stop this turn"</button>
        </Show>
        {move || abort_error.get().map(|e| view! { <ErrorLine text=e.message /> })}
        // Only its owner writes in a chat: an admin reads another person's but may not write in it
        // (docs/api.md, `/api/conversations/{id}/messages`).
        {if viewer_is_owner {
            view! {
                <Composer
                    conversation_id=conversation.id.clone()
                    view
                    viewer=composer_viewer
                    requested=viewer_is_owner
                    on_sent
                />
            }.into_any()
        } else {
            view! { <p class="not-yours muted">{not_yours(conversation.owner.as_deref())}</p> }.into_any()
        }}
        </div>
    }
}

/// What a chat shows in place of the composer to someone who may read it but not write in it
/// (an admin in another person's chat).
fn not_yours(owner: Option<&str>) -> String {
    match owner {
        Some(owner) => format!("This is {owner}'s chat: only {owner} can write in it."),
        None => "This chat is someone else's: only its owner can write in it.".to_owned(),
    }
}

/// On a long chat's page (domain/src/page.rs): loads the items before it and puts them in front.
#[component]
fn ShowEarlier(conversation_id: crate::domain::ConversationId, view: RwSignal<ConversationView>) -> impl IntoView {
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    let load = move |_| {
        let Some(before) = view.with_untracked(|v| v.earlier) else { return };
        busy.set(true);
        error.set(None);
        let id = conversation_id.clone();
        spawn_local(async move {
            match api::earlier_items(&id, before).await {
                // Unless another click already put them there.
                Ok(earlier) => focus::keep_reading_position(|| {
                    view.update(|v| {
                        if v.earlier == Some(before) {
                            v.prepend(earlier)
                        }
                    })
                }),
                Err(failure) => error.set(Some(failure)),
            }
            busy.set(false);
        });
    };
    view! {
        <Show when=move || view.with(|v| v.earlier.is_some())>
            <div class="show-earlier">
                <button class="btn btn-link-plain" on:click=load.clone() disabled=move || busy.get() aria-busy=move || busy.get().to_string()>
                    {move || if busy.get() { "Loading earlier messages…" } else { "Show earlier messages" }}
                </button>
                {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
            </div>
        </Show>
    }
}

#[component]
fn CardRow(
    call_id: CallId,
    view: RwSignal<ConversationView>,
    now: RwSignal<i64>,
    viewer_is_admin: bool,
    viewer_is_owner: bool,
    viewer_name: String,
    stands_in_for: Vec<String>,
) -> impl IntoView {
    let card = {
        let call_id = call_id.clone();
        Memo::new(move |_| view.with(|v| v.card(&call_id).cloned()))
    };
    let viewer = Viewer { name: viewer_name.clone(), is_admin: viewer_is_admin, stands_in_for: stands_in_for.clone() };
    let batch = Memo::new(move |_| view.with(|v| batch_before(v, &call_id, &viewer, viewer_is_owner)));
    // Outlives each re-render of the card (a decision re-renders it), so an open form keeps its text.
    let draft = CardDraft::new();
    view! {
        {move || batch.get().map(|(task_id, pending, approve_all)| view! { <BatchBar task_id pending approve_all /> })}
        {move || card.get().map(|card| view! { <ToolCard card now draft viewer_is_admin viewer_requested=viewer_is_owner viewer_name=viewer_name.clone() stands_in_for=stands_in_for.clone() /> })}
    }
}

/// A count of the view's calls, kept current; once the view's signal is gone (disposed on the
/// server before the page title is formatted), the count the page was rendered with.
fn count_of(view: RwSignal<ConversationView>, count: fn(&ConversationView) -> usize) -> Memo<usize> {
    let rendered = view.with_untracked(count);
    Memo::new(move |_| view.try_with(count).unwrap_or(rendered))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server disposes a page's signals one by one; the title may read a count in between.
    #[test]
    fn a_count_read_after_its_view_was_disposed_is_the_rendered_count_not_a_panic() {
        let owner = Owner::new();
        owner.with(|| {
            let view = RwSignal::new(ConversationView::default());
            let pending = count_of(view, ConversationView::pending_count);
            view.dispose();
            assert_eq!(pending.try_get(), Some(0));
        });
    }
}
