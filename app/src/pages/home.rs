use leptos::prelude::*;

/// Landing page of the walking skeleton: server-rendered text plus a button that only
/// responds once the page has hydrated.
#[component]
pub fn HomePage() -> impl IntoView {
    let approvals = RwSignal::new(0u32);
    view! {
        <header class="page-header">
            <h1>"Countersign"</h1>
            <p class="tagline">"Human approval for the risky tool calls of AI agents."</p>
        </header>
        <section class="card">
            <p>"Approvals counted in this tab: " <strong id="approval-count">{approvals}</strong></p>
            <button id="countersign-button" class="btn btn-primary" on:click=move |_| approvals.update(|n| *n += 1)>
                "Countersign"
            </button>
        </section>
    }
}
