use crate::domain::ConversationId;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{
    components::{alert::ErrorLine, chat_view::ChatView, conversation_list::ConversationList},
    data::{chat_loader, conversations_loader},
};

/// `/` and `/c/:id`: the chat list beside the open chat.
#[component]
pub fn ChatPage() -> impl IntoView {
    let params = use_params_map();
    let selected = Memo::new(move |_| params.read().get("id"));
    let load_list = conversations_loader();
    let conversations = Resource::new(|| (), move |_| load_list());
    view! {
        <div class="layout">
            <ConversationList conversations selected />
            <section class="chat" aria-label="Chat" id="content" tabindex="-1">
                {move || match selected.get() {
                    None => view! {
                        <div class="welcome">
                            <h1>"Countersign"</h1>
                            <p>"Chat with an agent whose risky tool calls wait for your approval. Start with "<strong>"New chat"</strong>"."</p>
                        </div>
                    }
                    .into_any(),
                    Some(id) => {
                        let refresh_list = Callback::new(move |_| conversations.refetch());
                        view! { <OpenChat id=ConversationId::from(id) on_sent=refresh_list /> }.into_any()
                    }
                }}
            </section>
        </div>
    }
}

#[component]
/// `on_sent` refreshes the chat list: after a message (the title) and when the number of calls
/// waiting here changes (the list shows it).
fn OpenChat(id: ConversationId, on_sent: Callback<()>) -> impl IntoView {
    let load = chat_loader();
    let chat = Resource::new(move || id.clone(), load);
    // <Transition>, not <Suspense>: resources read further down (an open edit's schema and its
    // live preview, refetched on every keystroke) register with this boundary, and a <Suspense>
    // would swap the whole thread for the fallback each time they load (the focused field is
    // detached, the page scrolls to the top). The fallback shows on the first load only, as on
    // the queue page.
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading the conversation…"</p> }>
            {move || Suspend::new(async move {
                match chat.await {
                    Ok(Some(data)) => view! { <ChatView data on_sent on_pending_changed=on_sent /> }.into_any(),
                    Ok(None) => {
                        #[cfg(feature = "ssr")]
                        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
                            response.set_status(http::StatusCode::NOT_FOUND);
                        }
                        view! { <ErrorLine text="This conversation does not exist." /> }.into_any()
                    }
                    Err(e) => view! { <ErrorLine text=format!("Could not load the conversation: {e}") /> }.into_any(),
                }
            })}
        </Transition>
    }
}
