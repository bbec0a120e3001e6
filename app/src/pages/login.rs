use leptos::{prelude::*, task::spawn_local};
use leptos_router::hooks::use_query_map;

use crate::{api, components::top_bar::navigate_hard, domain::wire::Login};

/// `/login`. A plain form post works before hydration; after it, the JSON API is used so a
/// wrong password is reported without a page load.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let next = move || crate::paths::local_path(query.read().get("next").as_deref());
    let failed = move || query.read().get("failed").is_some();
    // Set by the form post when the login limit refused the attempt.
    let retry_after = move || query.read().get("retry_after").and_then(|s| s.parse::<u64>().ok());
    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let login = Login { username: username.get_untracked(), password: password.get_untracked() };
        let target = next();
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            match api::log_in(&login).await {
                Ok(_) => navigate_hard(&target),
                Err(e) => {
                    busy.set(false);
                    error.set(Some(e.message));
                }
            }
        });
    };
    view! {
        <section class="login card" id="content" tabindex="-1">
            <h1>"Log in to Countersign"</h1>
            <form method="post" action=move || format!("/login?next={}", crate::paths::query_value(&next())) on:submit=submit>
                <label>"User name" <input type="text" name="username" autocomplete="username" required bind:value=username /></label>
                <label>"Password" <input type="password" name="password" autocomplete="current-password" required bind:value=password /></label>
                <button type="submit" class="btn btn-primary" disabled=move || busy.get()>
                    {move || if busy.get() { "Logging in…" } else { "Log in" }}
                </button>
                {move || {
                    let message = error
                        .get()
                        .or_else(|| retry_after().map(|s| format!("too many failed logins; try again in {s} s")))
                        .or_else(|| failed().then(|| "wrong user name or password".to_owned()));
                    message.map(|m| view! { <p class="error" role="alert">{m}</p> })
                }}
            </form>
        </section>
    }
}
