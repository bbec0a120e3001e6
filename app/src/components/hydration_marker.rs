use leptos::prelude::*;

/// An invisible element whose `data-hydrated` flips to `true` once the WASM client has taken over
/// the server-rendered page. End-to-end tests wait on it before they interact.
#[component]
pub fn HydrationMarker() -> impl IntoView {
    let hydrated = RwSignal::new(false);
    // Effects run only in the browser, so this is the moment hydration finished.
    Effect::new(move |_| hydrated.set(true));
    view! { <span id="hydration-marker" hidden data-hydrated=move || hydrated.get().to_string()></span> }
}

/// A form's "a request is on its way" flag, set until the page is hydrated. Before then its
/// buttons have no handlers yet: a click would do nothing and say nothing (and Enter in a field
/// would reload the page, losing what was typed), so they show as disabled, rendered so by the
/// server, until the client can act on them.
pub fn busy_until_hydrated() -> RwSignal<bool> {
    let busy = RwSignal::new(true);
    Effect::new(move |_| busy.set(false));
    busy
}
