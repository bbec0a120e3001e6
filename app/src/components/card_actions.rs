use leptos::{html, prelude::*, task::spawn_local};
use serde_json::Value;

use super::{json_diff::JsonDiff, tool_card::send_approve};
use crate::{
    client::{self, ApiFailure},
    domain::wire::{DecisionOutcome, RejectRequest},
};

/// Reason field and the confirming Reject button. Focused when it opens (keyboard `r`).
#[component]
pub fn RejectForm(approval_id: String, busy: RwSignal<bool>, error: RwSignal<Option<ApiFailure>>, on_cancel: Callback<()>) -> impl IntoView {
    let reason = RwSignal::new(String::new());
    let input = NodeRef::<html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = input.get() {
            let _ = el.focus();
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let approval_id = approval_id.clone();
        let text = reason.get_untracked().trim().to_owned();
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            let body = RejectRequest { reason: (!text.is_empty()).then_some(text) };
            let result = client::post::<_, DecisionOutcome>(&format!("/api/approvals/{approval_id}/reject"), &body).await;
            busy.set(false);
            if let Err(failure) = result {
                error.set(Some(failure));
            }
        });
    };
    view! {
        <form class="reject-form" on:submit=submit>
            <label>
                "Reason (optional, the agent sees it)"
                <input type="text" node_ref=input maxlength="500" bind:value=reason placeholder="e.g. duplicate refund" />
            </label>
            <div class="actions">
                <button type="submit" class="btn btn-reject" disabled=move || busy.get()>"Confirm reject"</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            </div>
        </form>
    }
}

/// Edit the arguments as JSON, see the diff, approve with them. Invalid JSON is caught here;
/// schema violations come back from the server's 422 and show inline.
#[component]
pub fn EditForm(
    approval_id: String,
    original: String,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    let text = RwSignal::new(original.clone());
    let parse_error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match serde_json::from_str::<Value>(&text.get_untracked()) {
            Ok(args) => {
                parse_error.set(None);
                send_approve(approval_id.clone(), Some(args), busy, error);
            }
            Err(err) => parse_error.set(Some(format!("Not valid JSON: {err}"))),
        }
    };
    let before = Signal::stored(original);
    view! {
        <form class="edit-form" on:submit=submit>
            <label>
                "Arguments (JSON)"
                <textarea class="json-input" rows="6" spellcheck="false" bind:value=text></textarea>
            </label>
            <JsonDiff before after=Signal::derive(move || text.get()) />
            {move || parse_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <div class="actions">
                <button type="submit" class="btn btn-approve" disabled=move || busy.get()>"Approve with these arguments"</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            </div>
        </form>
    }
}
