use crate::domain::ApprovalId;
use leptos::{html, prelude::*};

use super::card_draft::CardDraft;
use crate::{
    api,
    client::ApiFailure,
    domain::wire::{DeferRequest, RejectRequest},
};

/// What a reason form sends: a rejection (reason optional) or a deferral (guidance required).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReasonKind {
    Reject,
    Defer,
}

/// The text field and the confirming button of Reject and Defer. Focused when it opens (keyboard
/// `r`), and scrolled into view whole, its buttons above the chat's sticky composer.
#[component]
pub fn ReasonForm(
    kind: ReasonKind,
    approval_id: ApprovalId,
    /// The card row's draft: the text being written survives a re-render.
    draft: CardDraft,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    on_cancel: Callback<()>,
    /// The gate requires a reason to reject (`require_reason`).
    #[prop(optional)]
    reason_required: bool,
) -> impl IntoView {
    let text = draft.reason;
    let input = NodeRef::<html::Input>::new();
    let form = NodeRef::<html::Form>::new();
    // Scrolled into view whole only when it takes focus (not when drawn again elsewhere).
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(el) = input.get()
            && crate::focus::opened_field(&el)
            && let Some(form) = form.get()
        {
            crate::focus::whole_form(form);
        }
    });
    let (label, button, placeholder) = match kind {
        ReasonKind::Reject if reason_required => {
            ("Reason (required for this call; the agent sees it)", "Confirm reject", "e.g. duplicate refund")
        }
        ReasonKind::Reject => ("Reason (optional, the agent sees it)", "Confirm reject", "e.g. duplicate refund"),
        ReasonKind::Defer => ("Guidance for the agent (the call does not run)", "Send guidance", "e.g. refund only the shipping"),
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let approval_id = approval_id.clone();
        let value = text.get_untracked().trim().to_owned();
        draft.send(approval_id.clone(), busy, error, async move {
            match kind {
                ReasonKind::Reject => api::reject(&approval_id, &RejectRequest { reason: (!value.is_empty()).then_some(value) }).await,
                ReasonKind::Defer => api::defer(&approval_id, &DeferRequest { guidance: value }).await,
            }
        });
    };
    view! {
        <form class="reject-form" node_ref=form on:submit=submit>
            <label>
                {label}
                <input type="text" node_ref=input maxlength="2000" bind:value=text placeholder=placeholder required=kind == ReasonKind::Defer || reason_required />
            </label>
            <div class="actions">
                <button type="submit" class="btn btn-reject" disabled=move || busy.get()>{button}</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            </div>
        </form>
    }
}
