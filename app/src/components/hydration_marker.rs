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
