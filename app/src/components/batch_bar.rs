use crate::domain::TaskId;
use leptos::prelude::*;

use super::session_notice::FailureNote;
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
    // Enabled from the first paint: before hydration (and with JavaScript off) the buttons post a
    // form (server/src/forms.rs); once hydrated, their handlers act instead.
    let busy = RwSignal::new(false);
    let action = format!("/forms/tasks/{task_id}");
    let back = crate::paths::here();
    let error = RwSignal::new(None::<ApiFailure>);
    let rejecting = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let approve_id = task_id.clone();
    let reject_id = task_id.clone();
    view! {
        <div class="batch-bar" role="group" aria-label="Decide all pending calls of this turn">
            <span>{format!("{pending} calls wait for your decision")}</span>
            <form class="decide-form" method="post" action=action>
                <input type="hidden" name="back" value=back />
                {approve_all.then(|| view! {
                    <button type="submit" name="decision" value="approve" class="btn btn-approve" disabled=move || busy.get() on:click=move |ev| {
                        ev.prevent_default();
                        let task_id = approve_id.clone();
                        in_background(busy, error, async move { api::approve_all(&task_id).await })
                    }>
                        "Approve All"
                    </button>
                })}
                <button type="submit" name="decision" value="reject" class="btn btn-reject" disabled=move || busy.get()
                    on:click=move |ev| { ev.prevent_default(); rejecting.set(true) }>
                    "Reject All"
                </button>
            </form>
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
            {move || error.get().map(|failure| view! { <FailureNote failure /> })}
        </div>
    }
}
