//! The decision controls of a waiting card: who holds it, the deadline, the buttons this viewer
//! is offered (`rules::offer`, domain/src/rules/offer.rs) and the open form (reject, defer,
//! edit).

use leptos::prelude::*;
use serde_json::Value;

use super::{
    args_editor::EditForm,
    card_actions::{ReasonForm, ReasonKind},
    card_draft::{CardDraft, Mode},
    json_diff::pretty,
};
use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::{
        fold::CardApproval,
        rules::{NoApprove, Offer},
        wire::ApproveRequest,
        wording,
    },
    time::{countdown, parse_rfc3339_ms},
};

/// `approve`: the card's plain approval (with "always allow" when ticked, `always`).
#[component]
pub fn DecisionControls(
    approval: CardApproval,
    tool: String,
    args: Value,
    offer: Offer,
    draft: CardDraft,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    now: RwSignal<i64>,
    always: RwSignal<bool>,
    approve: Callback<()>,
    viewer_name: Option<String>,
    is_plan: bool,
) -> impl IntoView {
    let approval_id = approval.approval_id.clone();
    let deadline = parse_rfc3339_ms(&approval.deadline);
    let escalated_by = approval.escalated_by.clone();
    let escalated_to = approval.escalated_to.clone();
    let reminder = wording::reminder_line(&approval);
    let rules = approval.rules;
    let mode = draft.mode;
    // "Approve and always allow" is this reviewer's decision like Approve, so it goes through the
    // card's draft: focus moves on after it, and a call someone decided first says so.
    let send_approve = move |id, request, busy, error| draft.approve(id, request, busy, error);
    let four_eyes = offer.no_approve == Some(NoApprove::FourEyes);
    let approved_already = offer.no_approve == Some(NoApprove::ApprovedAlready);
    let no_approve = !offer.approve;
    let original_args = pretty(&args);
    let reject_id = approval_id.clone();
    let edit_id = approval_id.clone();
    let escalate_id = approval_id.clone();
    let defer_id = approval_id.clone();
    // Before hydration (and with JavaScript off) the buttons post this form (server/src/forms.rs);
    // once hydrated, their handlers act instead and the form never posts.
    let action = format!("/forms/approvals/{approval_id}");
    let back = crate::paths::here();
    // Edit and Hand to admins need the client: off until it has taken over.
    let live = super::hydration_marker::busy_until_hydrated();
    let escalate = move |_| {
        let id = escalate_id.clone();
        in_background(busy, error, async move { api::escalate(&id).await });
    };
    let holder = escalated_by.clone().map(|by| {
        let line = match &escalated_to {
            Some(to) => format!("With {to} (escalated by {by}); only {to} or an admin can decide it now."),
            None => format!("With the admins (escalated by {by}); only an admin can decide it now."),
        };
        view! { <p class="escalated" role="status">{line}</p> }
    });
    let can_escalate = offer.hand_over;
    let can_grant = offer.grant;
    let tool_name = tool.clone();
    // Approved like this before by the person looking: offer "always allow" outright.
    let suggestion = approval
        .suggestion
        .clone()
        .filter(|s| can_grant && viewer_name.as_ref().is_some_and(|me| me.eq_ignore_ascii_case(&s.by)))
        .map(|s| (approval_id.clone(), wording::suggestion_line(&tool, s.count, s.grant.ttl_secs), s.grant));
    view! {
        {holder}
        {reminder.map(|line| view! { <p class="reminder" role="status">{line}</p> })}
        <p class="countdown" aria-live="off">
            "Expires in "
            <span class="time-left">
                {move || deadline.map(|d| countdown(d - now.get())).unwrap_or_else(|| "—".into())}
            </span>
        </p>
        // While a form is open, its own buttons are the only way to decide: an open edit is
        // never discarded by a plain Approve.
        <Show when=move || mode.get() == Mode::Idle>
        {four_eyes.then(|| view! {
            <p class="four-eyes" role="note">"Four-eyes: you asked for this call, so someone else must approve it. You can still reject it."</p>
        })}
        // A gate that asks for a fresh sign-in: the server refuses an older one (403 saying so);
        // this link signs in again and comes back here.
        {rules.reauthenticate_secs.map(|secs| view! {
            <p class="fresh-sign-in" role="note">
                {format!("This gate asks for a sign-in within the last {}. ", wording::duration_words(i64::from(secs) * 1000))}
                <a href=fresh_sign_in_href() rel="external">"Sign in again"</a>
                " if yours is older."
            </p>
        })}
        {(approved_already && !four_eyes).then(|| view! {
            <p class="four-eyes" role="note">"You approved this call; it waits for the other approvers. You can still reject it."</p>
        })}
        {suggestion.clone().map(|(id, line, grant)| view! {
            <div class="grant-suggestion" role="note">
                <span>{line}</span>
                <button class="btn btn-approve" disabled=move || busy.get() || live.get() on:click=move |_| {
                    send_approve(id.clone(), ApproveRequest { args: None, grant: Some(grant.clone()) }, busy, error)
                }>"Approve and always allow"</button>
            </div>
        })}
        <p class="shortcuts">"Keys on this card: "{(!no_approve).then(|| view! { <kbd>"A"</kbd>" approve · " })}<kbd>"R"</kbd>" reject"</p>
        <form class="decide-form" method="post" action=action.clone() on:submit=|ev| ev.prevent_default()>
        <input type="hidden" name="back" value=back.clone() />
        <div class="actions" role="group" aria-label="Decision">
            {(!no_approve).then(|| view! {
                <button type="submit" name="decision" value="approve" class="btn btn-approve" aria-keyshortcuts="a" disabled=move || busy.get()
                    on:click=move |ev| { ev.prevent_default(); approve.run(()) }>
                    "Approve"
                </button>
            })}
            <button type="submit" name="decision" value="reject" class="btn btn-reject" aria-keyshortcuts="r" disabled=move || busy.get()
                on:click=move |ev| { ev.prevent_default(); mode.set(Mode::Rejecting) }>
                "Reject"
            </button>
            // A gate with `allow_modification = false` takes the call as proposed or not at all.
            {offer.edit.then(|| view! {
                <button type="button" class="btn" disabled=move || busy.get() || live.get() on:click=move |_| mode.set(Mode::Editing)>
                    "Edit"
                </button>
            })}
            <button type="submit" name="decision" value="defer" class="btn" disabled=move || busy.get()
                on:click=move |ev| { ev.prevent_default(); mode.set(Mode::Deferring) }>
                "Defer…"
            </button>
            {can_grant.then(|| view! {
                <label class="always">
                    <input type="checkbox" name="always" value="1" bind:checked=always />
                    {format!("Always allow {tool_name} in this chat")}
                </label>
            })}
            {can_escalate.then(|| view! {
                <button type="button" class="btn btn-link-plain" disabled=move || busy.get() || live.get() on:click=escalate.clone()>"Hand to admins"</button>
            })}
        </div>
        </form>
        </Show>
        <Show when=move || mode.get() == Mode::Rejecting>
            <ReasonForm kind=ReasonKind::Reject approval_id=reject_id.clone() draft busy error reason_required=rules.require_reason on_cancel=Callback::new(move |_| draft.close()) />
        </Show>
        <Show when=move || mode.get() == Mode::Deferring>
            <ReasonForm kind=ReasonKind::Defer approval_id=defer_id.clone() draft busy error on_cancel=Callback::new(move |_| draft.close()) />
        </Show>
        <Show when=move || mode.get() == Mode::Editing>
            <EditForm
                approval_id=edit_id.clone()
                original=original_args.clone()
                draft
                is_plan
                busy
                error
                on_cancel=Callback::new(move |_| draft.close())
            />
        </Show>
    }
}

/// `/auth/again?next=<this page>`: the identity provider's sign-in asked to check the person
/// again (or the login page when there is none), back to where the person is.
fn fresh_sign_in_href() -> String {
    let here = leptos_router::hooks::use_location().pathname.get_untracked();
    format!("/auth/again?next={}", crate::paths::query_value(&here))
}
