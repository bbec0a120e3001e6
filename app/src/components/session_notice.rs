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
