use leptos::{html, prelude::*, task::spawn_local};
use leptos_router::{components::A, hooks::use_navigate};

use super::alert::ErrorLine;
use crate::{
    api,
    client::ApiFailure,
    data::Loaded,
    domain::wire::{Conversation, NewConversation},
};

/// The sidebar: New chat and the list of chats, the open one marked.
#[component]
pub fn ConversationList(
    conversations: Resource<Loaded<Vec<Conversation>>>,
    #[prop(into)] selected: Signal<Option<String>>,
) -> impl IntoView {
    let creating = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    // Whom a new chat talks to; empty means the default (first) agent.
    let agent = RwSignal::new(String::new());
    let agents = LocalResource::new(api::agents);
    // Inside a chat the picker starts at that chat's agent, so it never names another agent
    // than the one you are talking to (New chat then starts one with the same agent).
    Effect::new(move |_| {
        let Some(id) = selected.get() else { return };
        if let Some(Ok(list)) = conversations.get()
            && let Some(open) = list.iter().find(|c| *c.id == *id)
        {
            agent.set(open.agent.clone());
        }
    });
    // On a phone the list is a drawer (style/main.css; above 720 px it is always shown): open on
    // the home page, closed inside a chat, and its toggle works on both; choosing a chat closes it.
    let drawer_open = RwSignal::new(selected.with_untracked(Option::is_none));
    // The chats as last shown (set where the list is awaited, inside <Transition>).
    let shown = RwSignal::new(Vec::<Conversation>::new());
    Effect::new(move |_| drawer_open.set(selected.with(Option::is_none)));
    // Escape closes the open drawer from anywhere in it and gives focus back to its toggle, as a
    // disclosure does. Above 720 px the list is no drawer (its toggle is hidden): Escape is left alone.
    let toggle = NodeRef::<html::Button>::new();
    let close_on_escape = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() != "Escape" || !drawer_open.get_untracked() {
            return;
        }
        let Some(button) = toggle.get_untracked() else { return };
        if button.offset_width() == 0 {
            return;
        }
        ev.prevent_default();
        drawer_open.set(false);
        let _ = button.focus();
    };
    let waiting_total = move || {
        Suspend::new(async move {
            let n: i64 = conversations.await.map(|list| list.iter().map(|c| c.pending).sum()).unwrap_or(0);
            (n > 0).then(|| view! { <span class="pending-count" aria-label=format!("{n} waiting in all chats")>{n}</span> })
        })
    };
    let navigate = use_navigate();
    let new_chat = move |_| {
        let navigate = navigate.clone();
        creating.set(true);
        error.set(None);
        let chosen = agent.get_untracked();
        // A chat with nothing in it yet is reused, so pressing New chat twice makes one chat.
        let default_agent = agents.get_untracked().and_then(Result::ok).and_then(|list| list.first().map(|a| a.name.clone()));
        let wanted = if chosen.is_empty() { default_agent } else { Some(chosen.clone()) };
        let unused = shown.with_untracked(|list| {
            list.iter().find(|c| c.last_seq == 0 && wanted.as_deref().is_some_and(|w| w == c.agent)).map(|c| c.id.clone())
        });
        if let Some(id) = unused {
            creating.set(false);
            // Already in it: the next thing to do is to write.
            if selected.get_untracked().as_deref() == Some(id.as_str()) {
                crate::focus::composer();
            } else {
                navigate(&format!("/c/{id}"), Default::default());
            }
            return;
        }
        let body = NewConversation { title: None, agent: (!chosen.is_empty()).then_some(chosen) };
        spawn_local(async move {
            let result = api::create_conversation(&body).await;
            creating.set(false);
            match result {
                Ok(conversation) => {
                    conversations.refetch();
                    navigate(&format!("/c/{}", conversation.id), Default::default());
                }
                Err(failure) => error.set(Some(failure)),
            }
        });
    };
    let list = move || {
        Suspend::new(async move {
            let loaded = conversations.await;
            if let Ok(list) = &loaded {
                shown.set(list.clone());
            }
            match loaded {
                Ok(list) if list.is_empty() => view! { <p class="muted">"No chats yet."</p> }.into_any(),
                Ok(list) => view! {
                    <ul class="conversation-list">
                        {list
                            .into_iter()
                            .map(|c| {
                                // A plain closure over the list's `selected` (no signal of the row's own): a
                                // row re-rendered away while a navigation is under way has nothing disposed to read.
                                let id = c.id.clone();
                                let current = move || selected.try_with(|s| s.as_deref() == Some(id.as_str())).unwrap_or(false);
                                let waiting = (c.pending > 0).then(|| {
                                    let words = if c.pending == 1 { "1 call waits for a decision".to_owned() } else { format!("{} calls wait for a decision", c.pending) };
                                    view! { <span class="pending-count" title=words.clone() aria-label=words>{c.pending}</span> }
                                });
                                view! {
                                    <li class:current=current on:click=move |_| drawer_open.set(false)>
                                        <A href=format!("/c/{}", c.id) attr:aria-current={
                                            let current = current.clone();
                                            move || current().then_some("page")
                                        }>
                                            <span class="chat-title">{c.title}</span>
                                            <span class="chat-started">{started(&c.created_at)}</span>
                                            {waiting}
                                        </A>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                .into_any(),
                Err(e) => view! { <ErrorLine text=format!("Could not load chats: {e}") /> }.into_any(),
            }
        })
    };
    view! {
        <nav class="sidebar" aria-label="Chats" class:drawer-open=move || drawer_open.get() on:keydown=close_on_escape>
            <button
                type="button"
                node_ref=toggle
                class="btn drawer-toggle"
                aria-controls="chat-drawer"
                aria-expanded=move || if drawer_open.get() { "true" } else { "false" }
                on:click=move |_| drawer_open.update(|open| *open = !*open)
            >
                <span>{move || if drawer_open.get() { "Hide chats" } else { "Chats" }}</span>
                <Transition fallback=|| ()>{waiting_total}</Transition>
            </button>
            <div class="drawer" id="chat-drawer">
            <button class="btn btn-primary new-chat" disabled=move || creating.get() on:click=new_chat>
                {move || if creating.get() { "Creating…" } else { "New chat" }}
            </button>
            {move || {
                let list = agents.get().and_then(Result::ok).filter(|list| list.len() > 1)?;
                Some(view! {
                    <label class="agent-choice">
                        "New chat with "
                        <select on:change=move |ev| agent.set(event_target_value(&ev))>
                            {list.into_iter().map(|a| {
                                let value = a.name.clone();
                                let name = a.name.clone();
                                let label = if a.description.is_empty() { a.name.clone() } else { format!("{} — {}", a.name, a.description) };
                                view! { <option value=value prop:selected=move || agent.get() == name>{label}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                })
            }}
            {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
            <Transition fallback=|| view! { <p class="muted">"Loading chats…"</p> }>{list}</Transition>
            </div>
        </nav>
    }
}

/// When a chat was started ("started 3 min ago"), so chats with the same title can be told apart.
fn started(created_at: &str) -> String {
    format!("started {}", crate::time::ago(created_at))
}
