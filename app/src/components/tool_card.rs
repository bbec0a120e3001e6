use leptos::{prelude::*, task::spawn_local};
use serde_json::Value;

use super::{
    card_actions::{EditForm, ReasonForm, ReasonKind},
    json_diff::{JsonDiff, pretty},
    status_badge::{RiskBadge, StatusBadge},
};
use crate::{
    client::{self, ApiFailure},
    domain::{
        ApprovalOutcome, Card, CardStatus,
        wire::{ApproveRequest, DecisionOutcome, GrantRequest},
    },
    time::{countdown, parse_rfc3339_ms},
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Idle,
    Rejecting,
    Deferring,
    Editing,
}

/// Sends an approval (with edited args or not); the card's new state arrives over SSE.
pub fn send_approve(approval_id: String, request: ApproveRequest, busy: RwSignal<bool>, error: RwSignal<Option<ApiFailure>>) {
    busy.set(true);
    error.set(None);
    spawn_local(async move {
        let result = client::post::<_, DecisionOutcome>(&format!("/api/approvals/{approval_id}/approve"), &request).await;
        busy.set(false);
        if let Err(failure) = result {
            error.set(Some(failure));
        }
    });
}

/// One tool call: what it is, its state, and for a pending one the decision controls.
#[component]
pub fn ToolCard(card: Card, now: RwSignal<i64>) -> impl IntoView {
    let waiting = card.status == CardStatus::PendingApproval;
    // A call confirmed in the chat is answered with yes or no in the composer, not with buttons.
    let in_chat = waiting && card.approval.as_ref().is_some_and(|a| a.in_chat);
    let pending = waiting && !in_chat;
    let approval_id = card.approval.as_ref().map(|a| a.approval_id.clone()).unwrap_or_default();
    let deadline = card.approval.as_ref().and_then(|a| parse_rfc3339_ms(&a.deadline));
    let escalated_by = card.approval.as_ref().and_then(|a| a.escalated_by.clone()).filter(|_| waiting);
    let mode = RwSignal::new(Mode::Idle);
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);

    let always = RwSignal::new(false);
    let approve = {
        let approval_id = approval_id.clone();
        move || {
            let grant = always.get_untracked().then(GrantRequest::default);
            send_approve(approval_id.clone(), ApproveRequest { args: None, grant }, busy, error)
        }
    };
    let on_keydown = {
        let approve = approve.clone();
        move |ev: leptos::ev::KeyboardEvent| {
            use leptos::wasm_bindgen::JsCast;
            if !pending || busy.get_untracked() || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                return;
            }
            let typing = ev
                .target()
                .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
                .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA"));
            if typing {
                return;
            }
            match ev.key().as_str() {
                "a" => {
                    ev.prevent_default();
                    approve();
                }
                "r" => {
                    ev.prevent_default();
                    mode.set(Mode::Rejecting);
                }
                _ => {}
            }
        }
    };

    let decision = card.decision.clone().map(|d| {
        let verb = match d.outcome {
            ApprovalOutcome::Approved => "Approved",
            ApprovalOutcome::Rejected => "Rejected",
            ApprovalOutcome::Expired => "Expired",
            ApprovalOutcome::Canceled => "Canceled",
            ApprovalOutcome::Deferred => "Deferred with guidance",
        };
        let who = if d.decided_by == "system" { String::new() } else { format!(" by {}", d.decided_by) };
        let reason = d.reason.clone().map(|r| format!(": {r}")).unwrap_or_default();
        let diff = d.edited_args.clone().map(|edited| {
            let before = pretty(&d.original_args);
            let after = pretty(&edited);
            view! {
                <p class="edited-note">"Arguments edited before approval:"</p>
                <JsonDiff before=Signal::stored(before) after=Signal::stored(after) />
            }
        });
        view! {
            <p class="decision">{format!("{verb}{who}{reason}")}</p>
            {diff}
        }
    });
    // A refused call never ran: its decision line says why, the model's stub result is not shown.
    let refused = matches!(card.status, CardStatus::Rejected | CardStatus::Expired | CardStatus::Canceled | CardStatus::Deferred);
    let result = card.result.clone().filter(|_| !refused).map(|output| {
        let text = output
            .get("message")
            .or_else(|| output.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| pretty(&output));
        let class = if card.status == CardStatus::Failed { "result result-error" } else { "result" };
        view! { <p class=class>{text}</p> }
    });
    let args_text = pretty(&card.args);
    let original_args = pretty(&card.args);
    let controls = pending.then(|| {
        let reject_id = approval_id.clone();
        let edit_id = approval_id.clone();
        let escalate_id = approval_id.clone();
        let defer_id = approval_id.clone();
        let approve_click = approve.clone();
        let escalate = move |_| {
            let id = escalate_id.clone();
            busy.set(true);
            error.set(None);
            spawn_local(async move {
                let result = client::post::<_, Value>(&format!("/api/approvals/{id}/escalate"), &serde_json::json!({})).await;
                busy.set(false);
                if let Err(failure) = result {
                    error.set(Some(failure));
                }
            });
        };
        let holder = escalated_by.clone().map(|by| view! {
            <p class="escalated" role="status">{format!("With the admins (escalated by {by}); only an admin can decide it now.")}</p>
        });
        let can_escalate = escalated_by.is_none();
        view! {
            {holder}
            <p class="countdown" aria-live="off">
                "Expires in "
                <span class="time-left">
                    {move || deadline.map(|d| countdown(d - now.get())).unwrap_or_else(|| "—".into())}
                </span>
            </p>
            <div class="actions" role="group" aria-label="Decision">
                <button class="btn btn-approve" disabled=move || busy.get() on:click=move |_| approve_click()>
                    "Approve"
                </button>
                <button class="btn btn-reject" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Rejecting)>
                    "Reject"
                </button>
                <button class="btn" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Editing)>
                    "Edit"
                </button>
                <button class="btn" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Deferring)>
                    "Defer…"
                </button>
                <label class="always">
                    <input type="checkbox" bind:checked=always />
                    {format!("Always allow {} in this chat", card.tool)}
                </label>
                {can_escalate.then(|| view! {
                    <button class="btn btn-link-plain" disabled=move || busy.get() on:click=escalate>"Hand to admins"</button>
                })}
            </div>
            <Show when=move || mode.get() == Mode::Rejecting>
                <ReasonForm kind=ReasonKind::Reject approval_id=reject_id.clone() busy error on_cancel=Callback::new(move |_| mode.set(Mode::Idle)) />
            </Show>
            <Show when=move || mode.get() == Mode::Deferring>
                <ReasonForm kind=ReasonKind::Defer approval_id=defer_id.clone() busy error on_cancel=Callback::new(move |_| mode.set(Mode::Idle)) />
            </Show>
            <Show when=move || mode.get() == Mode::Editing>
                <EditForm
                    approval_id=edit_id.clone()
                    original=original_args.clone()
                    busy
                    error
                    on_cancel=Callback::new(move |_| mode.set(Mode::Idle))
                />
            </Show>
        }
    });

    view! {
        <article
            class=format!("tool-card card-{}", card.status.as_str())
            data-call-id=card.call_id.clone()
            data-status=card.status.as_str()
            tabindex=if pending { "0" } else { "-1" }
            aria-label=format!("Tool call {}: {}", card.tool, card.summary)
            on:keydown=on_keydown
        >
            <header class="card-header">
                <code class="tool-name">{card.tool.clone()}</code>
                <span class="agent">"by " {card.agent.clone()}</span>
                <RiskBadge risk=card.risk />
                <StatusBadge status=card.status />
            </header>
            <p class="summary">{card.summary.clone()}</p>
            {card.granted_by.clone().map(|by| view! { <p class="granted">{format!("Allowed without asking: standing permission from {by}")}</p> })}
            <details class="args" open=waiting>
                <summary>"Arguments"</summary>
                <pre class="json">{args_text}</pre>
            </details>
            {decision}
            {result}
            {in_chat.then(|| view! {
                <p class="in-chat-note" role="status">"Waiting for your answer in the chat: reply yes or no."</p>
            })}
            {controls}
            {move || error.get().map(|e| view! {
                <div class="error" role="alert">
                    <p>{e.message.clone()}</p>
                    <ul>{e.details.iter().map(|d| view! { <li>{d.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
        </article>
    }
}
