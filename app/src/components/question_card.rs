//! The card of an agent's question (`ask_user`): the question, then an answer box or the
//! options, and Decline; once settled, the answer. Underneath it is an approval
//! (docs/config.md, "Asking the user"): answering approves the call with `answer` added to its
//! arguments, declining rejects it, and no answer by the deadline ends it like any timeout.

use leptos::prelude::*;
use serde_json::Value;

use super::{
    card_draft::{CardDraft, send_approve},
    session_notice::FailureNote,
};
use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::{
        Card, CardStatus,
        wire::{ApproveRequest, RejectRequest},
    },
    time::{countdown, parse_rfc3339_ms},
};

/// The line of a settled question.
fn settled(card: &Card) -> Option<String> {
    match card.status {
        CardStatus::Approved | CardStatus::Executing | CardStatus::Succeeded | CardStatus::Failed => {
            Some(format!("Answered: {}", card.args.get("answer").and_then(Value::as_str).unwrap_or("—")))
        }
        CardStatus::Rejected => Some("Declined: the agent goes on without an answer.".into()),
        CardStatus::Expired => Some("No one answered in time.".into()),
        CardStatus::Canceled | CardStatus::Deferred => Some("Not answered.".into()),
        _ => None,
    }
}

#[component]
pub fn QuestionCard(card: Card, now: RwSignal<i64>, draft: CardDraft) -> impl IntoView {
    let waiting = card.status == CardStatus::PendingApproval;
    let approval_id = card.approval.as_ref().map(|a| a.approval_id.clone()).unwrap_or_default();
    let deadline = card.approval.as_ref().and_then(|a| parse_rfc3339_ms(&a.deadline));
    let question = card.args.get("question").and_then(Value::as_str).unwrap_or_default().to_owned();
    let options: Vec<String> =
        card.args.get("options").and_then(Value::as_array).into_iter().flatten().filter_map(|o| o.as_str().map(str::to_owned)).collect();
    // Enabled from the first paint: before hydration (and with JavaScript off) the answers and
    // Decline post forms (server/src/forms.rs); once hydrated, their handlers act instead.
    let busy = RwSignal::new(false);
    let action = format!("/forms/approvals/{approval_id}");
    let back = crate::paths::here();
    let error = RwSignal::new(None::<ApiFailure>);
    // The answer being typed lives in the row's draft, so a re-render keeps it.
    let text = draft.reason;
    let answer = {
        let (args, approval_id) = (card.args.clone(), approval_id.clone());
        move |answer: String| {
            let mut args = args.clone();
            args["answer"] = Value::String(answer);
            send_approve(approval_id.clone(), ApproveRequest { args: Some(args), grant: None }, busy, error);
        }
    };
    let decline = {
        let approval_id = approval_id.clone();
        move |ev: leptos::ev::MouseEvent| {
            ev.prevent_default();
            let id = approval_id.clone();
            in_background(busy, error, async move { api::reject(&id, &RejectRequest { reason: Some("declined to answer".into()) }).await });
        }
    };
    let controls = waiting.then(|| {
        let choices = (!options.is_empty()).then(|| {
            let answer = answer.clone();
            view! {
                <form class="decide-form" method="post" action=action.clone()>
                <input type="hidden" name="back" value=back.clone() />
                <div class="actions options" role="group" aria-label="Answers">
                    {options.iter().map(|option| {
                        let (answer, chosen, label, value) = (answer.clone(), option.clone(), option.clone(), option.clone());
                        view! {
                            <button type="submit" name="answer" value=value class="btn btn-approve" disabled=move || busy.get()
                                on:click=move |ev| { ev.prevent_default(); answer(chosen.clone()) }>
                                {label}
                            </button>
                        }
                    }).collect_view()}
                </div>
                </form>
            }
        });
        let free_text = options.is_empty().then(|| {
            let answer = answer.clone();
            let submit = move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                let value = text.get_untracked().trim().to_owned();
                if !value.is_empty() {
                    answer(value);
                }
            };
            view! {
                <form class="answer-form" method="post" action=action.clone() on:submit=submit>
                    <input type="hidden" name="back" value=back.clone() />
                    <label>
                        "Your answer (the agent sees it)"
                        <input type="text" name="answer" maxlength="4000" required=true bind:value=text />
                    </label>
                    <button type="submit" class="btn btn-approve" disabled=move || busy.get()>"Send answer"</button>
                </form>
            }
        });
        view! {
            <p class="countdown" aria-live="off">
                "Waiting for your answer · expires in "
                <span class="time-left">{move || deadline.map(|d| countdown(d - now.get())).unwrap_or_else(|| "—".into())}</span>
            </p>
            {choices}
            {free_text}
            <form class="decide-form" method="post" action=action.clone()>
                <input type="hidden" name="back" value=back.clone() />
                <div class="actions">
                    <button type="submit" name="decision" value="decline" class="btn btn-reject" disabled=move || busy.get() on:click=decline>"Decline"</button>
                </div>
            </form>
        }
    });
    view! {
        <article
            class=format!("tool-card question-card card-{}", card.status.as_str())
            data-call-id=card.call_id.to_string()
            data-status=card.status.as_str()
            tabindex=if waiting { "0" } else { "-1" }
            aria-label=format!("Question from {}: {question}", card.agent)
        >
            <header class="card-header">
                <span class="tool-title">"Question"</span>
                <span class="agent">"from " {card.agent.clone()}</span>
            </header>
            <h2 class="summary">{question.clone()}</h2>
            {settled(&card).map(|line| view! { <p class="decision">{line}</p> })}
            {controls}
            {move || error.get().map(|failure| view! { <FailureNote failure /> })}
        </article>
    }
}
