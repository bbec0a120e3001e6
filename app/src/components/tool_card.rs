use leptos::prelude::*;

use super::{
    card_controls::DecisionControls,
    card_draft::{CardDraft, Mode},
    card_parts::{Assessment, CardOutcome, Superseded},
    json_diff::pretty,
    question_card::QuestionCard,
    session_notice::FailureNote,
    status_badge::{RiskBadge, StatusBadge},
};
use crate::{
    client::ApiFailure,
    domain::{
        Card, CardStatus, naming, rules,
        wire::{ApproveRequest, GrantRequest},
        wording,
    },
    live::LinkState,
};

/// One tool call: what it is, its state, and for a pending one the decision controls.
///
/// `viewer_is_admin`: whether the person looking is an admin (`None`: not known; the server
/// refuses a decision it does not allow either way). `viewer_requested`: the person looking owns
/// the chat that made the call (a four-eyes gate leaves them Reject only). `in_queue`: shown in the approval queue,
/// where an admin decides other people's calls: no "Always allow in this chat" for them.
#[component]
pub fn ToolCard(
    card: Card,
    now: RwSignal<i64>,
    #[prop(optional)] draft: Option<CardDraft>,
    #[prop(optional)] viewer_is_admin: Option<bool>,
    #[prop(optional)] viewer_requested: bool,
    #[prop(optional, into)] viewer_name: Option<String>,
    /// The people the viewer decides in place of (a delegation): their approvals are theirs too.
    #[prop(optional)]
    stands_in_for: Vec<String>,
    #[prop(optional)] in_queue: bool,
) -> impl IntoView {
    let draft = draft.unwrap_or_default();
    let waiting = card.status == CardStatus::PendingApproval;
    // The card is drawn anew at each change, and the old one leaves the page with whatever had
    // focus in it (the button just pressed, or the card itself after `a`), which would drop focus
    // to the page. After this reviewer's own decision it moves on to the next call that waits for
    // them, or stays on this card (focus.rs); otherwise a card that had focus keeps it.
    if !waiting && draft.refocus.get_untracked() {
        draft.refocus.set(false);
        crate::focus::after_decision(card.call_id.to_string());
    } else if crate::focus::is_in_card(card.call_id.as_str()) {
        crate::focus::card(card.call_id.to_string());
    }
    // The agent's question to the user is a card of its own kind.
    if card.tool == naming::ASK_USER {
        return view! { <QuestionCard card now draft /> }.into_any();
    }
    // A call confirmed in the chat is answered with yes or no in the composer, not with buttons.
    let in_chat = waiting && card.approval.as_ref().is_some_and(|a| a.in_chat);
    let approval_id = card.approval.as_ref().map(|a| a.approval_id.clone()).unwrap_or_default();
    let escalated_by = card.approval.as_ref().and_then(|a| a.escalated_by.clone()).filter(|_| waiting);
    let rules = card.approval.as_ref().map(|a| a.rules).unwrap_or_default();
    let reminder = card.approval.as_ref().filter(|_| waiting).and_then(wording::reminder_line);
    // A reminded card stands out (style/main.css `.reminded`) until it is decided.
    let reminded_class = if reminder.is_some() { " reminded" } else { "" };
    // Handed to the admins: a user sees who has it, not buttons the server would refuse.
    let escalated_to = card.approval.as_ref().and_then(|a| a.escalated_to.clone()).filter(|_| waiting);
    // What this viewer may press: the same rules the server checks (domain/src/rules/offer.rs).
    let viewer = rules::Viewer {
        name: viewer_name.clone().unwrap_or_default(),
        is_admin: viewer_is_admin.unwrap_or_default(),
        stands_in_for: stands_in_for.clone(),
    };
    let place = if in_queue { rules::Place::Queue } else { rules::Place::Chat };
    let offer = card
        .approval
        .as_ref()
        .filter(|_| waiting)
        .map(|a| rules::offer(&viewer, viewer_requested, a, place, naming::grantable(&card.tool)))
        .unwrap_or_else(rules::Offer::nothing);
    let held_for_admins = matches!(offer.held, Some(rules::Refusal::WithTheAdmins { .. } | rules::Refusal::WithOthers { .. }));
    let holder_name = escalated_to.clone().unwrap_or_else(|| "the admins".into());
    // Not among the gate's approvers (until someone hands it over): the card names who decides.
    let not_approver = match &offer.held {
        Some(rules::Refusal::NotAnApprover { approvers }) => Some(approvers.clone()),
        _ => None,
    };
    // A quorum: who approved so far; one who did waits for the others.
    let approved_by = card.approval.as_ref().map(|a| a.approved_by.clone()).unwrap_or_default();
    let quorum_line = (waiting && rules.quorum > 1).then(|| wording::quorum_line(&approved_by, rules.quorum));
    let pending = offer.decide;
    let no_approve = !offer.approve;
    let mode = draft.mode;
    // Enabled from the first paint: before hydration its buttons post forms (card_controls.rs).
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    // A network failure (status 0) is stale once the chat's live stream is connected again.
    if let Some(link) = use_context::<RwSignal<LinkState>>() {
        Effect::new(move |_| {
            if link.get() == LinkState::Live && error.with_untracked(|e| e.as_ref().is_some_and(|e| e.status == 0)) {
                error.set(None);
            }
        });
    }

    let always = RwSignal::new(false);
    let approve = {
        let approval_id = approval_id.clone();
        move || {
            let grant = always.get_untracked().then(GrantRequest::default);
            draft.approve(approval_id.clone(), ApproveRequest { args: None, grant }, busy, error)
        }
    };
    // Shortcuts act only when the card itself has focus (not a button or field inside it) and no
    // form is open; Escape closes an open form from anywhere in the card.
    let on_keydown = {
        let approve = approve.clone();
        move |ev: leptos::ev::KeyboardEvent| {
            if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                return;
            }
            if ev.key() == "Escape" && mode.get_untracked() != Mode::Idle {
                ev.prevent_default();
                draft.close();
                focus_card(&ev);
                return;
            }
            let on_card_itself = ev.target().is_some() && ev.target() == ev.current_target();
            if !pending || !on_card_itself || busy.get_untracked() || mode.get_untracked() != Mode::Idle {
                return;
            }
            match ev.key().as_str() {
                "a" | "A" if !no_approve => {
                    ev.prevent_default();
                    approve();
                }
                "r" | "R" => {
                    ev.prevent_default();
                    mode.set(Mode::Rejecting);
                }
                _ => {}
            }
        }
    };

    // A held final answer is read as the text the user will get, not as JSON.
    let draft_answer = (card.tool == naming::FINAL_ANSWER).then(|| card.args["text"].as_str().unwrap_or_default().to_owned());
    // A plan lists its calls, each with its exact arguments (the JSON stays folded).
    let is_plan = card.tool == naming::PROPOSE_PLAN;
    let plan_steps = is_plan.then(|| {
        card.args["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| (s["tool"].as_str().unwrap_or_default().to_owned(), s["args"].to_string()))
            .collect::<Vec<_>>()
    });
    let args_text = pretty(&card.args);
    view! {
        <article
            class=format!("tool-card card-{}{reminded_class}", card.status.as_str())
            data-call-id=card.call_id.to_string()
            data-status=card.status.as_str()
            tabindex=if pending { "0" } else { "-1" }
            aria-label=format!("Tool call {}: {}", card.tool, card.summary)
            on:keydown=on_keydown
        >
            <header class="card-header">
                <span class="tool-title">{naming::tool_title(&card.tool)}</span>
                <code class="tool-name">{card.tool.clone()}</code>
                <span class="agent">"by " {card.agent.clone()}</span>
                <RiskBadge risk=card.risk />
                <StatusBadge status=card.status />
                // A policy being tried out: it would have asked, and let the call run.
                {card.shadow_gate.clone().map(|gate| view! {
                    <span class="badge shadow" title="This gate is in shadow mode: it records what it would have stopped and stops nothing">
                        {format!("Shadow: {gate} would have asked")}
                    </span>
                })}
            </header>
            // A heading per card, so screen-reader users can jump from card to card.
            <h2 class="summary">{card.summary.clone()}</h2>
            {(!card.warnings.is_empty() && waiting).then(|| view! {
                <ul class="card-warnings" aria-label="Check before deciding">
                    {card.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}
                </ul>
            })}
            {card.approval.clone().filter(|_| waiting).map(|approval| view! { <Assessment approval warnings=card.warnings.clone() /> })}
            {card.granted_by.clone().map(|by| {
                let line = if card.planned {
                    format!("Allowed without asking: a step of the plan {by} approved")
                } else {
                    format!("Allowed without asking: standing permission from {by}")
                };
                view! { <p class="granted">{line}</p> }
            })}
            // Why it was asked, or not: the gate, its rule and what the rule looked at.
            {card.why.clone().map(|why| view! { <details class="why"><summary>"Why?"</summary><p>{why}</p></details> })}
            {plan_steps.map(|steps| view! {
                <ol class="plan-steps" aria-label="Planned calls">
                    {steps.into_iter().map(|(tool, args)| view! { <li><code>{tool}</code>" "<code class="plan-args">{args}</code></li> }).collect_view()}
                </ol>
            })}
            {match draft_answer {
                Some(text) => view! { <blockquote class="draft-answer" aria-label="Draft answer">{text}</blockquote> }.into_any(),
                // A plan's steps above already show each call with its exact arguments.
                None if is_plan => ().into_any(),
                None => view! {
                    <details class="args" open=waiting && !is_plan>
                        <summary>"Arguments"</summary>
                        <pre class="json">{args_text}</pre>
                    </details>
                }.into_any(),
            }}
            <CardOutcome card=card.clone() />
            {in_chat.then(|| view! {
                <p class="in-chat-note" role="status">"Waiting for your answer in the chat: reply yes or no."</p>
            })}
            {quorum_line.map(|line| view! { <p class="quorum" role="status">{line}</p> })}
            {not_approver.map(|who| view! {
                <p class="escalated not-approver" role="status">{format!("Waiting for {who}: only they may decide this call (its gate's approvers).")}</p>
            })}
            {held_for_admins.then(|| view! {
                <p class="escalated waiting-for-admin" role="status">
                    {match &escalated_to {
                        Some(_) => format!(
                            "Waiting for {holder_name}: {} handed this call to {holder_name}, so only they or an admin can decide it now.",
                            escalated_by.clone().unwrap_or_default()
                        ),
                        None => format!(
                            "Waiting for an admin: {} handed this call to the admins, so only an admin can decide it now.",
                            escalated_by.clone().unwrap_or_default()
                        ),
                    }}
                </p>
            })}
            {pending.then(|| {
                let approval = card.approval.clone().unwrap_or_default();
                let approve = Callback::new({
                    let approve = approve.clone();
                    move |()| approve()
                });
                view! {
                    <DecisionControls approval tool=card.tool.clone() args=card.args.clone() offer=offer.clone() draft busy error now always approve
                        viewer_name=viewer_name.clone() is_plan />
                }
            })}
            {(!waiting).then(|| view! { <Superseded decision=card.decision.clone() draft /> })}
            {move || error.get().map(|failure| view! { <FailureNote failure /> })}
        </article>
    }
    .into_any()
}

/// Gives keyboard focus back to the card around the element that got the event.
fn focus_card(ev: &leptos::ev::KeyboardEvent) {
    use leptos::wasm_bindgen::JsCast;
    if let Some(card) = ev.current_target().and_then(|t| t.dyn_into::<leptos::web_sys::HtmlElement>().ok()) {
        let _ = card.focus();
    }
}
