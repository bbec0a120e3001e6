use crate::domain::ApprovalId;
use leptos::prelude::*;
use serde_json::Value;

use super::{
    args_editor::EditForm,
    card_actions::{ReasonForm, ReasonKind},
    json_diff::{JsonDiff, pretty},
    question_card::QuestionCard,
    status_badge::{RiskBadge, StatusBadge},
};
use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::{
        Card, CardStatus, naming, rules,
        wire::{ApproveRequest, GrantRequest},
        wording,
    },
    live::LinkState,
    time::{countdown, parse_rfc3339_ms},
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Idle,
    Rejecting,
    Deferring,
    Editing,
}

/// What a reviewer has open and typed on a card. Owned by the card's row, so it outlives a
/// re-render of the card: when someone else decides meanwhile, the text is still there.
#[derive(Clone, Copy)]
pub struct CardDraft {
    pub mode: RwSignal<Mode>,
    /// The reason (reject) or guidance (defer) being written.
    pub reason: RwSignal<String>,
    /// The arguments being edited (JSON text); empty until Edit opens.
    pub edit: RwSignal<String>,
    /// This reviewer sent the draft and waits for the answer: a decision that arrives live
    /// meanwhile is theirs, not someone else's (no "decided while you were writing").
    pub sent: RwSignal<bool>,
    /// Give the card focus when it next renders decided (after this reviewer's own decision,
    /// whose form is gone with the pending card).
    refocus: RwSignal<bool>,
}

impl CardDraft {
    pub fn new() -> Self {
        Self {
            mode: RwSignal::new(Mode::Idle),
            reason: RwSignal::new(String::new()),
            edit: RwSignal::new(String::new()),
            sent: RwSignal::new(false),
            refocus: RwSignal::new(false),
        }
    }

    pub fn close(&self) {
        self.mode.set(Mode::Idle);
        self.reason.set(String::new());
        self.edit.set(String::new());
        self.sent.set(false);
    }

    /// Sends the decision written in this draft. The live event of the decision may arrive before
    /// the POST's answer and re-render the card (disposing `busy` and `error`): the draft, owned
    /// by the card's row, is marked sent until then, closed on success, and reopened on a refusal.
    pub fn send<T: 'static>(
        self,
        busy: RwSignal<bool>,
        error: RwSignal<Option<ApiFailure>>,
        call: impl std::future::Future<Output = Result<T, ApiFailure>> + 'static,
    ) {
        self.sent.set(true);
        self.refocus.set(true);
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let result = call.await;
            let _ = busy.try_set(false);
            match result {
                Ok(_) => self.close(),
                Err(failure) => {
                    let _ = self.sent.try_set(false);
                    let _ = self.refocus.try_set(false);
                    let _ = error.try_set(Some(failure));
                }
            }
        });
    }
}

impl Default for CardDraft {
    fn default() -> Self {
        Self::new()
    }
}

/// Sends an approval (with edited args or not); the card's new state arrives over SSE.
pub fn send_approve(approval_id: ApprovalId, request: ApproveRequest, busy: RwSignal<bool>, error: RwSignal<Option<ApiFailure>>) {
    in_background(busy, error, async move { api::approve(&approval_id, &request).await });
}

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
    // The agent's question to the user is a card of its own kind.
    if card.tool == naming::ASK_USER {
        return view! { <QuestionCard card now draft /> }.into_any();
    }
    let waiting = card.status == CardStatus::PendingApproval;
    if !waiting && draft.refocus.get_untracked() {
        draft.refocus.set(false);
        crate::focus::card(card.call_id.to_string());
    }
    // A call confirmed in the chat is answered with yes or no in the composer, not with buttons.
    let in_chat = waiting && card.approval.as_ref().is_some_and(|a| a.in_chat);
    let approval_id = card.approval.as_ref().map(|a| a.approval_id.clone()).unwrap_or_default();
    let deadline = card.approval.as_ref().and_then(|a| parse_rfc3339_ms(&a.deadline));
    let escalated_by = card.approval.as_ref().and_then(|a| a.escalated_by.clone()).filter(|_| waiting);
    let rules = card.approval.as_ref().map(|a| a.rules).unwrap_or_default();
    let reminder = card.approval.as_ref().filter(|_| waiting).and_then(wording::reminder_line);
    // A reminded card stands out (style/main.css `.reminded`) until it is decided.
    let reminded_class = if reminder.is_some() { " reminded" } else { "" };
    // Why it is risky (the warnings are listed on their own just above).
    let spend = card.approval.as_ref().filter(|_| waiting).and_then(|a| a.spend.as_ref()).map(wording::spend_line);
    let assessment = card.approval.as_ref().filter(|_| waiting).and_then(|a| a.assessment.clone()).map(|a| {
        let factors: Vec<String> = a.factors.into_iter().filter(|f| !card.warnings.contains(f)).collect();
        view! {
            <div class="assessment">
                <p class="consequences">
                    <strong class="reversibility" data-reversibility=format!("{:?}", a.reversibility).to_lowercase()>{wording::reversibility(a.reversibility)}</strong>
                    ": " {a.consequences}
                </p>
                {(!factors.is_empty()).then(|| view! { <p class="factors">"Why it is risky: " {factors.join("; ")}</p> })}
                {a.confidence.map(|c| view! { <p class="confidence">{wording::confidence_line(c)}</p> })}
                {spend.map(|line| view! { <p class="spend">{line}</p> })}
            </div>
        }
    });
    // Handed to the admins: a user sees who has it, not buttons the server would refuse.
    let escalated_to = card.approval.as_ref().and_then(|a| a.escalated_to.clone()).filter(|_| waiting);
    // What this viewer may press: the same rules the server checks (domain/rules/offer.rs).
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
    let four_eyes = offer.no_approve == Some(rules::NoApprove::FourEyes);
    let approved_already = offer.no_approve == Some(rules::NoApprove::ApprovedAlready);
    let no_approve = !offer.approve;
    let mode = draft.mode;
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
            send_approve(approval_id.clone(), ApproveRequest { args: None, grant }, busy, error)
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

    let decision = card.decision.clone().map(|d| {
        let line = wording::decision_line(&d, card.approval.as_ref());
        let diff = d.edited_args.clone().map(|edited| {
            let before = pretty(&d.original_args);
            let after = pretty(&edited);
            view! {
                <p class="edited-note">"Arguments edited before approval:"</p>
                <JsonDiff before=Signal::stored(before) after=Signal::stored(after) />
            }
        });
        view! {
            <p class="decision">{line}</p>
            {diff}
        }
    });
    // A refused call never ran: its decision line says why, the model's stub result is not shown.
    let refused = card.status.is_refused();
    // Refused without a decision of its own: the same call was rejected before. Said for people
    // (the result's wording is an instruction to the model).
    let repeat_note = (card.status == CardStatus::Rejected && card.decision.is_none())
        .then(|| view! { <p class="decision">"Not run: this exact call was already rejected earlier in this chat."</p> });
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
    // Someone else decided while this reviewer had a form open: keep what they wrote, say who won.
    let superseded = (!waiting).then(|| {
        let outcome = card.decision.as_ref().map(|d| {
            let verb = wording::verb(d.outcome).to_lowercase();
            let who = if d.decided_by == wording::SYSTEM { "the timeout".to_owned() } else { d.decided_by.clone() };
            format!("While you were writing, {who} {verb} this call. Your unsent text is kept below.")
        });
        let outcome = outcome.unwrap_or_else(|| "This call was decided while you were writing. Your unsent text is kept below.".into());
        move || {
            if draft.sent.get() {
                return None;
            }
            let text = match mode.get() {
                Mode::Idle => return None,
                Mode::Editing => draft.edit.get(),
                Mode::Rejecting | Mode::Deferring => draft.reason.get(),
            };
            let outcome = outcome.clone();
            Some(view! {
                <div class="superseded" role="alert">
                    <p>{outcome}</p>
                    <pre class="kept-text">{text}</pre>
                    <button type="button" class="btn btn-small" on:click=move |_| draft.close()>"Dismiss"</button>
                </div>
            })
        }
    });
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
    let original_args = pretty(&card.args);
    let controls = pending.then(|| {
        let reject_id = approval_id.clone();
        let edit_id = approval_id.clone();
        let escalate_id = approval_id.clone();
        let defer_id = approval_id.clone();
        let approve_click = approve.clone();
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
        let tool_name = card.tool.clone();
        // Approved like this before by the person looking: offer "always allow" outright.
        let suggestion = card
            .approval
            .as_ref()
            .and_then(|a| a.suggestion.clone())
            .filter(|s| can_grant && viewer_name.as_ref().is_some_and(|me| me.eq_ignore_ascii_case(&s.by)))
            .map(|s| (approval_id.clone(), wording::suggestion_line(&card.tool, s.count, s.grant.ttl_secs), s.grant));
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
            {(approved_already && !four_eyes).then(|| view! {
                <p class="four-eyes" role="note">"You approved this call; it waits for the other approvers. You can still reject it."</p>
            })}
            {suggestion.clone().map(|(id, line, grant)| view! {
                <div class="grant-suggestion" role="note">
                    <span>{line}</span>
                    <button class="btn btn-approve" disabled=move || busy.get() on:click=move |_| {
                        send_approve(id.clone(), ApproveRequest { args: None, grant: Some(grant.clone()) }, busy, error)
                    }>"Approve and always allow"</button>
                </div>
            })}
            <p class="shortcuts">"Keys on this card: "{(!no_approve).then(|| view! { <kbd>"A"</kbd>" approve · " })}<kbd>"R"</kbd>" reject"</p>
            <div class="actions" role="group" aria-label="Decision">
                {(!no_approve).then(|| view! {
                    <button class="btn btn-approve" aria-keyshortcuts="a" disabled=move || busy.get() on:click={
                        let approve_click = approve_click.clone();
                        move |_| approve_click()
                    }>
                        "Approve"
                    </button>
                })}
                <button class="btn btn-reject" aria-keyshortcuts="r" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Rejecting)>
                    "Reject"
                </button>
                // A gate with `allow_modification = false` takes the call as proposed or not at all.
                {offer.edit.then(|| view! {
                    <button class="btn" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Editing)>
                        "Edit"
                    </button>
                })}
                <button class="btn" disabled=move || busy.get() on:click=move |_| mode.set(Mode::Deferring)>
                    "Defer…"
                </button>
                {can_grant.then(|| view! {
                    <label class="always">
                        <input type="checkbox" bind:checked=always />
                        {format!("Always allow {tool_name} in this chat")}
                    </label>
                })}
                {can_escalate.then(|| view! {
                    <button class="btn btn-link-plain" disabled=move || busy.get() on:click=escalate.clone()>"Hand to admins"</button>
                })}
            </div>
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
    });

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
            {assessment}
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
            {decision}
            {repeat_note}
            {result}
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
            {controls}
            {superseded}
            {move || error.get().map(|e| view! {
                <div class="error" role="alert">
                    <p>{e.message.clone()}</p>
                    <ul>{e.details.iter().map(|d| view! { <li>{d.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
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
