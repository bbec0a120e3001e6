use leptos::{prelude::*, task::spawn_local};
use leptos_router::hooks::use_query_map;

use crate::{
    api,
    components::{alert::ErrorLine, top_bar::navigate_hard},
    data::sign_in_loader,
    domain::wire::Login,
};

/// What a failed sign-in through the identity provider says (`?sign_in_error=`, set by
/// server/src/auth/oidc/; the details are in the server's log).
fn sign_in_error(code: &str) -> &'static str {
    match code {
        "unreachable" => "The identity provider could not be reached. Try again in a moment; if it stays so, tell an admin.",
        "issuer" => "The identity provider's name for itself is not this server's oidc.issuer. Tell an admin: the server's log names both.",
        "state" => "That sign-in was not started here or was already used. Start again.",
        "refused" => "The identity provider did not let you sign in.",
        "code" => "The identity provider would not confirm the sign-in (it was used already or took too long). Start again.",
        "client" => "The identity provider refused this server's client id, secret or auth method. Tell an admin: the log says why.",
        "token" => "The identity provider's answer did not verify, so you are not signed in. Tell an admin if it happens again.",
        "claims" => "The identity provider sent a claim this server cannot read or accept. Tell an admin: the server's log names it.",
        "stale" => "The identity provider did not ask you to sign in again. Start again.",
        "account" => "The identity provider's account cannot be used here (see the server's log, or ask an admin).",
        "server" => "Countersign could not finish signing you in. Try again in a moment; if it stays so, tell an admin.",
        _ => "Signing in failed. Start again.",
    }
}

/// `/login`. A plain form post works before hydration; after it, the JSON API is used so a
/// wrong password is reported without a page load. With an identity provider configured, its
/// button comes first; the password form is then for break-glass admins when passwords are off.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let next = move || crate::paths::local_path(query.read().get("next").as_deref());
    let failed = move || query.read().get("failed").is_some();
    // Set by the form post when the login limit refused the attempt.
    let retry_after = move || query.read().get("retry_after").and_then(|s| s.parse::<u64>().ok());
    let provider_error = move || query.read().get("sign_in_error").map(|code| sign_in_error(&code));
    let signed_out = move || query.read().get("signed_out").is_some();
    let options = Resource::new(|| (), {
        let load = sign_in_loader();
        move |_| load()
    });
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
    let password_form = move || {
        view! {
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
                    message.map(|m| view! { <ErrorLine text=m /> })
                }}
            </form>
        }
    };
    view! {
        <section class="login card" id="content" tabindex="-1">
            <h1>"Log in to Countersign"</h1>
            {move || signed_out().then(|| view! { <p class="muted" role="status">"You are signed out."</p> })}
            {move || provider_error().map(|m| view! { <ErrorLine text=m /> })}
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let options = options.await.unwrap_or(crate::domain::wire::SignInOptions { provider: None, password: true });
                    match options.provider {
                        None => password_form().into_any(),
                        Some(name) => {
                            let href = move || format!("/auth/oidc/login?next={}", crate::paths::query_value(&next()));
                            let provider = view! {
                                <a class="btn btn-primary sign-in-provider" href=href rel="external">{format!("Sign in with {name}")}</a>
                            };
                            if options.password {
                                view! { {provider} <p class="muted or">"or with a password"</p> {password_form()} }.into_any()
                            } else {
                                view! {
                                    {provider}
                                    <details class="break-glass">
                                        <summary>"Administrator sign-in (break-glass)"</summary>
                                        {password_form()}
                                    </details>
                                }
                                    .into_any()
                            }
                        }
                    }
                })}
            </Suspense>
        </section>
    }
}
