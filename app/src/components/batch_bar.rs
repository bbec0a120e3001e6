use crate::domain::TaskId;
use leptos::prelude::*;

use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::wire::RejectRequest,
};

/// Approve All / Reject All for a turn with two or more pending calls.
#[component]
pub fn BatchBar(
    task_id: TaskId,
    pending: usize,
    /// The viewer may approve every one of them (else Reject All only, as the server allows).
    approve_all: bool,
) -> impl IntoView {
    let busy = super::hydration_marker::busy_until_hydrated();
    let error = RwSignal::new(None::<ApiFailure>);
    let rejecting = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let approve_id = task_id.clone();
    let reject_id = task_id.clone();
    view! {
        <div class="batch-bar" role="group" aria-label="Decide all pending calls of this turn">
            <span>{format!("{pending} calls wait for your decision")}</span>
            {approve_all.then(|| view! {
                <button class="btn btn-approve" disabled=move || busy.get() on:click=move |_| {
                    let task_id = approve_id.clone();
                    in_background(busy, error, async move { api::approve_all(&task_id).await })
                }>
                    "Approve All"
                </button>
            })}
            <button class="btn btn-reject" disabled=move || busy.get() on:click=move |_| rejecting.set(true)>
                "Reject All"
            </button>
            <Show when=move || rejecting.get()>
                <form class="reject-form" on:submit={
                    let reject_id = reject_id.clone();
                    move |ev: leptos::ev::SubmitEvent| {
                        ev.prevent_default();
                        let text = reason.get_untracked().trim().to_owned();
                        let (task_id, request) = (reject_id.clone(), RejectRequest { reason: (!text.is_empty()).then_some(text) });
                        in_background(busy, error, async move { api::reject_all(&task_id, &request).await });
                    }
                }>
                    <label>"Reason for all (optional)" <input type="text" maxlength="500" bind:value=reason /></label>
                    <button type="submit" class="btn btn-reject" disabled=move || busy.get()>"Confirm reject all"</button>
                    <button type="button" class="btn" on:click=move |_| rejecting.set(false)>"Cancel"</button>
                </form>
            </Show>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e.message}</p> })}
        </div>
    }
}
