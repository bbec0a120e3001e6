use leptos::prelude::*;

use crate::{client::ApiFailure, session};

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

/// A request's failure, said where it was made (under a card, in the composer). A refused session
/// (401) is said in words with the login that comes back to this page, not as the API's text:
/// on a phone the top bar's notice (above) has scrolled out of view.
#[component]
pub fn FailureNote(failure: ApiFailure) -> impl IntoView {
    if failure.status == 401 {
        return view! {
            <div class="error session-ended-here" role="alert">
                <p>"Your session has ended: " <a href=session::login_here rel="external">"log in again"</a></p>
            </div>
        }
        .into_any();
    }
    let details = (!failure.details.is_empty()).then(|| {
        let items = failure.details.into_iter().map(|d| view! { <li>{d}</li> }).collect_view();
        view! { <ul>{items}</ul> }
    });
    view! {
        <div class="error" role="alert">
            <p>{failure.message}</p>
            {details}
        </div>
    }
    .into_any()
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
