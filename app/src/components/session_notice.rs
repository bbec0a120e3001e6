use leptos::prelude::*;

use crate::session;

/// Said once the server refuses this browser's session: what happened, that nothing typed is
/// lost, and a login that comes back to this page. Replaces the top bar's name and Log out.
#[component]
pub fn SessionNotice() -> impl IntoView {
    view! {
        <div class="session-ended" role="alert">
            <span>"Your session has ended. What you typed is kept."</span>
            <a class="btn btn-small btn-primary" href=session::login_here rel="external">"Log in again"</a>
        </div>
    }
}

/// Said once the server runs a newer build than this page's bundle: the page may no longer
/// understand the server, so a reload (which fetches the new bundle) is offered.
#[component]
pub fn UpdateNotice() -> impl IntoView {
    let outdated = session::outdated();
    view! {
        <Show when=move || outdated.get()>
            <div class="session-ended update-available" role="alert">
                <span>"A new version of Countersign is available."</span>
                <button type="button" class="btn btn-small btn-primary" on:click=|_| reload()>"Reload"</button>
            </div>
        </Show>
    }
}

fn reload() {
    #[cfg(feature = "hydrate")]
    {
        let _ = window().location().reload();
    }
}
