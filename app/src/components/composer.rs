use crate::domain::ConversationId;
use leptos::{prelude::*, task::spawn_local};

use super::session_notice::FailureNote;
use crate::{
    api,
    client::ApiFailure,
    domain::{
        CardStatus, ConversationView, TaskStatus,
        rules::{self, NoApprove, Place, Refusal, Viewer},
    },
    focus,
};

/// The longest message the server takes (the API answers 422 above it).
pub const MAX_MESSAGE_CHARS: usize = 8_000;

/// What is wrong with the text typed so far, if anything: said next to the field instead of
/// cutting the message short.
pub fn text_problem(text: &str) -> Option<String> {
    let n = text.chars().count();
    (n > MAX_MESSAGE_CHARS).then(|| format!("The message is {n} characters long; the limit is {MAX_MESSAGE_CHARS}. Shorten it to send it."))
}

/// Why the composer is disabled.
#[derive(Clone, Debug, PartialEq)]
pub struct Busy {
    pub text: String,
    /// The viewer can decide what waits: the text is a button that jumps to the first pending card.
    pub jump_to_pending: bool,
}

impl Busy {
    fn saying(text: String) -> Self {
        Self { text, jump_to_pending: false }
    }
}

/// Why the composer is disabled, or `None` when the user may write. `requested`: the viewer owns
/// the chat (four-eyes and the approvers decide what they may press, domain/src/rules/offer.rs).
pub fn busy_reason(view: &ConversationView, viewer: &Viewer, requested: bool) -> Option<Busy> {
    // Who holds each waiting call this viewer may not decide (handed over, or its approvers).
    let held: Vec<String> = view
        .cards()
        .filter(|c| c.status == CardStatus::PendingApproval)
        .filter_map(|c| c.approval.as_ref().map(|a| rules::offer(viewer, requested, a, Place::Chat, false).held))
        .flatten()
        .map(|refusal| match refusal {
            Refusal::WithTheAdmins { .. } | Refusal::OutOfTime => "an admin".to_owned(),
            Refusal::WithOthers { to, .. } => to,
            Refusal::NotAnApprover { approvers } => approvers,
        })
        .collect();
    match view.current_task()?.status {
        // Everything that waits is someone else's to decide: the user cannot decide it.
        TaskStatus::Working | TaskStatus::InputRequired if !held.is_empty() && held.len() == view.pending_count() => {
            let who = if held.iter().all(|h| *h == held[0]) { held[0].as_str() } else { "others" };
            let n = held.len();
            Some(Busy::saying(format!("Waiting for {who} to decide {n} tool call{}", if n == 1 { "" } else { "s" })))
        }
        // A worker (sub-agent) may be waiting for a decision while its supervisor's turn works.
        TaskStatus::Working if view.pending_count() == 0 => Some(Busy::saying("The agent is working…".into())),
        // The agent asked in the chat: the user's reply is the answer.
        TaskStatus::Working | TaskStatus::InputRequired if view.waits_for_chat_answer() => None,
        TaskStatus::Working | TaskStatus::InputRequired => {
            let n = view.pending_count();
            let questions =
                view.cards().filter(|c| c.status == CardStatus::PendingApproval && c.tool == crate::domain::naming::ASK_USER).count();
            // Calls the viewer may reject but someone else must approve: four-eyes (they asked
            // for it), or a quorum they approved already.
            let others_approve: Vec<NoApprove> = view
                .cards()
                .filter(|c| c.status == CardStatus::PendingApproval)
                .filter_map(|c| c.approval.as_ref().and_then(|a| rules::offer(viewer, requested, a, Place::Chat, false).no_approve))
                .collect();
            let s = if n == 1 { "" } else { "s" };
            let text = if questions == n {
                "Waiting for your answer to the agent's question".to_owned()
            } else if !others_approve.is_empty() && others_approve.len() + held.len() == n {
                let who = if held.is_empty() && others_approve.iter().all(|w| *w == NoApprove::ApprovedAlready) {
                    "the other approvers"
                } else {
                    "another person"
                };
                format!("Waiting for {who} to approve {n} tool call{s}")
            } else {
                format!("Waiting for your decision on {n} tool call{s}")
            };
            Some(Busy { text, jump_to_pending: true })
        }
        _ => None,
    }
}

/// The message box. Disabled (and saying why) while the current task is not finished.
#[component]
pub fn Composer(
    conversation_id: ConversationId,
    view: RwSignal<ConversationView>,
    /// Who is looking, and whether they own the chat.
    viewer: Viewer,
    requested: bool,
    #[prop(into)] on_sent: Callback<()>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    // What is typed survives a reload and the login after a session ended (this tab only).
    // Restored by an effect, after hydration, so the server's HTML and the browser's agree.
    let kept_under = format!("countersign-composer:{conversation_id}");
    Effect::new(move |restored: Option<()>| {
        if restored.is_none()
            && let Some(kept) = crate::session::kept_text(&kept_under)
        {
            text.set(kept);
        }
        text.with(|t| crate::session::keep_text(&kept_under, t));
    });
    let sending = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    let reason = Memo::new(move |_| view.with(|v| busy_reason(v, &viewer, requested)));
    let disabled = move || sending.get() || reason.get().is_some();
    let problem = Memo::new(move |_| text.with(|t| text_problem(t)));
    // Nothing to send: empty, only spaces, or over the limit.
    let unsendable = move || disabled() || problem.get().is_some() || text.with(|t| t.trim().is_empty());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let message = text.get_untracked().trim().to_owned();
        if message.is_empty() || disabled() || problem.get_untracked().is_some() {
            return;
        }
        let conversation_id = conversation_id.clone();
        sending.set(true);
        error.set(None);
        spawn_local(async move {
            let result = api::send_message(&conversation_id, message).await;
            sending.set(false);
            match result {
                Ok(_) => {
                    text.set(String::new());
                    on_sent.run(());
                }
                Err(failure) => error.set(Some(failure)),
            }
        });
    };
    view! {
        <form class="composer" class:busy=move || reason.with(Option::is_some) on:submit=submit>
            <label class="visually-hidden" for="composer-input">"Message"</label>
            <input
                id="composer-input"
                type="text"
                autocomplete="off"
                placeholder=move || if view.with(ConversationView::waits_for_chat_answer) { "Reply yes or no" } else { "Ask the agent, e.g. “refund order 1001”" }
                bind:value=text
                disabled=disabled
            />
            <button type="submit" class="btn btn-primary" disabled=unsendable>
                {move || if sending.get() { "Sending…" } else { "Send" }}
            </button>
            <p class="composer-status" aria-live="polite">
                {move || reason.get().map(|busy| if busy.jump_to_pending {
                    view! {
                        <button type="button" class="btn-link-plain jump-to-pending" title="Show the first call that waits" on:click=|_| focus::first_pending_card(true)>
                            {busy.text}
                        </button>
                    }.into_any()
                } else {
                    busy.text.into_any()
                })}
            </p>
            {move || problem.get().map(|p| view! { <p class="error composer-problem" role="alert">{p}</p> })}
            {move || error.get().map(|failure| view! { <FailureNote failure /> })}
        </form>
    }
}
