use leptos::{html, prelude::*};
use serde_json::Value;

use super::{json_diff::JsonDiff, tool_card::send_approve};
use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::wire::{ApproveRequest, DeferRequest, RejectRequest},
};

/// What a reason form sends: a rejection (reason optional) or a deferral (guidance required).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReasonKind {
    Reject,
    Defer,
}

/// The text field and the confirming button of Reject and Defer. Focused when it opens (keyboard `r`).
#[component]
pub fn ReasonForm(
    kind: ReasonKind,
    approval_id: String,
    /// The text being written; kept by the card's row so it survives a re-render.
    text: RwSignal<String>,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    let input = NodeRef::<html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = input.get() {
            let _ = el.focus();
        }
    });
    let (label, button, placeholder) = match kind {
        ReasonKind::Reject => ("Reason (optional, the agent sees it)", "Confirm reject", "e.g. duplicate refund"),
        ReasonKind::Defer => ("Guidance for the agent (the call does not run)", "Send guidance", "e.g. refund only the shipping"),
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let approval_id = approval_id.clone();
        let value = text.get_untracked().trim().to_owned();
        in_background(busy, error, async move {
            match kind {
                ReasonKind::Reject => api::reject(&approval_id, &RejectRequest { reason: (!value.is_empty()).then_some(value) }).await,
                ReasonKind::Defer => api::defer(&approval_id, &DeferRequest { guidance: value }).await,
            }
        });
    };
    view! {
        <form class="reject-form" on:submit=submit>
            <label>
                {label}
                <input type="text" node_ref=input maxlength="2000" bind:value=text placeholder=placeholder required=kind == ReasonKind::Defer />
            </label>
            <div class="actions">
                <button type="submit" class="btn btn-reject" disabled=move || busy.get()>{button}</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            </div>
        </form>
    }
}

/// Edit the arguments as JSON, see the diff, approve with them. Invalid JSON is caught here;
/// schema violations come back from the server's 422 and show inline. The only approve action
/// while it is open is "Approve with these changes"; "Discard my edit" closes it.
#[component]
pub fn EditForm(
    approval_id: String,
    original: String,
    /// The JSON being edited; kept by the card's row so it survives a re-render.
    text: RwSignal<String>,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    if text.get_untracked().is_empty() {
        text.set(original.clone());
    }
    let parse_error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match serde_json::from_str::<Value>(&text.get_untracked()) {
            Ok(args) => {
                parse_error.set(None);
                send_approve(approval_id.clone(), ApproveRequest { args: Some(args), grant: None }, busy, error);
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
                <button type="submit" class="btn btn-approve" disabled=move || busy.get()>"Approve with these changes"</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Discard my edit"</button>
            </div>
        </form>
    }
}
