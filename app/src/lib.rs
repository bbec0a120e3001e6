//! Countersign's Leptos application: pages, components and the domain types shared by the
//! server (SSR) and the browser (hydrated WASM).

pub mod components;
pub mod domain;
pub mod pages;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    StaticSegment,
    components::{Route, Router, Routes},
};

/// Name of the generated JS/WASM/CSS bundle; must match `output-name` in the workspace Cargo.toml.
pub const OUTPUT_NAME: &str = "countersign";

/// The HTML document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
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
        <Stylesheet id="leptos" href=format!("/pkg/{OUTPUT_NAME}.css") />
        <Title text="Countersign" />
        <Router>
            <components::hydration_marker::HydrationMarker />
            <main>
                <Routes fallback=pages::not_found::NotFound>
                    <Route path=StaticSegment("") view=pages::home::HomePage />
                </Routes>
            </main>
        </Router>
    }
}
