use leptos::prelude::*;
use leptos_router::components::A;

use super::session_notice::{SessionNotice, UpdateNotice};
use crate::{
    data::{Loaded, me_loader},
    domain::{Role, wire::Me},
    session,
};

/// Brand, navigation for admins, who is logged in, and Log out.
#[component]
pub fn TopBar() -> impl IntoView {
    let load = me_loader();
    let me: Resource<Loaded<Option<Me>>> = Resource::new(|| (), move |_| load());
    let ended = session::ended();
    view! {
        <header class="top-bar">
            <a class="brand" href="/">"Countersign"</a>
            <UpdateNotice />
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await.ok().flatten().map(|me| {
                        let admin = me.role == Role::Admin;
                        view! {
                            <nav class="top-links" aria-label="Main">
                                <A href="/">"Chats"</A>
                                <A href="/approvals">"Approval queue"</A>
                                {admin.then(|| view! { <A href="/audit">"Audit"</A><A href="/groups">"Groups"</A><A href="/policy">"Policy"</A> })}
                            </nav>
                            <crate::notify::NotifyToggle />
                            <Show
                                when=move || !ended.get()
                                fallback=|| view! { <SessionNotice /> }
                            >
                                <span class="whoami">{me.username.clone()} {admin.then_some(" (admin)")}</span>
                                // A form post: it works before hydration, and the server may send the
                                // browser on to the identity provider to end that session too.
                                <form class="logout-form" method="post" action="/logout">
                                    <button type="submit" class="btn btn-small logout">"Log out"</button>
                                </form>
                            </Show>
                        }
                    })
                })}
            </Transition>
        </header>
    }
}

/// A full page load (so the server renders the next page with the new session state).
pub fn navigate_hard(path: &str) {
    #[cfg(feature = "hydrate")]
    {
        let _ = leptos::prelude::window().location().set_href(path);
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = path;
    }
}
