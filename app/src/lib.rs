//! Countersign's Leptos application: the pages and components that the server renders (SSR) and
//! the browser hydrates (WASM). What they show comes from the `domain` crate.
#![recursion_limit = "256"]

pub mod api;
pub mod client;
pub mod components;
pub mod data;
pub mod focus;
pub mod live;
pub mod notify;
pub mod pages;
pub mod paths;
pub mod queue_query;
pub mod session;

#[cfg(feature = "ssr")]
pub use components::replay_report::replay_report_html;

// The domain lives in its own crate (domain/), below the app, the engine and the server; the
// app names it as `crate::domain` and `crate::time` like its own modules.
use ::domain::{self, time};

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::{
    ParamSegment, SsrMode, StaticSegment,
    components::{Route, Router, Routes},
};

/// Name of the generated JS/WASM/CSS bundle; must match `output-name` in the workspace Cargo.toml.
pub const OUTPUT_NAME: &str = "countersign";

/// The HTML document around the app, rendered on the server only. The bundle's path names its
/// build (`pkg/<build>`, server/src/assets.rs); the page keeps that build id, so the browser can
/// tell when the server runs a newer one (app/src/session.rs).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let pkg = options.site_pkg_dir.to_string();
    let build = pkg.strip_prefix("pkg/").unwrap_or_default().to_owned();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name=session::BUILD_META content=build />
                <link rel="icon" href="data:," />
                <link rel="stylesheet" id="leptos" href=format!("/{pkg}/{OUTPUT_NAME}.css") />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Title text="Countersign" />
        <Router>
            <components::hydration_marker::HydrationMarker />
            // The first thing Tab reaches: past the top bar and the chat list to the page's content.
            <a class="skip-link" href="#content" rel="external" on:click=|ev| {
                ev.prevent_default();
                focus::content();
            }>"Skip to content"</a>
            <components::top_bar::TopBar />
            <main>
                <Routes fallback=pages::not_found::NotFound>
                    // Async: the whole page, every card in its state, is in the HTML before any script runs.
                    <Route path=StaticSegment("") view=pages::chat::ChatPage ssr=SsrMode::Async />
                    <Route path=(StaticSegment("c"), ParamSegment("id")) view=pages::chat::ChatPage ssr=SsrMode::Async />
                    <Route path=StaticSegment("approvals") view=pages::queue::QueuePage ssr=SsrMode::Async />
                    // Async: whether the viewer is an admin is settled in the HTML; the admin's parts
                    // load in the browser below it.
                    <Route path=StaticSegment("audit") view=pages::audit::AuditPage ssr=SsrMode::Async />
                    <Route path=StaticSegment("groups") view=pages::groups::GroupsPage ssr=SsrMode::Async />
                    // Async too: the configuration in force is in the HTML; a replay's report is drawn in the browser.
                    <Route path=StaticSegment("policy") view=pages::policy::PolicyPage ssr=SsrMode::Async />
                    // Async too: the login form is in the HTML, never behind a streamed fallback that
                    // only a script would swap (it must work with JavaScript off).
                    <Route path=StaticSegment("login") view=pages::login::LoginPage ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}
