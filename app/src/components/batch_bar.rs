use leptos::{prelude::*, task::spawn_local};

use crate::{
    client::{self, ApiFailure},
    domain::wire::{DecisionOutcome, RejectRequest},
};

/// Approve All / Reject All for a turn with two or more pending calls.
#[component]
pub fn BatchBar(task_id: String, pending: usize) -> impl IntoView {
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    let rejecting = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let send = move |task_id: String, action: &'static str, body: RejectRequest| {
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            let result = client::post::<_, Vec<DecisionOutcome>>(&format!("/api/tasks/{task_id}/{action}"), &body).await;
            busy.set(false);
            if let Err(failure) = result {
                error.set(Some(failure));
            }
        });
    };
    let approve_id = task_id.clone();
    let reject_id = task_id.clone();
    view! {
        <div class="batch-bar" role="group" aria-label="Decide all pending calls of this turn">
            <span>{format!("{pending} calls wait for your decision")}</span>
            <button class="btn btn-approve" disabled=move || busy.get() on:click=move |_| send(approve_id.clone(), "approve-all", RejectRequest::default())>
                "Approve All"
            </button>
            <button class="btn btn-reject" disabled=move || busy.get() on:click=move |_| rejecting.set(true)>
                "Reject All"
            </button>
            <Show when=move || rejecting.get()>
                <form class="reject-form" on:submit={
                    let reject_id = reject_id.clone();
                    move |ev: leptos::ev::SubmitEvent| {
                        ev.prevent_default();
                        let text = reason.get_untracked().trim().to_owned();
                        send(reject_id.clone(), "reject-all", RejectRequest { reason: (!text.is_empty()).then_some(text) });
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
